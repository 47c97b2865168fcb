"""Operations on RaggedTensors, composed of dense ops: elementwise ops with TF's broadcasting, reductions over any
axis (a ragged axis is padded with the reduction's identity, then reduced densely), concat, stack, tile, reverse,
and tf.ragged's constant, map_flat_values, range and boolean_mask."""
import sys

import numpy as np

from . import _C
from ._composite import map_nested as _map_nested
from . import dtypes as _dtypes
from .ragged_getitem import gather_rows
from .ragged_tensor import RaggedTensor, _concrete, _invalid, _t, ranges, row_ids_of, splits_from_lengths


def _ops():
    return sys.modules[__package__]  # kiln: every tf.* function (ragged_dispatch routes composites)


def is_ragged(x):
    return isinstance(x, RaggedTensor)


# Construction --------------------------------------------------------------------------------------------

def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=_dtypes.int64):
    """tf.ragged.constant: a RaggedTensor from a nested Python list whose scalars all sit at one depth."""
    if isinstance(pylist, RaggedTensor):
        raise TypeError("pylist may not be a RaggedTensor")
    if not isinstance(pylist, (list, tuple, np.ndarray)):
        if ragged_rank not in (None, 0):
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
        return _ops().constant(pylist, dtype)
    scalar_depths, list_depth = set(), [0]
    stack = [(pylist, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, np.ndarray)) and not (isinstance(item, np.ndarray) and item.ndim == 0):
            list_depth[0] = max(list_depth[0], depth)
            stack.extend((c, depth + 1) for c in item)
        else:
            scalar_depths.add(depth)
    if len(scalar_depths) > 1:
        raise ValueError("all scalar values must have the same nesting depth")
    inner_rank = 0 if inner_shape is None else len(inner_shape)
    rank = scalar_depths.pop() if scalar_depths else list_depth[0] + 1 + inner_rank
    if ragged_rank is None:
        ragged_rank = max(1, rank - 1 - inner_rank)
    if not 0 <= ragged_rank < rank:
        raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
    splits_dtype = _dtypes.as_dtype(row_splits_dtype)
    level, nested_splits = list(pylist), []
    for _ in range(ragged_rank):
        lengths = []
        for row in level:
            if not isinstance(row, (list, tuple, np.ndarray)):
                raise ValueError("all scalar values must have the same nesting depth")
            lengths.append(len(row))
        nested_splits.append(np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]))
        level = [c for row in level for c in row]
    values = _flat_values(level, dtype, rank - ragged_rank - 1 if inner_shape is None else None, inner_shape)
    result = values
    for s in reversed(nested_splits):
        result = RaggedTensor._from_splits(result, _ops().constant(s, splits_dtype))
    return result


def _flat_values(items, dtype, inner_rank, inner_shape):
    ops = _ops()
    if not items:
        inner = list(inner_shape) if inner_shape is not None else [0] * (inner_rank or 0)
        return ops.zeros([0] + inner, dtype or _dtypes.float32)
    kinds = {type(_first_scalar(i)) for i in items}
    if any(issubclass(k, (str, bytes)) for k in kinds) and not all(issubclass(k, (str, bytes)) for k in kinds):
        raise ValueError("Can't convert Python list to Tensor: its values mix strings and numbers")
    try:
        values = ops.constant(items, dtype)
    except (ValueError, TypeError, _C.InvalidArgumentError) as e:
        raise ValueError(f"inner values of a ragged constant must have a uniform shape and one type: {e}") from None
    if inner_shape is not None:
        values = ops.reshape(values, [-1] + list(inner_shape))
    return values


def _first_scalar(x):
    while isinstance(x, (list, tuple, np.ndarray)) and len(x):
        x = x[0]
    return x


def ragged_range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=_dtypes.int64):
    """tf.ragged.range: row i is range(starts[i], limits[i], deltas[i]) (scalars broadcast)."""
    ops = _ops()
    if limits is None:
        starts, limits = 0, starts
    if dtype is None:
        dtype = next((t.dtype for t in (starts, limits, deltas) if isinstance(t, _C.Tensor)), None)
        if dtype is None:
            dtype = _dtypes.float32 if any(isinstance(v, float) or (isinstance(v, (list, tuple)) and any(
                isinstance(e, float) for e in v)) for v in (starts, limits, deltas)) else _dtypes.int32
    starts, limits, deltas = (_t(v, _dtypes.as_dtype(dtype)) for v in (starts, limits, deltas))
    if any(v.shape.rank not in (0, 1) for v in (starts, limits, deltas)):
        raise ValueError("starts, limits and deltas must be scalars or vectors")
    shape = ops.shape(starts + limits + deltas)
    starts, limits, deltas = (ops.broadcast_to(v, shape) for v in (starts, limits, deltas))
    if starts.shape.rank == 0:
        starts, limits, deltas = (ops.reshape(v, [1]) for v in (starts, limits, deltas))
    if _concrete(deltas) and np.any(deltas.numpy() == 0):
        raise _invalid("Requires delta != 0")
    splits_dtype = _dtypes.as_dtype(row_splits_dtype)
    span = limits - starts
    if starts.dtype.is_floating:
        lengths = ops.cast(ops.ceil(span / deltas), splits_dtype)
    else:
        lengths = ops.cast(-((-span) // deltas), splits_dtype)
    lengths = ops.maximum(lengths, ops.zeros_like(lengths))
    splits = splits_from_lengths(lengths, splits_dtype)
    ids = row_ids_of(splits)
    pos = ops.range(splits[-1], dtype=splits_dtype) - ops.gather(splits, ids)
    values = ops.gather(starts, ids) + ops.cast(pos, starts.dtype) * ops.gather(deltas, ids)
    return RaggedTensor._from_splits(values, splits)


def boolean_mask(data, mask, name=None):
    """tf.ragged.boolean_mask: keeps data's items where mask is true; a mask of rank 2 or more gives ragged rows."""
    ops = _ops()
    mask = mask if is_ragged(mask) else _t(mask, _dtypes.bool)
    if mask.shape.rank == 1:
        if is_ragged(data):
            return gather_rows(data, ops.boolean_mask(ops.range(data.nrows(_dtypes.int64), dtype=_dtypes.int64),
                                                      mask))
        return ops.boolean_mask(_t(data), mask)
    if mask.shape.rank != 2:
        raise NotImplementedError("tf.ragged.boolean_mask with a mask of rank above 2 is not supported by Kiln")
    if is_ragged(mask):
        if not is_ragged(data):
            data = RaggedTensor.from_tensor(data, lengths=mask.row_lengths())
        _check_same_splits(data, mask)
        values = ops.boolean_mask(data.values, mask.values)
        lengths = reduce("reduce_sum", mask.with_flat_values(ops.cast(mask.values, _dtypes.int64)), axis=1)
        return RaggedTensor._from_splits(values, splits_from_lengths(lengths, data.row_splits_dtype))
    if is_ragged(data):
        return boolean_mask(data, RaggedTensor.from_tensor(mask, lengths=data.row_lengths()))
    data = _t(data)
    values = ops.boolean_mask(data, mask)
    lengths = ops.reduce_sum(ops.cast(mask, _dtypes.int64), axis=1)
    return RaggedTensor._from_splits(values, splits_from_lengths(lengths))


def map_flat_values(op, *args, **kwargs):
    """tf.ragged.map_flat_values: op on the flat values of the RaggedTensors in args (which must share their row
    partitions); the result takes their partitions."""
    found = []

    def strip(x):
        if is_ragged(x):
            found.append(x)
            return x.flat_values
        return x

    args, kwargs = _map_nested(list(args), strip), _map_nested(kwargs, strip)
    if not found:
        return op(*args, **kwargs)
    for other in found[1:]:
        _check_same_splits(found[0], other)
    return found[0].with_flat_values(op(*args, **kwargs))


# Elementwise ---------------------------------------------------------------------------------------------

def _check_same_splits(a, b):
    sa, sb = a.nested_row_splits, b.nested_row_splits
    if len(sa) != len(sb):
        raise ValueError(f"Inputs must have identical ragged rank: {len(sa)} vs {len(sb)}")
    for x, y in zip(sa, sb):
        if x is y:
            continue
        if _concrete(x, y) and not np.array_equal(x.numpy(), y.numpy()):
            raise _invalid("Inputs must have identical ragged splits. Condition x == y did not hold element-wise: "
                           f"x (row_splits) = {x.numpy().tolist()}, y (row_splits) = {y.numpy().tolist()}")


def _outer_row_ids(rt):
    """For each flat value, the outermost row it lies in."""
    ops = _ops()
    splits = rt.nested_row_splits
    ids = row_ids_of(splits[-1])
    for s in reversed(splits[:-1]):
        ids = ops.gather(row_ids_of(s), ids)
    return ids


def _dense_for_flat_values(rt, d):
    """The dense operand `d` broadcast against rt's flat values, following TF's ragged broadcasting."""
    ops = _ops()
    fv = rt.flat_values
    inner = fv.shape.rank - 1
    rank, rr = rt.shape.rank, rt.ragged_rank
    if d.shape.rank <= inner:
        return d
    if d.shape.rank > rank:
        raise ValueError(f"Unable to broadcast: a tensor of rank {d.shape.rank} with a RaggedTensor of rank {rank}")
    if d.shape.rank < rank:
        d = ops.reshape(d, [1] * (rank - d.shape.rank) + d.shape.as_list())
    dims = d.shape.as_list()
    if all(k == 1 for k in dims[1:rr + 1]):
        d0 = ops.reshape(d, [-1] + dims[rr + 1:]) if dims[0] != 1 else ops.reshape(d, dims[rr + 1:])
        if dims[0] == 1:
            return d0
        nrows = rt.nrows()
        if _concrete(nrows) and dims[0] is not None and dims[0] != int(nrows.numpy()):
            raise _invalid(f"Unable to broadcast: dimension size mismatch in dimension 0: lengths={dims[0]} "
                           f"dim_size={int(nrows.numpy())}")
        return ops.gather(d0, _outer_row_ids(rt))
    if rr == 1 and dims[1] is not None:
        lengths = rt.row_lengths()
        if _concrete(lengths) and not np.all(lengths.numpy() == dims[1]):
            raise _invalid(f"Unable to broadcast: dimension size mismatch in dimension 1: lengths={dims[1]} "
                           f"dim_size={', '.join(str(v) for v in lengths.numpy().tolist())}")
        return ops.reshape(d, [-1] + dims[2:])
    raise _invalid(f"Unable to broadcast a tensor of shape {d.shape} with a RaggedTensor of shape {rt.shape}")


def ragged_binary(name, x, y, **kwargs):
    """tf.<name>(x, y) where x or y is ragged: the op on flat values, the other operand broadcast to them."""
    ops = _ops()
    op = getattr(ops, name)
    if is_ragged(x) and is_ragged(y):
        if x.ragged_rank != y.ragged_rank:
            raise _invalid(f"Unable to broadcast RaggedTensors of ragged ranks {x.ragged_rank} and {y.ragged_rank}")
        _check_same_splits(x, y)
        return x.with_flat_values(op(x.flat_values, y.flat_values, **kwargs))
    rt, other, ragged_first = (x, y, True) if is_ragged(x) else (y, x, False)
    if not isinstance(other, _C.Tensor):
        try:
            other = ops.convert_to_tensor(other, dtype=rt.dtype)
        except (TypeError, ValueError, _C.InvalidArgumentError):
            other = ops.convert_to_tensor(other)
    g = _dense_for_flat_values(rt, other)
    fv = rt.flat_values
    return rt.with_flat_values(op(fv, g, **kwargs) if ragged_first else op(g, fv, **kwargs))


def ragged_unary(fn, x, *args, **kwargs):
    return x.with_flat_values(fn(x.flat_values, *args, **kwargs))


# Reductions ----------------------------------------------------------------------------------------------

def _identity(kind, dtype):
    if kind in ("reduce_sum", "reduce_mean"):
        return 0
    if kind == "reduce_prod":
        return 1
    if kind == "reduce_any":
        return False
    if kind == "reduce_all":
        return True
    np_dtype = dtype.as_numpy_dtype
    if kind == "reduce_max":
        return -np.inf if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype).min
    return np.inf if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype).max


def reduce(kind, input_tensor, axis=None, keepdims=False, name=None):
    """tf.math.<kind> over a RaggedTensor. A ragged axis is reduced over the values each row has (an empty row
    gives the reduction's identity: 0, 1, the dtype's lowest for max, its highest for min, NaN for mean)."""
    ops = _ops()
    rt = input_tensor
    if keepdims:
        raise NotImplementedError("keepdims=True on a RaggedTensor is not supported by Kiln")
    if kind == "reduce_mean" and not (rt.dtype.is_floating):
        rt = rt.with_flat_values(ops.cast(rt.flat_values, _dtypes.float64))
    if axis is None:
        return getattr(ops, kind)(rt.flat_values)
    axes = [axis] if isinstance(axis, int) else [int(a) for a in (axis.numpy() if isinstance(axis, _C.Tensor)
                                                                  else axis)]
    rank = rt.shape.rank
    axes = sorted({a + rank if a < 0 else a for a in axes}, reverse=True)
    for a in axes:
        if not 0 <= a < rank:
            raise ValueError(f"axis={a} is out of bounds for a RaggedTensor of rank {rank}")
        rt = _reduce_axis(kind, rt, a)
    return rt


def _reduce_axis(kind, rt, axis):
    ops = _ops()
    if not is_ragged(rt):
        return getattr(ops, kind)(rt, axis=axis)
    if axis >= 2:
        return rt.with_values(_reduce_axis(kind, rt.values, axis - 1))
    if rt.ragged_rank != 1:
        raise NotImplementedError(f"{kind} over axis {axis} of a RaggedTensor with ragged_rank "
                                  f"{rt.ragged_rank} is not supported by Kiln")
    if kind == "reduce_mean":
        total = _reduce_axis("reduce_sum", rt, axis)
        ones = rt.with_flat_values(ops.ones_like(rt.flat_values))
        count = _reduce_axis("reduce_sum", ones, axis)
        return total / count
    dense = rt.to_tensor(default_value=_identity(kind, rt.dtype))
    return getattr(ops, kind)(dense, axis=axis)


# Shape ops -----------------------------------------------------------------------------------------------

def _as_ragged(x, ragged_rank):
    if is_ragged(x):
        return x
    return RaggedTensor.from_tensor(_t(x), ragged_rank=ragged_rank)


def concat(values, axis, name="concat"):
    """tf.concat with RaggedTensors among `values` (dense ones become ragged)."""
    ops = _ops()
    values = list(values)
    first = next(v for v in values if is_ragged(v))
    rank = first.shape.rank
    axis = axis + rank if axis < 0 else axis
    ragged_rank = max(v.ragged_rank for v in values if is_ragged(v))
    if axis == 0:
        return _concat_rows([_as_ragged(v, ragged_rank) for v in values])
    rts = [_as_ragged(v, min(ragged_rank, axis)) for v in values]
    if axis == 1:
        nrows = [r.nrows() for r in rts]
        if _concrete(*nrows) and len({int(n.numpy()) for n in nrows}) > 1:
            raise _invalid("Input tensors at index 0 (=x) and 1 (=y) have incompatible shapes: every input to "
                           "concat along axis 1 needs the same number of rows")
        return _concat_in_rows(rts)
    for r in rts[1:]:
        _check_same_splits(RaggedTensor._from_splits(ops.zeros([0]), rts[0].row_splits),
                           RaggedTensor._from_splits(ops.zeros([0]), r.row_splits))
    inner = [r.values for r in rts]
    return rts[0].with_values(concat(inner, axis - 1) if any(is_ragged(v) for v in inner)
                              else ops.concat(inner, axis - 1))


def _concat_rows(rts):
    ops = _ops()
    dtype = rts[0].row_splits_dtype
    splits, offset = [], None
    for r in rts:
        s = _t(r.row_splits, dtype)
        splits.append(s if offset is None else s[1:] + offset)
        offset = s[-1] if offset is None else s[-1] + offset
    inner = [r.values for r in rts]
    values = _concat_rows(inner) if is_ragged(inner[0]) else ops.concat(inner, 0)
    return RaggedTensor._from_splits(values, ops.concat(splits, 0))


def _concat_in_rows(rts):
    """Row i of the result is row i of each input, one after another."""
    ops = _ops()
    inner = [r.values for r in rts]
    all_values = _concat_rows(inner) if is_ragged(inner[0]) else ops.concat(inner, 0)
    starts, limits, offset = [], [], ops.zeros([], _dtypes.int64)
    for r in rts:
        s = ops.cast(r.row_splits, _dtypes.int64)
        starts.append(s[:-1] + offset)
        limits.append(s[1:] + offset)
        offset = offset + s[-1]
    k = len(rts)
    idx, splits = ranges(ops.reshape(ops.stack(starts, axis=1), [-1]), ops.reshape(ops.stack(limits, axis=1), [-1]))
    nrows = rts[0].nrows(_dtypes.int64)
    splits = ops.gather(splits, ops.range(nrows + 1, dtype=_dtypes.int64) * k)
    return RaggedTensor._from_splits(gather_rows(all_values, idx), ops.cast(splits, rts[0].row_splits_dtype))


def stack(values, axis=0, name="stack"):
    """tf.stack of RaggedTensors (and dense tensors) along axis 0."""
    ops = _ops()
    if axis != 0:
        raise NotImplementedError("tf.stack of RaggedTensors along an axis other than 0 is not supported by Kiln")
    ragged_rank = max(v.ragged_rank for v in values if is_ragged(v))
    wrapped = []
    for v in values:
        r = _as_ragged(v, ragged_rank)
        n = r.nrows()
        wrapped.append(RaggedTensor._from_splits(r, ops.stack([ops.zeros_like(n), n])))
    return _concat_rows(wrapped)


def tile(input, multiples, name=None):  # noqa: A002 - TF's argument name
    """tf.tile of a RaggedTensor of ragged_rank 1: rows repeated `multiples[0]` times, each row's values
    `multiples[1]` times, uniform inner dimensions tiled densely."""
    ops = _ops()
    rt = input
    if rt.ragged_rank != 1:
        raise NotImplementedError("tf.tile of a RaggedTensor with ragged_rank > 1 is not supported by Kiln")
    m = _t(multiples, _dtypes.int64)
    one = ops.ones([], _dtypes.int64)
    # Index arithmetic rather than tf.tile, so row counts may be unknown in a trace.
    n = rt.nrows(_dtypes.int64)
    rt = gather_rows(rt, ops.range(n * m[0], dtype=_dtypes.int64) % ops.maximum(n, one))
    s = ops.cast(rt.row_splits, _dtypes.int64)

    def each_m1_times(v):
        k = ops.range(ops.size(v, out_type=_dtypes.int64) * m[1], dtype=_dtypes.int64) // ops.maximum(m[1], one)
        return ops.gather(v, k)
    idx, splits = ranges(each_m1_times(s[:-1]), each_m1_times(s[1:]))
    splits = ops.gather(splits, ops.range(rt.nrows(_dtypes.int64) + 1, dtype=_dtypes.int64) * m[1])
    values = ops.gather(rt.values, idx)
    if values.shape.rank > 1:
        values = ops.tile(values, ops.concat([ops.ones([1], _dtypes.int64), m[2:]], 0))
    return RaggedTensor._from_splits(values, ops.cast(splits, rt.row_splits_dtype))


def reverse(tensor, axis, name=None):
    """tf.reverse of a RaggedTensor: rows (axis 0), the values within each row (a ragged axis), inner axes."""
    rt = tensor
    axes = [axis] if isinstance(axis, int) else [int(a) for a in (axis.numpy() if isinstance(axis, _C.Tensor)
                                                                  else axis)]
    for a in axes:
        rt = _reverse_axis(rt, a + rt.shape.rank if a < 0 else a)
    return rt


def _reverse_axis(rt, axis):
    ops = _ops()
    if not is_ragged(rt):
        return ops.reverse(rt, [axis])
    if axis == 0:
        n = rt.nrows(_dtypes.int64)
        return gather_rows(rt, n - 1 - ops.range(n, dtype=_dtypes.int64))
    if axis >= 2:
        return rt.with_values(_reverse_axis(rt.values, axis - 1))
    s = ops.cast(rt.row_splits, _dtypes.int64)
    ids = row_ids_of(s)
    nvals = s[-1]
    idx = ops.gather(s[:-1] + s[1:] - 1, ids) - ops.range(nvals, dtype=_dtypes.int64)
    return rt.with_values(gather_rows(rt.values, idx))
