"""The seeds of Keras' augmentation layers, Keras 2.15's rules (each layer its own generator, from its seed):
two fresh layers of one seed draw the same sequence whatever the global seed, eagerly or traced; every call
draws anew; another seed draws otherwise; inference draws nothing; fit's traced step draws once per step."""
import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
rng = np.random.default_rng(5)
IMAGES = rng.uniform(0, 255, (4, 10, 12, 3)).astype(np.float32)

LAYERS = {
    "RandomFlip": lambda seed: L.RandomFlip(seed=seed),
    "RandomRotation": lambda seed: L.RandomRotation(0.2, seed=seed),
    "RandomZoom": lambda seed: L.RandomZoom(0.3, 0.2, seed=seed),
    "RandomTranslation": lambda seed: L.RandomTranslation(0.2, 0.3, seed=seed),
    "RandomContrast": lambda seed: L.RandomContrast(0.5, seed=seed),
    "RandomBrightness": lambda seed: L.RandomBrightness(0.3, seed=seed),
    "RandomCrop": lambda seed: L.RandomCrop(6, 7, seed=seed),
}


def draws(layer, count, call=None):
    call = call or (lambda x: layer(x, training=True))
    return [np.asarray(call(IMAGES)) for _ in range(count)]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_fresh_layers_of_one_seed_draw_one_sequence_whatever_the_global_seed(name):
    tf.random.set_seed(1)
    first = draws(LAYERS[name](7), 3)
    tf.random.set_seed(2)
    again = draws(LAYERS[name](7), 3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1]) or not np.array_equal(first[1], first[2])
    other = draws(LAYERS[name](8), 3)
    assert any(not np.array_equal(a, b) for a, b in zip(first, other))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_traced_call_draws_the_eager_sequence_anew_on_every_call(name):
    eager = draws(LAYERS[name](11), 3)
    layer = LAYERS[name](11)
    step = tf.function(lambda x: layer(x, training=True))
    traced = draws(layer, 3, lambda x: step(x).numpy())
    for a, b in zip(eager, traced):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_inference_draws_nothing(name):
    layer = LAYERS[name](3)
    out = np.asarray(layer(IMAGES, training=False))
    if name != "RandomCrop":  # which resizes in inference, without drawing
        np.testing.assert_array_equal(out, IMAGES)
    step = tf.function(lambda x: layer(x, training=False))
    np.testing.assert_array_equal(step(IMAGES).numpy(), out)
    np.testing.assert_array_equal(np.asarray(layer(IMAGES, training=True)), draws(LAYERS[name](3), 1)[0])


def test_fit_draws_once_per_step():
    """After fit's three traced steps, the layer's next draw is a fresh layer's fourth."""
    flip = L.RandomFlip("horizontal", seed=4)
    model = tf.keras.Sequential([tf.keras.Input((10, 12, 3)), flip, L.Flatten(), L.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(IMAGES[:3].repeat(2, 0), np.zeros((6, 1), np.float32), batch_size=2, epochs=1, verbose=0,
              shuffle=False)
    fresh = L.RandomFlip("horizontal", seed=4)
    for _ in range(3):
        fresh(IMAGES[:2], training=True)  # the draws of fit's three batches of two
    np.testing.assert_array_equal(np.asarray(flip(IMAGES, training=True)), fresh(IMAGES, training=True).numpy())


def test_a_seeded_flip_flips_about_half_of_the_images():
    flipped = L.RandomFlip("horizontal", seed=9)(np.repeat(IMAGES[:1], 400, 0), training=True).numpy()
    share = np.mean([np.array_equal(f, IMAGES[0, :, ::-1]) for f in flipped])
    assert 0.4 < share < 0.6
