"""kiln.linalg (tf.linalg): what the engine has."""
from . import _C
from ._ops import einsum, matmul, transpose  # noqa: F401
from .nn import l2_normalize  # noqa: F401


def global_norm(t_list, name=None):
    """sqrt of the sum of every element squared (None entries skipped)."""
    return _C.global_norm(list(t_list))


from ._array_ops import eye, tensordot  # noqa: E402,F401
from ._math_ops import norm  # noqa: E402,F401
from ._linalg_ops import (  # noqa: E402,F401
    adjoint, band_part, cholesky, cholesky_solve, cross, det, diag, diag_part, eig, eigh, eigvals, eigvalsh, expm, inv,
    logdet, lstsq, lu, lu_matrix_inverse, lu_reconstruct, lu_solve, matrix_transpose, matvec, normalize, pinv, qr,
    set_diag, slogdet, solve, svd, trace, triangular_solve)


from ._linalg_more import (banded_triangular_solve, eigh_tridiagonal, matrix_rank, tensor_diag,  # noqa: E402,F401
                           tensor_diag_part, tridiagonal_matmul, tridiagonal_solve)
