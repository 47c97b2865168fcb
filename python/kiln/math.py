"""kiln.math (tf.math)."""
from . import _C
from ._ops import (  # noqa: F401
    abs, add, add_n, argmax, argmin, ceil, cos, divide, equal, exp, floor, floordiv, floormod, greater,
    greater_equal, less, less_equal, log, log1p, logical_and, logical_not, logical_or, maximum, minimum, multiply,
    negative, not_equal, pow, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum,
    rint, round, rsqrt, sigmoid, sign, sin, sqrt, square, squared_difference, subtract, tanh, truediv, truncatediv,
    truncatemod)
from ._ops import floormod as mod  # noqa: F401
from ._ops import angle, conj, imag, real  # noqa: F401


from .nn import l2_normalize, softplus, softsign  # noqa: E402,F401  (tf.math has them too)
from ._ops import cumprod, cumsum, reduce_logsumexp, top_k  # noqa: E402,F401


def _num_segments(n):
    return int(n.numpy()) if isinstance(n, (_C.Tensor, _C.Variable)) else int(n)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Rows of data summed into segment_ids' segments (any order; negative ids drop their row)."""
    return _C.unsorted_segment_sum(data, segment_ids, _num_segments(num_segments))


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The max of each segment's rows; an empty segment holds the dtype's lowest value."""
    return _C.unsorted_segment_max(data, segment_ids, _num_segments(num_segments))


def _order_reversed(x):
    """A bijection that reverses the order of x's values without overflow: -x for floats, -1 - x for
    signed integers, max - x for unsigned ones (each maps the dtype's lowest to its highest)."""
    dtype = x.dtype
    if dtype.is_floating:
        return _C.negative(x)
    if dtype.is_unsigned:
        return _C.subtract(_C.constant(dtype.max, dtype._enum), x)
    return _C.subtract(_C.constant(-1, dtype._enum), x)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The min of each segment's rows; an empty segment holds the dtype's highest value."""
    from ._ops import convert_to_tensor
    data = convert_to_tensor(data)
    return _order_reversed(unsorted_segment_max(_order_reversed(data), segment_ids, num_segments))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    return _C.unsorted_segment_mean(data, segment_ids, _num_segments(num_segments))


def segment_sum(data, segment_ids, name=None):
    """Rows of data summed by sorted segment_ids; ids[-1] + 1 segments."""
    return _C.segment_sum(data, segment_ids)


def segment_mean(data, segment_ids, name=None):
    return _C.segment_mean(data, segment_ids)


def erf(x, name=None):
    return _C.erf(x)


from ._array_ops import bincount  # noqa: E402,F401
from ._math_ops import (  # noqa: E402,F401
    confusion_matrix, cumulative_logsumexp, divide_no_nan, in_top_k, is_finite, is_inf, is_nan, multiply_no_nan,
    reduce_euclidean_norm, reduce_std, reduce_variance, xdivy, xlogy)


def reciprocal(x, name=None):
    """1 / x in x's dtype (tf.math.reciprocal; complex included)."""
    from ._ops import ones_like
    x = x if isinstance(x, (_C.Tensor, _C.Variable)) else _C.constant(x, None)
    return _C.divide(ones_like(x), x)


from ._math_more import (  # noqa: E402,F401
    accumulate_n, acos, acosh, approx_max_k, approx_min_k, asin, asinh, atan, atan2, atanh, cosh, count_nonzero,
    expm1, invert_permutation, is_non_decreasing, is_strictly_increasing, log_sigmoid, logical_xor, nextafter,
    polyval, reciprocal_no_nan, scalar_mul, segment_max, segment_min, segment_prod, sinh, tan, unsorted_segment_prod,
    unsorted_segment_sqrt_n, xlog1py)
from ._nn_stats import zero_fraction  # noqa: E402,F401  (tf.math.zero_fraction is tf.nn.zero_fraction)
from .nn import log_softmax, softmax  # noqa: E402,F401  (tf.math has them too)
from ._gamma import digamma, lbeta, lgamma  # noqa: E402,F401
