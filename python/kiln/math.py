"""kiln.math (tf.math)."""
from . import _C
from ._ops import (  # noqa: F401
    abs, add, add_n, argmax, argmin, ceil, cos, divide, equal, exp, floor, floordiv, floormod, greater,
    greater_equal, less, less_equal, log, log1p, logical_and, logical_not, logical_or, maximum, minimum, multiply,
    negative, not_equal, pow, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum,
    rint, round, rsqrt, sigmoid, sign, sin, sqrt, square, squared_difference, subtract, tanh, truediv, truncatediv,
    truncatemod)
from ._ops import floormod as mod  # noqa: F401


from .nn import l2_normalize, softplus, softsign  # noqa: E402,F401  (tf.math has them too)
from ._ops import cumprod, cumsum, reduce_logsumexp, top_k  # noqa: E402,F401


def erf(x, name=None):
    return _C.erf(x)
