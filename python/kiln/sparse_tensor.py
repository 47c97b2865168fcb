"""tf.sparse.SparseTensor and tf.SparseTensorSpec: a composite tensor of `indices` (int64 [nnz, rank]), `values`
([nnz]) and `dense_shape` (int64 [rank]), as TF's. The static shape is read from dense_shape when its value is
known (eagerly, or from a spec with a known shape inside a trace)."""
import sys

import numpy as np

from . import _C
from . import dtypes as _dtypes
from .tensor_shape import TensorShape


def _ops():
    return sys.modules[__package__]


def _concrete(*ts):
    return not _C.is_tracing() and not any(isinstance(t, _C.Tensor) and t._is_symbolic for t in ts)


class SparseTensor:
    """tf.sparse.SparseTensor(indices, values, dense_shape)."""

    __slots__ = ("_indices", "_values", "_dense_shape", "_static_shape", "__weakref__")

    def __init__(self, indices, values, dense_shape):
        ops = _ops()
        static = None
        if not isinstance(dense_shape, _C.Tensor):
            try:
                static = TensorShape([int(d) for d in dense_shape])
            except TypeError:
                static = None
        indices = ops.convert_to_tensor(indices, dtype=_dtypes.int64) if not isinstance(indices, _C.Tensor) \
            else ops.cast(indices, _dtypes.int64)
        values = values if isinstance(values, _C.Tensor) else ops.convert_to_tensor(values)
        dense_shape = ops.convert_to_tensor(dense_shape, dtype=_dtypes.int64) if not isinstance(
            dense_shape, _C.Tensor) else ops.cast(dense_shape, _dtypes.int64)
        if indices.shape.rank != 2:
            raise ValueError(f"Shape {indices.shape} must have rank 2")
        if values.shape.rank != 1:
            raise ValueError(f"Shape {values.shape} must have rank 1")
        if dense_shape.shape.rank != 1:
            raise ValueError(f"Shape {dense_shape.shape} must have rank 1")
        n_idx, n_val = indices.shape[0], values.shape[0]
        if n_idx is not None and n_val is not None and n_idx != n_val:
            raise ValueError(f"Dimensions {n_idx} and {n_val} are not compatible")
        rank_i, rank_s = indices.shape[1], dense_shape.shape[0]
        if rank_i is not None and rank_s is not None and rank_i != rank_s:
            raise ValueError(f"Dimensions {rank_i} and {rank_s} are not compatible")
        if static is None and _concrete(dense_shape):
            static = TensorShape([int(d) for d in dense_shape.numpy()])
        if static is None:
            static = TensorShape([None] * rank_s if rank_s is not None else None)
        self._indices, self._values, self._dense_shape, self._static_shape = indices, values, dense_shape, static

    @classmethod
    def from_value(cls, sparse_tensor_value):
        return sparse_tensor_value if isinstance(sparse_tensor_value, SparseTensor) else cls(
            sparse_tensor_value.indices, sparse_tensor_value.values, sparse_tensor_value.dense_shape)

    @classmethod
    def _with_static_shape(cls, indices, values, dense_shape, shape):
        st = cls(indices, values, dense_shape)
        shape = TensorShape(shape)
        if shape.rank is not None:
            # The dims either side knows: a spec's unknown dim keeps the value's (an eager dense_shape).
            have = st._static_shape.as_list() if st._static_shape.rank is not None else [None] * shape.rank
            st._static_shape = TensorShape([a if a is not None else b for a, b in zip(shape.as_list(), have)])
        return st

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    shape = property(lambda self: self._static_shape)

    def get_shape(self):
        return self._static_shape

    @property
    def _type_spec(self):
        return SparseTensorSpec(self._static_shape, self.dtype)

    def with_values(self, new_values):
        return SparseTensor._with_static_shape(self._indices, new_values, self._dense_shape, self._static_shape)

    def consumers(self):
        return []

    def numpy(self):
        raise AttributeError("'SparseTensor' object has no attribute 'numpy'")

    def __repr__(self):
        return (f"SparseTensor(indices={str(self._indices)}, values={str(self._values)}, "
                f"dense_shape={str(self._dense_shape)})")

    __str__ = __repr__

    def __bool__(self):
        raise TypeError("SparseTensor may not be used as a boolean.")

    # TF defines *, / with dense tensors (values times the dense tensor at their indices) and unary minus.
    def __mul__(self, other):
        from .sparse_ops import _cwise
        return _cwise("multiply", self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        from .sparse_ops import _cwise
        return _cwise("truediv", self, other)

    __div__ = __truediv__

    def __neg__(self):
        return self.with_values(_ops().negative(self._values))

    def __abs__(self):
        return self.with_values(_ops().abs(self._values))

    __hash__ = object.__hash__


class SparseTensorSpec:
    """tf.SparseTensorSpec(shape=None, dtype=kiln.float32)."""


    def __init__(self, shape=None, dtype=_dtypes.float32):
        self._shape = TensorShape(shape)
        self._dtype = _dtypes.as_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    value_type = property(lambda self: SparseTensor)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype)

    def _component_specs(self):
        from .function import TensorSpec
        rank = self._shape.rank
        return [TensorSpec([None, rank], _dtypes.int64), TensorSpec([None], self._dtype),
                TensorSpec([rank], _dtypes.int64)]

    def _to_components(self, value):
        return [value.indices, value.values, value.dense_shape]

    def _from_components(self, components):
        indices, values, dense_shape = components
        if self._shape.rank is not None and all(d is not None for d in self._shape.as_list()):
            # A fully known shape is static in the trace, as TF's spec makes it.
            dense_shape = self._shape.as_list()
        return SparseTensor._with_static_shape(indices, values, dense_shape, self._shape)

    def _trace_key(self):
        return f"SparseTensor:{self._dtype.name}:{self._shape}"

    def _conform(self, value):
        if not isinstance(value, SparseTensor):
            raise ValueError(f"{value!r} is not a SparseTensor, for {self!r}")
        if value.dtype != self._dtype or not self._shape.is_compatible_with(value.shape):
            raise ValueError(f"{value!r} is not compatible with {self!r}")
        return value

    def is_compatible_with(self, other):
        other = other if isinstance(other, SparseTensorSpec) else SparseTensorSpec.from_value(other)
        return self._dtype == other._dtype and self._shape.is_compatible_with(other._shape)

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and (self._shape, self._dtype) == (other._shape, other._dtype)

    def __hash__(self):
        return hash((self._shape, self._dtype))

    def __repr__(self):
        return f"SparseTensorSpec({self._shape!r}, tf.{self._dtype.name})"


def is_sparse(x):
    return isinstance(x, SparseTensor)


def check_indices(st, op):
    """Eager validation TF's kernels do: indices inside dense_shape, in row-major order, no repeats."""
    if not _concrete(st.indices, st.dense_shape):
        return
    from .errors import InvalidArgumentError
    idx, shape = st.indices.numpy(), st.dense_shape.numpy()
    for i, row in enumerate(idx):
        if np.any(row < 0) or np.any(row >= shape):
            raise InvalidArgumentError(f"{op}: indices[{i}] = {list(row)} is out of bounds: need 0 <= "
                                                   f"index < {list(shape)}")
    if len(idx) > 1:
        flat = np.ravel_multi_index(idx.T, shape) if shape.size and np.all(shape > 0) else np.zeros(len(idx))
        for i in range(1, len(flat)):
            if flat[i] == flat[i - 1]:
                raise InvalidArgumentError(f"{op}: indices[{i}] = {list(idx[i])} is repeated")
            if flat[i] < flat[i - 1]:
                raise InvalidArgumentError(f"{op}: indices[{i}] = {list(idx[i])} is out of order. Many "
                                                       "sparse ops require sorted indices.\n    Use "
                                                       "`tf.sparse.reorder` to create a correctly ordered copy.\n\n")
