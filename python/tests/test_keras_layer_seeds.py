"""Seeded Keras random layers draw as TF's seeded ops: a new draw on every call (graph calls included),
and the same sequence again after tf.random.set_seed."""
import numpy as np
import pytest

import kiln as tf

LAYERS = [
    lambda: tf.keras.layers.Dropout(0.5, seed=3),
    lambda: tf.keras.layers.GaussianNoise(1.0, seed=3),
    lambda: tf.keras.layers.GaussianDropout(0.5, seed=3),
    lambda: tf.keras.layers.AlphaDropout(0.5, seed=3),
    lambda: tf.keras.layers.SpatialDropout1D(0.5, seed=3),
]


@pytest.mark.parametrize("make", LAYERS)
def test_a_seeded_layer_draws_anew_on_every_call_and_again_after_set_seed(make):
    x = tf.ones([4, 8, 16])
    tf.random.set_seed(1)
    layer = make()
    first, second = layer(x, training=True).numpy(), layer(x, training=True).numpy()
    assert not np.array_equal(first, second)
    tf.random.set_seed(1)
    again = make()
    np.testing.assert_array_equal(again(x, training=True).numpy(), first)
    np.testing.assert_array_equal(again(x, training=True).numpy(), second)


@pytest.mark.parametrize("make", LAYERS)
def test_a_seeded_layer_in_a_traced_step_draws_anew_on_every_call(make):
    layer = make()
    step = tf.function(lambda x: layer(x, training=True))
    x = tf.ones([4, 8, 16])
    assert not np.array_equal(step(x).numpy(), step(x).numpy())


def test_seeded_gaussian_noise_is_standard_normal_in_a_graph():
    # Box-Muller's two uniform draws must differ inside one graph, where two ops of one seed draw alike.
    layer = tf.keras.layers.GaussianNoise(1.0, seed=5)
    noise = tf.function(lambda x: layer(x, training=True))(tf.zeros([200_000])).numpy().astype(np.float64)
    assert abs(noise.mean()) < 0.01
    assert abs(noise.std() - 1.0) < 0.01
    assert abs(np.mean(noise ** 4) - 3.0) < 0.1  # a normal's fourth moment


def test_seeded_dropout_keeps_about_half_and_scales_by_two():
    y = tf.keras.layers.Dropout(0.5, seed=11)(tf.ones([100_000]), training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert abs((y == 2.0).mean() - 0.5) < 0.01


def test_the_layer_seed_chooses_the_draw():
    x = tf.ones([64])
    draws = []
    for seed in (3, 4):
        tf.random.set_seed(1)
        draws.append(tf.keras.layers.Dropout(0.5, seed=seed)(x, training=True).numpy())
    assert not np.array_equal(*draws)


@pytest.mark.parametrize("make", LAYERS)
def test_with_the_tf_random_generator_a_seed_is_a_generator_of_the_layers_own(make):
    """backend.experimental.enable_tf_random_generator (Keras 2.15): layers made while it is on draw from their
    own generator, so fresh layers of one seed repeat one sequence whatever the global seed."""
    experimental = tf.keras.backend.experimental
    x = tf.ones([4, 8, 16])
    experimental.enable_tf_random_generator()
    try:
        assert experimental.is_tf_random_generator_enabled()
        tf.random.set_seed(1)
        layer = make()
        first = [layer(x, training=True).numpy() for _ in range(2)]
        tf.random.set_seed(2)
        again = make()
        np.testing.assert_array_equal(again(x, training=True).numpy(), first[0])
        np.testing.assert_array_equal(again(x, training=True).numpy(), first[1])
        assert not np.array_equal(*first)
        traced = tf.function(lambda v: layer(v, training=True))
        assert not np.array_equal(traced(x).numpy(), traced(x).numpy())
    finally:
        experimental.disable_tf_random_generator()
    assert not experimental.is_tf_random_generator_enabled()
    tf.random.set_seed(1)
    plain = make()
    tf.random.set_seed(2)
    assert not np.array_equal(plain(x, training=True).numpy(), make()(x, training=True).numpy())
