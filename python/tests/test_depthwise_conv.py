"""tf.nn.depthwise_conv2d and keras.layers.DepthwiseConv2D against a NumPy reference (each
input channel correlated with its own filters), gradients against central differences,
TF's errors, training, and a saved-model round trip; grouped tf.nn.conv2d and
keras Conv2D(groups=...), the same kernels, against a convolution per group."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients


def reference(x, f, strides, padding, dilations=(1, 1)):
    """out[n, i, j, c * M + m] = sum over the window of x[n, i*s + a*d - pad, j*s + b*d - pad, c] * f[a, b, c, m]."""
    n, h, w, c = x.shape
    kh, kw, _, m = f.shape
    eh, ew = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    if padding == "SAME":
        oh, ow = -(-h // strides[0]), -(-w // strides[1])
        ph = max((oh - 1) * strides[0] + eh - h, 0) // 2
        pw = max((ow - 1) * strides[1] + ew - w, 0) // 2
    else:
        oh, ow = (h - eh) // strides[0] + 1, (w - ew) // strides[1] + 1
        ph = pw = 0
    out = np.zeros((n, oh, ow, c * m))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    ii, jj = i * strides[0] + a * dilations[0] - ph, j * strides[1] + b * dilations[1] - pw
                    if 0 <= ii < h and 0 <= jj < w:
                        out[:, i, j, :] += (x[:, ii, jj, :, None] * f[a, b]).reshape(n, c * m)
    return out


@pytest.mark.parametrize("shape, kernel, multiplier, strides, padding, dilations", [
    ((2, 6, 5, 3), (3, 3), 2, (1, 1), "SAME", (1, 1)),
    ((1, 7, 8, 4), (2, 3), 1, (2, 3), "VALID", (1, 1)),
    ((1, 7, 7, 2), (3, 2), 3, (1, 1), "SAME", (2, 2)),
])
def test_values_against_numpy(shape, kernel, multiplier, strides, padding, dilations):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    f = rng.standard_normal((*kernel, shape[3], multiplier))
    want = reference(x, f, strides, padding, dilations)
    y = tf.nn.depthwise_conv2d(tf.constant(x), tf.constant(f), [1, *strides, 1], padding, dilations=dilations)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    y32 = tf.nn.depthwise_conv2d(tf.constant(x, tf.float32), tf.constant(f, tf.float32), strides, padding,
                                 data_format="NHWC", dilations=dilations)
    np.testing.assert_allclose(y32.numpy(), want, rtol=1e-5, atol=1e-5)
    # Traced: the same bits.
    traced = tf.function(lambda a, b: tf.nn.depthwise_conv2d(a, b, strides, padding, dilations=dilations))
    np.testing.assert_array_equal(traced(tf.constant(x, tf.float32), tf.constant(f, tf.float32)).numpy(), y32.numpy())


def test_gradients_against_central_differences():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((1, 4, 5, 2)))
    f = tf.constant(rng.standard_normal((2, 3, 2, 2)))

    def loss(a, b):
        return tf.reduce_sum(tf.nn.depthwise_conv2d(a, b, [1, 2, 1, 1], "SAME") ** 2)

    check_gradients(loss, [x, f])


def test_errors_name_what_is_wrong():
    x = tf.zeros([1, 5, 5, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="input and filter must have the same depth: 3 vs 2"):
        tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 2, 1]), [1, 1, 1, 1], "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="filter must be 4-dimensional"):
        tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 3]), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="data_format 'NCHW'"):
        tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 3, 1]), [1, 1, 1, 1], "SAME", data_format="NCHW")


def test_keras_layer_values_shapes_and_config():
    layer = tf.keras.layers.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2, activation="relu")
    x = tf.random.uniform([2, 6, 5, 3])
    y = layer(x)
    assert y.shape == (2, 3, 3, 6)
    assert layer.depthwise_kernel.shape == (3, 3, 3, 2)  # [kh, kw, in, depth_multiplier], as Keras
    assert layer.bias.shape == (6,)
    assert [v.name for v in layer.trainable_variables] == ["depthwise_conv2d/depthwise_kernel:0",
                                                            "depthwise_conv2d/bias:0"]
    want = np.maximum(reference(x.numpy(), layer.depthwise_kernel.numpy(), (2, 2), "SAME") + layer.bias.numpy(), 0)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)
    assert layer.compute_output_shape([None, 6, 5, 3]).as_list() == [None, 3, 3, 6]
    config = layer.get_config()
    assert config["depth_multiplier"] == 2 and "filters" not in config
    assert tf.keras.layers.DepthwiseConv2D(2).compute_output_shape([None, 4, 4, 5]).as_list() == [None, 3, 3, 5]
    with pytest.raises(ValueError, match="depth_multiplier=0"):
        tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(NotImplementedError, match="depthwise_regularizer"):
        tf.keras.layers.DepthwiseConv2D(3, depthwise_regularizer="l2")


def test_a_depthwise_separable_model_fits_saves_and_loads(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Input([6, 6, 2]),
                                 tf.keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2),
                                 tf.keras.layers.Conv2D(1, 1)])
    model.compile(optimizer="adam", loss="mse")
    images = np.random.default_rng(2).random((10, 6, 6, 2)).astype(np.float32)
    targets = np.random.default_rng(3).random((10, 6, 6, 1)).astype(np.float32)
    first = model.evaluate(images, targets, verbose=0)
    model.fit(images, targets, batch_size=4, epochs=20, verbose=0)
    assert model.evaluate(images, targets, verbose=0) < first

    serve = tf.function(lambda images: model(images), input_signature=[tf.TensorSpec([None, 6, 6, 2], tf.float32)])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.signatures["serving_default"](images=images)["output_0"].numpy(),
                               model(images).numpy(), rtol=1e-6, atol=1e-6)
    assert len(loaded.variables) == 4


def test_grouped_conv2d_is_a_conv2d_per_group():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 5, 6))
    f = rng.standard_normal((3, 3, 2, 9))  # 3 groups of 2 input channels, 3 outputs each
    y = tf.nn.conv2d(tf.constant(x), tf.constant(f), 1, "SAME")
    want = np.concatenate([tf.nn.conv2d(tf.constant(x[..., 2 * g:2 * g + 2]), tf.constant(f[..., 3 * g:3 * g + 3]), 1,
                                        "SAME").numpy() for g in range(3)], axis=-1)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(tf.errors.InvalidArgumentError, match="output depth must be evenly divisible by number of groups"):
        tf.nn.conv2d(tf.constant(x), tf.constant(f[..., :8]), 1, "SAME")

    layer = tf.keras.layers.Conv2D(6, 3, padding="same", groups=3)
    out = layer(tf.constant(x, tf.float32))
    assert layer.kernel.shape == (3, 3, 2, 6) and out.shape == (2, 6, 5, 6)
    assert layer.get_config()["groups"] == 3
    with pytest.raises(ValueError, match="number of filters must be evenly divisible by the number of groups"):
        tf.keras.layers.Conv2D(5, 3, groups=3)
    with pytest.raises(ValueError, match="input channels must be evenly divisible by the number of groups"):
        tf.keras.layers.Conv2D(6, 3, groups=3)(tf.zeros([1, 5, 5, 4]))
