"""The merge, Lambda, 1-D convolution and pooling, reshaping, noise, preprocessing and wrapper layers: values
against NumPy, the same traced as eagerly, the functional API's shapes equal to the computed ones, a
get_config / from_config round trip, and gradients against central differences where a layer has weights."""
import numpy as np
import pytest

import kiln as tf
from kiln import keras as K

L = K.layers
RNG = np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


def check(layer, x, expected=None, rtol=1e-5, atol=1e-6, **call_kwargs):
    """layer(x): against `expected`, traced = eager, the symbolic output shape, and a from_config copy."""
    eager = layer(x, **call_kwargs)
    eager = [v.numpy() for v in eager] if isinstance(eager, list) else eager.numpy()
    traced = tf.function(lambda v: layer(v, **call_kwargs))(x)
    traced = [v.numpy() for v in traced] if isinstance(traced, list) else traced.numpy()
    for a, b in zip(eager if isinstance(eager, list) else [eager], traced if isinstance(traced, list) else [traced]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    if expected is not None:
        np.testing.assert_allclose(eager, expected, rtol=rtol, atol=atol)
    inputs = [K.Input(v.shape[1:]) for v in x] if isinstance(x, list) else K.Input(x.shape[1:])
    symbolic = type(layer).from_config(layer.get_config())(inputs)
    shapes = [s.shape for s in symbolic] if isinstance(symbolic, list) else [symbolic.shape]
    for shape, value in zip(shapes, eager if isinstance(eager, list) else [eager]):
        assert shape.as_list()[1:] == list(value.shape[1:]), (shape, value.shape)
    copy = type(layer).from_config(layer.get_config())
    copy(x, **call_kwargs)
    copy.set_weights(layer.get_weights())
    again = copy(x, **call_kwargs)
    for a, b in zip(eager if isinstance(eager, list) else [eager], again if isinstance(again, list) else [again]):
        np.testing.assert_allclose(a, np.asarray(b), rtol=rtol, atol=atol)
    return eager


def check_gradients(layer, x, eps=1e-6):
    """d sum(layer(x) * r) / d weights, the tape's against central differences (float64 layer)."""
    r = RNG.normal(size=np.asarray(layer(x)).shape)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) * r)
    grads = tape.gradient(loss, layer.trainable_weights)
    assert grads and all(g is not None for g in grads)
    for var, grad in zip(layer.trainable_weights, grads):
        value = var.numpy()
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            for sign in (1, -1):
                shifted = value.copy()
                shifted[idx] += sign * eps
                var.assign(shifted)
                numeric[idx] += sign * float(np.sum(np.asarray(layer(x)) * r)) / (2 * eps)
        var.assign(value)
        np.testing.assert_allclose(np.asarray(grad), numeric, rtol=1e-5, atol=1e-7)


# ---- merge ----------------------------------------------------------------------------------

def test_merge_layers_match_numpy():
    a, b, c = _x(4, 3), _x(4, 3), _x(4, 3)
    check(L.Add(), [a, b, c], a + b + c)
    check(L.Subtract(), [a, b], a - b)
    check(L.Multiply(), [a, b, c], a * b * c)
    check(L.Average(), [a, b, c], (a + b + c) / 3)
    check(L.Maximum(), [a, b, c], np.maximum(np.maximum(a, b), c))
    check(L.Minimum(), [a, b], np.minimum(a, b))
    check(L.Concatenate(), [a, _x(4, 2)], None)
    d = _x(4, 2)
    np.testing.assert_array_equal(L.Concatenate(axis=1)([a, d]).numpy(), np.concatenate([a, d], 1))
    check(L.Concatenate(axis=1), [_x(2, 3, 4), _x(2, 1, 4)])
    check(L.Dot(axes=1), [a, b], (a * b).sum(1, keepdims=True))
    na, nb = a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True)
    check(L.Dot(axes=1, normalize=True), [a, b], (na * nb).sum(1, keepdims=True))
    x3, y3 = _x(2, 3, 4), _x(2, 5, 4)
    check(L.Dot(axes=(2, 2)), [x3, y3], np.einsum("bij,bkj->bik", x3, y3))
    check(L.Dot(axes=(1, 1)), [x3, _x(2, 3, 2)])
    # Broadcasting, as NumPy's.
    np.testing.assert_allclose(L.Add()([a, np.ones((1, 3), np.float32)]).numpy(), a + 1)


def test_merge_functional_forms_errors_and_gradients():
    i1, i2 = K.Input((3,)), K.Input((3,))
    model = K.Model([i1, i2], [L.add([i1, i2]), L.concatenate([i1, i2]), L.multiply([i1, i2]), L.dot([i1, i2], axes=1),
                              L.subtract([i1, i2]), L.average([i1, i2]), L.maximum([i1, i2]), L.minimum([i1, i2])])
    a, b = _x(2, 3), _x(2, 3)
    out = model([a, b])
    for got, want in zip(out, [a + b, np.concatenate([a, b], -1), a * b, (a * b).sum(1, keepdims=True), a - b,
                               (a + b) / 2, np.maximum(a, b), np.minimum(a, b)]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="should be called on a list of at least 2 inputs"):
        L.Add()([a])
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        L.Subtract()([a, b, a])
    with pytest.raises(ValueError, match="Inputs have incompatible shapes"):
        L.Add()([K.Input((3,)), K.Input((4,))])
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        L.Concatenate(axis=1)([K.Input((3, 2)), K.Input((3, 4))])
    # Gradients through a merge reach both inputs: d sum(a * b) / da = b.
    ta, tb = tf.constant(a), tf.constant(b)
    with tf.GradientTape() as tape:
        tape.watch([ta, tb])
        y = tf.reduce_sum(L.Multiply()([ta, tb]))
    ga, gb = tape.gradient(y, [ta, tb])
    np.testing.assert_allclose(ga.numpy(), b)
    np.testing.assert_allclose(gb.numpy(), a)


def test_merge_masks_are_anded():
    x = np.array([[[1.0], [0.0], [2.0]]], np.float32)
    y = np.array([[[1.0], [3.0], [0.0]]], np.float32)
    masked_x, masked_y = L.Masking()(x), L.Masking()(y)
    out = L.Add()([masked_x, masked_y])
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, False, False]])


# ---- Lambda --------------------------------------------------------------------------------

def double(x):
    return x * 2.0


def test_lambda_layer_calls_arguments_masks_and_config():
    x = _x(3, 4)
    check(L.Lambda(lambda v, k: v * k, arguments={"k": 3.0}), x, x * 3)
    check(L.Lambda(double), x, x * 2)
    assert L.Lambda(lambda v: tf.reduce_sum(v, axis=1, keepdims=True))(K.Input((4,))).shape.as_list() == [None, 1]
    assert L.Lambda(lambda v: v[:, :2], output_shape=(2,))(K.Input((4,))).shape.as_list() == [None, 2]
    config = L.Lambda(double).get_config()
    assert config["function"] == "double" and config["function_type"] == "function"
    assert L.Lambda.from_config(config, custom_objects={"double": double}).function is double
    # A lambda is marshalled; loading it needs safe_mode=False (from_config outside a load allows it).
    config = L.Lambda(lambda v: v + 1.0).get_config()
    assert config["function_type"] == "lambda"
    np.testing.assert_allclose(L.Lambda.from_config(config)(x).numpy(), x + 1, rtol=1e-6)
    seen = {}

    def with_training(v, training=None):
        seen["training"] = training
        return v

    L.Lambda(with_training)(x, training=True)
    assert seen["training"] is True


# ---- 1-D convolution and pooling ---------------------------------------------------------------

def _conv1d_numpy(x, kernel, bias, stride=1, padding="valid", dilation=1):
    k = kernel.shape[0]
    span = (k - 1) * dilation + 1
    if padding == "causal":
        x = np.pad(x, ((0, 0), (span - 1, 0), (0, 0)))
    elif padding == "same":
        total = max((int(np.ceil(x.shape[1] / stride)) - 1) * stride + span - x.shape[1], 0)
        x = np.pad(x, ((0, 0), (total // 2, total - total // 2), (0, 0)))
    steps = (x.shape[1] - span) // stride + 1
    out = np.zeros((x.shape[0], steps, kernel.shape[2]))
    for t in range(steps):
        window = x[:, t * stride: t * stride + span: dilation, :]
        out[:, t, :] = np.einsum("bkc,kcf->bf", window, kernel)
    return out + bias


def test_conv1d_matches_numpy_for_each_padding_and_its_gradients():
    x = _x(2, 9, 3)
    for kwargs in ({}, {"strides": 2}, {"padding": "same"}, {"padding": "same", "strides": 2},
                   {"padding": "causal", "dilation_rate": 2}, {"dilation_rate": 3}):
        layer = L.Conv1D(4, 3, bias_initializer="random_normal", **kwargs)
        layer(x)
        kernel, bias = layer.get_weights()
        expected = _conv1d_numpy(x, kernel, bias, kwargs.get("strides", 1), kwargs.get("padding", "valid"),
                                 kwargs.get("dilation_rate", 1))
        check(layer, x, expected, rtol=1e-4, atol=1e-5)
    layer = L.Conv1D(2, 3, activation="tanh", dtype="float64")
    check_gradients(layer, _x(2, 5, 2, dtype=np.float64))
    model = K.Sequential([K.Input((10, 2)), L.Conv1D(4, 3, padding="causal"), L.MaxPooling1D(), L.Conv1D(2, 2),
                          L.GlobalMaxPooling1D()])
    assert model.output_shape if hasattr(model, "output_shape") else True
    assert model(np.zeros((1, 10, 2), np.float32)).shape == (1, 2)


def test_pooling_1d_layers_match_numpy():
    x = _x(2, 7, 3)
    check(L.MaxPooling1D(), x, np.stack([x[:, 2 * i:2 * i + 2].max(1) for i in range(3)], 1))
    check(L.MaxPooling1D(3, strides=1), x, np.stack([x[:, i:i + 3].max(1) for i in range(5)], 1))
    check(L.AveragePooling1D(2), x, np.stack([x[:, 2 * i:2 * i + 2].mean(1) for i in range(3)], 1))
    # "same": windows past the end average over the steps inside (TF's rule): the last window is x[:, 6] alone.
    same = check(L.AveragePooling1D(2, padding="same"), x)
    np.testing.assert_allclose(same[:, 3], x[:, 6], rtol=1e-6)
    check(L.GlobalMaxPooling1D(), x, x.max(1))
    check(L.GlobalMaxPooling1D(keepdims=True), x, x.max(1, keepdims=True))


# ---- reshaping -----------------------------------------------------------------------------------

def test_reshaping_layers_match_numpy():
    v = _x(2, 3)
    check(L.RepeatVector(4), v, np.repeat(v[:, None, :], 4, 1))
    x = _x(2, 3, 4)
    check(L.Permute((2, 1)), x, x.transpose(0, 2, 1))
    check(L.UpSampling1D(3), x, np.repeat(x, 3, 1))
    img = _x(2, 3, 4, 2)
    check(L.UpSampling2D((2, 3)), img, np.repeat(np.repeat(img, 2, 1), 3, 2))
    check(L.ZeroPadding1D((1, 2)), x, np.pad(x, ((0, 0), (1, 2), (0, 0))))
    check(L.ZeroPadding2D(1), img, np.pad(img, ((0, 0), (1, 1), (1, 1), (0, 0))))
    check(L.ZeroPadding2D(((1, 0), (2, 3))), img, np.pad(img, ((0, 0), (1, 0), (2, 3), (0, 0))))
    check(L.Cropping1D((1, 1)), x, x[:, 1:2])
    big = _x(2, 6, 7, 2)
    check(L.Cropping2D(((1, 2), (0, 3))), big, big[:, 1:4, 0:4])
    check(L.Cropping2D(1), big, big[:, 1:5, 1:6])
    with pytest.raises(ValueError, match="consecutive and start from 1"):
        L.Permute((0, 1))
    with pytest.raises(ValueError, match="must be smaller than the input"):
        L.Cropping1D((2, 2))(K.Input((4, 1)))


# ---- noise, preprocessing ------------------------------------------------------------------------

def test_noise_layers_are_identities_at_inference_and_have_keras_statistics_in_training():
    x = np.ones((200, 50), np.float32)
    for layer in (L.GaussianNoise(0.5), L.GaussianDropout(0.3), L.SpatialDropout1D(0.5)):
        y = np.ones((4, 5, 6), np.float32) if isinstance(layer, L.SpatialDropout1D) else x
        np.testing.assert_array_equal(layer(y).numpy(), y)
        np.testing.assert_array_equal(layer(y, training=False).numpy(), y)
    tf.random.set_seed(3)
    noise = L.GaussianNoise(0.5)(x, training=True).numpy() - 1
    assert abs(noise.mean()) < 0.02 and abs(noise.std() - 0.5) < 0.02
    scaled = L.GaussianDropout(0.2)(x, training=True).numpy()
    assert abs(scaled.mean() - 1) < 0.02 and abs(scaled.std() - np.sqrt(0.2 / 0.8)) < 0.02
    traced = tf.function(lambda v: L.GaussianNoise(1.0)(v, training=True))
    assert not np.array_equal(traced(x).numpy(), traced(x).numpy())  # a new draw on every graph call
    # SpatialDropout: whole channels are kept (scaled by 1 / (1 - rate)) or zeroed, the same at every position.
    seq = np.ones((64, 5, 8), np.float32)
    out = L.SpatialDropout1D(0.5)(seq, training=True).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert (out == out[:, :1, :]).all() and 0.3 < (out[:, 0] > 0).mean() < 0.7
    img = np.ones((16, 3, 3, 4), np.float32)
    out = L.SpatialDropout2D(0.25)(img, training=True).numpy()
    assert (out == out[:, :1, :1, :]).all() and set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert L.GaussianNoise(0.1).get_config()["stddev"] == 0.1


def test_rescaling_center_crop_and_normalization():
    x = RNG.integers(0, 256, size=(2, 5, 6, 3)).astype(np.uint8)
    check(L.Rescaling(1.0 / 255, offset=-0.5), x.astype(np.float32), x / 255.0 - 0.5)
    assert L.Rescaling(2.0)(x).dtype == tf.float32
    check(L.CenterCrop(3, 2), x.astype(np.float32), x[:, 1:4, 2:4].astype(np.float32))
    data = RNG.normal(loc=3.0, scale=2.0, size=(100, 4)).astype(np.float32)
    norm = L.Normalization()
    norm.adapt(data)
    np.testing.assert_allclose(norm.adapt_mean.numpy(), data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(norm.adapt_variance.numpy(), data.var(0), rtol=1e-4)
    assert int(norm.count.numpy()) == 100
    # Keras' `mean`/`variance`: the statistics in the inputs' broadcast shape (TF's regression tutorial prints them).
    np.testing.assert_allclose(norm.mean.numpy(), data.mean(0, keepdims=True), rtol=1e-5)
    assert norm.variance.shape == (1, 4) and not hasattr(L.Normalization(), "mean")
    check(norm, data[:5], (data[:5] - data.mean(0)) / data.std(0), rtol=1e-4, atol=1e-5)
    # adapt from batches (a dataset) combines them exactly; axis=None normalizes over everything.
    batched = L.Normalization()
    batched.adapt(tf.data.Dataset.from_tensor_slices(data).batch(30))
    np.testing.assert_allclose(batched.adapt_variance.numpy(), data.var(0), rtol=1e-4)
    whole = L.Normalization(axis=None)
    whole.adapt(data)
    np.testing.assert_allclose(whole(data[:2]).numpy(), (data[:2] - data.mean()) / data.std(), rtol=1e-4)
    given = L.Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0])
    check(given, np.array([[3.0, 5.0]], np.float32), [[1.0, 1.0]])
    assert given.variance.numpy().tolist() == [[4.0, 9.0]]
    inverse = L.Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0], invert=True)
    check(inverse, np.array([[1.0, 1.0]], np.float32), [[3.0, 5.0]])
    with pytest.raises(ValueError, match="both `mean` and `variance` must be set"):
        L.Normalization(mean=1.0)


# ---- wrappers ------------------------------------------------------------------------------------

def test_time_distributed_applies_the_layer_to_each_step():
    x = _x(2, 4, 3)
    dense = L.Dense(5, bias_initializer="random_normal")
    td = L.TimeDistributed(dense)
    out = check(td, x)
    kernel, bias = dense.get_weights()
    np.testing.assert_allclose(out, x @ kernel + bias, rtol=1e-5, atol=1e-6)
    check_gradients(L.TimeDistributed(L.Dense(2, dtype="float64"), dtype="float64"), _x(2, 3, 2, dtype=np.float64))
    conv = L.TimeDistributed(L.Conv2D(2, 3))
    assert conv(K.Input((5, 8, 8, 1))).shape.as_list() == [None, 5, 6, 6, 2]


def test_bidirectional_runs_a_backward_copy_and_merges():
    x = _x(2, 5, 3)
    for merge_mode in ("concat", "sum", "mul", "ave"):
        bi = L.Bidirectional(L.SimpleRNN(4, return_sequences=True), merge_mode=merge_mode)
        out = check(bi, x, rtol=1e-4, atol=1e-5)
        fw = bi.forward_layer(x).numpy()
        bw = bi.backward_layer(x).numpy()[:, ::-1]  # back in time order
        expected = {"concat": np.concatenate([fw, bw], -1), "sum": fw + bw, "mul": fw * bw, "ave": (fw + bw) / 2}
        np.testing.assert_allclose(out, expected[merge_mode], rtol=1e-5, atol=1e-6)
    bi = L.Bidirectional(L.LSTM(3))
    out = bi(x).numpy()
    assert out.shape == (2, 6) and bi.backward_layer.go_backwards and not bi.forward_layer.go_backwards
    # The backward half of the last output is the backward layer's run over the reversed sequence.
    reversed_run = L.LSTM.from_config(dict(bi.forward_layer.get_config(), name="copy"))
    reversed_run(x)
    reversed_run.set_weights(bi.backward_layer.get_weights())
    np.testing.assert_allclose(out[:, 3:], reversed_run(x[:, ::-1].copy()).numpy(), rtol=1e-5, atol=1e-6)
    assert len(bi.weights) == 6
    pair = L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode=None)(x)
    assert isinstance(pair, list) and len(pair) == 2
    check_gradients(L.Bidirectional(L.SimpleRNN(2, dtype="float64"), dtype="float64"), _x(2, 3, 2, dtype=np.float64))
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
