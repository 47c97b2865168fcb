"""Shape manipulation (reshape, transpose, concatenate, split, flip, pad, ...) and the indexing
helpers (take, take_along_axis, where, nonzero, compress, select, sort)."""
import numpy as np

from ... import _ops, _array_ops
from ... import dtypes as _kdtypes
from ._convert import as_bool, asarray, axis_list, promote, is_tensor


def _rank(x):
    return x.shape.rank


def shape(a):
    """The TensorShape, as TF's (NumPy's is a tuple; the two compare equal)."""
    return asarray(a).shape


def ndim(a):
    return _rank(asarray(a))


def size(x, axis=None):
    if axis is not None:
        raise NotImplementedError("axis argument is not supported in the current `np.size` implementation")
    x = asarray(x)
    n = x.shape.num_elements()
    return n if n is not None else _ops.size(x)


def isscalar(num):
    return _rank(asarray(num)) == 0


def reshape(a, newshape, order="C"):
    if order not in ("C", "F"):
        raise ValueError(f"Unsupported order argument {order}")
    a = asarray(a)
    newshape = [newshape] if isinstance(newshape, (int, np.integer)) else newshape
    if order == "F":
        r = _rank(a)
        flipped = _ops.transpose(a, list(range(r))[::-1])
        out = _ops.reshape(flipped, list(newshape)[::-1] if not is_tensor(newshape) else newshape)
        return _ops.transpose(out, list(range(_rank(out)))[::-1])
    return _ops.reshape(a, newshape)


def flatten(a, order="C"):
    a = asarray(a)
    if order in ("C", "A", "K"):
        return _ops.reshape(a, [-1])
    if order == "F":
        return _ops.reshape(transpose(a), [-1])
    raise ValueError("order can only be C, A, K (all row major) or F (column major).")


def ravel(a):
    return _ops.reshape(asarray(a), [-1])


def transpose(a, axes=None):
    a = asarray(a)
    if axes is None:
        axes = list(range(_rank(a)))[::-1]
    return _ops.transpose(a, [int(x) for x in axes])


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(range(_rank(a)))
    axis1, axis2 = axis1 % len(perm), axis2 % len(perm)
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _ops.transpose(a, perm)


def moveaxis(a, source, destination):
    a = asarray(a)
    r = _rank(a)
    source = [s % r for s in axis_list(source)]
    destination = [d % r for d in axis_list(destination)]
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [i for i in range(r) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _ops.transpose(a, order)


def expand_dims(a, axis):
    a = asarray(a)
    axes = axis_list(axis)
    out_rank = _rank(a) + len(axes)
    for ax in sorted(x % out_rank for x in axes):
        a = _ops.expand_dims(a, ax)
    return a


def squeeze(a, axis=None):
    a = asarray(a)
    if axis is not None:
        axes = axis_list(axis)
        for ax in axes:
            if a.shape[ax] is not None and a.shape[ax] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        return _ops.squeeze(a, axes)
    return _ops.squeeze(a)


def concatenate(arys, axis=0):
    if not isinstance(arys, (list, tuple)):
        arys = [arys]  # one array is a list of one, as TF (NumPy would iterate over its rows)
    if not arys:
        raise ValueError("Need at least one array to concatenate.")
    arys = promote(*arys)
    if axis is None:
        return _ops.concat([_ops.reshape(a, [-1]) for a in arys], 0)
    return _ops.concat(arys, axis)


def stack(arrays, axis=0):
    arrays = promote(*arrays)
    return _ops.stack(arrays, axis)


def atleast_1d(*arys):
    out = [_ops.reshape(a, [1]) if _rank(a) == 0 else a for a in (asarray(x) for x in arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    def two(a):
        a = asarray(a)
        return _ops.reshape(a, [1, 1]) if _rank(a) == 0 else _ops.expand_dims(a, 0) if _rank(a) == 1 else a
    out = [two(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    def three(a):
        a = asarray(a)
        if _rank(a) == 0:
            return _ops.reshape(a, [1, 1, 1])
        if _rank(a) == 1:
            return _ops.expand_dims(_ops.expand_dims(a, 0), 2)
        return _ops.expand_dims(a, 2) if _rank(a) == 2 else a
    out = [three(a) for a in arys]
    return out[0] if len(out) == 1 else out


def hstack(tup):
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if _rank(arrays[0]) == 1 else 1)


def vstack(tup):
    return concatenate([atleast_2d(a) for a in tup], 0)


def dstack(tup):
    return concatenate([atleast_3d(a) for a in tup], 2)


def split(ary, indices_or_sections, axis=0):
    ary = asarray(ary)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        if n % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
        return _ops.split(ary, int(indices_or_sections), axis)
    bounds = [0] + [min(int(i), n) for i in indices_or_sections] + [n]
    sizes = [max(0, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])]
    return _ops.split(ary, sizes, axis)


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0 if _rank(asarray(ary)) == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def tile(a, reps):
    a = asarray(a)
    reps = [reps] if isinstance(reps, (int, np.integer)) else list(reps)
    r = max(_rank(a), len(reps))
    a = _ops.reshape(a, [1] * (r - _rank(a)) + a.shape.as_list()) if _rank(a) < r else a
    return _ops.tile(a, [1] * (r - len(reps)) + reps)


def repeat(a, repeats, axis=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _array_ops.repeat(a, repeats, axis=axis)


def flip(m, axis=None):
    m = asarray(m)
    axes = list(range(_rank(m))) if axis is None else [x % _rank(m) for x in axis_list(axis)]
    return _array_ops.reverse(m, axes) if axes else m


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    k %= 4
    a0, a1 = axes
    if k == 0:
        return m
    if k == 2:
        return flip(m, [a0, a1])
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return _ops.reshape(_array_ops.roll(ravel(a), shift, 0), _ops.shape(a))
    return _array_ops.roll(a, shift, axis)


def broadcast_to(array, shape):  # noqa: A002
    return _array_ops.broadcast_to(asarray(array), [shape] if isinstance(shape, int) else shape)


def broadcast_arrays(*args, **kwargs):
    args = [asarray(a) for a in args]
    target = args[0].shape
    for a in args[1:]:
        target = _array_ops.broadcast_static_shape(target, a.shape)
    return [_array_ops.broadcast_to(a, target.as_list()) for a in args]


def pad(array, pad_width, mode, **kwargs):  # noqa: A002
    array = asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2) if np.ndim(pad_width) else
                             np.full((1, 2), pad_width, np.int64), (_rank(array), 2))
    mode = mode.lower()
    if mode == "constant":
        value = kwargs.get("constant_values", 0)
        return _ops.pad(array, widths.tolist(), "CONSTANT", constant_values=value)
    if mode in ("reflect", "symmetric"):
        return _mirror_pad(array, widths, mode == "reflect")
    raise ValueError(f"Unsupported padding mode: {mode}")


def _mirror_pad(x, widths, reflect):
    """Each axis in turn: its first and last `width` entries mirrored (reflect leaves the edge out), as
    NumPy for widths below the axis' length."""
    skip = 1 if reflect else 0
    for axis, (before, after) in enumerate(widths.tolist()):
        if not before and not after:
            continue
        n = x.shape[axis]
        if before + skip > n or after + skip > n:
            raise ValueError(f"pad width ({before}, {after}) is more than axis {axis} of length {n} can mirror")
        parts = []
        if before:
            parts.append(_array_ops.reverse(_axis_slice(x, axis, skip, skip + before), [axis]))
        parts.append(x)
        if after:
            parts.append(_array_ops.reverse(_axis_slice(x, axis, n - skip - after, n - skip), [axis]))
        x = _ops.concat(parts, axis)
    return x


def _axis_slice(x, axis, start, stop):
    key = [slice(None)] * x.shape.rank
    key[axis] = slice(start, stop)
    from ... import _indexing
    return _indexing.getitem(x, tuple(key))


def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# ---- indexing helpers -----------------------------------------------------------

def take(a, indices, axis=None, out=None, mode="clip"):  # noqa: ARG001
    """NumPy's take; TF's default mode is 'clip' (indices clipped to the axis), 'wrap' takes them modulo its
    length; TF has no 'raise'."""
    if out is not None:
        raise ValueError("out argument is not supported in take.")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"Invalid mode '{mode}' for take")
    if mode == "raise":
        raise ValueError("The 'raise' mode to take is not supported.")
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    indices = asarray(indices)
    if not indices.dtype.is_integer:
        indices = _ops.cast(indices, _kdtypes.int64)
    n = _ops.cast(_ops.shape(a)[axis], indices.dtype)
    if mode == "clip":
        indices = _ops.clip_by_value(indices, _ops.zeros_like(indices), n - 1)
    elif mode == "wrap":
        indices = _ops.floormod(indices, n)
    return _ops.gather(a, indices, axis=axis)


def take_along_axis(arr, indices, axis):
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
    r = _rank(arr)
    if _rank(indices) != r:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis %= r
    indices = _ops.cast(indices, _kdtypes.int64)
    n = arr.shape[axis] if arr.shape[axis] is not None else _ops.shape(arr, out_type=_kdtypes.int64)[axis]
    indices = _ops.where(_ops.less(indices, 0), indices + n, indices)
    # Broadcast the other axes, then one gather_nd whose coordinates are each position's own along the other
    # axes and the index along `axis`.
    arr, indices = _broadcast_but(arr, indices, axis), _broadcast_but(indices, arr, axis)
    dims = _ops.shape(indices, out_type=_kdtypes.int64)
    coords = []
    for d in range(r):
        if d == axis:
            coords.append(indices)
        else:
            shape = [1] * r
            shape[d] = -1
            iota = _ops.reshape(_ops.range(0, indices.shape[d] if indices.shape[d] is not None else dims[d], 1,
                                           dtype=_kdtypes.int64), shape)
            coords.append(iota + _ops.zeros_like(indices))
    return _ops.gather_nd(arr, _ops.stack(coords, -1))


def _broadcast_but(x, other, axis):
    """x broadcast against `other` on every axis but `axis`, where x keeps its length (by adding zeros shaped
    as `other` with length 1 there: run-time shapes too)."""
    if x.shape.is_fully_defined() and other.shape.is_fully_defined():
        target = [a if i == axis else max(a, b) for i, (a, b) in enumerate(zip(x.shape.as_list(),
                                                                                other.shape.as_list()))]
        return _array_ops.broadcast_to(x, target)
    zeros = _ops.zeros_like(_axis_slice(other, axis, 0, 1), dtype=x.dtype)
    return _ops.logical_or(x, zeros) if x.dtype == _kdtypes.bool else x + zeros


def nonzero(a):
    a = atleast_1d(a)  # a scalar as one element, as TF
    coords = _ops.where(as_bool(a))
    return tuple(_ops.unstack(coords, num=_rank(a), axis=1))


def where(condition, x=None, y=None):
    condition = asarray(condition)
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("Both x and y must be ndarrays, or both must be None.")
    x, y = promote(x, y)
    condition = as_bool(condition)
    return _ops.where(condition, x, y)  # broadcasts the three, as TF's where_v2


def compress(condition, a, axis=None):
    condition = asarray(condition, bool)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    n = a.shape[axis]
    c = condition.shape[0]
    if c > n:
        raise ValueError(f"condition has {c} entries, more than the axis' {n}")
    if c < n:
        condition = _ops.concat([condition, _ops.zeros([n - c], _kdtypes.bool)], 0)
    return _array_ops.boolean_mask(a, condition, axis=axis)


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    choices = promote(*choicelist, default)
    out = choices[-1]
    for cond, choice in reversed(list(zip(condlist, choices[:-1]))):
        out = where(cond, choice, out)
    return out


def _sortable(a, axis, order, what):
    """(values, axis) to sort: flattened for axis None, bools as int32 (Kiln sorts numbers)."""
    if order is not None:
        raise ValueError(f"'order' argument to {what} is not supported.")
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return (_ops.cast(a, _kdtypes.int32) if a.dtype == _kdtypes.bool else a), axis


def sort(a, axis=-1, kind="quicksort", order=None):
    if kind != "quicksort":
        raise ValueError(f'Invalid value for argument `kind`. Only kind="quicksort" is supported. Received: kind={kind}')
    values, axis = _sortable(a, axis, order, "sort")
    return _ops.cast(_ops.sort(values, axis=axis), asarray(a).dtype)


def argsort(a, axis=-1, kind="quicksort", order=None):
    if kind not in ("quicksort", "stable"):
        raise ValueError(f'Invalid value for argument `kind`. Only kind="quicksort" and kind="stable" are '
                         f"supported. Received: kind={kind}")
    values, axis = _sortable(a, axis, order, "argsort")
    return _ops.cast(_ops.argsort(values, axis=axis, stable=kind == "stable"), _kdtypes.int64)


def diff(a, n=1, axis=-1):
    a = asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    r = _rank(a)
    if r == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis %= r
    for _ in range(n):
        hi = [slice(None)] * r
        lo = [slice(None)] * r
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        upper, lower = a[tuple(hi)], a[tuple(lo)]
        a = _ops.not_equal(upper, lower) if a.dtype == _kdtypes.bool else upper - lower
    return a
