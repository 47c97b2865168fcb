"""Conv3D, the 3-D poolings and reshaping layers, SeparableConv1D/2D and Conv1DTranspose against direct float64
NumPy definitions (TF's "same" padding: total = max((out - 1) * stride + window - in, 0), half of it before)."""
import itertools

import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
RNG = np.random.default_rng(0)


def same_pads(size, window, stride, dilation=1):
    out = -(-size // stride)
    eff = (window - 1) * dilation + 1
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2


def conv_nd_reference(x, kernel, strides, padding, dilation):
    """Direct N-d convolution of channels_last x [b, *spatial, c] with kernel [*k, c, f]."""
    spatial = x.shape[1:-1]
    n = len(spatial)
    outs, befores = [], []
    for i in range(n):
        if padding == "same":
            o, before = same_pads(spatial[i], kernel.shape[i], strides[i], dilation[i])
        else:
            o, before = (spatial[i] - ((kernel.shape[i] - 1) * dilation[i] + 1)) // strides[i] + 1, 0
        outs.append(o)
        befores.append(before)
    y = np.zeros((x.shape[0], *outs, kernel.shape[-1]))
    for pos in itertools.product(*[range(o) for o in outs]):
        acc = np.zeros((x.shape[0], kernel.shape[-1]))
        for tap in itertools.product(*[range(k) for k in kernel.shape[:n]]):
            src = [pos[i] * strides[i] - befores[i] + tap[i] * dilation[i] for i in range(n)]
            if all(0 <= src[i] < spatial[i] for i in range(n)):
                acc += x[(slice(None), *src)] @ kernel[tap]
        y[(slice(None), *pos)] = acc
    return y


def pool3d_reference(x, pool, strides, padding, op):
    outs, befores = [], []
    for i in range(3):
        if padding == "same":
            o, before = same_pads(x.shape[i + 1], pool[i], strides[i])
        else:
            o, before = (x.shape[i + 1] - pool[i]) // strides[i] + 1, 0
        outs.append(o)
        befores.append(before)
    y = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for pos in itertools.product(*[range(o) for o in outs]):
        lo = [max(pos[i] * strides[i] - befores[i], 0) for i in range(3)]
        hi = [min(pos[i] * strides[i] - befores[i] + pool[i], x.shape[i + 1]) for i in range(3)]
        window = x[:, lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2], :]
        y[(slice(None), *pos)] = window.max(axis=(1, 2, 3)) if op == "max" else window.mean(axis=(1, 2, 3))
    return y


def check_traced(layer, x, eager):
    traced = tf.function(lambda t: layer(t))(tf.constant(x)).numpy()
    np.testing.assert_allclose(traced, eager, rtol=1e-6, atol=1e-6)


def round_trip(layer):
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


@pytest.mark.parametrize("kernel,strides,padding,dilation", [
    ((3, 3, 3), (1, 1, 1), "valid", (1, 1, 1)),
    ((2, 3, 2), (2, 1, 2), "same", (1, 1, 1)),
    ((3, 2, 2), (1, 1, 1), "same", (2, 1, 2)),
    ((1, 1, 1), (3, 2, 1), "valid", (1, 1, 1)),
])
def test_conv3d_matches_reference(kernel, strides, padding, dilation):
    x = RNG.normal(size=(2, 5, 6, 4, 3)).astype(np.float32)
    layer = L.Conv3D(4, kernel, strides=strides, padding=padding, dilation_rate=dilation, activation="relu")
    y = layer(x).numpy()
    k, b = (w.numpy().astype(np.float64) for w in layer.weights)
    assert k.shape == kernel + (3, 4)
    ref = np.maximum(conv_nd_reference(x.astype(np.float64), k, strides, padding, dilation) + b, 0)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    assert layer.compute_output_shape((None, 5, 6, 4, 3)).as_list() == [None, *ref.shape[1:]]
    check_traced(layer, x, y)
    round_trip(layer)


def test_conv3d_trains_and_has_gradients():
    x = RNG.normal(size=(8, 4, 4, 4, 1)).astype(np.float32)
    target = x.sum(axis=(1, 2, 3))
    model = tf.keras.Sequential([tf.keras.Input((4, 4, 4, 1)), L.Conv3D(2, 2, padding="same"),
                                 L.MaxPooling3D(2), L.Flatten(), L.Dense(1)])
    model.compile("adam", "mse")
    history = model.fit(x, target, epochs=15, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


@pytest.mark.parametrize("cls,op", [(L.MaxPooling3D, "max"), (L.AveragePooling3D, "avg")])
@pytest.mark.parametrize("pool,strides,padding", [((2, 2, 2), None, "valid"), ((3, 2, 3), (2, 1, 2), "same"),
                                                   ((2, 3, 1), (1, 2, 1), "valid"), ((3, 3, 3), (2, 2, 2), "same")])
def test_pooling3d_matches_reference(cls, op, pool, strides, padding):
    x = RNG.normal(size=(2, 5, 4, 5, 3)).astype(np.float32)
    layer = cls(pool, strides=strides, padding=padding)
    y = layer(x).numpy()
    ref = pool3d_reference(x.astype(np.float64), pool, strides or pool, padding, op)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    assert layer.compute_output_shape(x.shape).as_list() == list(ref.shape)
    check_traced(layer, x, y)
    round_trip(layer)
    assert L.MaxPool3D is L.MaxPooling3D and L.AvgPool3D is L.AveragePooling3D


def test_upsampling_padding_cropping_3d():
    x = RNG.normal(size=(2, 2, 3, 2, 2)).astype(np.float32)
    up = L.UpSampling3D((2, 1, 3))(x).numpy()
    np.testing.assert_array_equal(up, x.repeat(2, axis=1).repeat(3, axis=3))
    pad = L.ZeroPadding3D(((1, 0), (0, 2), 1))(x).numpy()
    np.testing.assert_array_equal(pad, np.pad(x, [(0, 0), (1, 0), (0, 2), (1, 1), (0, 0)]))
    big = RNG.normal(size=(1, 5, 6, 7, 1)).astype(np.float32)
    crop = L.Cropping3D(((1, 2), 1, (0, 3)))(big).numpy()
    np.testing.assert_array_equal(crop, big[:, 1:3, 1:5, 0:4])
    inp = tf.keras.Input((5, 6, 7, 1))
    assert L.Cropping3D(1)(inp).shape.as_list() == [None, 3, 4, 5, 1]
    assert L.UpSampling3D()(inp).shape.as_list() == [None, 10, 12, 14, 1]
    assert L.ZeroPadding3D()(inp).shape.as_list() == [None, 7, 8, 9, 1]
    for layer in (L.UpSampling3D((1, 2, 3)), L.ZeroPadding3D(((1, 0), (0, 2), (1, 1))), L.Cropping3D(2)):
        round_trip(layer)
    with pytest.raises(ValueError, match="smaller than the input size"):
        L.Cropping3D(3)(inp)


def depthwise_reference(x, depthwise, strides, padding, dilation):
    """Each input channel through its own depth_multiplier filters: channel c * m + j."""
    c, m = depthwise.shape[-2:]
    outs = [conv_nd_reference(x[..., ci:ci + 1], depthwise[..., ci:ci + 1, :], strides, padding, dilation)
            for ci in range(c)]
    return np.concatenate(outs, axis=-1)


@pytest.mark.parametrize("strides,padding,dilation,multiplier", [((1, 1), "valid", (1, 1), 1),
                                                                   ((2, 1), "same", (1, 1), 2),
                                                                   ((1, 1), "same", (2, 2), 3)])
def test_separable_conv2d_matches_reference(strides, padding, dilation, multiplier):
    x = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
    layer = L.SeparableConv2D(5, (3, 2), strides=strides, padding=padding, dilation_rate=dilation,
                              depth_multiplier=multiplier, activation="tanh")
    y = layer(x).numpy()
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == ["depthwise_kernel", "pointwise_kernel",
                                                                            "bias"]
    d, p, b = (w.numpy().astype(np.float64) for w in layer.weights)
    assert d.shape == (3, 2, 3, multiplier) and p.shape == (1, 1, 3 * multiplier, 5)
    mid = depthwise_reference(x.astype(np.float64), d, strides, padding, dilation)
    ref = np.tanh(mid @ p[0, 0] + b)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    assert layer.compute_output_shape(x.shape).as_list() == list(ref.shape)
    check_traced(layer, x, y)
    round_trip(layer)


@pytest.mark.parametrize("padding", ["valid", "same", "causal"])
def test_separable_conv1d_matches_reference(padding):
    x = RNG.normal(size=(2, 9, 3)).astype(np.float32)
    layer = L.SeparableConv1D(4, 3, padding=padding, depth_multiplier=2, dilation_rate=2 if padding == "causal"
                              else 1, strides=1 if padding == "causal" else 2)
    y = layer(x).numpy()
    d, p, b = (w.numpy().astype(np.float64) for w in layer.weights)
    assert d.shape == (3, 3, 2) and p.shape == (1, 6, 4)
    xs = x.astype(np.float64)
    if padding == "causal":
        xs = np.pad(xs, [(0, 0), (4, 0), (0, 0)])
        mid = depthwise_reference(xs, d, (1,), "valid", (2,))
    else:
        mid = depthwise_reference(xs, d, (2,), padding, (1,))
    np.testing.assert_allclose(y, mid @ p[0] + b, rtol=1e-4, atol=1e-5)
    check_traced(layer, x, y)
    round_trip(layer)


@pytest.mark.parametrize("stride,padding,output_padding", [(1, "valid", None), (2, "same", None), (3, "valid", None),
                                                           (2, "same", 1), (2, "valid", 1)])
def test_conv1d_transpose_matches_reference(stride, padding, output_padding):
    x = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    layer = L.Conv1DTranspose(4, 3, strides=stride, padding=padding, output_padding=output_padding)
    y = layer(x).numpy()
    k, b = (w.numpy().astype(np.float64) for w in layer.weights)
    assert k.shape == (3, 4, 3)
    # The transpose scatters each input step's k taps: full[t * stride + j] += x[t] @ k[j].T, then crops.
    full = np.zeros((2, (5 - 1) * stride + 3 + (output_padding or 0), 4))
    for t in range(5):
        for j in range(3):
            full[:, t * stride + j] += x[:, t].astype(np.float64) @ k[j].T
    length = layer.compute_output_shape((None, 5, 3))[1]
    # TF's conv_transpose takes "same"'s padding from the requested output length, half of it before.
    pad = max((5 - 1) * stride + 3 - length, 0) // 2 if padding == "same" else 0
    ref = full[:, pad:pad + length] + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    check_traced(layer, x, y)
    round_trip(layer)


@pytest.mark.parametrize("padding,stride,dilation", [("valid", 1, 1), ("same", 2, 1), ("causal", 1, 2)])
def test_depthwise_conv1d_matches_reference(padding, stride, dilation):
    x = RNG.normal(size=(2, 9, 3)).astype(np.float32)
    layer = L.DepthwiseConv1D(3, strides=stride, padding=padding, dilation_rate=dilation, depth_multiplier=2)
    y = layer(x).numpy()
    d, b = (w.numpy().astype(np.float64) for w in layer.weights)
    assert d.shape == (3, 3, 2) and b.shape == (6,)
    xs = x.astype(np.float64)
    if padding == "causal":
        ref = depthwise_reference(np.pad(xs, [(0, 0), (4, 0), (0, 0)]), d, (1,), "valid", (2,))
    else:
        ref = depthwise_reference(xs, d, (stride,), padding, (dilation,))
    np.testing.assert_allclose(y, ref + b, rtol=1e-4, atol=1e-5)
    assert layer.compute_output_shape(x.shape).as_list() == list(ref.shape)
    check_traced(layer, x, y)
    round_trip(layer)
