"""tf.experimental.DynamicRaggedShape and tf.experimental.RowPartition: the dynamic shape of a RaggedTensor, as
`tf.shape(rt)` gives it in TF 2.15. A shape is its row partitions (one per ragged dimension, outermost first)
and the dense `inner_shape` of the flat values they partition; a uniform dimension is indexable, a ragged one is
not. tf.reshape, tf.zeros, tf.ones and tf.fill take one and make a RaggedTensor of that shape
(ragged_dispatch.py routes them here)."""
import sys

import numpy as np

from . import _C
from . import dtypes as _dtypes


def _ops():
    return sys.modules[__package__]


def _known(t):
    """A tensor's value as NumPy where it is known now (eagerly), else None."""
    if isinstance(t, _C.Tensor) and (t._is_symbolic or _C.is_tracing()):
        return None
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


class RowPartition:
    """tf.experimental.RowPartition: how a dimension is cut into rows (its row splits)."""

    def __init__(self, row_splits, uniform_row_length=None, internal=False):
        if not internal:
            raise ValueError("RowPartition constructor is private; please use one of the factory methods instead "
                             "(e.g., RowPartition.from_row_lengths())")
        self._row_splits = row_splits
        self._uniform_row_length = uniform_row_length

    @classmethod
    def from_row_splits(cls, row_splits, validate=True, dtype=None, dtype_hint=None):
        from .ragged_tensor import _checked_splits_dtype
        splits = _ops().convert_to_tensor(row_splits, dtype=dtype or (None if isinstance(row_splits, _C.Tensor)
                                                                     else (dtype_hint or _dtypes.int64)))
        return cls(_checked_splits_dtype(splits), internal=True)

    @classmethod
    def from_row_lengths(cls, row_lengths, validate=True, dtype=None, dtype_hint=None):
        from .ragged_tensor import splits_from_lengths
        lengths = _ops().convert_to_tensor(row_lengths, dtype=dtype or (None if isinstance(row_lengths, _C.Tensor)
                                                                       else (dtype_hint or _dtypes.int64)))
        return cls(splits_from_lengths(lengths, lengths.dtype), internal=True)

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length, nvals=None, nrows=None, validate=True, dtype=None,
                                dtype_hint=None):
        ops = _ops()
        dtype = _dtypes.as_dtype(dtype or dtype_hint or _dtypes.int64)
        length = int(uniform_row_length)
        if nrows is None:
            nrows = 0 if length == 0 else int(nvals) // length
        splits = ops.range(0, (int(nrows) + 1) * length, max(length, 1), dtype=dtype) if length else ops.zeros(
            [int(nrows) + 1], dtype)
        return cls(splits, uniform_row_length=length, internal=True)

    @property
    def dtype(self):
        return self._row_splits.dtype

    def row_splits(self):
        return self._row_splits

    def row_lengths(self):
        return self._row_splits[1:] - self._row_splits[:-1]

    def nrows(self):
        return _ops().size(self._row_splits, out_type=self.dtype) - 1

    def nvals(self):
        return self._row_splits[-1]

    def uniform_row_length(self):
        return None if self._uniform_row_length is None else _ops().constant(self._uniform_row_length, self.dtype)

    @property
    def static_nrows(self):
        n = self._row_splits.shape[0]
        return None if n is None else n - 1

    def _static_lengths(self):
        """A Python int where every row has that length (known now), a tuple of the lengths, or None."""
        if self._uniform_row_length is not None:
            return self._uniform_row_length
        lengths = _known(self.row_lengths())
        return None if lengths is None else tuple(int(v) for v in lengths)

    def __repr__(self):
        return f"tf.RowPartition(row_splits={self._row_splits!r})"


class DynamicRaggedShape:
    """tf.experimental.DynamicRaggedShape(row_partitions, inner_shape, dtype=None)."""

    def __init__(self, row_partitions, inner_shape, dtype=None, validate=True, static_inner_shape=None):
        ops = _ops()
        self._row_partitions = tuple(row_partitions)
        if dtype is None:
            dtype = self._row_partitions[0].dtype if self._row_partitions else (
                inner_shape.dtype if isinstance(inner_shape, _C.Tensor) else _dtypes.int64)
        self._dtype = _dtypes.as_dtype(dtype)
        inner = inner_shape if isinstance(inner_shape, _C.Tensor) else ops.convert_to_tensor(
            [int(d) for d in inner_shape], dtype=self._dtype)
        self._inner_shape = inner if inner.dtype == self._dtype else ops.cast(inner, self._dtype)
        if self._inner_shape.shape.rank != 1:
            raise ValueError(f"inner_shape must be a vector, got shape {self._inner_shape.shape}")
        self._row_partitions = tuple(
            p if p.dtype == self._dtype else RowPartition(ops.cast(p.row_splits(), self._dtype),
                                                          p._uniform_row_length, internal=True)
            for p in self._row_partitions)

    @classmethod
    def from_lengths(cls, lengths, num_row_partitions=None, dtype=_dtypes.int64):
        """The shape whose dims are `lengths`: an int per uniform dim, a tuple or list of row lengths per
        ragged dim (the first dim is an int)."""
        lengths = list(lengths)
        if not lengths or not isinstance(lengths[0], int):
            raise ValueError("The first length of a DynamicRaggedShape must be an int (the number of rows)")
        last_ragged = max([i for i, d in enumerate(lengths) if isinstance(d, (tuple, list))], default=0)
        partitions, nrows = [], lengths[0]
        for d in lengths[1:last_ragged + 1]:
            if isinstance(d, (tuple, list)):
                p = RowPartition.from_row_lengths(list(d), dtype=dtype)
                nrows = sum(d)
            else:
                p = RowPartition.from_uniform_row_length(d, nrows=nrows, dtype=dtype)
                nrows = nrows * d
            partitions.append(p)
        return cls(partitions, [nrows] + [int(d) for d in lengths[last_ragged + 1:]], dtype=dtype)

    @classmethod
    def from_tensor(cls, t, dtype=None):
        """The shape of a Tensor or RaggedTensor."""
        from .ragged_tensor import RaggedTensor
        dtype = _dtypes.as_dtype(dtype or (t.row_splits_dtype if isinstance(t, RaggedTensor) else _dtypes.int32))
        ops = _ops()
        if isinstance(t, RaggedTensor):
            partitions, rt = [], t
            while isinstance(rt, RaggedTensor):
                partitions.append(RowPartition(rt.row_splits, rt._uniform_row_length, internal=True))
                rt = rt.values
            return cls(partitions, ops.shape(rt, out_type=dtype), dtype=dtype)
        return cls([], ops.shape(t, out_type=dtype), dtype=dtype)

    row_partitions = property(lambda self: self._row_partitions)
    inner_shape = property(lambda self: self._inner_shape)
    dtype = property(lambda self: self._dtype)
    num_row_partitions = property(lambda self: len(self._row_partitions))

    @property
    def rank(self):
        inner = self._inner_shape.shape[0]
        return None if inner is None else self.num_row_partitions + inner

    def _inner_dims(self):
        known = _known(self._inner_shape)
        return None if known is None else [int(d) for d in known]

    def static_lengths(self, ragged_lengths=True):
        """The dims as Python values: ints, tuples of row lengths for ragged dims (None where unknown now)."""
        inner = self._inner_dims()
        if not self._row_partitions:
            return inner if inner is not None else [None] * (self.rank or 0)
        first = self._row_partitions[0].static_nrows
        out = [first]
        for p in self._row_partitions:
            out.append(p._static_lengths() if ragged_lengths else p._uniform_row_length)
        rest = inner[1:] if inner is not None else [None] * ((self.rank or 0) - len(out))
        return out + rest

    def is_uniform(self, axis):
        axis = self._axis(axis)
        return axis == 0 or axis > self.num_row_partitions or \
            self._row_partitions[axis - 1]._uniform_row_length is not None

    def _axis(self, axis):
        rank = self.rank
        if axis < 0:
            if rank is None:
                raise ValueError("Negative axes are not supported for a shape of unknown rank")
            axis += rank
        if rank is not None and not 0 <= axis < rank:
            raise IndexError(f"Index {axis} is out of range for a shape of rank {rank}")
        return axis

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._slice(index)
        axis = self._axis(int(index))
        ops = _ops()
        if axis == 0:
            return self._row_partitions[0].nrows() if self._row_partitions else self._inner_shape[0]
        if axis <= self.num_row_partitions:
            p = self._row_partitions[axis - 1]
            if p._uniform_row_length is None:
                raise ValueError(f"Index {axis} is not uniform")
            return ops.constant(p._uniform_row_length, self._dtype)
        return self._inner_shape[axis - self.num_row_partitions]

    def _slice(self, index):
        start, stop, step = index.start or 0, index.stop, index.step
        if step not in (None, 1):
            raise ValueError("A DynamicRaggedShape slice takes no step")
        rank = self.rank
        start = start + rank if start < 0 and rank is not None else start
        stop = rank if stop is None else (stop + rank if stop < 0 and rank is not None else stop)
        if stop is None:
            raise ValueError("Slicing a DynamicRaggedShape of unknown rank needs a stop")
        stop = min(stop, rank) if rank is not None else stop
        n = self.num_row_partitions
        if start > n:  # dense dims only
            return DynamicRaggedShape([], self._inner_shape[start - n:stop - n], dtype=self._dtype)
        if start != 0:
            raise ValueError(f"Cannot slice a DynamicRaggedShape from {start}: a slice begins at 0 or holds "
                             "uniform (dense) dims only")
        if stop <= 0:
            return DynamicRaggedShape([], _ops().zeros([0], self._dtype), dtype=self._dtype)
        if stop == 1:
            return DynamicRaggedShape([], _ops().reshape(self[0], [1]), dtype=self._dtype)
        if stop <= n + 1:
            parts = self._row_partitions[:stop - 1]
            return DynamicRaggedShape(parts, _ops().reshape(parts[-1].nvals(), [1]), dtype=self._dtype)
        return DynamicRaggedShape(self._row_partitions, self._inner_shape[:stop - n], dtype=self._dtype)

    def with_dtype(self, dtype):
        return DynamicRaggedShape(self._row_partitions, self._inner_shape, dtype=dtype)

    def _build(self, flat_values):
        """A RaggedTensor of this shape over `flat_values` (of shape inner_shape)."""
        from .ragged_tensor import RaggedTensor
        if not self._row_partitions:
            return flat_values
        return RaggedTensor.from_nested_row_splits(
            flat_values, [_ops().cast(p.row_splits(), _dtypes.int64) if p.dtype != _dtypes.int64 else p.row_splits()
                          for p in self._row_partitions], validate=False)

    def __repr__(self):
        lengths = self.static_lengths()
        shown = ", ".join("..." if d is None and self.rank is None else str(d) for d in lengths)
        if self.rank is None:
            shown += ", ..."
        return f"<DynamicRaggedShape lengths=[{shown}] num_row_partitions={self.num_row_partitions}>"


def is_ragged_shape(x):
    return isinstance(x, DynamicRaggedShape)


def zeros(shape, dtype=_dtypes.float32):
    return shape._build(_ops().zeros(shape.inner_shape, dtype))


def ones(shape, dtype=_dtypes.float32):
    return shape._build(_ops().ones(shape.inner_shape, dtype))


def fill(shape, value):
    return shape._build(_ops().fill(shape.inner_shape, value))


def reshape(tensor, shape):
    """tf.reshape to a ragged shape: the values in row-major order, cut by the shape's partitions."""
    ops = _ops()
    from .ragged_tensor import RaggedTensor
    values = tensor.flat_values if isinstance(tensor, RaggedTensor) else ops.convert_to_tensor(tensor)
    return shape._build(ops.reshape(values, shape.inner_shape))
