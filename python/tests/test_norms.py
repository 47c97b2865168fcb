"""reduce_logsumexp, moments, l2_normalize, clip_by_norm, global_norm, clip_by_global_norm
(issue #18): values against NumPy, gradients, traced equal to eager, TF's edge cases."""
import numpy as np
import pytest

import kiln as tf

A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])


def test_reduce_logsumexp():
    x = tf.constant(A)
    np.testing.assert_allclose(tf.reduce_logsumexp(x).numpy(), np.log(np.exp(A).sum()), rtol=1e-14)
    np.testing.assert_allclose(tf.math.reduce_logsumexp(x, axis=1, keepdims=True).numpy(),
                               np.log(np.exp(A).sum(1, keepdims=True)), rtol=1e-14)
    big = tf.constant([1000.0, 1000.0])
    assert tf.reduce_logsumexp(big).numpy() == pytest.approx(1000 + np.log(2))  # no overflow
    assert tf.reduce_logsumexp(tf.constant([-np.inf, -np.inf])).numpy() == -np.inf
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_logsumexp(x, axis=0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp(A) / np.exp(A).sum(0), rtol=1e-14)
    np.testing.assert_array_equal(tf.function(lambda v: tf.reduce_logsumexp(v, 1))(x).numpy(),
                                  tf.reduce_logsumexp(x, 1).numpy())


def test_moments():
    x = tf.constant(A)
    mean, variance = tf.nn.moments(x, axes=[0])
    np.testing.assert_allclose(mean.numpy(), A.mean(0), rtol=1e-14)
    np.testing.assert_allclose(variance.numpy(), A.var(0), rtol=1e-14)
    mean, variance = tf.nn.moments(x, axes=[0, 1], keepdims=True)
    assert mean.shape == (1, 1) and variance.numpy()[0, 0] == pytest.approx(A.var())
    with tf.GradientTape() as tape:
        tape.watch(x)
        _, v = tf.nn.moments(x, axes=[1])
    np.testing.assert_allclose(tape.gradient(v, x).numpy(), 2 * (A - A.mean(1, keepdims=True)) / 3, rtol=1e-13)


def test_l2_normalize():
    x = tf.constant(A)
    np.testing.assert_allclose(tf.nn.l2_normalize(x, axis=1).numpy(),
                               A / np.sqrt((A ** 2).sum(1, keepdims=True)), rtol=1e-14)
    np.testing.assert_allclose(tf.math.l2_normalize(x).numpy(), A / np.sqrt((A ** 2).sum()), rtol=1e-14)
    np.testing.assert_array_equal(tf.linalg.l2_normalize(tf.zeros([3])).numpy(), [0.0, 0.0, 0.0])  # epsilon


def test_clip_by_norm():
    x = tf.constant(A)
    norm = np.sqrt((A ** 2).sum())
    np.testing.assert_allclose(tf.clip_by_norm(x, 2.0).numpy(), A * 2 / norm, rtol=1e-14)
    np.testing.assert_array_equal(tf.clip_by_norm(x, 100.0).numpy(), A)  # under the norm: unchanged
    rows = np.sqrt((A ** 2).sum(1, keepdims=True))
    np.testing.assert_allclose(tf.clip_by_norm(x, 3.0, axes=[1]).numpy(), A * 3 / np.maximum(rows, 3), rtol=1e-14)
    zero = tf.zeros([2])
    with tf.GradientTape() as tape:
        tape.watch(zero)
        y = tf.reduce_sum(tf.clip_by_norm(zero, 1.0))
    assert np.isfinite(tape.gradient(y, zero).numpy()).all()  # no inf from sqrt at 0


def test_global_norm_and_clip_by_global_norm():
    a, b = tf.constant([3.0, 0.0]), tf.constant([[4.0]])
    assert tf.linalg.global_norm([a, b]).numpy() == 5.0
    (ca, none, cb), norm = tf.clip_by_global_norm([a, None, b], 1.0)
    assert none is None and norm.numpy() == 5.0
    np.testing.assert_allclose(ca.numpy(), [0.6, 0.0], rtol=1e-7)
    np.testing.assert_allclose(cb.numpy(), [[0.8]], rtol=1e-7)
    (same,), _ = tf.clip_by_global_norm([a], 10.0)
    np.testing.assert_array_equal(same.numpy(), a.numpy())
    (bad,), norm = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isinf(norm.numpy()) and np.isnan(bad.numpy()).all()
    traced = tf.function(lambda u, v: tf.clip_by_global_norm([u, v], 1.0))(a, b)
    np.testing.assert_array_equal(traced[0][1].numpy(), cb.numpy())
    with pytest.raises(tf.errors.InvalidArgumentError, match="clip_norm must be positive"):
        tf.clip_by_global_norm([a], 0.0)


def _running(fn, v, axis, exclusive, reverse, identity):
    """NumPy's cumsum/cumprod with TF's exclusive and reverse."""
    a = np.flip(v, axis) if reverse else v
    out = fn(a, axis=axis)
    if exclusive:
        first = np.full_like(np.take(out, [0], axis), identity)
        out = np.concatenate([first, np.delete(out, -1, axis=axis % v.ndim)], axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_and_cumprod_against_numpy(exclusive, reverse, axis):
    x = tf.constant(A)
    got_sum = tf.math.cumsum(x, axis, exclusive=exclusive, reverse=reverse)
    np.testing.assert_allclose(got_sum.numpy(), _running(np.cumsum, A, axis, exclusive, reverse, 0.0), rtol=1e-14)
    np.testing.assert_allclose(tf.math.cumprod(x, axis, exclusive, reverse).numpy(),
                               _running(np.cumprod, A, axis, exclusive, reverse, 1.0), rtol=1e-14)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s = tf.reduce_sum(tf.cumsum(x, axis, exclusive, reverse) * tf.constant(A))
        p = tf.reduce_sum(tf.math.cumprod(x, axis, exclusive, reverse))
    checks = ((tape.gradient(s, x), lambda v: (_running(np.cumsum, v, axis, exclusive, reverse, 0.0) * A).sum()),
              (tape.gradient(p, x), lambda v: _running(np.cumprod, v, axis, exclusive, reverse, 1.0).sum()))
    eps = 1e-6
    for grad, f in checks:  # central differences, element by element
        num = np.zeros_like(A)
        for idx in np.ndindex(A.shape):
            d = np.zeros_like(A)
            d[idx] = eps
            num[idx] = (f(A + d) - f(A - d)) / (2 * eps)
        np.testing.assert_allclose(grad.numpy(), num, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(tf.function(lambda v: tf.cumsum(v, axis, exclusive, reverse))(x).numpy(),
                                  got_sum.numpy())


def test_cumsum_errors_and_ints():
    np.testing.assert_array_equal(tf.cumsum(tf.constant([1, 2, 3])).numpy(), [1, 3, 6])
    assert tf.cumsum(tf.constant([1, 2], tf.int64)).dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis 2 is out of range for a tensor of rank 2"):
        tf.cumsum(tf.constant(A), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank 1 or more"):
        tf.cumsum(tf.constant(1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be float32, float64, int32 or int64, got bool"):
        tf.cumsum(tf.constant([True]))


def test_top_k_sort_and_argsort():
    x = tf.constant([[3.0, -1.0, 3.0, 7.0], [0.5, np.nan, -2.0, 0.5]])
    values, indices = tf.math.top_k(x, k=2)
    np.testing.assert_array_equal(values.numpy(), [[7.0, 3.0], [np.nan, 0.5]])  # NaN ranks first
    np.testing.assert_array_equal(indices.numpy(), [[3, 0], [1, 0]])  # ties: lower index first
    assert indices.dtype == tf.int32 and tf.math.top_k(x, 1, index_type=tf.int64).indices.dtype == tf.int64
    ints = tf.constant([[5, 1, 5, 2]])
    np.testing.assert_array_equal(tf.sort(ints).numpy(), [[1, 2, 5, 5]])
    np.testing.assert_array_equal(tf.sort(ints, direction="DESCENDING").numpy(), [[5, 5, 2, 1]])
    np.testing.assert_array_equal(tf.argsort(ints).numpy(), [[1, 3, 0, 2]])
    np.testing.assert_array_equal(tf.argsort(ints, direction="DESCENDING").numpy(), [[0, 2, 3, 1]])
    np.testing.assert_array_equal(tf.sort(tf.constant(A), axis=0).numpy(), np.sort(A, axis=0))
    np.testing.assert_array_equal(tf.argsort(tf.constant(A), axis=0).numpy(), np.argsort(A, axis=0, kind="stable"))
    with tf.GradientTape() as tape:
        v = tf.constant([[1.0, 4.0, 2.0, 3.0]])
        tape.watch(v)
        top = tf.math.top_k(v, 2).values
        loss = tf.reduce_sum(top * tf.constant([[10.0, 1.0]]))
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), [[0.0, 10.0, 0.0, 1.0]])
    traced = tf.function(lambda u: tf.math.top_k(u, 3))(x)
    np.testing.assert_array_equal(traced.indices.numpy(), tf.math.top_k(x, 3).indices.numpy())
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k=5 columns, it has 4"):
        tf.math.top_k(x, 5)
    with pytest.raises(ValueError, match="Unknown direction"):
        tf.sort(x, direction="UP")
