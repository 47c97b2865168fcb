"""SpectralNormalization: a training call divides the wrapped kernel by sigma = v W u^T from Keras' power
iteration (checked in NumPy from the u the layer held), many iterations bring the largest singular value to 1,
inference and zero kernels are left alone, traced = eager, configs and fit."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras
L = K.layers
rng = np.random.default_rng(4)
X = rng.standard_normal((5, 6)).astype(np.float32)


def normalize(v):
    return v / np.sqrt(max((v ** 2).sum(), 1e-12))


def power_step(kernel, u, iterations):
    w = kernel.reshape(-1, kernel.shape[-1]).astype(np.float64)
    u = u.astype(np.float64)
    for _ in range(iterations):
        v = normalize(u @ w.T)
        u = normalize(v @ w)
    sigma = (v @ w @ u.T).item()
    return kernel / sigma, u


@pytest.mark.parametrize("traced", [False, True])
def test_a_training_call_divides_the_kernel_by_the_power_iteration_sigma(traced):
    layer = L.SpectralNormalization(L.Dense(4), power_iterations=2)
    layer(X)
    kernel, u = layer.layer.kernel.numpy(), layer.vector_u.numpy()
    def train_call(x):
        return layer(x, training=True)
    out = (tf.function(train_call) if traced else train_call)(X).numpy()
    want_kernel, want_u = power_step(kernel, u, 2)
    np.testing.assert_allclose(layer.layer.kernel.numpy(), want_kernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.vector_u.numpy(), want_u, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, X @ want_kernel + layer.layer.bias.numpy(), rtol=1e-5, atol=1e-5)


def test_iterations_bring_the_spectral_norm_to_one_and_inference_changes_nothing():
    layer = L.SpectralNormalization(L.Dense(3, kernel_initializer="ones"), power_iterations=30)
    layer(X)
    before = layer.layer.kernel.numpy()
    layer(X, training=False)
    np.testing.assert_array_equal(layer.layer.kernel.numpy(), before)
    layer(X, training=True)
    assert np.linalg.svd(layer.layer.kernel.numpy(), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-4)
    zeros = L.SpectralNormalization(L.Dense(3, kernel_initializer="zeros"))
    zeros(X, training=True)
    assert not zeros.layer.kernel.numpy().any()


def test_conv_embeddings_config_and_fit():
    conv = L.SpectralNormalization(L.Conv2D(2, 3))
    conv(np.ones((1, 5, 5, 1), np.float32), training=True)
    assert conv.vector_u.shape == (1, 2) and len(conv.weights) == 3 and len(conv.trainable_weights) == 2
    emb = L.SpectralNormalization(L.Embedding(10, 4))
    emb(np.array([[1, 2]]), training=True)
    assert emb.vector_u.shape == (1, 4)
    config = L.SpectralNormalization(L.Dense(2), power_iterations=3).get_config()
    again = L.SpectralNormalization.from_config(config)
    assert again.power_iterations == 3 and isinstance(again.layer, L.Dense)
    with pytest.raises(ValueError, match="`power_iterations` should be greater than zero"):
        L.SpectralNormalization(L.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="object has no attribute 'kernel' nor 'embeddings'"):
        L.SpectralNormalization(L.Flatten())(X)
    model = K.Sequential([K.Input((6,)), L.SpectralNormalization(L.Dense(1))])
    model.compile("sgd", "mse")
    history = model.fit(X, X[:, :1], epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
