"""Ragged and sparse tensors as fit / evaluate / predict data (Keras batches them by rows as it batches arrays):
each is held as NumPy parts and a batch of rows (a slice, or the shuffled indices) is rebuilt as a RaggedTensor
or SparseTensor of those rows."""
import numpy as np


def is_composite(x):
    from ..ragged_tensor import RaggedTensor
    from ..sparse_tensor import SparseTensor
    return isinstance(x, (RaggedTensor, SparseTensor))


def rows_of(x):
    """The row holder of a RaggedTensor or SparseTensor."""
    from ..ragged_tensor import RaggedTensor
    if isinstance(x, RaggedTensor):
        return RaggedRows.of(x)
    return SparseRows.of(x)


class RaggedRows:
    """A [rows, (ragged), ...] RaggedTensor of one ragged dimension: its flat values and row splits."""

    def __init__(self, values, splits):
        self.values, self.splits = values, splits

    @classmethod
    def of(cls, rt):
        if rt.ragged_rank != 1:
            raise NotImplementedError(f"kiln.keras: fit/evaluate/predict take RaggedTensors of one ragged dimension; "
                                      f"this one has ragged_rank {rt.ragged_rank}")
        return cls(rt.flat_values.numpy(), rt.row_splits.numpy())

    @property
    def shape(self):
        return (len(self.splits) - 1, None) + self.values.shape[1:]

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        return len(self.splits) - 1

    def take(self, rows):
        from ..ragged_tensor import RaggedTensor
        rows = np.asarray(rows, dtype=np.int64)
        starts, limits = self.splits[rows], self.splits[rows + 1]
        pieces = [self.values[s:e] for s, e in zip(starts, limits)]
        values = np.concatenate(pieces) if pieces else self.values[:0]
        return RaggedTensor.from_row_lengths(values, (limits - starts).astype(self.splits.dtype))

    def __getitem__(self, rows):
        """A slice of rows, as another holder (validation_split's head and tail)."""
        indices = np.arange(len(self))[rows]
        starts, limits = self.splits[indices], self.splits[indices + 1]
        values = np.concatenate([self.values[s:e] for s, e in zip(starts, limits)]) if len(indices) else \
            self.values[:0]
        return RaggedRows(values, np.concatenate([[0], np.cumsum(limits - starts)]).astype(self.splits.dtype))


class SparseRows:
    """A SparseTensor's indices, values and dense shape; a batch keeps the entries of its rows."""

    def __init__(self, indices, values, dense_shape):
        self.indices, self.values, self.dense_shape = indices, values, dense_shape

    @classmethod
    def of(cls, st):
        return cls(st.indices.numpy(), st.values.numpy(), st.dense_shape.numpy())

    @property
    def shape(self):
        return tuple(int(d) for d in self.dense_shape)

    @property
    def ndim(self):
        return len(self.dense_shape)

    def __len__(self):
        return int(self.dense_shape[0])

    def _select(self, rows):
        rows = np.asarray(rows, dtype=np.int64)
        position = np.full(len(self), -1, dtype=np.int64)
        position[rows] = np.arange(len(rows))
        keep = position[self.indices[:, 0]] >= 0
        indices = self.indices[keep].copy()
        indices[:, 0] = position[indices[:, 0]]
        order = np.lexsort(indices.T[::-1])  # row-major order, as SparseTensors keep their entries
        shape = self.dense_shape.copy()
        shape[0] = len(rows)
        return indices[order], self.values[keep][order], shape

    def take(self, rows):
        from ..sparse_tensor import SparseTensor
        return SparseTensor(*self._select(rows))

    def __getitem__(self, rows):
        return SparseRows(*self._select(np.arange(len(self))[rows]))
