"""tf.linalg composites (issue #42): transposes, bands, diagonals, traces, matvec, cross,
normalize, against NumPy, eagerly and inside kiln.function, with gradients."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients
from test_surface_array_math import assert_both, c

rng = np.random.default_rng(3)
X = rng.normal(size=(2, 3, 4))


def _np_band(x, lower, upper):
    m, n = x.shape[-2:]
    off = np.arange(n)[None, :] - np.arange(m)[:, None]
    keep = ((lower < 0) | (-off <= lower)) & ((upper < 0) | (off <= upper))
    return np.where(keep, x, 0)


def _np_diag_part(x, k):
    return np.stack([np.diagonal(m, offset=k) for m in x.reshape(-1, *x.shape[-2:])]).reshape(
        x.shape[:-2] + (-1,))


def test_matrix_transpose_and_adjoint():
    assert_both(lambda x: tf.linalg.matrix_transpose(x), [c(X)], np.swapaxes(X, -1, -2))
    assert_both(lambda x: tf.linalg.adjoint(x), [c(X[0])], X[0].T)
    with pytest.raises(ValueError):
        tf.linalg.matrix_transpose(c(np.ones(3)))


@pytest.mark.parametrize("lower,upper", [(0, -1), (-1, 0), (1, 1), (0, 0), (-1, -1), (2, 0)])
def test_band_part(lower, upper):
    assert_both(lambda x: tf.linalg.band_part(x, lower, upper), [c(X)], _np_band(X, lower, upper))
    assert_both(lambda x, lo: tf.linalg.band_part(x, lo, upper), [c(X), tf.constant(lower)], _np_band(X, lower, upper))
    w = c(rng.normal(size=X.shape))
    check_gradients(lambda x: tf.reduce_sum(tf.linalg.band_part(x, lower, upper) * w), [c(X)])


@pytest.mark.parametrize("k", [0, 1, -1, 3, -2])
def test_diag_part_and_trace(k):
    assert_both(lambda x: tf.linalg.diag_part(x, k=k), [c(X)], _np_diag_part(X, k))
    w = c(rng.normal(size=_np_diag_part(X, k).shape))
    check_gradients(lambda x: tf.reduce_sum(tf.linalg.diag_part(x, k=k) * w), [c(X)])


def test_trace():
    assert_both(lambda x: tf.linalg.trace(x), [c(X)], np.trace(X, axis1=-2, axis2=-1))
    check_gradients(lambda x: tf.reduce_sum(tf.linalg.trace(x) * c([1.0, -2.0])), [c(X)])


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag(k):
    d = rng.normal(size=(2, 3))
    expected = np.stack([np.diag(row, k) for row in d])
    assert_both(lambda t: tf.linalg.diag(t, k=k), [c(d)], expected)
    w = c(rng.normal(size=expected.shape))
    check_gradients(lambda t: tf.reduce_sum(tf.linalg.diag(t, k=k) * w), [c(d)])
    padded = tf.linalg.diag(c(d[0]), k=k, padding_value=9.0).numpy()
    np.testing.assert_array_equal(padded, np.where(np.diag(np.ones(3), k) == 1, np.diag(d[0], k), 9.0))


def test_diag_rectangular():
    np.testing.assert_array_equal(tf.linalg.diag(tf.constant([1, 2, 3]), num_rows=3, num_cols=4).numpy(),
                                  np.eye(3, 4, dtype=np.int32) * [1, 2, 3, 0])
    np.testing.assert_array_equal(tf.linalg.diag(tf.constant([1, 2, 3]), num_rows=4, num_cols=3).numpy(),
                                  np.eye(4, 3, dtype=np.int32) * [1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):  # 3 x 4 has a main diagonal of 3
        tf.linalg.diag(tf.constant([1, 2]), num_rows=3, num_cols=4)


@pytest.mark.parametrize("k", [0, 1, -1])
def test_set_diag(k):
    diag_values = rng.normal(size=_np_diag_part(X, k).shape)
    expected = X.copy()
    m, n = X.shape[-2:]
    for i in range(diag_values.shape[-1]):
        r, col = i + max(-k, 0), i + max(k, 0)
        expected[..., r, col] = diag_values[..., i]
    assert_both(lambda x, d: tf.linalg.set_diag(x, d, k=k), [c(X), c(diag_values)], expected)
    w = c(rng.normal(size=X.shape))
    check_gradients(lambda x, d: tf.reduce_sum(tf.linalg.set_diag(x, d, k=k) * w), [c(X), c(diag_values)])


def test_matvec_cross_normalize():
    a, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4))
    assert_both(lambda x, y: tf.linalg.matvec(x, y), [c(a), c(v)], np.einsum("bij,bj->bi", a, v))
    assert_both(lambda x, y: tf.linalg.matvec(x, y, transpose_a=True), [c(a), c(v[:, :3])],
                np.einsum("bji,bj->bi", a, v[:, :3]))
    p, q = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    assert_both(lambda x, y: tf.linalg.cross(x, y), [c(p), c(q)], np.cross(p, q))
    check_gradients(lambda x, y: tf.reduce_sum(tf.linalg.cross(x, y) * c(p)), [c(p), c(q)])
    unit, norm = tf.linalg.normalize(c(p), axis=1)
    np.testing.assert_allclose(norm.numpy(), np.linalg.norm(p, axis=1, keepdims=True))
    np.testing.assert_allclose(unit.numpy(), p / np.linalg.norm(p, axis=1, keepdims=True))

