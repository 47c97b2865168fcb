"""ConvLSTM2D against a NumPy ConvLSTM (TF's "same"/"valid" convolutions, Keras' gate order and hard_sigmoid),
return_sequences / return_state / go_backwards, traced = eager, gradients through the loop, configs, fit."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras
L = K.layers
rng = np.random.default_rng(13)


def conv2d(x, k, stride, padding, dilation=(1, 1)):
    """NHWC cross-correlation with TF's padding rule (the extra pad after)."""
    kh, kw = (k.shape[0] - 1) * dilation[0] + 1, (k.shape[1] - 1) * dilation[1] + 1
    pads = []
    for n, span, s in ((x.shape[1], kh, stride[0]), (x.shape[2], kw, stride[1])):
        if padding == "same":
            total = max((-(-n // s) - 1) * s + span - n, 0)
            pads.append((total // 2, total - total // 2))
        else:
            pads.append((0, 0))
    x = np.pad(x, [(0, 0), pads[0], pads[1], (0, 0)])
    rows, cols = (x.shape[1] - kh) // stride[0] + 1, (x.shape[2] - kw) // stride[1] + 1
    out = np.zeros((x.shape[0], rows, cols, k.shape[3]))
    for i in range(rows):
        for j in range(cols):
            patch = x[:, i * stride[0]:i * stride[0] + kh:dilation[0], j * stride[1]:j * stride[1] + kw:dilation[1]]
            out[:, i, j] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def hard_sigmoid(v):
    return np.clip(0.2 * v + 0.5, 0, 1)


def reference(x, kernel, recurrent, bias, stride, padding, go_backwards=False):
    f = recurrent.shape[2]
    steps = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    h = c = None
    outputs = []
    for t in steps:
        z = conv2d(x[:, t], kernel, stride, padding) + bias
        if h is None:
            h = c = np.zeros(z.shape[:3] + (f,))
        z = z + conv2d(h, recurrent, (1, 1), "same")
        zi, zf, zc, zo = np.split(z, 4, axis=-1)
        c = hard_sigmoid(zf) * c + hard_sigmoid(zi) * np.tanh(zc)
        h = hard_sigmoid(zo) * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, 1), h, c


@pytest.mark.parametrize("padding, strides, go_backwards", [("same", (1, 1), False), ("valid", (2, 1), True)])
def test_conv_lstm_2d_follows_the_numpy_recurrence(padding, strides, go_backwards):
    x = rng.standard_normal((2, 3, 6, 5, 2)).astype(np.float32)
    layer = L.ConvLSTM2D(3, (3, 2), strides=strides, padding=padding, return_sequences=True, return_state=True,
                         go_backwards=go_backwards, bias_initializer="random_normal")
    seq, h, c = layer(x)
    kernel, recurrent, bias = (w.astype(np.float64) for w in layer.get_weights())
    want_seq, want_h, want_c = reference(x.astype(np.float64), kernel, recurrent, bias, strides, padding,
                                         go_backwards)
    np.testing.assert_allclose(seq.numpy(), want_seq, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.numpy(), want_c, rtol=1e-4, atol=1e-5)
    traced = tf.function(lambda v: layer(v)[0])(x)
    np.testing.assert_allclose(traced.numpy(), seq.numpy(), rtol=1e-5, atol=1e-6)


def test_defaults_shapes_gradients_config_and_fit():
    layer = L.ConvLSTM2D(4, 3)
    x = rng.standard_normal((2, 3, 5, 5, 1)).astype(np.float32)
    assert layer(x).shape == (2, 3, 3, 4)
    kernel, recurrent, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 1, 16) and recurrent.shape == (3, 3, 4, 16)
    np.testing.assert_array_equal(bias, [0] * 4 + [1] * 4 + [0] * 8)  # unit_forget_bias
    assert layer.compute_output_shape((None, 3, 5, 5, 1)) == (None, 3, 3, 4)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.function(lambda v: layer(v))(tf.constant(x)) ** 2)
    grads = tape.gradient(loss, layer.trainable_weights)
    assert all(g is not None and np.isfinite(g.numpy()).all() for g in grads)
    config = layer.get_config()
    assert config["filters"] == 4 and config["kernel_size"] == (3, 3) and config["recurrent_activation"] == \
        "hard_sigmoid"
    again = L.ConvLSTM2D.from_config(config)
    assert again.get_config() == dict(config, name=again.name)
    model = K.Sequential([K.Input((3, 5, 5, 1)), L.ConvLSTM2D(2, 3, padding="same", return_sequences=True),
                          L.Conv3D(1, 3, padding="same")])
    model.compile("adam", "mse")
    history = model.fit(x, x, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    with pytest.raises(NotImplementedError, match="dropout=0.1 is not supported"):
        L.ConvLSTM2D(2, 3, dropout=0.1)


def test_conv_lstm_1d_is_the_2d_layer_on_one_row():
    x = rng.standard_normal((2, 3, 7, 2)).astype(np.float32)
    one_d = L.ConvLSTM1D(3, 3, padding="same", return_sequences=True, bias_initializer="random_normal")
    y = one_d(x).numpy()
    kernel, recurrent, bias = one_d.get_weights()
    assert kernel.shape == (3, 2, 12) and y.shape == (2, 3, 7, 3)
    two_d = L.ConvLSTM2D(3, (1, 3), padding="same", return_sequences=True)
    two_d(x[:, :, None])
    two_d.set_weights([kernel[None], recurrent[None], bias])
    np.testing.assert_allclose(y, two_d(x[:, :, None]).numpy()[:, :, 0], rtol=1e-5, atol=1e-6)
    assert one_d.name.startswith("conv_lstm1d")


def test_conv_lstm_3d_is_the_2d_layer_on_one_plane():
    x = rng.standard_normal((2, 3, 5, 6, 2)).astype(np.float32)
    three_d = L.ConvLSTM3D(2, (1, 3, 3), padding="same", return_sequences=True, bias_initializer="random_normal")
    y = three_d(x[:, :, None]).numpy()
    kernel, recurrent, bias = three_d.get_weights()
    assert kernel.shape == (1, 3, 3, 2, 8) and y.shape == (2, 3, 1, 5, 6, 2)
    two_d = L.ConvLSTM2D(2, 3, padding="same", return_sequences=True)
    two_d(x)
    two_d.set_weights([kernel[0], recurrent[0], bias])
    np.testing.assert_allclose(y[:, :, 0], two_d(x).numpy(), rtol=1e-5, atol=1e-6)


def test_backend_conv3d_is_the_conv3d_layer():
    x = rng.standard_normal((1, 4, 5, 5, 2)).astype(np.float32)
    layer = L.Conv3D(3, (2, 3, 3), strides=(2, 1, 1), padding="same", use_bias=False)
    want = layer(x).numpy()
    np.testing.assert_allclose(K.backend.conv3d(x, layer.kernel, (2, 1, 1), "same").numpy(), want, rtol=1e-6)
    first = K.backend.conv3d(x.transpose(0, 4, 1, 2, 3), layer.kernel, (2, 1, 1), "same", "channels_first")
    np.testing.assert_allclose(first.numpy(), want.transpose(0, 4, 1, 2, 3), rtol=1e-6)
