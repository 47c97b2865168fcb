"""tf.nn.conv2d_transpose and keras.layers.Conv2DTranspose against a NumPy reference
(the scatter-add definition of a transposed convolution)."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients
from saved_layer_check import check_layer_round_trip


def reference(x, f, out_shape, strides, padding):
    """Each input pixel adds filters[kh, kw] @ x[n, i, j] at (i*s - pad + kh, j*s - pad + kw)."""
    n, h, w, _ = x.shape
    kh, kw = f.shape[:2]
    out = np.zeros(out_shape, np.float64)
    pads = []
    for length, k, s, o in ((h, kh, strides[0], out_shape[1]), (w, kw, strides[1], out_shape[2])):
        pads.append(max((length - 1) * s + k - o, 0) // 2 if padding == "SAME" else 0)
    for b in range(n):
        for i in range(h):
            for j in range(w):
                for a in range(kh):
                    for c in range(kw):
                        oi, oj = i * strides[0] - pads[0] + a, j * strides[1] - pads[1] + c
                        if 0 <= oi < out_shape[1] and 0 <= oj < out_shape[2]:
                            out[b, oi, oj] += f[a, c] @ x[b, i, j]
    return out


@pytest.mark.parametrize("in_hw, out_hw, strides, padding", [
    ((3, 4), (6, 8), (2, 2), "SAME"),
    ((2, 3), (7, 7), (3, 2), "VALID"),
    ((4, 4), (4, 4), (1, 1), "SAME"),
])
def test_values_against_numpy(in_hw, out_hw, strides, padding):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, *in_hw, 4))
    f = rng.standard_normal((3, 3, 2, 4))
    out_shape = (2, *out_hw, 2)
    y = tf.nn.conv2d_transpose(tf.constant(x), tf.constant(f), out_shape, strides, padding)
    np.testing.assert_allclose(y.numpy(), reference(x, f, out_shape, strides, padding), rtol=1e-12, atol=1e-12)
    y32 = tf.nn.conv2d_transpose(tf.constant(x, tf.float32), tf.constant(f, tf.float32), tf.constant(out_shape),
                                 strides, padding)
    np.testing.assert_allclose(y32.numpy(), reference(x, f, out_shape, strides, padding), rtol=1e-5, atol=1e-5)


def test_gradients_against_central_differences():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((1, 2, 3, 2)))
    f = tf.constant(rng.standard_normal((2, 2, 3, 2)))
    out_shape = [1, 4, 6, 3]

    def loss(a, b):
        return tf.reduce_sum(tf.nn.conv2d_transpose(a, b, out_shape, 2, "SAME") ** 2)

    check_gradients(loss, [x, f])


def test_keras_layer_shapes_values_and_training():
    layer = tf.keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same", activation="relu")
    x = tf.random.uniform([2, 5, 4, 6])
    y = layer(x)
    assert y.shape == (2, 10, 8, 3)
    assert layer.kernel.shape == (3, 3, 3, 6)  # [kh, kw, filters, in], as Keras
    want = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d_transpose(x, layer.kernel, [2, 10, 8, 3], 2, "SAME"), layer.bias))
    np.testing.assert_array_equal(y.numpy(), want.numpy())
    valid = tf.keras.layers.Conv2DTranspose(2, (3, 2), strides=(2, 3))
    assert valid.compute_output_shape([None, 5, 4, 6]).as_list() == [None, 11, 12, 2]
    assert valid(x).shape == (2, 11, 12, 2)
    with pytest.raises(ValueError, match="must be greater than output padding"):
        tf.keras.layers.Conv2DTranspose(2, 3, output_padding=1)

    # A small decoder trains, its last batch smaller (the traced step relaxes the batch dim).
    model = tf.keras.Sequential([tf.keras.layers.Input([4, 4, 2]),
                                 tf.keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
                                 tf.keras.layers.Conv2D(1, 3, padding="same")])
    model.compile(optimizer="adam", loss="mse")
    images = np.random.default_rng(2).random((10, 4, 4, 2)).astype(np.float32)
    targets = np.random.default_rng(3).random((10, 8, 8, 1)).astype(np.float32)
    first = model.evaluate(images, targets, verbose=0)
    model.fit(images, targets, batch_size=4, epochs=20, verbose=0)
    assert model.evaluate(images, targets, verbose=0) < first


@pytest.mark.parametrize("make", [lambda: tf.keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same",
                                                                          activation="relu"),
                                  lambda: tf.keras.layers.Conv2DTranspose(2, (3, 2), strides=(2, 3))])
def test_keras_layer_saves_and_loads(make, tmp_path):
    x = np.random.default_rng(4).standard_normal((2, 3, 3, 2)).astype(np.float32)
    layer = make()
    check_layer_round_trip(layer, x, tf.TensorSpec([None, 3, 3, 2]), tmp_path / "m", probes=[x[:1]])
    assert [v.name for v in layer.variables] == [f"{layer.name}/kernel:0", f"{layer.name}/bias:0"]
