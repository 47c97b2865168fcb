"""kiln.sets (tf.sets): set operations along the last dimension of dense or sparse tensors (rank >= 2, integer
or string), each giving TF's SparseTensor: row k of the result is the sorted set for row k of the inputs, and
the last dimension is as wide as the largest set. Computed in NumPy (a host function inside traces)."""
import numpy as np

from . import _C
from . import dtypes as _dtypes
from .sparse_tensor import SparseTensor

_SET_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")


def _as_set_input(x, what):
    if isinstance(x, SparseTensor):
        return x
    from ._ops import convert_to_tensor
    return convert_to_tensor(x)


def _check(a, b=None):
    for x in (a, b):
        if x is None:
            continue
        if x.dtype.name not in _SET_DTYPES:
            raise TypeError(f"Invalid dtype `{x.dtype}` not in supported dtypes: [{', '.join(_SET_DTYPES)}].")
        rank = x.shape.rank
        if rank is not None and rank < 2:
            raise ValueError(f"Expected rank >= 2, got {x.shape}.")
    if b is not None and a.dtype != b.dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")


def _tensors(x):
    """The tensors a host call reads for x: the dense tensor, or the sparse one's three."""
    return [x.indices, x.values, x.dense_shape] if isinstance(x, SparseTensor) else [x]


def _rows(arrays, sparse):
    """{row index tuple: values in that row} and the leading shape, from NumPy values of one input."""
    if sparse:
        indices, values, dense_shape = arrays
        rows = {}
        for index, value in zip(indices.tolist(), values.tolist()):
            rows.setdefault(tuple(index[:-1]), []).append(value)
        return rows, tuple(int(d) for d in dense_shape[:-1])
    dense = arrays[0]
    lead = dense.shape[:-1]
    return {index: dense[index].tolist() for index in np.ndindex(*lead)}, lead


def _set_op(op, a, b, dtype):
    """The three NumPy arrays of the result SparseTensor."""
    def run(*arrays):
        arrays = [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in arrays]
        na = 3 if isinstance(a, SparseTensor) else 1
        rows_a, lead_a = _rows(arrays[:na], isinstance(a, SparseTensor))
        rows_b, lead_b = _rows(arrays[na:], isinstance(b, SparseTensor))
        if lead_a != lead_b:
            raise _C.InvalidArgumentError(f"Shapes {list(lead_a)} and {list(lead_b)} do not match in the "
                                          "dimensions before the last.")
        indices, values, width = [], [], 0
        for row in np.ndindex(*lead_a):
            out = sorted(op(set(rows_a.get(row, ())), set(rows_b.get(row, ()))))
            width = max(width, len(out))
            indices += [list(row) + [k] for k in range(len(out))]
            values += out
        rank = len(lead_a) + 1
        np_type = object if dtype == _dtypes.string else dtype.as_numpy_dtype
        return (np.asarray(indices, dtype=np.int64).reshape(-1, rank), np.asarray(values, dtype=np_type),
                np.asarray(list(lead_a) + [width], dtype=np.int64))
    inputs = _tensors(a) + _tensors(b)
    if not any(t._is_symbolic for t in inputs) and not _C.is_tracing():
        indices, values, shape = run(*[t.numpy() for t in inputs])
        from ._ops import constant
        return SparseTensor(constant(indices), constant(values, dtype=dtype), constant(shape))
    from .function import py_function
    indices, values, shape = py_function(run, inputs, [_dtypes.int64, dtype, _dtypes.int64])
    rank = a.dense_shape.shape[0] if isinstance(a, SparseTensor) else a.shape.rank
    if rank is None:
        raise ValueError("tf.sets inside a function needs inputs of a known rank.")
    return SparseTensor(_C.reshape(indices, [-1, rank]), _C.reshape(values, [-1]), _C.reshape(shape, [rank]))


def _binary(op, a, b, commutative):
    a, b = _as_set_input(a, "a"), _as_set_input(b, "b")
    if isinstance(b, SparseTensor) and not isinstance(a, SparseTensor):
        if not commutative:
            raise ValueError("Sparse `b` with dense `a` is not supported: pass `a` sparse or `b` dense.")
        a, b = b, a  # TF computes a commutative op with the sparse input first
    _check(a, b)
    return _set_op(op, a, b, a.dtype)


def intersection(a, b, validate_indices=True):
    """The intersection of the sets in the last dimension of `a` and `b`."""
    return _binary(lambda x, y: x & y, a, b, True)


def union(a, b, validate_indices=True):
    """The union of the sets in the last dimension of `a` and `b`."""
    return _binary(lambda x, y: x | y, a, b, True)


def difference(a, b, aminusb=True, validate_indices=True):
    """a - b (or b - a when aminusb is False) of the sets in the last dimension."""
    if not aminusb:
        a, b = b, a
    return _binary(lambda x, y: x - y, a, b, False)


def size(a, validate_indices=True):
    """The number of unique elements in each set of `a`'s last dimension (int32, shape a.shape[:-1])."""
    a = _as_set_input(a, "a")
    _check(a)
    sparse = isinstance(a, SparseTensor)

    def run(*arrays):
        arrays = [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in arrays]
        rows, lead = _rows(arrays, sparse)
        return np.asarray([len(set(rows.get(row, ()))) for row in np.ndindex(*lead)], np.int32).reshape(lead)
    inputs = _tensors(a)
    if not any(t._is_symbolic for t in inputs) and not _C.is_tracing():
        from ._ops import constant
        return constant(run(*[t.numpy() for t in inputs]))
    from .function import py_function
    return py_function(run, inputs, _dtypes.int32)


set_intersection = intersection
set_union = union
set_difference = difference
set_size = size
