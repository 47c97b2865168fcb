"""tf.linalg factorizations and solves (issue #42): inv, det, slogdet, logdet, solve, triangular_solve,
cholesky, cholesky_solve, qr, svd, eigh, eigvalsh, lstsq, pinv against NumPy float64 on random, batched and
edge inputs, eagerly and inside kiln.function; gradients against central differences, also traced and
nested; TF's errors for non-square, singular and non-positive-definite input."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients, central_differences
from test_surface_array_math import assert_both, c, run_both

rng = np.random.default_rng(7)


def well_conditioned(*shape):
    n = shape[-1]
    return rng.normal(size=shape) + n * np.eye(n)


def spd(*shape):
    a = rng.normal(size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


A = well_conditioned(2, 3, 4, 4)
B = rng.normal(size=(2, 3, 4, 2))
S = spd(3, 4, 4)
M = rng.normal(size=(2, 5, 3))


# ---- values against NumPy ----------------------------------------------------------------

@pytest.mark.parametrize("x", [A, A[0, 0], np.array([[2.5]]), np.zeros((0, 3, 3)), np.zeros((2, 0, 0))])
def test_inv_det_slogdet(x):
    assert_both(lambda t: tf.linalg.inv(t), [c(x)], np.linalg.inv(x) if x.size else x)
    assert_both(lambda t: tf.linalg.inv(t, adjoint=True), [c(x)],
                np.linalg.inv(np.swapaxes(x, -1, -2)) if x.size else x)
    assert_both(lambda t: tf.linalg.det(t), [c(x)], np.linalg.det(x), rtol=1e-10)
    sign, logabs = np.linalg.slogdet(x)
    assert_both(lambda t: tf.linalg.slogdet(t), [c(x)], [sign, logabs], rtol=1e-10)


def test_float32_and_shapes():
    x = A.astype(np.float32)
    got = tf.linalg.inv(x)
    assert got.dtype == tf.float32 and got.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(got.numpy(), np.linalg.inv(A), rtol=1e-4, atol=1e-5)
    assert tf.linalg.det(x).shape == (2, 3)
    q, r = tf.linalg.qr(M.astype(np.float32))
    assert q.dtype == tf.float32 and q.shape == (2, 5, 3) and r.shape == (2, 3, 3)


def test_det_singular_and_slogdet_sign():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert tf.linalg.det(c(singular)).numpy() == 0.0
    sign, logabs = tf.linalg.slogdet(c(singular))
    assert sign.numpy() == 0.0 and logabs.numpy() == -np.inf
    sign, logabs = tf.linalg.slogdet(c([[0.0, 2.0], [3.0, 1.0]]))
    assert sign.numpy() == -1.0 and np.isclose(logabs.numpy(), np.log(6.0))


def test_logdet():
    assert_both(lambda t: tf.linalg.logdet(t), [c(S)], np.linalg.slogdet(S)[1], rtol=1e-10)


@pytest.mark.parametrize("adjoint", [False, True])
def test_solve(adjoint):
    a = np.swapaxes(A, -1, -2) if adjoint else A
    assert_both(lambda x, y: tf.linalg.solve(x, y, adjoint=adjoint), [c(A), c(B)], np.linalg.solve(a, B),
                rtol=1e-9)


@pytest.mark.parametrize("lower,adjoint", [(True, False), (False, False), (True, True), (False, True)])
def test_triangular_solve(lower, adjoint):
    tri = np.tril(A) if lower else np.triu(A)
    a = np.swapaxes(tri, -1, -2) if adjoint else tri
    # the other triangle is not read
    assert_both(lambda x, y: tf.linalg.triangular_solve(x, y, lower=lower, adjoint=adjoint), [c(A), c(B)],
                np.linalg.solve(a, B), rtol=1e-9)


def test_triangular_solve_broadcasts_batch_dims():
    a, b = A[0, 0], B
    assert_both(lambda x, y: tf.linalg.triangular_solve(x, y), [c(a), c(b)],
                np.linalg.solve(np.broadcast_to(np.tril(a), (2, 3, 4, 4)), b), rtol=1e-9)


def test_cholesky_and_cholesky_solve():
    assert_both(lambda x: tf.linalg.cholesky(x), [c(S)], np.linalg.cholesky(S), rtol=1e-10)
    chol = np.linalg.cholesky(S)
    rhs = rng.normal(size=(3, 4, 2))
    assert_both(lambda l, y: tf.linalg.cholesky_solve(l, y), [c(chol), c(rhs)], np.linalg.solve(S, rhs),
                rtol=1e-9)
    # only the lower triangle is read
    np.testing.assert_allclose(tf.linalg.cholesky(c(np.tril(S))).numpy(), chol, rtol=1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (3, 0), (0, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_qr(shape, full):
    x = rng.normal(size=shape)
    for q, r in run_both(lambda t: tf.linalg.qr(t, full_matrices=full), c(x)):
        want_q, want_r = np.linalg.qr(x, mode="complete" if full else "reduced")
        assert q.shape == want_q.shape and r.shape == want_r.shape
        np.testing.assert_allclose(q @ r, x, atol=1e-12)
        np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), atol=1e-12)
        np.testing.assert_array_equal(r, np.triu(r))
        # LAPACK's Householder signs, as NumPy's
        np.testing.assert_allclose(np.abs(r), np.abs(want_r), atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (2, 0, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape, full):
    x = rng.normal(size=shape)
    for s, u, v in run_both(lambda t: tf.linalg.svd(t, full_matrices=full), c(x)):
        want_u, want_s, want_vt = np.linalg.svd(x, full_matrices=full)
        np.testing.assert_allclose(s, want_s, atol=1e-12)
        assert u.shape == want_u.shape and v.shape == np.swapaxes(want_vt, -1, -2).shape
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ np.swapaxes(v[..., :, :k], -1, -2), x,
                                   atol=1e-12)
    assert_both(lambda t: tf.linalg.svd(t, compute_uv=False), [c(x)], np.linalg.svd(x, compute_uv=False),
                atol=1e-12)


def test_eigh_and_eigvalsh():
    for e, v in run_both(lambda t: tf.linalg.eigh(t), c(S)):
        np.testing.assert_allclose(e, np.linalg.eigvalsh(S), rtol=1e-12)
        np.testing.assert_allclose(v @ (e[..., :, None] * np.swapaxes(v, -1, -2)), S, atol=1e-12)
    assert_both(lambda t: tf.linalg.eigvalsh(t), [c(np.tril(S))], np.linalg.eigvalsh(S), rtol=1e-12)
    assert tf.linalg.slogdet(c(S)).log_abs_determinant.shape == (3,)  # TF's named tuples
    assert tf.linalg.qr(c(S)).r.shape == (3, 4, 4)


@pytest.mark.parametrize("shape", [(6, 3), (3, 6)])
def test_lstsq(shape):
    a, b = rng.normal(size=(2,) + shape), rng.normal(size=(2, shape[0], 2))
    want = np.stack([np.linalg.lstsq(a[i], b[i], rcond=None)[0] for i in range(2)])
    assert_both(lambda x, y: tf.linalg.lstsq(x, y), [c(a), c(b)], want, rtol=1e-8)
    assert_both(lambda x, y: tf.linalg.lstsq(x, y, fast=False), [c(a), c(b)], want, rtol=1e-8)
    lam = 0.7
    m, n = shape
    if m >= n:
        ridge = np.linalg.solve(np.swapaxes(a, -1, -2) @ a + lam * np.eye(n), np.swapaxes(a, -1, -2) @ b)
    else:
        ridge = np.swapaxes(a, -1, -2) @ np.linalg.solve(a @ np.swapaxes(a, -1, -2) + lam * np.eye(m), b)
    assert_both(lambda x, y: tf.linalg.lstsq(x, y, l2_regularizer=lam), [c(a), c(b)], ridge, rtol=1e-8)


def test_lstsq_rank_deficient_needs_fast_false():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([[1.0], [2.0], [3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank deficient"):
        tf.linalg.lstsq(c(a), c(b))
    np.testing.assert_allclose(tf.linalg.lstsq(c(a), c(b), fast=False).numpy(), np.linalg.pinv(a) @ b, atol=1e-12)


@pytest.mark.parametrize("x", [rng.normal(size=(4, 3)), rng.normal(size=(2, 3, 5)),
                               np.array([[1.0, 2.0], [2.0, 4.0]])])
def test_pinv(x):
    assert_both(lambda t: tf.linalg.pinv(t), [c(x)], np.linalg.pinv(x), atol=1e-12)


def test_lu_and_its_composites():
    x = A
    for packed, perm in run_both(lambda t: tuple(tf.linalg.lu(t)), c(x)):
        lower = np.tril(packed, -1) + np.eye(4)
        upper = np.triu(packed)
        np.testing.assert_allclose(lower @ upper, np.take_along_axis(x, perm[..., None], axis=-2), atol=1e-12)
        assert perm.dtype == np.int32
    packed, perm = tf.linalg.lu(c(x), output_idx_type=tf.int64)
    assert perm.dtype == tf.int64
    np.testing.assert_allclose(tf.linalg.lu_reconstruct(packed, perm).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(tf.linalg.lu_solve(packed, perm, c(B)).numpy(), np.linalg.solve(x, B), rtol=1e-9)
    np.testing.assert_allclose(tf.linalg.lu_matrix_inverse(packed, perm).numpy(), np.linalg.inv(x), rtol=1e-9)


def _expm_reference(x):
    """exp(x) of a diagonalizable matrix by its eigendecomposition, in float64."""
    w, v = np.linalg.eig(x)
    return np.real(v @ np.diag(np.exp(w)) @ np.linalg.inv(v))


@pytest.mark.parametrize("scale", [0.001, 0.1, 0.5, 1.5, 8.0])  # every Pade order, and squarings
def test_expm(scale):
    x = rng.normal(size=(2, 4, 4)) * scale
    want = np.stack([_expm_reference(m) for m in x])
    assert_both(lambda t: tf.linalg.expm(t), [c(x)], want, rtol=1e-9, atol=1e-12)
    rotation = np.array([[0.0, 1.0], [-1.0, 0.0]])
    np.testing.assert_allclose(tf.linalg.expm(c(rotation)).numpy(), [[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]])
    assert tf.linalg.expm(c(np.zeros((3, 0, 0)))).shape == (3, 0, 0)
    got = tf.linalg.expm(x.astype(np.float32))
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max()))


def test_ill_conditioned_agrees_with_numpy():
    hilbert = 1.0 / (np.arange(6)[:, None] + np.arange(6)[None, :] + 1.0)  # condition number ~1.5e7
    np.testing.assert_allclose(tf.linalg.inv(c(hilbert)).numpy(), np.linalg.inv(hilbert), rtol=1e-6)
    np.testing.assert_allclose(tf.linalg.det(c(hilbert)).numpy(), np.linalg.det(hilbert), rtol=1e-6)
    np.testing.assert_allclose(tf.linalg.cholesky(c(hilbert)).numpy(), np.linalg.cholesky(hilbert), rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(tf.linalg.svd(c(hilbert), compute_uv=False).numpy(),
                               np.linalg.svd(hilbert, compute_uv=False), rtol=1e-5, atol=1e-16)


# ---- errors and special values -------------------------------------------------------------

def test_non_square_names_the_shape():
    for fn in (tf.linalg.inv, tf.linalg.det, tf.linalg.slogdet, tf.linalg.cholesky, tf.linalg.eigh):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"must be square.*\(2, 3\)"):
            fn(c(np.ones((2, 3))))
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 2"):
        tf.linalg.inv(c(np.ones(3)))


def test_singular_and_not_positive_definite():
    singular = c([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Input is not invertible\."):
        tf.linalg.inv(singular)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix is not invertible"):
        tf.linalg.solve(singular, c([[1.0], [1.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cholesky decomposition was not successful"):
        tf.linalg.cholesky(c([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):
        tf.function(tf.linalg.inv)(singular)


def test_nan_and_inf_do_not_crash():
    bad = np.array([[np.nan, 1.0], [1.0, 2.0]])
    assert np.isnan(tf.linalg.det(c(bad)).numpy())
    assert np.isnan(tf.linalg.svd(c(bad), compute_uv=False).numpy()).all()
    s, u, v = tf.linalg.svd(c([[np.inf, 1.0], [1.0, 2.0]]))
    assert np.isnan(u.numpy()).all()
    assert np.isnan(tf.linalg.eigvalsh(c(bad)).numpy()).all()
    assert np.isnan(tf.linalg.qr(c(bad)).r.numpy()).any()
    assert np.isnan(tf.linalg.cholesky(c(bad)).numpy()).all()  # as TF's: NaN, not an error
    assert np.isnan(tf.linalg.triangular_solve(c(bad), c([[1.0], [1.0]])).numpy()).all()


# ---- gradients against central differences ------------------------------------------------

W2 = rng.normal(size=(3, 4, 2))
W4 = rng.normal(size=(3, 4, 4))
A3 = well_conditioned(3, 4, 4)
B3 = rng.normal(size=(3, 4, 2))


def sym(x):
    """The symmetric matrix of x's lower triangle (what cholesky and eigh read)."""
    low = tf.linalg.band_part(x, -1, 0)
    return low + tf.linalg.matrix_transpose(low) - tf.linalg.diag(tf.linalg.diag_part(x))


GRADIENT_CASES = {
    "inv": (lambda x: tf.reduce_sum(tf.linalg.inv(x) * c(W4)), [A3]),
    "inv_adjoint": (lambda x: tf.reduce_sum(tf.linalg.inv(x, adjoint=True) * c(W4)), [A3]),
    "det": (lambda x: tf.reduce_sum(tf.linalg.det(x) * c([1.0, -2.0, 0.5])), [A3]),
    "slogdet": (lambda x: tf.reduce_sum(tf.linalg.slogdet(x)[1] * c([1.0, -2.0, 0.5])), [A3]),
    "logdet": (lambda x: tf.reduce_sum(tf.linalg.logdet(sym(x))), [spd(3, 4, 4)]),
    "solve": (lambda x, y: tf.reduce_sum(tf.linalg.solve(x, y) * c(W2)), [A3, B3]),
    "solve_adjoint": (lambda x, y: tf.reduce_sum(tf.linalg.solve(x, y, adjoint=True) * c(W2)), [A3, B3]),
    "triangular_solve": (lambda x, y: tf.reduce_sum(tf.linalg.triangular_solve(x, y) * c(W2)), [A3, B3]),
    "triangular_solve_upper_adjoint": (
        lambda x, y: tf.reduce_sum(tf.linalg.triangular_solve(x, y, lower=False, adjoint=True) * c(W2)), [A3, B3]),
    "triangular_solve_broadcast": (lambda x, y: tf.reduce_sum(tf.linalg.triangular_solve(x, y) * c(W2)),
                                   [A3[0], B3]),
    "cholesky": (lambda x: tf.reduce_sum(tf.linalg.cholesky(sym(x)) * c(W4)), [spd(3, 4, 4)]),
    "cholesky_solve": (lambda x, y: tf.reduce_sum(tf.linalg.cholesky_solve(tf.linalg.cholesky(sym(x)), y) * c(W2)),
                       [spd(3, 4, 4), B3]),
    "qr": (lambda x: tf.reduce_sum(tf.linalg.qr(x).q * c(W2[..., :3, :])) + tf.reduce_sum(tf.linalg.qr(x).r),
           [rng.normal(size=(3, 3, 2))]),
    "qr_wide": (lambda x: tf.reduce_sum(tf.linalg.qr(x).q * c(W2[0, :2])) + tf.reduce_sum(tf.linalg.qr(x).r ** 2),
                [rng.normal(size=(2, 4))]),
    "svd": (lambda x: tf.reduce_sum(tf.linalg.svd(x)[0] ** 2 * c([1.0, 0.5])) +
            tf.reduce_sum(tf.linalg.svd(x)[1] * c(W2[0, :3])) + tf.reduce_sum(tf.linalg.svd(x)[2] ** 3),
            [rng.normal(size=(3, 2))]),
    "svd_values": (lambda x: tf.reduce_sum(tf.linalg.svd(x, compute_uv=False) * c([1.0, -0.5])),
                   [rng.normal(size=(2, 4))]),
    "eigh": (lambda x: tf.reduce_sum(tf.linalg.eigh(sym(x))[0] * c([1.0, 2.0, -1.0, 0.5])) +
             tf.reduce_sum(tf.linalg.eigh(sym(x))[1] ** 3), [spd(4, 4)]),
    "eigvalsh": (lambda x: tf.reduce_sum(tf.linalg.eigvalsh(sym(x)) * c([1.0, 2.0, -1.0, 0.5])), [spd(4, 4)]),
    "lstsq": (lambda x, y: tf.reduce_sum(tf.linalg.lstsq(x, y, l2_regularizer=0.3) * c(W2[0, :3])),
              [rng.normal(size=(5, 3)), rng.normal(size=(5, 2))]),
    "lstsq_wide": (lambda x, y: tf.reduce_sum(tf.linalg.lstsq(x, y) * c(W2[0])), [rng.normal(size=(2, 4)),
                                                                              rng.normal(size=(2, 2))]),
    "expm": (lambda x: tf.reduce_sum(tf.linalg.expm(x) * c(W4)), [rng.normal(size=(3, 4, 4))]),
    "expm_scaled": (lambda x: tf.reduce_sum(tf.linalg.expm(x) * c(W4[0])), [3 * rng.normal(size=(4, 4))]),
    "lu": (lambda x: tf.reduce_sum(tf.linalg.lu(x).lu * c(W4)), [A3]),
    "lu_solve": (lambda x, y: tf.reduce_sum(tf.linalg.lu_solve(*tf.linalg.lu(x), y) * c(W2)), [A3, B3]),
    "pinv": (lambda x: tf.reduce_sum(tf.linalg.pinv(x) * c(W2[0, :3, :2].T)), [rng.normal(size=(3, 2))]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_central_differences(name):
    loss, values = GRADIENT_CASES[name]
    check_gradients(loss, [c(v) for v in values], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["inv", "solve", "cholesky", "svd", "eigh", "lstsq", "qr", "expm"])
def test_gradients_traced_and_nested_equal_eager(name):
    loss, values = GRADIENT_CASES[name]
    args = [c(v) for v in values]

    def grads(*xs):
        with tf.GradientTape() as tape:
            tape.watch(xs)
            value = loss(*xs)
        return tape.gradient(value, xs)

    def second_order(*xs):  # a tape inside a tape: the gradient of the gradient's sum
        with tf.GradientTape() as outer:
            outer.watch(xs)
            total = tf.add_n([tf.reduce_sum(g) for g in grads(*xs)])
        return outer.gradient(total, xs)

    eager = [g.numpy() for g in grads(*args)]
    traced = [g.numpy() for g in tf.function(grads)(*args)]
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(t, e, rtol=1e-10, atol=1e-12)
    if name in ("inv", "solve", "expm"):
        want = central_differences(lambda *xs: tf.add_n([tf.reduce_sum(g) for g in grads(*xs)]), args, 0)
        np.testing.assert_allclose(tf.function(second_order)(*args)[0].numpy(), want, rtol=1e-5, atol=1e-6)


def test_lstsq_fast_false_has_no_gradient():
    a, b = c(rng.normal(size=(4, 2))), c(rng.normal(size=(4, 1)))
    with tf.GradientTape() as tape:
        tape.watch(a)
        x = tf.linalg.lstsq(a, b, fast=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="fast=False"):
        tape.gradient(x, a)


def test_unknown_batch_dims_in_a_signature():
    @tf.function(input_signature=[tf.TensorSpec([None, 4, 4], tf.float64)])
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.linalg.slogdet(x)[1])
        inverse = tf.linalg.inv(x)
        assert inverse.shape.as_list() == [None, 4, 4]  # inferred while tracing
        return inverse, tape.gradient(y, x)

    inverse, grad = f(c(A[0]))
    np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(A[0]), rtol=1e-10)
    np.testing.assert_allclose(grad.numpy(), np.swapaxes(np.linalg.inv(A[0]), -1, -2), rtol=1e-10)
