"""tf.io.RaggedFeature: a feature parsed to a RaggedTensor, its values cut by the row partitions other features
of the same Example hold (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength, outermost
first), as TF's. One Example parses to its partitions' ragged tensor (a dense vector without partitions); a
batch adds the outer dimension of the Examples."""
import collections as _collections

import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors


def _partition(name, fields):
    return _collections.namedtuple(name, fields)


class RaggedFeature(_collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """A feature of any number of values, parsed to a RaggedTensor (see the module's docstring)."""

    RowSplits = _partition("RowSplits", ["key"])
    RowLengths = _partition("RowLengths", ["key"])
    RowStarts = _partition("RowStarts", ["key"])
    RowLimits = _partition("RowLimits", ["key"])
    ValueRowIds = _partition("ValueRowIds", ["key"])
    UniformRowLength = _partition("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dtypes.int32, validate=False):
        kinds = (cls.RowSplits, cls.RowLengths, cls.RowStarts, cls.RowLimits, cls.ValueRowIds, cls.UniformRowLength)
        for p in partitions:
            if not isinstance(p, kinds):
                raise TypeError(f"partitions must be a list of RaggedFeature partition objects, got {p!r}")
        return super().__new__(cls, dtype, value_key, tuple(partitions), _dtypes.as_dtype(row_splits_dtype),
                               validate)


def _splits(p, array, nvals, key, name):
    """Row splits of `nvals` values from one partition feature's int64 `array`."""
    if isinstance(p, RaggedFeature.UniformRowLength):
        length = int(p.length)
        nrows = nvals // length if length else 0
        return _np.arange(nrows + 1, dtype=_np.int64) * length
    if isinstance(p, RaggedFeature.RowSplits):
        splits = array
    elif isinstance(p, RaggedFeature.RowLengths):
        splits = _np.concatenate([[0], _np.cumsum(array)])
    elif isinstance(p, RaggedFeature.RowStarts):
        splits = _np.concatenate([array, [nvals]])
    elif isinstance(p, RaggedFeature.RowLimits):
        splits = _np.concatenate([[0], array])
    else:  # ValueRowIds
        nrows = int(array.max()) + 1 if len(array) else 0
        splits = _np.concatenate([[0], _np.cumsum(_np.bincount(array, minlength=nrows))])
    splits = _np.asarray(splits, _np.int64)
    if len(splits) == 0 or splits[0] != 0 or splits[-1] != nvals or _np.any(_np.diff(splits) < 0):
        raise _errors.InvalidArgumentError(
            f"Name: {name}, Key: {key}: the partition {type(p).__name__} does not cut {nvals} values into rows")
    return splits


def parse_one(values, partition_values, f, key, name):
    """One Example's (values, [row splits outermost first]) from its value feature and partition features."""
    splits, nvals = [], len(values)
    for p, array in reversed(list(zip(f.partitions, partition_values))):
        s = _splits(p, array, nvals, key, name)
        splits.insert(0, s)
        nvals = len(s) - 1
    return values, splits


def batch(rows, dtype_np):
    """Examples' (values, splits) as one batch: an outer level of one row per Example."""
    values = _np.concatenate([v for v, _ in rows]) if rows else _np.zeros([0], dtype_np)
    nrows = [len(s[0]) - 1 if s else len(v) for v, s in rows]
    out = [_np.concatenate([[0], _np.cumsum(nrows)]).astype(_np.int64)]
    for level in range(len(rows[0][1]) if rows else 0):
        pieces, offset = [_np.zeros(1, _np.int64)], 0
        for _, s in rows:
            pieces.append(s[level][1:] + offset)
            offset += int(s[level][-1])
        out.append(_np.concatenate(pieces))
    return values.astype(dtype_np), out


def to_value(values, splits, f):
    """The parsed tensor: a RaggedTensor over the splits, the values alone where there are none."""
    from .. import _ops
    from ..ragged_tensor import RaggedTensor
    if not splits:
        return values
    return RaggedTensor.from_nested_row_splits(
        values, [_ops.reshape(_ops.cast(_ops.convert_to_tensor(s), f.row_splits_dtype), [-1]) for s in splits],
        validate=False)
