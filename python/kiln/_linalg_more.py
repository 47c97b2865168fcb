"""tf.linalg functions composed from Kiln's dense ops (their gradients come with them): tensor_diag and its
part, matrix_rank (singular values over TF's tolerance), and the tridiagonal product and solve (the three
diagonals made into a dense matrix, solved by LU with partial pivoting as TF's default is)."""
import numpy as np

from . import dtypes as _dtypes


def _t(x, dtype=None):
    from ._ops import convert_to_tensor
    return convert_to_tensor(x, dtype=dtype)


def tensor_diag(diagonal, name=None):
    """output[i..., i...] = diagonal[i...]: shape diagonal.shape + diagonal.shape, zero elsewhere."""
    from ._ops import concat, reshape, shape
    from ._linalg_ops import diag
    d = _t(diagonal)
    if d.shape.rank == 0:
        return d
    s = shape(d)
    return reshape(diag(reshape(d, [-1])), concat([s, s], 0))


def tensor_diag_part(input, name=None):  # noqa: A002 - TF's name
    """The inverse of tensor_diag: input of shape s + s gives its [i..., i...] entries, shape s."""
    from ._ops import reshape, shape
    from ._linalg_ops import diag_part
    x = _t(input)
    rank = x.shape.rank
    if rank is None or rank % 2:
        raise ValueError(f"Input must have even rank, got shape {x.shape}")
    half = x.shape.as_list()[:rank // 2]
    if x.shape.as_list()[rank // 2:] != half:
        raise ValueError(f"Input shape {x.shape} must be s + s for some s")
    if rank == 0:
        return x
    n = int(np.prod(half))
    return reshape(diag_part(reshape(x, [n, n])), shape(x)[:rank // 2])


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above tol (default: eps * max(rows, cols) * the largest), int32."""
    from ._ops import cast, greater, multiply, reduce_max, reduce_sum
    from ._linalg_ops import svd
    a = _t(a)
    s = svd(a, compute_uv=False)
    if tol is None:
        rows, cols = a.shape.as_list()[-2:]
        eps = float(np.finfo(a.dtype.real_dtype.as_numpy_dtype).eps)
        tol = multiply(reduce_max(s, axis=-1, keepdims=True), _t(eps * max(rows, cols), dtype=s.dtype))
    else:
        tol = _t(tol, dtype=s.dtype)
    return reduce_sum(cast(greater(s, tol), _dtypes.int32), axis=-1)


def _three(diagonals, diagonals_format, what):
    """(superdiagonal, main, subdiagonal), each [..., M], from TF's 'compact' or 'sequence' formats; the
    superdiagonal's last and the subdiagonal's first entries are ignored, as TF's."""
    if diagonals_format == "compact":
        d = _t(diagonals)
        if d.shape.rank is not None and (d.shape.rank < 2 or d.shape[-2] != 3):
            raise ValueError(f"Expected last two dimensions of diagonals to be [3, M], got {d.shape}")
        return d[..., 0, :], d[..., 1, :], d[..., 2, :]
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        return tuple(_t(x) for x in diagonals)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format} ({what} takes 'compact', 'sequence' or "
                     "'matrix')")


def _dense(superdiag, main, subdiag):
    """The [..., M, M] matrix with the three diagonals (M static)."""
    from ._ops import constant, expand_dims, multiply, add
    m = main.shape[-1]
    if m is None:
        raise ValueError("tridiagonal ops in Kiln need the matrix size M known when the function is traced")
    shift = np.eye(m, k=1)
    up = constant(shift, dtype=main.dtype)          # row i, column i + 1
    down = constant(shift.T, dtype=main.dtype)      # row i, column i - 1
    eye = constant(np.eye(m), dtype=main.dtype)
    return add(add(multiply(expand_dims(main, -1), eye), multiply(expand_dims(superdiag, -1), up)),
               multiply(expand_dims(subdiag, -1), down))


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The tridiagonal matrix times rhs [..., M, N]."""
    from ._ops import matmul
    rhs = _t(rhs)
    if diagonals_format == "matrix":
        return matmul(_t(diagonals), rhs)
    return matmul(_dense(*_three(diagonals, diagonals_format, "tridiagonal_matmul")), rhs)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False, conjugate_rhs=False,
                      name=None, partial_pivoting=True, perturb_singular=False):
    """x with A x = rhs for the tridiagonal A (rhs [..., M, K], or [..., M] for one right-hand side, or
    [..., K, M] with transpose_rhs); a singular A raises InvalidArgumentError."""
    from ._ops import conj, expand_dims, squeeze
    from ._linalg_ops import matrix_transpose, solve
    if perturb_singular:
        raise NotImplementedError("tridiagonal_solve(perturb_singular=True) is not supported by Kiln")
    a = _t(diagonals) if diagonals_format == "matrix" else \
        _dense(*_three(diagonals, diagonals_format, "tridiagonal_solve"))
    rhs = _t(rhs)
    if conjugate_rhs:
        rhs = conj(rhs)
    vector = rhs.shape.rank == a.shape.rank - 1
    if vector:
        rhs = expand_dims(rhs, -1)
    elif transpose_rhs:
        rhs = matrix_transpose(rhs)
    x = solve(a, rhs)
    if vector:
        return squeeze(x, -1)
    return matrix_transpose(x) if transpose_rhs else x


def _shift(m, k, dtype):
    """The [m, m] matrix with ones at (i, i + k)."""
    from ._ops import constant
    return constant(np.eye(m, k=k), dtype=dtype)


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """x with A x = rhs for the triangular A whose K bands are given [..., K, M] in TF's LEFT_RIGHT layout
    (lower: row k is the k-th subdiagonal, padded on the left; upper: row K-1-k the k-th superdiagonal, padded
    on the right); the dense A is built and solved."""
    from ._ops import add, expand_dims, multiply
    from ._linalg_ops import triangular_solve
    bands, rhs = _t(bands), _t(rhs)
    k_count, m = bands.shape[-2], bands.shape[-1]
    if k_count is None or m is None:
        raise ValueError("banded_triangular_solve in Kiln needs the band count and size known when traced")
    dense = None
    for k in range(k_count):
        row = bands[..., k, :] if lower else bands[..., k_count - 1 - k, :]
        term = multiply(expand_dims(row, -1), _shift(m, -k if lower else k, bands.dtype))
        dense = term if dense is None else add(dense, term)
    return triangular_solve(dense, rhs, lower=lower, adjoint=adjoint)


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None, name=None):
    """Eigenvalues (ascending) of the Hermitian tridiagonal matrix with diagonal alpha [n] and off-diagonal beta
    [n-1], and with eigvals_only=False the eigenvectors as columns; select 'a' all, 'i' those of indices
    select_range = (lo, hi) inclusive, 'v' those in the interval (lo, hi]. From the dense matrix's eigh."""
    from ._ops import add, conj, expand_dims, gather, greater, less_equal, logical_and, multiply, pad
    from ._array_ops import boolean_mask
    from ._linalg_ops import eigh
    alpha, beta = _t(alpha), _t(beta)
    n = alpha.shape[0]
    if n is None or alpha.shape.rank != 1 or beta.shape.rank != 1 or beta.shape[0] != n - 1:
        raise ValueError(f"alpha must be [n] and beta [n - 1], got {alpha.shape} and {beta.shape}")
    if beta.dtype.is_complex and not alpha.dtype.is_complex:
        from ._ops import complex as _complex, zeros_like
        alpha = _complex(alpha, zeros_like(alpha))
    padded = pad(beta, [[0, 1]])
    below = pad(conj(beta), [[1, 0]]) if beta.dtype.is_complex else pad(beta, [[1, 0]])
    eye = _shift(n, 0, alpha.dtype)
    dense = add(multiply(expand_dims(alpha, -1), eye), multiply(expand_dims(padded, -1), _shift(n, 1, alpha.dtype)))
    dense = add(dense, multiply(expand_dims(below, -1), _shift(n, -1, alpha.dtype)))
    values, vectors = eigh(dense)
    if select in ("a", "all"):
        chosen = None
    elif select in ("i", "index"):
        lo, hi = (int(v) for v in select_range)
        chosen = list(range(lo, hi + 1))
        values, vectors = gather(values, chosen), gather(vectors, chosen, axis=1)
    elif select in ("v", "value"):
        lo, hi = select_range
        keep = logical_and(greater(values, _t(lo, dtype=values.dtype)), less_equal(values, _t(hi, dtype=values.dtype)))
        values = boolean_mask(values, keep)
        vectors = boolean_mask(vectors, keep, axis=1)
    else:
        raise ValueError(f"select must be 'a', 'v' or 'i', got {select!r}")
    return values if eigvals_only else (values, vectors)
