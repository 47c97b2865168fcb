"""Conv3DTranspose against the definition (each input voxel scatters kernel-weighted values into the output, TF's
"same" front padding cut off), Keras' output sizes, traced = eager, gradients through it, config and fit."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras
L = K.layers
rng = np.random.default_rng(21)


def reference(x, w, strides, padding):
    b, dims, c = x.shape[0], x.shape[1:4], x.shape[4]
    ks, f = w.shape[:3], w.shape[3]
    outs = [n * s if padding == "same" else n * s + max(k - s, 0) for n, k, s in zip(dims, ks, strides)]
    fronts = [max(k - s, 0) // 2 if padding == "same" else 0 for k, s in zip(ks, strides)]
    full = np.zeros([b] + [n * s + k for n, k, s in zip(dims, ks, strides)] + [f])
    for t in range(dims[0]):
        for y in range(dims[1]):
            for z in range(dims[2]):
                contribution = np.einsum("bc,ijkfc->bijkf", x[:, t, y, z], w)
                a, bb, cc = t * strides[0], y * strides[1], z * strides[2]
                full[:, a:a + ks[0], bb:bb + ks[1], cc:cc + ks[2]] += contribution
    return full[:, fronts[0]:fronts[0] + outs[0], fronts[1]:fronts[1] + outs[1], fronts[2]:fronts[2] + outs[2]]


@pytest.mark.parametrize("kernel, strides, padding", [((2, 3, 3), (1, 1, 1), "valid"), ((3, 3, 2), (2, 2, 1), "same"),
                                                      ((2, 2, 3), (2, 1, 2), "valid"), ((4, 3, 3), (3, 2, 2), "same")])
def test_conv3d_transpose_is_the_scatter_of_each_voxel(kernel, strides, padding):
    x = rng.standard_normal((2, 3, 4, 3, 2)).astype(np.float32)
    layer = L.Conv3DTranspose(3, kernel, strides=strides, padding=padding, bias_initializer="random_normal")
    y = layer(x).numpy()
    w, bias = layer.get_weights()
    assert w.shape == kernel + (3, 2)
    want = reference(x.astype(np.float64), w.astype(np.float64), strides, padding) + bias
    assert y.shape == want.shape == tuple(layer.compute_output_shape(x.shape).as_list())
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tf.function(lambda v: layer(v))(x).numpy(), y, rtol=1e-5, atol=1e-5)


def test_gradients_config_and_fit():
    layer = L.Conv3DTranspose(2, 2, strides=2, activation="relu")
    x = tf.constant(rng.standard_normal((1, 2, 2, 2, 3)).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(layer(x))
    dx, dw = tape.gradient(loss, [x, layer.kernel])
    assert dx.shape == x.shape and dw.shape == layer.kernel.shape and np.abs(dw.numpy()).sum() > 0
    config = layer.get_config()
    assert config["kernel_size"] == (2, 2, 2) and config["strides"] == (2, 2, 2) and config["padding"] == "valid"
    assert L.Conv3DTranspose.from_config(config).get_config() == config
    assert L.Convolution3DTranspose is L.Conv3DTranspose
    with pytest.raises(NotImplementedError, match="output_padding"):
        L.Conv3DTranspose(2, 3, output_padding=1)
    model = K.Sequential([K.Input((2, 2, 2, 1)), L.Conv3DTranspose(1, 2, strides=2)])
    model.compile("sgd", "mse")
    history = model.fit(np.ones((4, 2, 2, 2, 1)), np.ones((4, 4, 4, 4, 1)), epochs=5, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
