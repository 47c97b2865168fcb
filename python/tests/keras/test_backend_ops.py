"""keras.backend's functions on tensors (the `K.` of Keras 2 code) against NumPy references in float64: the
elementwise, reduction and shape functions, dot / batch_dot (np.einsum), the backend cross-entropies
(elementwise, Keras' clipping), convolutions and pooling in both data formats, rnn with a mask, switch, the
learning-phase helpers, K.function on a functional model, and the variable helpers."""
import math

import numpy as np
import pytest

import kiln as tf

K = tf.keras.backend
rng = np.random.default_rng(3)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(got, want, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)


X = randn(3, 4)

ELEMENTWISE = [
    (K.abs, np.abs), (K.exp, np.exp), (K.sign, np.sign), (K.square, np.square), (K.cos, np.cos), (K.sin, np.sin),
    (K.tanh, np.tanh), (K.sigmoid, lambda v: 1 / (1 + np.exp(-v))), (K.softsign, lambda v: v / (1 + np.abs(v))),
    (K.softplus, lambda v: np.log1p(np.exp(v))), (K.round, np.round),
    (K.sqrt, lambda v: np.sqrt(np.maximum(v, 0))), (lambda v: K.pow(v, 2), lambda v: v ** 2),
    (lambda v: K.elu(v, 0.5), lambda v: np.where(v > 0, v, 0.5 * (np.exp(v) - 1))),
    (lambda v: K.relu(v, alpha=0.1, max_value=1.0), lambda v: np.where(v > 0, np.minimum(v, 1.0), 0.1 * v)),
    (lambda v: K.clip(v, 0.5, -1), lambda v: np.full_like(v, 0.5)),
    (lambda v: K.clip(v, None, 0.2), lambda v: np.minimum(v, 0.2)),
    (lambda v: K.softmax(v, axis=0), lambda v: np.exp(v) / np.exp(v).sum(0)),
    (lambda v: K.maximum(v, 0.1), lambda v: np.maximum(v, 0.1)),
    (lambda v: K.l2_normalize(v, axis=1), lambda v: v / np.sqrt((v ** 2).sum(1, keepdims=True))),
]


@pytest.mark.parametrize("fn, ref", ELEMENTWISE)
def test_elementwise(fn, ref):
    close(fn(X), ref(X.astype(np.float64)))
    close(K.log(np.abs(X)), np.log(np.abs(X.astype(np.float64))))


def test_reductions_scans_and_comparisons():
    b = X > 0
    assert K.all(b, axis=1).numpy().tolist() == b.all(1).tolist()
    assert K.any(b, axis=0, keepdims=True).numpy().tolist() == b.any(0, keepdims=True).tolist()
    close(K.prod(X, axis=1), X.astype(np.float64).prod(1))
    assert K.argmax(X).numpy().tolist() == X.argmax(-1).tolist()
    assert K.argmin(X, axis=0).numpy().tolist() == X.argmin(0).tolist()
    close(K.cumsum(X, axis=1), X.astype(np.float64).cumsum(1))
    close(K.cumprod(X), X.astype(np.float64).cumprod(0))
    assert K.equal(X, X).numpy().all() and not K.not_equal(X, X).numpy().any()
    assert K.greater_equal(X, 0).numpy().tolist() == (X >= 0).tolist()


def test_shapes():
    t = randn(2, 3, 4)
    assert K.arange(5).numpy().tolist() == [0, 1, 2, 3, 4] and K.arange(5).dtype == tf.int32
    assert K.arange(-3).numpy().tolist() == [] and K.arange(1, 7, 2, "float32").numpy().tolist() == [1, 3, 5]
    close(K.concatenate([t, t]), np.concatenate([t, t], -1))
    close(K.permute_dimensions(t, (2, 0, 1)), t.transpose(2, 0, 1))
    assert K.batch_flatten(t).shape == (2, 12) and K.flatten(t).shape == (24,)
    assert K.expand_dims(t).shape == (2, 3, 4, 1) and K.squeeze(K.expand_dims(t, 1), 1).shape == (2, 3, 4)
    close(K.repeat(X, 2), np.repeat(X[:, None], 2, 1))
    close(K.repeat_elements(t, 2, 1), np.repeat(t, 2, 1))
    close(K.reverse(t, [0, 2]), t[::-1, :, ::-1])
    close(K.tile(X, (2, 1)), np.tile(X, (2, 1)))
    close(K.gather(X, [2, 0]), X[[2, 0]])
    close(K.one_hot([1, 0], 3), np.eye(3)[[1, 0]])
    close(K.stack([X, X], 1), np.stack([X, X], 1))
    close(K.temporal_padding(t, (1, 2)), np.pad(t, [(0, 0), (1, 2), (0, 0)]))
    img = randn(1, 2, 3, 2)
    close(K.spatial_2d_padding(img), np.pad(img, [(0, 0), (1, 1), (1, 1), (0, 0)]))
    close(K.spatial_2d_padding(img, data_format="channels_first"), np.pad(img, [(0, 0), (0, 0), (1, 1), (1, 1)]))
    close(K.resize_images(img, 2, 3, "channels_last"), img.repeat(2, 1).repeat(3, 2))
    vol = randn(1, 2, 2, 2, 1)
    close(K.resize_volumes(vol, 2, 1, 2, "channels_last"), vol.repeat(2, 1).repeat(2, 3))


@pytest.mark.parametrize("xs, ys, axes", [((4, 3), (4, 3), 1), ((4, 2, 3), (4, 3, 5), None),
                                          ((4, 2, 3), (4, 5, 3), (2, 2)), ((4, 3, 2), (4, 3), 1),
                                          ((4, 2, 3, 5), (4, 5, 6), None)])
def test_batch_dot_is_a_per_sample_contraction(xs, ys, axes):
    x, y = randn(*xs), randn(*ys)
    got = K.batch_dot(x, y, axes)
    if axes is None:  # Keras' default: x's last axis with y's second-to-last (its last when y is 2-D)
        axes = (len(xs) - 1, len(ys) - 1 if len(ys) == 2 else len(ys) - 2)
    elif isinstance(axes, int):
        axes = (axes, axes)
    want = np.stack([np.tensordot(x[i], y[i], axes=(axes[0] - 1, axes[1] - 1)) for i in range(4)])
    close(got, want.reshape(4, 1) if want.ndim == 1 else want)


def test_dot_follows_numpy():
    close(K.dot(X, X.T), X.astype(np.float64) @ X.T)
    a, b = randn(2, 3, 4), randn(5, 4, 6)
    close(K.dot(a, b), np.dot(a.astype(np.float64), b))


def test_backend_cross_entropies_are_elementwise_with_keras_clipping():
    eps = 1e-7
    p = rng.uniform(0.01, 0.99, (3, 4)).astype(np.float32)
    t = (rng.uniform(size=(3, 4)) > 0.5).astype(np.float32)
    pc = np.clip(p.astype(np.float64), eps, 1 - eps)
    bce = -(t * np.log(pc + eps) + (1 - t) * np.log(1 - pc + eps))
    close(K.binary_crossentropy(t, p), bce)
    logits = randn(3, 4).astype(np.float64)
    close(K.binary_crossentropy(t, logits.astype(np.float32), from_logits=True),
          -(t * np.log(1 / (1 + np.exp(-logits))) + (1 - t) * np.log(1 - 1 / (1 + np.exp(-logits)))))
    p_t = t * p + (1 - t) * (1 - p)
    close(K.binary_focal_crossentropy(t, p, gamma=2.0), (1 - p_t) ** 2 * bce, 1e-4)
    onehot = np.eye(4)[[0, 3, 1]]
    q = p / p.sum(-1, keepdims=True)
    close(K.categorical_crossentropy(onehot, p), -(onehot * np.log(np.clip(q, eps, 1 - eps))).sum(-1))
    close(K.sparse_categorical_crossentropy(np.array([0, 3, 1]), q), -np.log(q[[0, 1, 2], [0, 3, 1]]))
    soft = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    close(K.sparse_categorical_crossentropy(np.array([0, 3, 1]), logits.astype(np.float32), from_logits=True),
          -np.log(soft[[0, 1, 2], [0, 3, 1]]))
    close(K.sparse_categorical_crossentropy(np.array([0, 3, 1]), q, ignore_class=3),
          [-np.log(q[0, 0]), 0.0, -np.log(q[2, 1])])
    close(K.categorical_focal_crossentropy(onehot, q), (0.25 * (1 - q) ** 2 * -onehot * np.log(q)).sum(-1), 1e-4)


def conv2d_reference(x, k, stride=1):
    """NHWC 'valid' cross-correlation."""
    kh, kw = k.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_convolutions_and_pooling_in_both_data_formats():
    x, k = randn(2, 5, 6, 3), randn(3, 2, 3, 4)
    want = conv2d_reference(x.astype(np.float64), k.astype(np.float64))
    close(K.conv2d(x, k), want, 1e-4)
    close(K.conv2d(x.transpose(0, 3, 1, 2), k, data_format="channels_first"), want.transpose(0, 3, 1, 2), 1e-4)
    seq, k1 = randn(2, 7, 3), randn(3, 3, 2)
    want1 = conv2d_reference(seq[:, None].astype(np.float64), k1[None].astype(np.float64))[:, 0]
    close(K.conv1d(seq, k1), want1, 1e-4)
    causal = K.conv1d(seq, k1, padding="causal").numpy()
    close(causal[:, 2:], want1, 1e-4)
    assert causal.shape == (2, 7, 2)
    dk = randn(3, 3, 3, 1)
    depth = K.depthwise_conv2d(x, dk).numpy()
    for c in range(3):
        close(depth[..., c], conv2d_reference(x[..., c:c + 1].astype(np.float64), dk[..., c:c + 1, :])[..., 0], 1e-4)
    pk = randn(1, 1, 3, 2)
    close(K.separable_conv2d(x, dk, pk), np.tensordot(depth, pk[0, 0], axes=1), 1e-4)
    pooled = K.pool2d(x, (2, 2), (2, 2)).numpy()
    close(pooled, x[:, :4, :6].reshape(2, 2, 2, 3, 2, 3).max((2, 4)))
    close(K.pool2d(x, (2, 2), (2, 2), pool_mode="avg"), x[:, :4, :6].reshape(2, 2, 2, 3, 2, 3).mean((2, 4)))
    vol = randn(1, 4, 4, 4, 2)
    close(K.pool3d(vol, (2, 2, 2), (2, 2, 2)), vol.reshape(1, 2, 2, 2, 2, 2, 2, 2).max((2, 4, 6)))
    with pytest.raises(ValueError, match="Invalid pooling mode: sum"):
        K.pool2d(x, (2, 2), pool_mode="sum")
    close(K.bias_add(x, np.arange(3, dtype=np.float32)), x + np.arange(3))
    close(K.bias_add(x.transpose(0, 3, 1, 2), np.arange(3, dtype=np.float32), "channels_first"),
          x.transpose(0, 3, 1, 2) + np.arange(3)[:, None, None])


def test_rnn_runs_the_step_over_time_and_keeps_states_at_masked_steps():
    x = randn(2, 4, 3)
    w = randn(3, 3)
    mask = np.array([[1, 1, 0, 1], [1, 0, 0, 0]], bool)

    def step(x_t, states):
        h = np.tanh(x_t @ w + states[0]) if isinstance(x_t, np.ndarray) else K.tanh(K.dot(x_t, w) + states[0])
        return h, [h]

    last, outputs, states = K.rnn(step, x, [np.zeros((2, 3), np.float32)], mask=mask)
    h, prev, want = np.zeros((2, 3)), np.zeros((2, 3)), []
    for t in range(4):
        new = np.tanh(x[:, t] @ w + h)
        keep = mask[:, t:t + 1]
        h = np.where(keep, new, h)
        prev = np.where(keep, new, prev)
        want.append(prev)
    close(outputs, np.stack(want, 1), 1e-5)
    close(last, want[-1], 1e-5)
    close(states[0], h, 1e-5)
    _, backwards, _ = K.rnn(step, x, [np.zeros((2, 3), np.float32)], go_backwards=True)
    h, want = np.zeros((2, 3)), []
    for t in range(3, -1, -1):
        h = np.tanh(x[:, t] @ w + h)
        want.append(h)
    close(backwards, np.stack(want, 1), 1e-5)


def test_switch_and_the_learning_phase():
    close(K.switch(tf.constant(True), lambda: X, lambda: -X), X)
    close(K.switch(X[:, 0] > 0, X, -X), np.where(X[:, :1] > 0, X, -X))
    with pytest.raises(ValueError, match="Rank of `condition` should be less than or equal"):
        K.switch(np.ones((2, 2, 2), bool), X, X)
    assert K.in_train_phase(1, 2, training=True) == 1 and K.in_test_phase(1, 2, training=True) == 2
    drop = tf.keras.layers.Dropout(0.5)
    with K.learning_phase_scope(1):
        assert K.learning_phase() == 1
        assert (drop(np.ones((100,), np.float32)).numpy() == 0).any()
    assert K.learning_phase() == 0
    with pytest.raises(ValueError, match="Expected learning phase to be 0 or 1."):
        with K.learning_phase_scope(2):
            pass


def test_function_runs_a_functional_graph_to_numpy():
    inputs = tf.keras.Input((4,))
    hidden = tf.keras.layers.Dense(3, activation="relu")(inputs)
    outputs = tf.keras.layers.Dense(2)(hidden)
    model = tf.keras.Model(inputs, outputs)
    get_hidden = K.function([model.input], [model.layers[1].output])
    result = get_hidden([X])
    assert isinstance(result, list) and isinstance(result[0], np.ndarray)
    kernel, bias = model.layers[1].get_weights()
    close(result[0], np.maximum(X @ kernel + bias, 0), 1e-5)
    with pytest.raises(ValueError, match="`updates` argument is not supported during eager execution"):
        K.function([inputs], [outputs], updates=[1])


def test_variables_uids_and_helpers():
    v = K.variable(np.zeros((2,)))
    K.batch_set_value([(v, [1.0, 2.0])])
    assert K.batch_get_value([v])[0].tolist() == [1.0, 2.0] and K.eval(v).tolist() == [1.0, 2.0]
    K.update_add(v, [1.0, 1.0])
    K.moving_average_update(v, np.array([0.0, 0.0], np.float32), 0.75)
    close(v.numpy(), [1.5, 2.25])  # [2, 3] moved a quarter of the way to 0
    assert K.cast_to_floatx([1, 2]).dtype == np.float32
    K.reset_uids()
    assert [K.get_uid("dense"), K.get_uid("dense"), K.get_uid("conv")] == [1, 2, 1]
    assert K.backend() == "tensorflow" and K.is_sparse(tf.sparse.from_dense(X)) and not K.is_sparse(X)
    close(K.to_dense(tf.sparse.from_dense(X)), X)
    close(K.foldl(lambda a, b: a + b, X), X.sum(0))
    close(K.foldr(lambda a, b: a * 2 + b, X[:, 0]), ((X[2, 0] * 2 + X[1, 0]) * 2 + X[0, 0]))
    normed, mean, var = K.normalize_batch_in_training(X, None, None, [0])
    close(mean, X.mean(0))
    close(var, X.var(0))
    close(normed, (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-3), 1e-4)
    t = K.truncated_normal((2000,), 0.0, 1.0, seed=1).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.mean()) < 0.1
    with pytest.warns(UserWarning, match="random_binomial` is deprecated"):
        K.random_binomial((3,), 0.5)
    assert math.isclose(float(K.in_top_k(np.array([[0.1, 0.9], [0.8, 0.2]], np.float32), [1, 1], 1)[0]), 1.0)
