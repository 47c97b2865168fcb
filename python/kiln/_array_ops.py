"""The rest of TF's creation, shape and indexing surface, composed of engine ops as TF's own
array_ops.py composes many of them, so each gets gradients and tracing from its parts.

Ops whose output shape depends on the values (boolean_mask, unique, bincount without a fixed
length...) compute their integer indices with NumPy: now when eager, through a host function
(tf.py_function) when traced. The values themselves are gathered by engine ops, so gradients
still flow to them."""
import builtins as _builtins
import collections as _collections

import numpy as _np

from . import _C
from . import dtypes as _dtypes
from . import errors as _errors
from ._ops import (cast, concat, constant, convert_to_tensor, einsum, equal, gather, logical_or,
                   range as _range, reshape, reduce_sum, shape as _shape, where, zeros, ones)
from .tensor_shape import TensorShape


def _tensor(x, dtype=None):
    if isinstance(x, _C.Variable):
        x = x.read_value()
    if isinstance(x, _C.Tensor):
        return x if dtype is None or x.dtype == dtype else cast(x, dtype)
    return convert_to_tensor(x, dtype)


def _static_shape(x, what):
    dims = x.shape.as_list() if x.shape.rank is not None else None
    if dims is None or None in dims:
        raise ValueError(f"kiln.{what} needs the input's shape known while tracing; got {x.shape}")
    return dims


def _python_ints(value, what):
    """A Python int or list of ints from an int, list, NumPy value or eager tensor."""
    if isinstance(value, _C.Variable):
        value = value.read_value()
    if isinstance(value, _C.Tensor):
        if value._is_symbolic:
            return _static_values(value)
        value = value.numpy()
    arr = _np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"kiln.{what}: expected integers, got {arr.dtype}")
    return arr.tolist()


def _is_symbolic(x):
    return isinstance(x, _C.Tensor) and x._is_symbolic


def _static_values(t):
    """The values of a graph tensor the trace knows already (tf.shape(x) of a static x, a slice or
    element of it) as an int or list of ints, else None."""
    from . import _dynamic_shape
    if t.ndim == 1:
        dims = _dynamic_shape.unpack(t)
        return dims if isinstance(dims, list) else None
    if t.ndim == 0:
        dims = _dynamic_shape.resolve([t])
        return dims[0] if isinstance(dims, list) else None
    return None


def _host_ints(fn, inputs, what):
    """fn(*numpy arrays) -> int32 vector: run now on values known now (Python and NumPy values, eager
    tensors), else as a host function of the trace (a vector there too, so what gathers by it keeps its rank)."""
    if not _builtins.any(_is_symbolic(x) for x in inputs):
        values = [x.numpy() if isinstance(x, (_C.Tensor, _C.Variable)) else _np.asarray(x) for x in inputs]
        return constant(_np.asarray(fn(*values), _np.int32))
    inputs = [_tensor(x) for x in inputs]
    from .function import py_function
    return reshape(py_function(lambda *xs: _np.asarray(fn(*[x.numpy() for x in xs]), _np.int32), inputs,
                               _dtypes.int32, name=what), [-1])


def _normalize_axis(axis, rank, what):
    axis = int(axis)
    if not -rank <= axis < _builtins.max(rank, 1):
        raise _errors.InvalidArgumentError(f"kiln.{what}: axis {axis} is out of range for a tensor of rank {rank}")
    return axis % _builtins.max(rank, 1)


# ---- creation ------------------------------------------------------------------------

def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from start to stop, both included (start and stop may be tensors
    of one shape: the values run along `axis`)."""
    start = _tensor(start)
    if not start.dtype.is_floating:
        start = cast(start, _dtypes.float32)
    stop = _tensor(stop, start.dtype)
    n = _python_ints(num, "linspace")
    if n is None:
        raise ValueError("kiln.linspace: num must be known while tracing")
    if n < 0:
        raise _errors.InvalidArgumentError(f"Requires num > 0: {n}")
    rank = start.ndim
    axis = _normalize_axis(axis, rank + 1, "linspace")
    start_e = _C.expand_dims(start, axis)
    stop_e = _C.expand_dims(stop, axis)
    if n <= 1:
        return start_e if n == 1 else _C.slice(start_e, [0] * (rank + 1), [-1 if a != axis else 0 for a in _builtins.range(rank + 1)])
    steps = cast(_range(1, n - 1), start.dtype)
    steps = reshape(steps, [n - 2 if a == axis else 1 for a in _builtins.range(rank + 1)])
    delta = (stop_e - start_e) / float(n - 1)
    # The end points are exact (start and stop themselves), as TF's linspace.
    return concat([start_e, start_e + steps * delta, stop_e], axis)


lin_space = linspace


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    rows = int(num_rows)
    cols = rows if num_columns is None else int(num_columns)
    grid = equal(reshape(_range(rows), [rows, 1]), reshape(_range(cols), [1, cols]))
    out = cast(grid, dtype)
    if batch_shape is not None:
        batch = [int(d) for d in _python_ints(batch_shape, "eye")]
        out = broadcast_to(out, batch + [rows, cols])
    return out


def rank(input, name=None):  # noqa: A002
    x = _tensor(input)
    if x.ndim is None:
        raise ValueError("kiln.rank: the input's rank is unknown while tracing")
    return constant(x.ndim, _dtypes.int32)


def identity_n(input, name=None):  # noqa: A002 - TF's argument name
    return [convert_to_tensor(x) for x in input]


# ---- broadcasting ----------------------------------------------------------------------

def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape two shapes broadcast to (None dims stay unknown where they decide it)."""
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    if x.rank is None or y.rank is None:
        return TensorShape(None)
    xs, ys = x.as_list(), y.as_list()
    n = _builtins.max(len(xs), len(ys))
    xs = [1] * (n - len(xs)) + xs
    ys = [1] * (n - len(ys)) + ys
    out = []
    for a, b in zip(xs, ys):
        if a == 1:
            out.append(b)
        elif b == 1:
            out.append(a)
        elif a is None or b is None:
            out.append(a if b is None else b)
        elif a == b:
            out.append(a)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if for each "
                             f"dimension pair they are either equal or one of them is 1. Received: {x} and {y}.")
    return TensorShape(out)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (a 1-D int tensor) two shapes, given as 1-D int tensors, broadcast to."""
    x, y = _tensor(shape_x), _tensor(shape_y)
    if x.dtype != y.dtype:
        y = cast(y, x.dtype)
    if not (x._is_symbolic or y._is_symbolic):
        xs, ys = x.numpy().tolist(), y.numpy().tolist()
        try:
            out = broadcast_static_shape(xs, ys).as_list()
        except ValueError:
            raise _errors.InvalidArgumentError(f"Incompatible shapes: {xs} vs. {ys}") from None
        return constant(out, x.dtype)
    nx, ny = _static_shape(x, "broadcast_dynamic_shape")[0], _static_shape(y, "broadcast_dynamic_shape")[0]
    n = _builtins.max(nx, ny)
    x = concat([ones([n - nx], x.dtype), x], 0) if nx < n else x
    y = concat([ones([n - ny], x.dtype), y], 0) if ny < n else y
    return where(equal(x, 1), y, x)


def broadcast_to(input, shape, name=None):  # noqa: A002
    """input repeated along its size-1 (and new leading) dims to `shape`."""
    x = _tensor(input)
    dims = _python_ints(shape, "broadcast_to")
    if dims is None:  # a run-time shape (tf.shape(y) in a trace): zeros of it, broadcast against
        if x.dtype == _dtypes.bool:
            return logical_or(x, zeros(shape, _dtypes.bool))
        return x + zeros(shape, x.dtype)
    dims = [dims] if isinstance(dims, int) else dims
    have = x.shape.as_list() if x.shape.rank is not None else None
    if have is not None:
        ok = len(have) <= len(dims) and _builtins.all(
            a is None or a == 1 or a == b for a, b in zip(have[::-1], dims[::-1]))
        if not ok:
            raise _errors.InvalidArgumentError(f"Unable to broadcast tensor of shape {x.shape} to tensor of shape "
                                               f"{TensorShape(dims)}")
    if x.dtype == _dtypes.bool:
        return logical_or(x, zeros(dims, _dtypes.bool))
    if x.dtype == _dtypes.string:
        return gather(reshape(x, [-1]), zeros(dims, _dtypes.int32)) if x.shape.num_elements() == 1 else \
            _broadcast_by_gather(x, dims)
    return x + zeros(dims, x.dtype)


def _broadcast_by_gather(x, dims):
    have = [1] * (len(dims) - x.ndim) + x.shape.as_list()
    x = reshape(x, have)
    for axis, (a, b) in enumerate(zip(have, dims)):
        if a == 1 and b != 1:
            x = gather(x, zeros([b], _dtypes.int32), axis=axis)
    return x


def meshgrid(*args, **kwargs):
    """Coordinate grids of N 1-D tensors: indexing 'xy' (Cartesian, the default) swaps the first two
    output dims, 'ij' (matrix) does not."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keywords: {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing parameter must be either 'xy' or 'ij', got {indexing!r}")
    xs = [reshape(_tensor(a), [-1]) for a in args]
    n = len(xs)
    sizes = [_static_shape(x, "meshgrid")[0] for x in xs]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and n > 1 and i < 2:
            axis = 1 - i
        grid_shape = [1] * n
        grid_shape[axis] = -1
        out.append(broadcast_to(reshape(x, grid_shape), sizes))
    return out


# ---- contraction -----------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def tensordot(a, b, axes, name=None):
    """Sums the products of a's and b's elements over the given axes: an int N (a's last N with b's
    first N) or a pair of axis lists. One einsum, whose gradient is einsums too."""
    a, b = _tensor(a), _tensor(b)
    ra, rb = a.ndim, b.ndim
    if ra is None or rb is None:
        raise ValueError("kiln.tensordot needs inputs of known rank")
    if isinstance(axes, (_C.Tensor, _C.Variable)):
        axes = axes.numpy().tolist()
    if isinstance(axes, (int, _np.integer)):
        n = int(axes)
        if n < 0 or n > _builtins.min(ra, rb):
            raise ValueError(f"'axes' must be at most the rank of both inputs ({ra}, {rb}) and not negative, got {n}")
        a_axes, b_axes = list(_builtins.range(ra - n, ra)), list(_builtins.range(n))
    else:
        if len(axes) != 2:
            raise ValueError(f"'axes' must be an integer or have length 2, got {axes!r}")
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, _np.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, _np.integer)) else list(b_axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}.")
    a_axes = [int(x) % ra for x in a_axes]
    b_axes = [int(x) % rb for x in b_axes]
    letters = iter(_LETTERS)
    a_sub = [next(letters) for _ in _builtins.range(ra)]
    b_sub = [next(letters) for _ in _builtins.range(rb)]
    for i, j in zip(a_axes, b_axes):
        b_sub[j] = a_sub[i]
    out = [c for k, c in enumerate(a_sub) if k not in a_axes] + [c for k, c in enumerate(b_sub) if k not in b_axes]
    return einsum(f"{''.join(a_sub)},{''.join(b_sub)}->{''.join(out)}", a, b)


# ---- reordering -----------------------------------------------------------------------

def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted along each axis, wrapping around (shift and axis: ints or lists of them)."""
    x = _tensor(input)
    dims = _static_shape(x, "roll")
    shifts = shift if isinstance(shift, (list, tuple)) else [shift]
    axes = _python_ints(axis, "roll")
    axes = axes if isinstance(axes, list) else [axes]
    if isinstance(shift, (_C.Tensor, _C.Variable)) and shift.ndim == 1:
        shifts = [shift[i] for i in _builtins.range(len(axes))]
    if len(shifts) != len(axes):
        raise _errors.InvalidArgumentError(f"shift and axis must have the same size, got {len(shifts)} and {len(axes)}")
    total = {}
    for s, a in zip(shifts, axes):
        a = _normalize_axis(a, x.ndim, "roll")
        total[a] = total[a] + s if a in total else s  # repeated axes add up, as TF's
    for a, s in total.items():
        n = dims[a]
        if n == 0:
            continue
        s = _tensor(s, _dtypes.int32) if isinstance(s, (_C.Tensor, _C.Variable)) else int(s)
        index = (_range(n) - s) % n
        x = gather(x, index, axis=a)
    return x


def reverse(tensor, axis, name=None):
    x = _tensor(tensor)
    dims = _static_shape(x, "reverse")
    for a in set(_normalize_axis(a, x.ndim, "reverse") for a in _np.atleast_1d(_python_ints(axis, "reverse"))):
        x = gather(x, _range(dims[a] - 1, -1, -1), axis=a)
    return x


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Each element (each slice along `axis`) repeated repeats times (one count, or one per element);
    without axis, of the flattened input."""
    x = _tensor(input)
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    axis = _normalize_axis(axis, x.ndim, "repeat")
    n = _static_shape(x, "repeat")[axis]
    counts = repeats if isinstance(repeats, (_C.Tensor, _C.Variable)) else _np.asarray(repeats)
    if not _np.issubdtype(getattr(counts.dtype, "as_numpy_dtype", counts.dtype), _np.integer):
        raise TypeError(f"kiln.repeat: repeats must be integers, got {counts.dtype}")

    def indices(c):
        c = _np.broadcast_to(_np.asarray(c).reshape(-1) if _np.ndim(c) else c, (n,))
        if (c < 0).any():
            raise _errors.InvalidArgumentError("repeats must not be negative")
        return _np.repeat(_np.arange(n), c)
    return gather(x, _host_ints(indices, [counts], "repeat"), axis=axis)


def tile(input, multiples, name=None):  # noqa: A002
    """input repeated multiples[i] times along each dim i (multiples: a list or a 1-D int tensor,
    whose values may be known only when the graph runs)."""
    x = _tensor(input)
    m = _python_ints(multiples, "tile")
    if m is not None:
        if len(m) != x.ndim:
            raise _errors.InvalidArgumentError(
                f"Expected multiples argument to be a vector of length {x.ndim} but got length {len(m)}")
        return _C.tile(x, [int(v) for v in m])
    dims = _static_shape(x, "tile")
    multiples = _tensor(multiples, _dtypes.int32)
    for a, n in enumerate(dims):
        index = _host_ints(lambda ms, n=n, a=a: _np.tile(_np.arange(n), int(ms[a])), [multiples], "tile")
        x = gather(x, index, axis=a)
    return x


def unstack(value, num=None, axis=0, name="unstack"):
    x = _tensor(value)
    if x.ndim is not None:
        a = _normalize_axis(axis, x.ndim, "unstack")
        n = x.shape.as_list()[a]
        if n is None and num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
        if num is not None and n is not None and int(num) != n:
            raise ValueError(f"Dimension {a} in both shapes must be equal: num={num} but the dim is {n}")
    return _C.unstack(x, int(axis))


# ---- selection ----------------------------------------------------------------------

def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The slices of tensor where mask (shaped as tensor's dims from `axis` on) is true, flattened
    over the mask's dims."""
    x, m = _tensor(tensor), _tensor(mask)
    if m.dtype != _dtypes.bool:
        raise TypeError(f"kiln.boolean_mask: the mask must be bool, got {m.dtype.name}")
    k = m.ndim
    if k == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else _normalize_axis(axis, x.ndim, "boolean_mask")
    # A 1-D mask needs no reshape, so the input's dimensions may be unknown in a trace (ragged values).
    dims = _static_shape(x, "boolean_mask") if k > 1 else x.shape.as_list()
    mdims = m.shape.as_list()
    for d, md in zip(dims[axis:axis + k], mdims):
        if md is not None and d is not None and d != md:
            raise ValueError(f"Shapes {TensorShape(dims[axis:axis + k])} and {m.shape} are incompatible")
    flat = reshape(x, dims[:axis] + [-1] + dims[axis + k:]) if k > 1 else x
    known = mask if not isinstance(mask, (_C.Tensor, _C.Variable)) else m
    index = _host_ints(lambda mm: _np.flatnonzero(mm.reshape(-1)), [known], "boolean_mask")
    return gather(flat, index, axis=axis)


def true_coordinates(condition):
    """tf.where(condition): the coordinates of its true (nonzero) elements, int64 [count, rank]. Data-dependent:
    computed on values known now, else by a host function of the trace."""
    c = condition if isinstance(condition, (_C.Tensor, _C.Variable)) else _tensor(condition)
    rank = c.shape.rank
    if rank is None:
        raise ValueError("tf.where(condition) needs a condition of known rank")
    coordinates = lambda v: _np.argwhere(_np.asarray(v)).astype(_np.int64)  # noqa: E731  [1, 0] for a true scalar
    if not _is_symbolic(c):
        return constant(coordinates(c.numpy()))
    from .function import py_function
    found = py_function(lambda t: coordinates(t.numpy()), [c], _dtypes.int64, name="where")
    return reshape(found, [-1, rank]) if rank else found


def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None):
    """For each of values' innermost rows, where its values would go in sorted_sequence's row to keep
    it sorted: before equal entries ('left') or after them ('right')."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left'.  Saw: {side}.")
    seq, vals = _tensor(sorted_sequence), _tensor(values)
    if vals.dtype != seq.dtype:
        vals = cast(vals, seq.dtype)
    if seq.ndim == 0 or vals.ndim == 0:
        raise _errors.InvalidArgumentError("sorted_sequence and values must have rank 1 or more")
    if seq.ndim != vals.ndim:
        raise _errors.InvalidArgumentError(f"sorted_sequence and values must have the same rank, got {seq.ndim} "
                                           f"and {vals.ndim}")
    # counts of entries below (or not above) each value: [..., V, 1] against [..., 1, S]
    s = _C.expand_dims(seq, seq.ndim - 1)
    v = _C.expand_dims(vals, vals.ndim)
    below = _C.less(s, v) if side == "left" else _C.less_equal(s, v)
    return cast(reduce_sum(cast(below, _dtypes.int64), axis=-1), out_type)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """The bin (0..nbins-1) of each value: equal bins over value_range, the outside values in the
    end bins."""
    x = _tensor(values)
    if not x.dtype.is_floating:
        x = cast(x, _dtypes.float64)
    lo_hi = _tensor(value_range, x.dtype)
    lo, hi = lo_hi[0], lo_hi[1]
    nbins = int(_python_ints(nbins, "histogram_fixed_width"))
    scaled = (x - lo) / (hi - lo) * float(nbins)
    return cast(_C.clip(_C.floor(scaled), 0.0, float(nbins - 1)), dtype)


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """How many values fall in each of nbins equal bins over value_range (outside values count in
    the end bins)."""
    nbins_int = int(_python_ints(nbins, "histogram_fixed_width"))
    bins = reshape(histogram_fixed_width_bins(values, value_range, nbins_int, _dtypes.int32), [-1])
    counts = _C.unsorted_segment_sum(ones(_shape(bins), _dtypes.float64), bins, nbins_int)
    return cast(counts, dtype)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32, name=None, axis=None,
             binary_output=False):
    """How many times each value 0..N-1 occurs in arr (or the sum of its weights); N is max(arr) + 1,
    at least minlength and at most maxlength (values past it are dropped)."""
    if axis not in (None, 0, -1):
        raise ValueError(f"Unsupported axis value {axis}. Only 0 and -1 are currently supported.")
    x = _tensor(arr)
    if not x.dtype.is_integer:
        raise TypeError(f"kiln.bincount: arr must be integers, got {x.dtype.name}")
    if axis == -1:
        raise NotImplementedError("kiln.bincount: axis=-1 (one count per row) is not supported")
    flat = reshape(x, [-1])
    lo = _python_ints(minlength, "bincount") if minlength is not None else None
    hi = _python_ints(maxlength, "bincount") if maxlength is not None else None
    if lo is not None and hi is not None and lo == hi:
        length = lo
    elif not flat._is_symbolic:
        values = flat.numpy()
        if values.size and values.min() < 0:
            raise _errors.InvalidArgumentError(f"Input arr must be non-negative! (got {values.min()})")
        length = int(values.max()) + 1 if values.size else 0
        length = _builtins.max(length, lo or 0)
        length = length if hi is None else _builtins.min(length, hi)
    else:
        raise ValueError("kiln.bincount inside kiln.function needs the output length known while tracing: pass "
                         "minlength == maxlength")
    out_dtype = _tensor(weights).dtype if weights is not None else _dtypes.as_dtype(dtype)
    if binary_output:
        w = ones(_shape(flat), _dtypes.float64)
    elif weights is None:
        w = ones(_shape(flat), _dtypes.float64)
    else:
        w = reshape(_tensor(weights), [-1])
    ids = where(_C.less(flat, length), flat, -ones(_shape(flat), flat.dtype))  # past maxlength: dropped
    counts = _C.unsorted_segment_sum(w, cast(ids, _dtypes.int32), length)
    if binary_output:
        counts = cast(_C.greater(counts, 0.0), _dtypes.float64)
    return cast(counts, out_dtype)


Unique = _collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = _collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _first_occurrence(values):
    """(index of each distinct value's first occurrence in order of appearance, each element's index
    into those, each distinct value's count)."""
    values = values.reshape(-1)
    _, first, inverse, counts = _np.unique(values, return_index=True, return_inverse=True, return_counts=True)
    order = _np.argsort(first, kind="stable")
    rank = _np.empty_like(order)
    rank[order] = _np.arange(order.size)
    return first[order], rank[inverse.reshape(-1)], counts[order]


def unique(x, out_idx=_dtypes.int32, name=None):
    """The distinct elements of the 1-D x in order of first appearance, and each element's index into them."""
    x = _tensor(x)
    if x.ndim != 1:
        raise _errors.InvalidArgumentError(f"unique expects a 1D vector, got shape {x.shape}")
    first = _host_ints(lambda v: _first_occurrence(v)[0], [x], "unique")
    idx = _host_ints(lambda v: _first_occurrence(v)[1], [x], "unique")
    return Unique(gather(x, first), cast(idx, out_idx))


def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    y, idx = unique(x, out_idx)
    count = _host_ints(lambda v: _first_occurrence(v)[2], [_tensor(x)], "unique_with_counts")
    return UniqueWithCounts(y, idx, cast(count, out_idx))


def batch_gather_nd(params, indices, batch_dims):
    """tf.gather_nd with batch_dims: the leading batch_dims dims of params and indices pair up. As TF's
    array_ops does it: one gather_nd over the batch flattened, each index tuple led by its batch position."""
    params, indices = convert_to_tensor(params), convert_to_tensor(indices)
    rank = indices.shape.rank
    if batch_dims < 0:
        batch_dims += rank
    if not 0 <= batch_dims < rank:
        raise ValueError(f"batch_dims = {batch_dims} must be less than rank(indices) = {rank}")
    if batch_dims >= params.shape.rank:
        raise ValueError(f"batch_dims = {batch_dims} must be less than rank(params) = {params.shape.rank}")
    depth = indices.shape[-1]
    if depth is None:
        raise ValueError("gather_nd with batch_dims needs the last dimension of indices known, got "
                         f"{indices.shape}")

    def dims(t, start, stop=None):  # static where known (Kiln's reshape in a trace takes one run-time dim)
        dynamic = _shape(t, out_type=indices.dtype)
        return [d if d is not None else dynamic[k] for k, d in
                _builtins.list(enumerate(t.shape.as_list()))[start:stop]]

    batch = dims(params, 0, batch_dims)
    if batch_dims == 1:  # already one batch dim: no reshape
        n, flat_params, flat_indices = batch[0], params, indices
    else:
        n = int(_np.prod(batch)) if all(isinstance(d, int) for d in batch) else \
            _C.reduce_prod(_shape(params, out_type=indices.dtype)[:batch_dims], [0], False)
        flat_params = reshape(params, [n] + dims(params, batch_dims))
        flat_indices = reshape(indices, [n] + dims(indices, batch_dims))  # [n, I..., depth]
    position = reshape(_range(n, dtype=indices.dtype), [-1] + [1] * (rank - batch_dims))
    position = position + flat_indices[..., :1] * 0  # [n, I..., 1]
    gathered = _C.gather_nd(flat_params, concat([position, flat_indices], -1))
    if batch_dims == 1:
        return gathered
    return reshape(gathered, batch + dims(indices, batch_dims, -1) + dims(params, batch_dims + depth))
