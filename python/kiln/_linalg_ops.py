"""tf.linalg functions: index bookkeeping over the last two dims (transposes, bands, diagonals,
traces, matrix-vector products), composed of engine ops so they differentiate and trace; and the
factorizations and solves (inv, det, slogdet, solve, triangular_solve, cholesky, qr, svd, eigh,
eig, lstsq, expm, lu: engine ops over LAPACK, include/kiln/linalg.h) with TF's composites over them
(cholesky_solve, eigvalsh, eigvals, logdet, pinv, lu_solve, lu_reconstruct, lu_matrix_inverse).
inv, det, slogdet, solve, triangular_solve, cholesky, lu, qr, svd, eigh and eig also take
complex64/complex128."""
import collections as _collections

import numpy as _np

from . import _C
from . import dtypes as _dtypes
from . import errors as _errors
from ._array_ops import _static_shape, _tensor
from ._ops import cast, gather, matmul, reshape, reduce_sum, where


def _matrix_dims(x, what):
    if x.ndim is None or x.ndim < 2:
        raise ValueError(f"kiln.linalg.{what}: the input must have rank 2 or more, got shape {x.shape}")
    return _static_shape(x, f"linalg.{what}")


def _offsets(m, n):
    """(column - row) for each entry of an m x n matrix."""
    return _np.arange(n)[None, :] - _np.arange(m)[:, None]


def _scalar_k(k, what):
    if isinstance(k, (_C.Tensor, _C.Variable)):
        k = k.numpy()
    k = _np.asarray(k)
    if k.ndim != 0:
        raise NotImplementedError(f"kiln.linalg.{what}: only one diagonal (a scalar k) is supported, got k={k.tolist()}")
    return int(k)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    a = _tensor(a)
    if a.ndim is None or a.ndim < 2:
        raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = {a} with shape: "
                         f"{a.shape}")
    perm = list(range(a.ndim - 2)) + [a.ndim - 1, a.ndim - 2]
    if conjugate and a.dtype.is_complex:
        a = _C.conj(a)
    return _C.transpose(a, perm)


def adjoint(matrix, name=None):
    """The conjugate transpose of each matrix (the transpose for real dtypes)."""
    return matrix_transpose(matrix, conjugate=True)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002 - TF's argument name
    """Entries within num_lower below and num_upper above the diagonal kept, the rest zero (a
    negative count keeps that whole triangle)."""
    x = _tensor(input)
    m, n = _matrix_dims(x, "band_part")[-2:]
    offsets = _C.constant(_offsets(m, n).astype(_np.int64), None)
    lower, upper = _tensor(num_lower, _dtypes.int64), _tensor(num_upper, _dtypes.int64)
    keep = _C.logical_and(_C.logical_or(_C.less(lower, 0), _C.less_equal(-offsets, lower)),
                          _C.logical_or(_C.less(upper, 0), _C.less_equal(offsets, upper)))
    return where(keep, x, _C.zeros_like(x, None))


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """A (batch of) matrix with `diagonal` on its k-th diagonal and padding_value elsewhere."""
    d = _tensor(diagonal)
    k = _scalar_k(k, "diag")
    length = _static_shape(d, "linalg.diag")[-1]
    rows, cols = int(num_rows), int(num_cols)
    min_rows, min_cols = length + max(-k, 0), length + max(k, 0)
    if rows < 0 and cols < 0:  # square, as TF assumes
        rows = cols = max(min_rows, min_cols)
    elif rows < 0:
        rows = min_rows
    elif cols < 0:
        cols = min_cols
    offsets = _offsets(rows, cols)
    on = offsets == k
    # position along the diagonal of each entry: its row, or its column below the main diagonal
    position = _np.where(k >= 0, _np.arange(rows)[:, None] + 0 * offsets, _np.arange(cols)[None, :] + 0 * offsets)
    if on.any() and position[on].max() >= length:
        raise _errors.InvalidArgumentError(f"The diagonal of length {length} does not fit diagonal {k} of a "
                                           f"{rows} x {cols} matrix")
    values = gather(d, _C.constant(_np.minimum(position, max(length - 1, 0)).astype(_np.int32), None),
                    axis=d.ndim - 1)
    pad = _C.cast(_tensor(padding_value), d.dtype._enum)
    return where(_C.constant(on, None), values, pad)


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The k-th diagonal of each matrix (k > 0 above the main one, k < 0 below)."""
    x = _tensor(input)
    dims = _matrix_dims(x, "diag_part")
    m, n = dims[-2:]
    k = _scalar_k(k, "diag_part")
    if not -m < k < n and not (m == 0 or n == 0):
        raise _errors.InvalidArgumentError(f"The diagonal k={k} is outside a {m} x {n} matrix")
    rows = _np.arange(max(0, min(m + min(k, 0), n - max(k, 0)))) + max(-k, 0)
    flat_index = rows * n + (rows + k)
    flat = reshape(x, dims[:-2] + [m * n])
    return gather(flat, _C.constant(flat_index.astype(_np.int32), None), axis=x.ndim - 2)


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """input with its k-th diagonal replaced by `diagonal`."""
    x = _tensor(input)
    m, n = _matrix_dims(x, "set_diag")[-2:]
    k = _scalar_k(k, "set_diag")
    d = _tensor(diagonal, x.dtype)
    on = _C.constant(_offsets(m, n) == k, None)
    return where(on, diag(d, k=k, num_rows=m, num_cols=n), x)


def trace(x, name=None):
    """The sum of each matrix's main diagonal."""
    return reduce_sum(diag_part(x), axis=-1)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    b = _tensor(b)
    return _C.squeeze(matmul(a, _C.expand_dims(b, b.ndim), transpose_a=transpose_a, adjoint_a=adjoint_a),
                      [b.ndim])


def cross(a, b, name=None):
    """The cross product of the 3-vectors in a's and b's last dims."""
    a, b = _tensor(a), _tensor(b)
    if a.shape.as_list()[-1] != 3 or b.shape.as_list()[-1] != 3:
        raise ValueError(f"kiln.linalg.cross needs 3-vectors in the last dim, got {a.shape} and {b.shape}")
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    return _C.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """(tensor / its norm, the norm), the norm kept with size-1 dims."""
    from ._math_ops import norm
    x = _tensor(tensor)
    if not x.dtype.is_floating:
        x = cast(x, _dtypes.float32)
    n = norm(x, ord=ord, axis=axis, keepdims=True)
    return x / n, n


# ---- factorizations and solves (engine ops over LAPACK) ----

def _float_matrix(x, complex_ok=False):
    """x as a tensor of a dtype the LAPACK ops take: float32/float64, and complex64/complex128
    for the ops that have complex kernels (TypeError otherwise, as TF's op registrations)."""
    x = _tensor(x)
    if x.dtype.is_complex and complex_ok:
        return x
    if not x.dtype.is_floating or x.dtype.name in ("float16", "bfloat16"):
        wanted = "float32, float64, complex64 or complex128" if complex_ok else "float32 or float64"
        raise TypeError(f"kiln.linalg: expected a {wanted} tensor, got {x.dtype.name}")
    return x


def _matrix(x):
    return _float_matrix(x, complex_ok=True)


def inv(input, adjoint=False, name=None):  # noqa: A002 - TF's argument name
    return _C.matrix_inverse(_matrix(input), bool(adjoint))


def det(input, name=None):  # noqa: A002
    return _C.matrix_determinant(_matrix(input))


_LogMatrixDeterminant = _collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def slogdet(input, name=None):  # noqa: A002
    """(sign, log |det|) of each matrix, as TF's op: a named tuple."""
    return _LogMatrixDeterminant(*_C.log_matrix_determinant(_matrix(input)))


def logdet(matrix, name=None):
    """log det of each Hermitian positive definite matrix: 2 sum(log(re(diag(cholesky)))), as TF
    (real for complex matrices)."""
    chol = cholesky(matrix)
    diagonal = diag_part(chol)
    if diagonal.dtype.is_complex:
        diagonal = _C.real(diagonal)
    return 2.0 * reduce_sum(_C.log(diagonal), axis=-1)


def expm(input, name=None):  # noqa: A002
    """The matrix exponential of each square matrix."""
    return _C.matrix_exponential(_float_matrix(input))


_Lu = _collections.namedtuple("Lu", ["lu", "p"])


def lu(input, output_idx_type=_dtypes.int32, name=None):  # noqa: A002
    """(lu, p): input[..., p, :] = L @ U, L's strict lower triangle and U packed in lu."""
    return _Lu(*_C.lu(_matrix(input), _dtypes.as_dtype(output_idx_type).name))


def _identity_like(x):
    from ._array_ops import eye
    return eye(_matrix_dims(x, "lu")[-1], dtype=x.dtype)


def _lu_factors(lower_upper):
    """(L with its unit diagonal, U) from the packed factors."""
    upper = band_part(lower_upper, 0, -1)
    return lower_upper - upper + _identity_like(lower_upper), upper


def _permutation_matrix(perm, n, dtype):
    """P with P[..., i, perm[i]] = 1: P @ x takes x's rows in perm's order."""
    return _C.one_hot(perm, n, 1.0, 0.0, -1, dtype)


def _unpermute(x, perm):
    """Rows of x moved back: the result's row perm[i] is x's row i."""
    return matmul(_permutation_matrix(perm, _matrix_dims(x, "lu")[-2], x.dtype), x, transpose_a=True)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    lower, upper = _lu_factors(_matrix(lower_upper))
    return _unpermute(matmul(lower, upper), perm)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """X with input @ X = rhs, from lu's factors."""
    lower_upper = _matrix(lower_upper)
    lower, upper = _lu_factors(lower_upper)
    rhs = _tensor(rhs, lower_upper.dtype)
    n = _matrix_dims(lower_upper, "lu_solve")[-1]
    permuted = matmul(_permutation_matrix(perm, n, lower_upper.dtype), rhs)
    return triangular_solve(upper, triangular_solve(lower, permuted, lower=True), lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    lower_upper = _matrix(lower_upper)
    return lu_solve(lower_upper, perm, _identity_like(lower_upper))


def solve(matrix, rhs, adjoint=False, name=None):
    a = _matrix(matrix)
    return _C.matrix_solve(a, _tensor(rhs, a.dtype), bool(adjoint))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    a = _matrix(matrix)
    return _C.matrix_triangular_solve(a, _tensor(rhs, a.dtype), bool(lower), bool(adjoint))


def cholesky(input, name=None):  # noqa: A002
    return _C.cholesky(_matrix(input))


def cholesky_solve(chol, rhs, name=None):
    """X with (chol @ chol^T) X = rhs: two triangular solves, as TF."""
    y = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, y, lower=True, adjoint=True)


_Qr = _collections.namedtuple("Qr", ["q", "r"])


def qr(input, full_matrices=False, name=None):  # noqa: A002
    return _Qr(*_C.qr(_matrix(input), bool(full_matrices)))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """s, or (s, u, v) with tensor = u @ diag(s) @ adjoint(v), s descending."""
    s, u, v = _C.svd(_matrix(tensor), bool(full_matrices), bool(compute_uv))
    return (s, u, v) if compute_uv else s


def eigh(tensor, name=None):
    """(eigenvalues ascending, eigenvectors as columns), reading the lower triangle; a complex
    (Hermitian) matrix has real eigenvalues."""
    return tuple(_C.self_adjoint_eig(_matrix(tensor), True))


def eigvalsh(tensor, name=None):
    return _C.self_adjoint_eig(_matrix(tensor), False)[0]


def eig(tensor, name=None):
    """(e, v) of each general square matrix: complex64 for float32/complex64 input, complex128
    for float64/complex128; e in ascending order of magnitude, v's columns of unit norm."""
    return tuple(_C.eig(_matrix(tensor), True))


def eigvals(tensor, name=None):
    return _C.eig(_matrix(tensor), False)[0]


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution of matrix @ X = rhs (ridge-regularized when fast)."""
    a = _float_matrix(matrix)
    l2 = _tensor(l2_regularizer, a.dtype)
    if l2.shape.rank not in (None, 0):
        raise ValueError(f"l2_regularizer must be a scalar, got shape {l2.shape}")
    return _C.matrix_solve_ls(a, _tensor(rhs, a.dtype), l2, bool(fast))


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse through the SVD, as TF: singular values at most
    rcond * max(s) count as zero; rcond defaults to 10 * max(rows, cols) * eps."""
    a = _float_matrix(a)
    m, n = _matrix_dims(a, "pinv")[-2:]
    if rcond is None:
        rcond = 10.0 * max(m, n) * _np.finfo(a.dtype.as_numpy_dtype).eps
    s, u, v = svd(a, full_matrices=False, compute_uv=True)
    cutoff = _tensor(rcond, a.dtype) * _C.reduce_max(s, [-1], True)
    keep = _C.greater(s, cutoff)
    inverse_s = where(keep, 1.0 / where(keep, s, _C.ones_like(s, None)), _C.zeros_like(s, None))
    return matmul(v * _C.expand_dims(inverse_s, s.ndim - 1), u, transpose_b=True)
