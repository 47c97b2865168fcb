"""tf.IndexedSlices (rows `indices` of a tensor of shape `dense_shape`, given as `values`) and tf.sparse.mask,
which drops the slices at some indices. Kiln's gradients are dense, so IndexedSlices is a value type here,
made by the user (TF's sparse gradients of gather and embeddings come out dense in Kiln)."""
import sys

from . import _C


def _ops():
    return sys.modules[__package__]


class IndexedSlices:
    """tf.IndexedSlices(values, indices, dense_shape=None)."""

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values, indices, dense_shape=None):
        ops = _ops()
        self._values = values if isinstance(values, _C.Tensor) else ops.convert_to_tensor(values)
        self._indices = indices if isinstance(indices, _C.Tensor) else ops.convert_to_tensor(indices)
        self._dense_shape = dense_shape if dense_shape is None or isinstance(dense_shape, _C.Tensor) else \
            ops.convert_to_tensor(dense_shape)

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)

    @property
    def shape(self):
        from .tensor_shape import TensorShape
        if self._dense_shape is None or self._dense_shape._is_symbolic:
            return TensorShape([None] + self._values.shape.as_list()[1:])
        return TensorShape([int(d) for d in self._dense_shape.numpy()])

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __str__(self):
        shape = f", dense_shape={self._dense_shape!s}" if self._dense_shape is not None else ""
        return f"IndexedSlices(indices={self._indices!s}, values={self._values!s}{shape})"

    __repr__ = __str__


def mask(a, mask_indices, name=None):
    """tf.sparse.mask: the slices of `a` whose index is not in `mask_indices` (order and repeats kept)."""
    ops = _ops()
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"tf.sparse.mask takes an IndexedSlices, got {type(a).__name__}")
    masked = ops.convert_to_tensor(mask_indices, dtype=a.indices.dtype)
    hit = ops.equal(ops.expand_dims(a.indices, 1), ops.expand_dims(ops.reshape(masked, [-1]), 0))
    keep = ops.logical_not(ops.reduce_any(hit, axis=1))
    return IndexedSlices(ops.boolean_mask(a.values, keep), ops.boolean_mask(a.indices, keep), a.dense_shape)
