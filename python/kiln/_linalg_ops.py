"""tf.linalg functions that are index bookkeeping over the last two dims (transposes, bands,
diagonals, traces, matrix-vector products), composed of engine ops so they differentiate and
trace. Factorizations and solves (inv, det, solve, cholesky, qr, svd, eig) need engine kernels
Kiln does not have, so they are absent rather than approximated."""
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
    return _C.transpose(a, perm)


def adjoint(matrix, name=None):
    return matrix_transpose(matrix)  # real dtypes only: the conjugate is the matrix itself


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
