"""tf.linalg.eig / eigvals and the complex64/complex128 linalg ops (issue #42) against NumPy complex128,
eagerly and inside kiln.function: inv, det, slogdet (complex sign), solve, triangular_solve, lu and its
composites, cholesky (Hermitian) and cholesky_solve, qr, svd (real s), eigh (real eigenvalues), adjoint
(conjugating), trace, diag, diag_part, band_part, logdet.
Eig is checked by conventions that do not depend on a phase (A v = v diag(e), unit columns, eigenvalues
in ascending order of magnitude as TF's CPU kernel); gradients of complex matrices are refused by name."""
import numpy as np
import pytest

import kiln as tf
from test_surface_array_math import assert_both, c, run_both

rng = np.random.default_rng(11)


def complex_matrix(*shape):
    n = shape[-1]
    return rng.normal(size=shape) + 1j * rng.normal(size=shape) + n * np.eye(n)


def hermitian_pd(*shape):
    a = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def ct(x):
    return np.conj(np.swapaxes(x, -1, -2))


Z = complex_matrix(2, 3, 4, 4)
H = hermitian_pd(3, 4, 4)
W = rng.normal(size=(2, 5, 3)) + 1j * rng.normal(size=(2, 5, 3))


# ---- eig ---------------------------------------------------------------------------------

def assert_same_spectrum(got, want, n, atol):
    """Each row's eigenvalues matched to the nearest unused expected one (no ordering convention)."""
    for g, w in zip(np.asarray(got).reshape(-1, n), np.asarray(want).reshape(-1, n)):
        left = list(w)
        for value in g:
            k = int(np.argmin([abs(value - x) for x in left]))
            assert abs(value - left[k]) <= atol, (g, w)
            left.pop(k)


def check_eig(x, e, v, rtol):
    x = np.asarray(x, np.complex128)
    e, v = np.asarray(e), np.asarray(v)
    scale = max(1.0, np.abs(x).max())
    np.testing.assert_allclose(x @ v, v * e[..., None, :], atol=rtol * scale * x.shape[-1])
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=rtol)
    magnitudes = np.abs(e)
    assert np.all(np.diff(magnitudes, axis=-1) >= -rtol * scale), magnitudes
    n = x.shape[-1]
    assert_same_spectrum(e, np.linalg.eigvals(x), n, rtol * scale * n)


@pytest.mark.parametrize("x", [
    np.array([[4.0, 1.0, -0.5], [0.5, 2.0, 0.25], [-0.5, 0.75, -1.0]]),  # real spectrum
    np.array([[0.0, -2.0], [1.0, 0.5]]),  # a conjugate pair
    rng.normal(size=(3, 2, 5, 5)),
    Z,
    np.array([[2.5]]),
])
def test_eig_against_numpy(x):
    for e, v in run_both(lambda t: tf.linalg.eig(t), c(x)):
        check_eig(x, e, v, 1e-10)
    for e in run_both(lambda t: tf.linalg.eigvals(t), c(x)):
        n = x.shape[-1]
        assert_same_spectrum(e, np.linalg.eigvals(x), n, 1e-9 * n)


def test_eig_dtypes_follow_tf():
    for dtype, out in [(tf.float32, tf.complex64), (tf.complex64, tf.complex64), (tf.float64, tf.complex128),
                       (tf.complex128, tf.complex128)]:
        x = tf.cast(c(Z[0, 0] if dtype.is_complex else Z[0, 0].real), dtype)
        e, v = tf.linalg.eig(x)
        assert e.dtype == out and v.dtype == out and e.shape == (4,) and v.shape == (4, 4)
        assert tf.linalg.eigvals(x).dtype == out
        if dtype in (tf.float32, tf.complex64):
            check_eig(x.numpy(), e.numpy(), v.numpy(), 1e-4)
    with pytest.raises(TypeError):
        tf.linalg.eig(tf.constant([[1, 2], [3, 4]]))


def test_eig_order_is_ascending_magnitude():
    e = tf.linalg.eigvals(c(np.diag([3.0, -1.0, 0.5, -2.0]))).numpy()
    np.testing.assert_array_equal(e, np.array([0.5, -1.0, -2.0, 3.0], np.complex128))


def test_eig_empty_non_square_and_nan():
    e, v = tf.linalg.eig(np.zeros((2, 0, 0)))
    assert e.shape == (2, 0) and v.shape == (2, 0, 0)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="square"):
        tf.linalg.eig(np.zeros((2, 3)))
    e, v = tf.linalg.eig(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    assert np.isnan(e.numpy().real).all() and np.isnan(v.numpy().real).all()


# ---- complex forms of the factorizations ----------------------------------------------------

@pytest.mark.parametrize("x", [Z, Z[0, 0], np.zeros((2, 0, 0), np.complex128)])
def test_complex_inv_det_slogdet_solve(x):
    assert_both(lambda t: tf.linalg.inv(t), [c(x)], np.linalg.inv(x) if x.size else x)
    assert_both(lambda t: tf.linalg.inv(t, adjoint=True), [c(x)], np.linalg.inv(ct(x)) if x.size else x)
    assert_both(lambda t: tf.linalg.det(t), [c(x)], np.linalg.det(x), rtol=1e-10)
    sign, logabs = np.linalg.slogdet(x)
    assert_both(lambda t: tf.linalg.slogdet(t), [c(x)], [sign, logabs.astype(np.complex128)], rtol=1e-10)
    if x.size:
        rhs = x[..., :2] * 0.5 + 1j
        assert_both(lambda a, b: tf.linalg.solve(a, b), [c(x), c(rhs)], np.linalg.solve(x, rhs))
        assert_both(lambda a, b: tf.linalg.solve(a, b, adjoint=True), [c(x), c(rhs)], np.linalg.solve(ct(x), rhs))


def test_complex_slogdet_types_and_singular():
    sign, logabs = tf.linalg.slogdet(c(Z[0].astype(np.complex64)))
    assert sign.dtype == tf.complex64 and logabs.dtype == tf.complex64
    np.testing.assert_allclose(np.abs(sign.numpy()), 1.0, rtol=1e-6)
    sign, logabs = tf.linalg.slogdet(c(np.array([[1.0, 1j], [1j, -1.0]])))
    assert sign.numpy() == 0 and logabs.numpy().real == -np.inf
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        tf.linalg.inv(c(np.array([[1.0, 1j], [1j, -1.0]])))


def test_complex_cholesky_logdet_eigh():
    assert_both(lambda t: tf.linalg.cholesky(t), [c(H)], np.linalg.cholesky(H))
    assert_both(lambda t: tf.linalg.logdet(t), [c(H)], np.linalg.slogdet(H)[1], dtype=np.float64)
    w, v = tf.linalg.eigh(c(H))
    assert w.dtype == tf.float64 and v.dtype == tf.complex128
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(H), rtol=1e-10)
    np.testing.assert_allclose(H @ v.numpy(), v.numpy() * w.numpy()[..., None, :], atol=1e-9)
    assert_both(lambda t: tf.linalg.eigvalsh(t), [c(H)], np.linalg.eigvalsh(H))
    w32 = tf.linalg.eigvalsh(c(H.astype(np.complex64)))
    assert w32.dtype == tf.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cholesky"):
        tf.linalg.cholesky(c(-H))


@pytest.mark.parametrize("x", [W, W[0].T, Z[1, 2]])
@pytest.mark.parametrize("full", [False, True])
def test_complex_qr_and_svd(x, full):
    for q, r in run_both(lambda t: tf.linalg.qr(t, full_matrices=full), c(x)):
        np.testing.assert_allclose(q @ r, x, atol=1e-10)
        np.testing.assert_allclose(ct(q) @ q, np.broadcast_to(np.eye(q.shape[-1]), ct(q).shape[:-1] + (q.shape[-1],)),
                                   atol=1e-10)
        np.testing.assert_allclose(np.tril(r, -1), 0.0, atol=1e-12)
    for s, u, v in run_both(lambda t: tf.linalg.svd(t, full_matrices=full), c(x)):
        assert s.dtype == np.float64
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), rtol=1e-10)
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ ct(v[..., :k]), x, atol=1e-10)
    s = tf.linalg.svd(c(x.astype(np.complex64)), compute_uv=False)
    assert s.dtype == tf.float32


def test_complex_index_ops():
    x = Z[0]
    assert_both(lambda t: tf.linalg.adjoint(t), [c(x)], ct(x))
    assert_both(lambda t: tf.linalg.matrix_transpose(t), [c(x)], np.swapaxes(x, -1, -2))
    assert_both(lambda t: tf.linalg.matrix_transpose(t, conjugate=True), [c(x)], ct(x))
    assert_both(lambda t: tf.linalg.trace(t), [c(x)], np.trace(x, axis1=-2, axis2=-1))
    assert_both(lambda t: tf.linalg.diag_part(t), [c(x)], np.diagonal(x, axis1=-2, axis2=-1))
    d = x[:, 0]
    assert_both(lambda t: tf.linalg.diag(t), [c(d)], d[..., None] * np.eye(4))
    assert_both(lambda t: tf.linalg.band_part(t, 1, 0), [c(x)], np.tril(np.triu(x, -1)))
    real = rng.normal(size=(3, 3))
    np.testing.assert_array_equal(tf.linalg.adjoint(c(real)).numpy(), real.T)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_complex_triangular_solve(lower, adjoint):
    a, rhs = Z[0], Z[0][..., :2] - 0.5j
    tri = np.tril(a) if lower else np.triu(a)
    assert_both(lambda m, b: tf.linalg.triangular_solve(m, b, lower=lower, adjoint=adjoint), [c(a), c(rhs)],
                np.linalg.solve(ct(tri) if adjoint else tri, rhs))


def test_complex_lu_and_its_composites():
    x, rhs = Z[1], Z[1][..., :2] + 1j
    lu, p = tf.linalg.lu(c(x))
    assert lu.dtype == tf.complex128 and p.dtype == tf.int32
    np.testing.assert_allclose(tf.linalg.lu_reconstruct(lu, p).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(tf.linalg.lu_solve(lu, p, c(rhs)).numpy(), np.linalg.solve(x, rhs), atol=1e-12)
    np.testing.assert_allclose(tf.linalg.lu_matrix_inverse(lu, p).numpy(), np.linalg.inv(x), atol=1e-12)
    chol = tf.linalg.cholesky(c(H))
    np.testing.assert_allclose(tf.linalg.cholesky_solve(chol, c(H[..., :2])).numpy(), np.linalg.solve(H, H[..., :2]),
                               atol=1e-12)


def test_unsupported_dtypes_raise_type_error():
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        tf.linalg.inv(tf.constant([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.linalg.expm(c(Z[0, 0]))
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.linalg.lstsq(c(Z[0, 0]), c(Z[0, 0]))




def test_matmul_adjoint_conjugates_complex():
    x, y = Z[0, 0], Z[0, 1]
    assert_both(lambda a, b: tf.matmul(a, b, adjoint_a=True), [c(x), c(y)], ct(x) @ y)
    assert_both(lambda a, b: tf.matmul(a, b, adjoint_b=True), [c(x), c(y)], x @ ct(y))
    assert_both(lambda a, b: tf.linalg.matvec(a, b, adjoint_a=True), [c(x), c(y[0])], ct(x) @ y[0])
    assert_both(lambda a: tf.transpose(a, conjugate=True), [c(x)], ct(x))
    real = rng.normal(size=(3, 3))
    assert_both(lambda a: tf.matmul(a, a, adjoint_a=True), [c(real)], real.T @ real)


def test_matmul_output_type_follows_batch_matmul_v3():
    """TF's CPU kernels: int8/uint8 products accumulate in int32 when asked with output_type; other
    pairs are NotFoundError (no kernel)."""
    a = np.array([[100, -2, 7], [3, 4, -128]], np.int8)
    b = np.array([[127, 1], [-5, 2], [9, -3]], np.int8)
    want = a.astype(np.int32) @ b.astype(np.int32)
    got = run_both(lambda x, y: tf.matmul(x, y, output_type=tf.int32), c(a), c(b))
    for g in got:
        assert g.dtype == np.int32
        np.testing.assert_array_equal(g, want)
    u = np.array([[200, 1, 0], [255, 3, 9]], np.uint8)
    np.testing.assert_array_equal(tf.matmul(u, b, output_type=tf.int32).numpy(), u.astype(np.int32) @ b.astype(np.int32))
    with pytest.raises(tf.errors.NotFoundError, match="BatchMatMulV3"):
        tf.matmul(a.astype(np.float32), b.astype(np.float32), output_type=tf.int32)
