"""TF 2 Keras arguments a user brings: accepted with TF's meaning, or refused by name when Kiln lacks the feature
(BatchNormalization's renorm / synchronized / fused, a frozen BatchNormalization in inference mode, the
normalizations' regularizer and constraint arguments, Embedding's sparse, CosineDecay's warmup)."""
import math

import numpy as np
import pytest

import kiln as tf

K = tf.keras
rng = np.random.default_rng(3)


def test_batch_normalization_takes_tf_arguments_and_refuses_what_kiln_lacks():
    layer = K.layers.BatchNormalization(fused=True, synchronized=False, renorm=False, renorm_momentum=0.99,
                                        beta_regularizer=None, gamma_constraint=None)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(layer(x, training=True).numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3),
                               rtol=1e-4, atol=1e-5)
    for name, value in (("renorm", True), ("synchronized", True), ("virtual_batch_size", 2),
                        ("beta_regularizer", "l2")):
        with pytest.raises(NotImplementedError, match=f"BatchNormalization: {name}="):
            K.layers.BatchNormalization(**{name: value})


def test_a_frozen_batch_normalization_normalizes_with_its_moving_statistics_even_while_training():
    layer = K.layers.BatchNormalization()
    x = rng.standard_normal((8, 2)).astype(np.float32) * 3 + 1
    layer(x, training=True)
    moving = [layer.moving_mean.numpy(), layer.moving_variance.numpy()]
    layer.trainable = False
    frozen = layer(x, training=True).numpy()
    np.testing.assert_array_equal(frozen, layer(x, training=False).numpy())
    np.testing.assert_array_equal(layer.moving_mean.numpy(), moving[0])  # not moved
    np.testing.assert_array_equal(layer.moving_variance.numpy(), moving[1])
    np.testing.assert_allclose(frozen, (x - moving[0]) / np.sqrt(moving[1] + 1e-3), rtol=1e-5, atol=1e-6)


def test_layer_normalization_and_embedding_take_tf_arguments():
    layer = K.layers.LayerNormalization(beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                                        gamma_constraint=None)
    assert layer(np.ones((2, 3), np.float32)).shape == (2, 3)
    with pytest.raises(NotImplementedError, match="LayerNormalization: gamma_constraint="):
        K.layers.LayerNormalization(gamma_constraint="non_neg")
    assert K.layers.Embedding(4, 2, sparse=False)(np.array([[1, 3]])).shape == (1, 2, 2)
    with pytest.raises(NotImplementedError, match="Embedding: sparse=True"):
        K.layers.Embedding(4, 2, sparse=True)


def test_cosine_decay_warms_up_to_its_target_then_decays_from_it():
    schedule = K.optimizers.schedules.CosineDecay(0.0, decay_steps=10, alpha=0.1, warmup_target=0.2,
                                                  warmup_steps=4)
    for step in (0, 1, 3, 4, 5, 9, 14, 20):
        if step < 4:
            want = 0.2 * step / 4
        else:
            c = 0.5 * (1 + math.cos(math.pi * min(step - 4, 10) / 10))
            want = 0.2 * ((1 - 0.1) * c + 0.1)
        assert float(schedule(step)) == pytest.approx(want, rel=1e-5, abs=1e-7), step
    assert schedule.get_config()["warmup_target"] == 0.2 and schedule.get_config()["warmup_steps"] == 4
    no_warmup = K.optimizers.schedules.CosineDecay(0.1, 10, warmup_steps=5)
    assert float(no_warmup(5)) == pytest.approx(0.1 * 0.5 * (1 + math.cos(math.pi * 0.5)), rel=1e-6)
    traced = tf.function(lambda step: schedule(step))
    assert float(traced(tf.constant(2, tf.int64))) == pytest.approx(0.1, rel=1e-6)
    with pytest.raises(ValueError, match="warmup_steps"):
        K.optimizers.schedules.CosineDecay(0.1, 10, warmup_steps=-1)


@pytest.mark.parametrize("padding, output_padding, want_hw", [
    ("valid", (1, 0), (8, 7)), ("same", 1, (6, 6)), ("same", (0, 1), (5, 6)), ("valid", 0, (7, 7))])
def test_conv2d_transpose_output_padding_is_keras_deconv_output_length(padding, output_padding, want_hw):
    """Keras' lengths; the values are the transpose of conv2d: the gradient of conv2d over an input of the
    output's size."""
    layer = K.layers.Conv2DTranspose(2, 3, strides=2, padding=padding, output_padding=output_padding, use_bias=False)
    x = rng.standard_normal((1, 3, 3, 4)).astype(np.float32)
    y = layer(x)
    assert y.shape == (1, *want_hw, 2)
    assert layer.compute_output_shape((None, 3, 3, 4)).as_list() == [None, *want_hw, 2]
    image = tf.zeros((1, *want_hw, 2))
    with tf.GradientTape() as tape:
        tape.watch(image)
        forward = tf.nn.conv2d(image, layer.kernel, strides=2, padding=padding.upper())
        assert forward.shape == x.shape
        dot = tf.reduce_sum(forward * x)
    np.testing.assert_allclose(y.numpy(), tape.gradient(dot, image).numpy(), rtol=1e-5, atol=1e-6)
    assert tuple(layer.get_config()["output_padding"]) == ((output_padding,) * 2 if isinstance(output_padding, int)
                                                           else output_padding)


def test_conv2d_transpose_output_padding_must_be_below_the_stride():
    with pytest.raises(ValueError, match="must be greater than output padding"):
        K.layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="tuple of 2 non-negative integers"):
        K.layers.Conv2DTranspose(2, 3, strides=2, output_padding=(1, -1))


def test_base_layer_arguments_weights_autocast_and_activity_regularizer():
    kernel, bias = np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1, -1], np.float32)
    dense = K.layers.Dense(2, weights=[kernel, bias])  # Keras' initial weights, set when built
    x = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(dense(x).numpy(), x @ kernel + bias)
    traced_build = K.layers.Dense(2, weights=[kernel, bias])
    np.testing.assert_array_equal(tf.function(lambda v: traced_build(v))(x).numpy(), x @ kernel + bias)
    x64 = np.ones((1, 3), np.float64)
    assert K.layers.Activation("relu")(x64).dtype == tf.float32
    assert K.layers.Activation("relu", autocast=False)(x64).dtype == tf.float64
    # Any layer takes an activity regularizer: its penalty / batch size becomes a loss of the call.
    act = K.layers.Activation("relu", activity_regularizer="l2")
    act(np.full((2, 3), 2.0, np.float32))
    np.testing.assert_allclose([float(v) for v in act.losses], [np.float32(0.01) * 24 / 2], rtol=1e-6)
