"""tf.io.serialize_sparse, serialize_many_sparse and deserialize_many_sparse: SparseTensors as TF's serialized
TensorProto triples (indices, values, dense_shape), one for a whole tensor, or one per entry of its first
dimension; NumPy on the host (a host function inside traces)."""
import numpy as _np

from .. import _C
from .. import dtypes as _dtypes
from ..sparse_tensor import SparseTensor


def _proto_bytes(array, dtype):
    from ._codecs import serialize_tensor
    from .._ops import constant
    return serialize_tensor(constant(array, dtype=dtype)).numpy()


def _parse(serialized, dtype):
    from ._codecs import parse_tensor
    return parse_tensor(serialized, dtype).numpy()


def _check(sp, out_type):
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"Expected a SparseTensor, got {type(sp).__name__}")
    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise TypeError("Kiln serializes SparseTensors to strings only (out_type=tf.string)")


def _run(fn, inputs, dtype, shape):
    from .._ops import constant
    if not _C.is_tracing() and not any(t._is_symbolic for t in inputs):
        return constant(fn(*[t.numpy() for t in inputs]), dtype=dtype)
    from ..function import py_function
    out = py_function(lambda *ts: fn(*[t.numpy() for t in ts]), list(inputs), dtype)
    return _C.reshape(out, shape) if shape is not None else out


def serialize_sparse(sp_input, out_type=_dtypes.string, name=None):
    """[3] strings: the serialized indices, values and dense_shape."""
    _check(sp_input, out_type)
    dtype = sp_input.values.dtype

    def run(indices, values, shape):
        return _np.asarray([_proto_bytes(indices, _dtypes.int64), _proto_bytes(values, dtype),
                            _proto_bytes(shape, _dtypes.int64)], dtype=object)
    return _run(run, [sp_input.indices, sp_input.values, sp_input.dense_shape], _dtypes.string, [3])


def serialize_many_sparse(sp_input, out_type=_dtypes.string, name=None):
    """[N, 3] strings: for each entry of the first dimension, its rank R-1 SparseTensor serialized."""
    _check(sp_input, out_type)
    dtype = sp_input.values.dtype

    def run(indices, values, shape):
        rows = []
        for i in range(int(shape[0])):
            mine = indices[:, 0] == i
            rows.append([_proto_bytes(indices[mine][:, 1:], _dtypes.int64), _proto_bytes(values[mine], dtype),
                         _proto_bytes(shape[1:], _dtypes.int64)])
        return _np.asarray(rows, dtype=object).reshape(-1, 3)
    return _run(run, [sp_input.indices, sp_input.values, sp_input.dense_shape], _dtypes.string, [-1, 3])


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """One SparseTensor from [N, 3] serialized ones (each of rank R-1): entry i's indices get i in front; the
    dense shape is N and, beyond it, the largest of the entries' shapes."""
    from .._ops import constant, convert_to_tensor
    serialized = convert_to_tensor(serialized_sparse)
    dtype = _dtypes.as_dtype(dtype)

    def parts(rows):
        rows = _np.asarray(rows, dtype=object).reshape(-1, 3)
        indices, values, shapes = [], [], []
        for i, (ind, val, shp) in enumerate(rows):
            ind, val, shp = _parse(ind, _dtypes.int64), _parse(val, dtype), _parse(shp, _dtypes.int64)
            indices.append(_np.concatenate([_np.full((len(ind), 1), i, _np.int64), ind.reshape(len(ind), -1)], 1))
            values.append(val)
            shapes.append(shp)
        width = max((len(s) for s in shapes), default=0)
        dense = [len(rows)] + [int(max(s[k] for s in shapes)) for k in range(width)]
        return (_np.concatenate(indices) if indices else _np.zeros((0, width + 1), _np.int64),
                _np.concatenate(values) if values else _np.zeros((0,), dtype.as_numpy_dtype),
                _np.asarray(dense, _np.int64))
    if not _C.is_tracing() and not serialized._is_symbolic:
        ind, val, shp = parts(serialized.numpy())
        return SparseTensor(constant(ind), constant(val, dtype=dtype), constant(shp))
    if rank is None:
        raise ValueError("deserialize_many_sparse inside a function needs `rank`")
    from ..function import py_function
    ind, val, shp = py_function(lambda t: parts(t.numpy()), [serialized], [_dtypes.int64, dtype, _dtypes.int64])
    return SparseTensor(_C.reshape(ind, [-1, int(rank)]), _C.reshape(val, [-1]), _C.reshape(shp, [int(rank)]))
