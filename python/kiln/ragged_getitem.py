"""RaggedTensor.__getitem__: Python indexing with TF's rules. The outermost dimension takes ints and slices (any
step); a ragged dimension takes slices of step 1, cut row by row; an int into a ragged dimension is refused (rows
may be too short), as TF refuses it. Inner uniform dimensions index as a dense tensor's do."""
import sys

from . import _C
from . import dtypes as _dtypes
from .ragged_tensor import RaggedTensor, ranges, _concrete


def _ops():
    return sys.modules[__package__]  # kiln: every tf.* function (ragged_dispatch routes composites)


def ragged_getitem(rt, key):
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis or k is None for k in key):
        raise ValueError("Ellipsis and tf.newaxis are not supported when indexing a RaggedTensor in Kiln")
    if not key:
        return rt
    first, rest = key[0], key[1:]
    if isinstance(first, slice):
        rows = _ops().range(rt.nrows(_dtypes.int64), dtype=_dtypes.int64)[first]
        out = gather_rows(rt, rows) if first != slice(None) else rt
        return _index_inner(out, rest) if rest else out
    row = _row(rt, first)
    return _index(row, rest) if rest else row


def _index(value, key):
    if not key:
        return value
    if isinstance(value, RaggedTensor):
        return ragged_getitem(value, key)
    return value[key]


def _row(rt, i):
    ops = _ops()
    if isinstance(i, _C.Tensor):
        i = ops.cast(i, _dtypes.int64)
    elif not hasattr(i, "__index__"):
        raise TypeError(f"Ragged indices must be integers or slices, got {type(i).__name__}")
    splits = ops.cast(rt.row_splits, _dtypes.int64)
    nrows = rt.nrows(_dtypes.int64)
    if not isinstance(i, _C.Tensor) and _concrete(splits):
        i = int(i)
        n = int(nrows.numpy())
        if not -n <= i < n:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(f"slice index {i} of dimension 0 out of bounds.")
    i = ops.convert_to_tensor(i, dtype=_dtypes.int64)
    i = ops.where(i < 0, i + nrows, i)
    idx = ops.range(splits[i], splits[i + 1], dtype=_dtypes.int64)
    return gather_rows(rt.values, idx)


def gather_rows(value, rows):
    """The rows `rows` (int64 indices) of a Tensor or RaggedTensor."""
    ops = _ops()
    if not isinstance(value, RaggedTensor):
        return ops.gather(value, rows)
    splits = ops.cast(value.row_splits, _dtypes.int64)
    idx, new_splits = ranges(ops.gather(splits[:-1], rows), ops.gather(splits[1:], rows))
    return RaggedTensor._from_splits(gather_rows(value.values, idx), ops.cast(new_splits, value.row_splits_dtype))


def _index_inner(rt, key):
    """rt[:, key...]: key[0] indexes the ragged dimension 1, the rest the values' dimensions."""
    ops = _ops()
    k, rest = key[0], key[1:]
    if not isinstance(k, slice):
        raise ValueError("Cannot index into an inner ragged dimension.")
    if k != slice(None):
        if k.step not in (None, 1):
            raise ValueError("Slicing a ragged dimension with a step other than 1 is not supported by Kiln")
        splits = ops.cast(rt.row_splits, _dtypes.int64)
        starts, lengths = splits[:-1], splits[1:] - splits[:-1]
        lo = _bound(k.start, lengths, ops.zeros_like(lengths))
        hi = _bound(k.stop, lengths, lengths)
        idx, new_splits = ranges(starts + lo, starts + ops.maximum(hi, lo))
        rt = RaggedTensor._from_splits(gather_rows(rt.values, idx), ops.cast(new_splits, rt.row_splits_dtype))
    if not rest:
        return rt
    return rt.with_values(_index(rt.values, (slice(None),) + rest))


def _bound(b, lengths, default):
    """A slice bound per row: None -> default; negative counts from each row's end; clipped to [0, length]."""
    ops = _ops()
    if b is None:
        return default
    b = ops.cast(ops.convert_to_tensor(b), _dtypes.int64)
    b = ops.where(b < 0, b + lengths, b + ops.zeros_like(lengths))
    return ops.minimum(ops.maximum(b, ops.zeros_like(lengths)), lengths)
