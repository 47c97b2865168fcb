"""Array creation (tnp.zeros, arange, linspace, eye, diag, tri, vander, ...) on Kiln's ops."""
import math as _math

import numpy as np

from ... import _ops, _array_ops
from ... import dtypes as _kdtypes
from . import _dtypes
from ._convert import array, asarray, is_tensor


def _float_default(dtype):
    """TF's `dtype=float` defaults: a Python type is read by NumPy (float -> float64)."""
    return _dtypes.as_kiln_dtype(dtype) if dtype is not None else _dtypes.default_float_type()


def _shape(shape):
    if is_tensor(shape):
        return shape
    return [shape] if isinstance(shape, (int, np.integer)) else list(shape)


def zeros(shape, dtype=float):  # noqa: A002
    return _ops.zeros(_shape(shape), _float_default(dtype))


def ones(shape, dtype=float):
    return _ops.ones(_shape(shape), _float_default(dtype))


def empty(shape, dtype=float):
    """Tensors are immutable, so an "uninitialized" array is a zero one (as TF)."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None):
    value = asarray(fill_value, dtype)
    return _array_ops.broadcast_to(value, _shape(shape))


def _like_dtype(a, dtype):
    return _dtypes.as_kiln_dtype(dtype) if dtype is not None else asarray(a).dtype


def zeros_like(a, dtype=None):
    return _ops.zeros_like(asarray(a), _like_dtype(a, dtype))


def ones_like(a, dtype=None):
    return _ops.ones_like(asarray(a), _like_dtype(a, dtype))


def empty_like(a, dtype=None):
    return zeros_like(a, dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    if order != "K":
        raise ValueError("Non-standard orders are not supported.")
    if not subok:
        raise ValueError("subok being False is not supported.")
    if shape:
        raise ValueError("Overriding the shape is not supported.")
    a = asarray(a)
    dtype = _like_dtype(a, dtype)
    target = _ops.shape(a) if shape is None else _shape(shape)
    return _array_ops.broadcast_to(asarray(fill_value, dtype), target)


def copy(a):
    return array(a, copy=True)


def arange(start, stop=None, step=1, dtype=None):
    """NumPy's arange: the dtype NumPy gives the bounds (int64 for Python ints, float64 for floats)."""
    if not step:
        raise ValueError("step must be non-zero.")
    if stop is None:
        start, stop = 0, start
    dtype = _dtypes.as_kiln_dtype(dtype) if dtype is not None else _dtypes.result_type(start, stop, step)
    bounds = [b.numpy().item() if is_tensor(b) else b for b in (start, stop, step)]
    n = max(0, _math.ceil((bounds[1] - bounds[0]) / bounds[2]))
    if n == 0:
        return _ops.zeros([0], dtype)
    if dtype.is_integer and all(isinstance(b, (int, np.integer)) for b in bounds):
        return _ops.cast(_ops.range(bounds[0], bounds[1], bounds[2], dtype=_kdtypes.int64), dtype)
    # start + i * step, as NumPy computes each element (no accumulated error).
    steps = _ops.range(0, n, 1, dtype=_kdtypes.float64)
    values = _ops.constant(float(bounds[0]), _kdtypes.float64) + steps * float(bounds[2])
    return _ops.cast(values, dtype)


def _spaced(start, stop, num, endpoint, axis):
    """(values of shape broadcast(start, stop) with `num` inserted at `axis`, step) in float64."""
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start = _ops.cast(asarray(start), _kdtypes.float64)
    stop = _ops.cast(asarray(stop), _kdtypes.float64)
    divisor = (num - 1 if endpoint else num)
    step = (stop - start) / max(divisor, 1)
    t = _ops.range(0, num, 1, dtype=_kdtypes.float64)
    bshape = _array_ops.broadcast_static_shape(start.shape, stop.shape)
    t = _ops.reshape(t, [num] + [1] * bshape.rank)
    values = start + t * step
    if endpoint and num > 1:
        last = _ops.expand_dims(stop + _ops.zeros_like(start + stop), 0)
        values = _ops.concat([values[:num - 1], last], 0)
    return _leading_axis_to(values, axis), step


def _leading_axis_to(values, axis):
    """values with their first axis moved to `axis`."""
    if axis == 0:
        return values
    rank = values.shape.rank
    axis = axis % rank
    return _ops.transpose(values, list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank)))


def _out_dtype(dtype, *args):
    if dtype is not None:
        return _dtypes.as_kiln_dtype(dtype)
    return _dtypes.result_type(*args, float)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=float, axis=0):
    out = _out_dtype(dtype, start, stop)
    values, step = _spaced(start, stop, num, endpoint, axis)
    values = _ops.cast(_ops.floor(values) if out.is_integer else values, out)
    return (values, _ops.cast(step, out)) if retstep else values


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    out = _out_dtype(dtype, start, stop)
    values, _ = _spaced(start, stop, num, endpoint, axis)
    return _ops.cast(_ops.pow(_ops.constant(float(base), _kdtypes.float64), values), out)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    out = _out_dtype(dtype, start, stop)
    lo = _ops.cast(asarray(start), _kdtypes.float64)
    hi = _ops.cast(asarray(stop), _kdtypes.float64)
    values, _ = _spaced(_ops.log(lo), _ops.log(hi), num, endpoint, 0)
    values = _ops.exp(values)
    # The ends exactly as given (exp(log(x)) may be off in the last bit), as NumPy.
    if num > 0:
        parts = [_ops.expand_dims(lo + _ops.zeros_like(values[0]), 0), values[1:]]
        if endpoint and num > 1:
            parts = [parts[0], values[1:num - 1], _ops.expand_dims(hi + _ops.zeros_like(values[0]), 0)]
        values = _ops.concat(parts, 0)
    return _ops.cast(_leading_axis_to(values, axis), out)


def _column_minus_row(N, M):  # noqa: N803
    """The N x M (M defaults to N) matrix of j - i; N, M may be scalar tensors (shapes in a trace)."""
    M = N if M is None else M
    rows = _ops.reshape(_ops.range(0, N, 1), [-1, 1])
    cols = _ops.reshape(_ops.range(0, M, 1), [1, -1])
    return cols - rows


def eye(N, M=None, k=0, dtype=float):  # noqa: N803 - NumPy's argument names
    return _ops.cast(_ops.equal(_column_minus_row(N, M), k), _float_default(dtype))


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    return _ops.cast(_ops.less_equal(_column_minus_row(N, M), k), _float_default(dtype))


def _triangle(m, k, lower):
    m = asarray(m)
    if m.shape.rank is not None and m.shape.rank < 2:
        raise ValueError("Argument to tril/triu should be at least 2d.")
    dims = _ops.shape(m)
    n_rows = m.shape[-2] if m.shape[-2] is not None else dims[-2]
    n_cols = m.shape[-1] if m.shape[-1] is not None else dims[-1]
    mask = tri(n_rows, n_cols, k=k if lower else k - 1, dtype=bool)
    if not lower:
        mask = _ops.logical_not(mask)
    return _ops.where(mask, m, _ops.zeros_like(m))


def tril(m, k=0):
    return _triangle(m, k, True)


def triu(m, k=0):
    return _triangle(m, k, False)


def diag(v, k=0):
    """A 1-D `v` on the k-th diagonal of a square matrix; a 2-D `v`'s k-th diagonal."""
    v = asarray(v)
    if v.shape.rank == 1:
        n = v.shape[0] + abs(k)
        rows = _ops.range(0, v.shape[0], 1) + max(-k, 0)
        cols = _ops.range(0, v.shape[0], 1) + max(k, 0)
        indices = _ops.stack([rows, cols], 1)
        return _ops.scatter_nd(indices, v, [n, n])
    if v.shape.rank == 2:
        return diagonal(v, offset=k)
    raise ValueError("Input to diag should be 1 or 2d.")


def diagflat(v, k=0):
    return diag(_ops.reshape(asarray(v), [-1]), k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal over axes axis1, axis2, as the last axis of the result."""
    a = asarray(a)
    rank = a.shape.rank
    axis1, axis2 = axis1 % rank, axis2 % rank
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [i for i in range(rank) if i not in (axis1, axis2)]
    moved = _ops.transpose(a, [axis1, axis2] + rest)
    n_rows, n_cols = moved.shape[0], moved.shape[1]
    if offset >= 0:
        length = max(0, min(n_rows, n_cols - offset))
        rows, cols = np.arange(length), np.arange(length) + offset
    else:
        length = max(0, min(n_rows + offset, n_cols))
        rows, cols = np.arange(length) - offset, np.arange(length)
    picked = _ops.gather_nd(moved, _ops.constant(np.stack([rows, cols], 1).astype(np.int64).reshape(length, 2)))
    return _ops.transpose(picked, list(range(1, rank - 1)) + [0])


def vander(x, N=None, increasing=False):  # noqa: N803
    x = asarray(x)
    if x.shape.rank != 1:
        raise ValueError(f"x must be a one-dimensional array or sequence, but got shape {x.shape}")
    N = x.shape[0] if N is None else N
    powers = np.arange(N) if increasing else np.arange(N)[::-1]
    exponents = _ops.constant(powers.reshape(1, N).copy(), dtype=x.dtype)
    return _ops.pow(_ops.reshape(x, [-1, 1]), exponents) if N else _ops.zeros([x.shape[0], 0], x.dtype)


def meshgrid(*xi, **kwargs):
    indexing = kwargs.get("indexing", "xy")
    return _array_ops.meshgrid(*[asarray(x) for x in xi], indexing=indexing)


def diag_indices(n, ndim=2):
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    idx = _ops.range(0, n, 1, dtype=_kdtypes.int64)
    return (idx,) * ndim


def ix_(*args):
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if a.shape.rank != 1:
            raise ValueError("Arguments must be 1-d, got arg {} of rank {}".format(i, a.shape.rank))
        if a.dtype == _kdtypes.bool:
            a = _ops.reshape(_ops.where(a), [-1])
        shape = [1] * len(args)
        shape[i] = -1
        out.append(_ops.reshape(a, shape))
    return out
