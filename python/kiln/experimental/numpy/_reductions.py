"""Reductions (sum, mean, amax, std, var, nansum, average, cumsum, argmax, ...) with NumPy's result
dtypes: small integers and bools sum to int64, integer means are float64, NaN propagates through
amax/amin (Kiln's kernels) as in NumPy; amax of nothing is the dtype's lowest value, as TF's
reduce_max (NumPy raises)."""
from ... import _ops
from ... import dtypes as _kdtypes
from ... import math as _kmath
from . import _dtypes
from ._convert import as_bool, asarray, axis_list, float_or_same


def _axes(axis, rank):
    if axis is None:
        return None
    axes = axis_list(axis)
    for a in axes:
        if rank is not None and not -rank <= int(a) < rank:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {rank}")
    return [int(a) % rank if rank else int(a) for a in axes]


def _widen_int(x):
    if x.dtype == _kdtypes.bool or (x.dtype.is_integer and x.dtype.size < 8):
        return _ops.cast(x, _kdtypes.uint64 if x.dtype.is_unsigned else _kdtypes.int64)
    return x


def _prepare(a, dtype, promote):
    a = asarray(a)
    if dtype is not None:
        return _ops.cast(a, _dtypes.as_kiln_dtype(dtype))
    if promote == "int":
        return _widen_int(a)
    if promote == "float":
        return float_or_same(a)
    return a


def _reduce(op, a, axis, keepdims, dtype=None, promote=None):
    a = _prepare(a, dtype, promote)
    return op(a, _axes(axis, a.shape.rank), keepdims=bool(keepdims))


def sum(a, axis=None, dtype=None, keepdims=None):  # noqa: A001
    return _reduce(_ops.reduce_sum, a, axis, keepdims, dtype, "int")


def prod(a, axis=None, dtype=None, keepdims=None):
    return _reduce(_ops.reduce_prod, a, axis, keepdims, dtype, "int")


def _no_out(out):
    if out is not None:
        raise ValueError("Setting out is not supported.")


def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    _no_out(out)
    a = _prepare(a, dtype, "float")
    axes = _axes(axis, a.shape.rank)
    total = _ops.reduce_sum(a, axes, keepdims=bool(keepdims))
    return total / _ops.cast(_count(a, axes), a.dtype)


def _count(a, axes):
    shape = _ops.shape(a, out_type=_kdtypes.int64)
    return _ops.reduce_prod(shape if axes is None else _ops.gather(shape, axes))


def _extreme(op, a, axis, keepdims):
    a = asarray(a)
    axes = _axes(axis, a.shape.rank)
    if a.dtype == _kdtypes.bool:
        return (_ops.reduce_any if op is _ops.reduce_max else _ops.reduce_all)(a, axes, keepdims=bool(keepdims))
    return op(a, axes, keepdims=bool(keepdims))  # NaN propagates, as in NumPy


def amax(a, axis=None, out=None, keepdims=None):
    _no_out(out)
    return _extreme(_ops.reduce_max, a, axis, keepdims)


def amin(a, axis=None, out=None, keepdims=None):
    _no_out(out)
    return _extreme(_ops.reduce_min, a, axis, keepdims)


def max(a, axis=None, keepdims=None):  # noqa: A001
    return amax(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, keepdims=None):  # noqa: A001
    return amin(a, axis=axis, keepdims=keepdims)


def ptp(a, axis=None, keepdims=None):
    return amax(a, axis, keepdims=keepdims) - amin(a, axis, keepdims=keepdims)


def all(a, axis=None, keepdims=None):  # noqa: A001
    a = as_bool(a)
    return _ops.reduce_all(a, _axes(axis, a.shape.rank), keepdims=bool(keepdims))


def any(a, axis=None, keepdims=None):  # noqa: A001
    a = as_bool(a)
    return _ops.reduce_any(a, _axes(axis, a.shape.rank), keepdims=bool(keepdims))


def count_nonzero(a, axis=None):
    a = asarray(a)
    return _kmath.count_nonzero(a, _axes(axis, a.shape.rank))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=None):
    _no_out(out)
    a = _prepare(a, dtype, "float")
    axes = _axes(axis, a.shape.rank)
    centered = a - mean(a, axes, keepdims=True)
    squares = _ops.real(centered * _ops.conj(centered)) if a.dtype.is_complex else centered * centered
    n = _ops.cast(_count(a, axes), squares.dtype) - ddof
    return _ops.reduce_sum(squares, axes, keepdims=bool(keepdims)) / n


def std(a, axis=None, keepdims=None):
    return _ops.sqrt(var(a, axis, keepdims=keepdims))


def _without_nan(a, fill):
    a = asarray(a)
    if not a.dtype.is_floating:
        return a
    return _ops.where(_kmath.is_nan(a), _ops.zeros_like(a) + fill, a)


def nansum(a, axis=None, dtype=None, keepdims=False):
    return sum(_without_nan(a, 0), axis, dtype, keepdims)


def nanprod(a, axis=None, dtype=None, keepdims=False):
    return prod(_without_nan(a, 1), axis, dtype, keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=None):
    a = _prepare(a, dtype, "float")
    if not a.dtype.is_floating:
        return mean(a, axis, keepdims=keepdims)
    axes = _axes(axis, a.shape.rank)
    kept = _ops.cast(_ops.logical_not(_kmath.is_nan(a)), a.dtype)
    return (_ops.reduce_sum(_without_nan(a, 0), axes, keepdims=bool(keepdims))
            / _ops.reduce_sum(kept, axes, keepdims=bool(keepdims)))


def average(a, axis=None, weights=None, returned=False):
    if axis is not None and not isinstance(axis, int):
        raise ValueError(f"Argument `axis` must be an integer. Received axis={axis} (of type {type(axis)})")
    if weights is None:
        avg = mean(a, axis)
        if not returned:
            return avg
        a = asarray(a)
        count = _ops.cast(_count(a, _axes(axis, a.shape.rank)), avg.dtype)
        return avg, _ops.zeros_like(avg) + count
    a = float_or_same(a)
    w = asarray(weights, a.dtype) if not asarray(weights).dtype.is_floating else asarray(weights)
    from ._convert import promote
    a, w = promote(a, w)
    if a.shape.rank != w.shape.rank:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        shape = [1] * a.shape.rank
        shape[axis % a.shape.rank] = -1
        w = _ops.reshape(w, shape)
    total = _ops.reduce_sum(w * _ops.ones_like(a), _axes(axis, a.shape.rank))
    avg = _ops.reduce_sum(a * w, _axes(axis, a.shape.rank)) / total
    return (avg, total) if returned else avg


def _cumulative(op, a, axis, dtype):
    a = _prepare(a, dtype, "int")
    if axis is None:
        a, axis = _ops.reshape(a, [-1]), 0
    return op(a, axis=axis)


def cumsum(a, axis=None, dtype=None):
    return _cumulative(_ops.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    return _cumulative(_ops.cumprod, a, axis, dtype)


def _arg(op, a, axis):
    a = asarray(a)
    if a.dtype == _kdtypes.bool:
        a = _ops.cast(a, _kdtypes.int32)
    if axis is None:
        a, axis = _ops.reshape(a, [-1]), 0
    return op(a, axis=axis, output_type=_kdtypes.int64)


def argmax(a, axis=None):
    return _arg(_ops.argmax, a, axis)


def argmin(a, axis=None):
    return _arg(_ops.argmin, a, axis)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    from ._creation import diagonal
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
