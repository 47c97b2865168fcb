"""LocallyConnected1D / 2D against NumPy loops over positions (each with its own filters), strides, bias per
position, gradients against central differences, traced = eager, configs, backend.local_conv1d / 2d, errors."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_sampled_input_gradient

K = tf.keras
L = K.layers
rng = np.random.default_rng(6)


def reference_1d(x, kernel, bias, k, s):
    b, steps, c = x.shape
    positions = (steps - k) // s + 1
    out = np.stack([x[:, p * s:p * s + k, :].reshape(b, k * c) @ kernel[p] for p in range(positions)], 1)
    return out + bias


def reference_2d(x, kernel, bias, kh, kw, sr, sc):
    b, rows, cols, c = x.shape
    out_r, out_c = (rows - kh) // sr + 1, (cols - kw) // sc + 1
    out = np.zeros((b, out_r, out_c, kernel.shape[-1]))
    for i in range(out_r):
        for j in range(out_c):
            patch = x[:, i * sr:i * sr + kh, j * sc:j * sc + kw, :].reshape(b, -1)
            out[:, i, j] = patch @ kernel[i * out_c + j]
    return out + bias


def test_locally_connected_1d_matches_the_per_position_products():
    layer = L.LocallyConnected1D(3, 3, strides=2, bias_initializer="random_normal")
    x = rng.standard_normal((2, 9, 4)).astype(np.float32)
    y = layer(x).numpy()
    kernel, bias = layer.get_weights()
    assert kernel.shape == (4, 12, 3) and bias.shape == (4, 3) and y.shape == (2, 4, 3)
    np.testing.assert_allclose(y, reference_1d(x, kernel, bias, 3, 2), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tf.function(lambda v: layer(v))(x).numpy(), y, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(K.backend.local_conv1d(x, kernel, (3,), (2,)).numpy() + bias, y, rtol=1e-5,
                               atol=1e-5)


def test_locally_connected_2d_matches_the_per_position_products():
    layer = L.LocallyConnected2D(2, (2, 3), strides=(1, 2), activation="relu", bias_initializer="random_normal")
    x = rng.standard_normal((2, 4, 7, 3)).astype(np.float32)
    y = layer(x).numpy()
    kernel, bias = layer.get_weights()
    assert kernel.shape == (9, 18, 2) and bias.shape == (3, 3, 2)
    np.testing.assert_allclose(y, np.maximum(reference_2d(x, kernel, bias, 2, 3, 1, 2), 0), rtol=1e-5, atol=1e-5)
    assert layer.compute_output_shape((None, 4, 7, 3)) == (None, 3, 3, 2)
    out = K.backend.local_conv2d(x, kernel, (2, 3), (1, 2), (3, 3)).numpy()
    np.testing.assert_allclose(out, reference_2d(x, kernel, 0, 2, 3, 1, 2), rtol=1e-5, atol=1e-5)


def test_gradients_configs_and_errors():
    layer = L.LocallyConnected2D(2, 2, dtype="float64")
    x = rng.standard_normal((1, 3, 3, 2))

    def loss(v):
        return float(tf.reduce_sum(tf.square(layer(v))).numpy())
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_sum(tf.square(layer(xt)))
    check_sampled_input_gradient(tape.gradient(y, xt), loss, x, 1)
    config = L.LocallyConnected1D(4, 2, strides=2).get_config()
    assert config["kernel_size"] == (2,) and config["strides"] == (2,) and config["implementation"] == 1
    assert L.LocallyConnected1D.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="only \"valid\" is supported if implementation is 1"):
        L.LocallyConnected1D(2, 2, padding="same")
    with pytest.raises(ValueError, match="One of the dimensions in the output is <= 0"):
        L.LocallyConnected1D(2, 5)(np.zeros((1, 3, 2), np.float32))
    model = K.Sequential([K.Input((6, 2)), L.LocallyConnected1D(3, 2), L.Flatten(), L.Dense(1)])
    model.compile("sgd", "mse")
    assert np.isfinite(model.fit(np.ones((4, 6, 2)), np.ones((4, 1)), verbose=0).history["loss"]).all()
