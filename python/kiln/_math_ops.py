"""tf.math functions TF composes in Python (math_ops.py, confusion_matrix.py, linalg_ops.py's
norm), composed here of engine ops the same way, so they differentiate and trace."""
import numpy as _np

from . import _C
from . import dtypes as _dtypes
from . import errors as _errors
from ._array_ops import _python_ints, _static_shape, _tensor
from ._ops import (_axis_list, abs, cast, equal, less, log, logical_not, logical_or, not_equal, ones,
                   reduce_max, reduce_mean, reduce_sum, scatter_nd, sqrt, square, stack, transpose, where)


def _floating(x):
    x = _tensor(x)
    return x if x.dtype.is_floating else cast(x, _dtypes.float32)


# ---- elementwise ----------------------------------------------------------------------

def is_nan(x, name=None):
    return not_equal(x, x)


def is_inf(x, name=None):
    return equal(abs(_tensor(x)), float("inf"))


def is_finite(x, name=None):
    return logical_not(logical_or(is_nan(x), is_inf(x)))


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (with a gradient that is 0 there too, not NaN)."""
    x, y = _tensor(x), _tensor(y)
    y = cast(y, x.dtype) if y.dtype != x.dtype else y
    zero = equal(y, 0)
    quotient = x / where(zero, _C.ones_like(y, None), y)
    return where(zero, _C.zeros_like(quotient, None), quotient)


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y is 0 even if x is inf or NaN."""
    x, y = _tensor(x), _tensor(y)
    return where(equal(y, 0), 0.0 * y, x * y)


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0 (log(0) included)."""
    x, y = _tensor(x), _tensor(y)
    zero = equal(x, 0)
    return where(zero, 0.0 * x, x * log(where(zero, _C.ones_like(y, None), y)))


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0."""
    x, y = _tensor(x), _tensor(y)
    zero = equal(x, 0)
    return where(zero, 0.0 * x, x / where(zero, _C.ones_like(y, None), y))


# ---- reductions -----------------------------------------------------------------------

def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    x = _tensor(input_tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"Input must be either real or complex. Received integer type {x.dtype.name}.")
    mean = reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(square(x - mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    x = _tensor(input_tensor)
    if x.dtype.is_integer:  # TF rounds the root of an integer sum down
        return cast(_C.floor(sqrt(cast(reduce_sum(x * x, axis=axis, keepdims=keepdims), _dtypes.float64))),
                    x.dtype)
    return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along axis, exact where exp under- or overflows: each output subtracts the
    max of its own window before exponentiating (an n x n masked window per position)."""
    x = _tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"kiln.math.cumulative_logsumexp needs floats, got {x.dtype.name}")
    rank = x.ndim
    axis = int(axis) % rank
    perm = [a for a in range(rank) if a != axis] + [axis]
    moved = transpose(x, perm) if axis != rank - 1 else x
    n = _static_shape(moved, "math.cumulative_logsumexp")[-1]
    i, j = _np.meshgrid(_np.arange(n), _np.arange(n), indexing="ij")  # output position i, term j
    window = (j > i if exclusive else j >= i) if reverse else (j < i if exclusive else j <= i)
    window = _C.constant(window, None)
    terms = _C.expand_dims(moved, rank - 1)  # [..., 1, n]: row i sees every j
    lowest = float(_np.finfo(x.dtype.as_numpy_dtype).min)
    masked = where(window, terms, float("-inf") * _C.ones_like(terms, None))
    peak = _C.stop_gradient(reduce_max(where(window, terms, lowest * _C.ones_like(terms, None)), axis=-1,
                                       keepdims=True))
    peak = where(is_finite(peak), peak, 0.0 * peak)
    out = log(reduce_sum(_C.exp(masked - peak), axis=-1)) + _C.squeeze(peak, [rank])
    if axis != rank - 1:
        inverse = [0] * rank
        for k, p in enumerate(perm):
            inverse[p] = k
        out = transpose(out, inverse)
    return out


# ---- norms ------------------------------------------------------------------------------

def _vector_norm(x, ord, axis, keepdims):  # noqa: A002 - TF's argument name
    if ord in ("euclidean", "fro", 2, 2.0):
        return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))
    if ord in (1, 1.0):
        return reduce_sum(abs(x), axis=axis, keepdims=keepdims)
    if ord == _np.inf:
        return reduce_max(abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    return _C.pow(reduce_sum(_C.pow(abs(x), p), axis=axis, keepdims=keepdims), 1.0 / p)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """Vector norms (ord 'euclidean', 'fro', 1, 2, np.inf or any p > 0) over all elements or one axis;
    matrix norms ('fro'/'euclidean', 1, np.inf) over a pair of axes. The matrix 2-norm needs an SVD,
    which Kiln does not have."""
    x = _floating(tensor)
    keepdims = bool(keepdims)
    axes = _axis_list(axis)
    matrix = isinstance(axes, list) and len(axes) == 2
    if isinstance(axes, list) and len(axes) not in (1, 2):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
    valid_vector = ord in ("euclidean", "fro") or (not isinstance(ord, str) and float(ord) > 0)
    if matrix:
        if axes[0] % x.ndim == axes[1] % x.ndim:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        if ord not in ("euclidean", "fro", 1, _np.inf, 2):
            raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], got {ord}")
        if ord in ("euclidean", "fro"):
            return sqrt(reduce_sum(square(x), axis=axes, keepdims=keepdims))
        if ord == 2:
            raise NotImplementedError("kiln.norm: the matrix 2-norm (largest singular value) needs an SVD, which "
                                      "Kiln does not have")
        row_axis, col_axis = axes
        if ord == _np.inf:  # the largest row sum of |x|
            row_axis, col_axis = col_axis, row_axis
        sums = reduce_sum(abs(x), axis=row_axis, keepdims=True)
        out = reduce_max(sums, axis=col_axis, keepdims=True)
        return out if keepdims else _C.squeeze(out, sorted(a % x.ndim for a in axes))
    if not valid_vector:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    if isinstance(axes, list):
        axes = axes[0]
    if axes is None:
        out = _vector_norm(_C.reshape(x, [-1]), ord, 0, False)
        return _C.reshape(out, [1] * x.ndim) if keepdims else out
    return _vector_norm(x, ord, axes, keepdims)


# ---- classification ---------------------------------------------------------------------

def in_top_k(targets, predictions, k, name=None):
    """Whether each row's target class is among its k highest predictions (ties with the k-th count in;
    a non-finite prediction for the target, or a target out of range, is False)."""
    preds = _floating(predictions)
    t = _tensor(targets)
    num_classes = _static_shape(preds, "math.in_top_k")[-1]
    hit = _C.one_hot(t, num_classes, True, False, -1, _dtypes.bool._enum)
    target_score = reduce_sum(where(hit, preds, 0.0 * preds), axis=-1, keepdims=True)
    above = reduce_sum(cast(_C.greater(preds, target_score), _dtypes.int32), axis=-1)
    in_range = _C.logical_and(_C.greater_equal(t, 0), less(t, num_classes))
    finite = is_finite(_C.squeeze(target_score, [-1]))
    return _C.logical_and(_C.logical_and(less(above, _tensor(k, _dtypes.int32)), in_range), finite)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dtypes.int32, name=None):
    """counts[i, j]: how many examples (or how much weight) have label i and prediction j."""
    labels = cast(_C.reshape(_tensor(labels), [-1]), _dtypes.int64)
    predictions = cast(_C.reshape(_tensor(predictions), [-1]), _dtypes.int64)
    if num_classes is None:
        if labels._is_symbolic or predictions._is_symbolic:
            raise ValueError("kiln.math.confusion_matrix inside kiln.function needs num_classes")
        both = _np.concatenate([labels.numpy(), predictions.numpy()])
        if both.size and both.min() < 0:
            raise _errors.InvalidArgumentError("`labels` and `predictions` must be non-negative")
        n = int(both.max()) + 1 if both.size else 0
    else:
        n = int(_python_ints(num_classes, "math.confusion_matrix"))
        for name_, v in (("labels", labels), ("predictions", predictions)):
            if not v._is_symbolic and v.numpy().size and not (0 <= v.numpy().min() and v.numpy().max() < n):
                raise _errors.InvalidArgumentError(f"`{name_}` out of bound: must be in [0, {n})")
    dtype = _dtypes.as_dtype(dtype)
    if weights is None:
        updates = ones(_C.shape(labels), dtype)
    else:
        updates = cast(_C.reshape(_tensor(weights), [-1]), dtype)
    return scatter_nd(stack([labels, predictions], axis=1), updates, [n, n])
