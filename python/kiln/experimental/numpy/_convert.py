"""Arrays in and out: NumPy-style conversion to tensors (dtype inferred as NumPy infers it) and
promotion of several arguments to one dtype (TF's _promote_dtype)."""
import numpy as np

from ... import _C
from ... import _ops
from ... import dtypes as _kdtypes
from . import _dtypes


def is_tensor(x):
    return isinstance(x, (_C.Tensor, _C.Variable))


def _tensor(x):
    return x.read_value() if isinstance(x, _C.Variable) else x


def _to_numpy_value(val, dtype):
    """A non-tensor value (number, list, NumPy array; lists may hold tensors) as a tensor of `dtype`."""
    if isinstance(val, (list, tuple)) and any(is_tensor(v) for v in _dtypes._flatten(val)):
        parts = [asarray(v, dtype) for v in val]
        return _ops.stack(parts) if parts else _ops.zeros([0], dtype)
    array = np.asarray(val)
    if array.dtype.kind in "US":
        return _ops.constant(array)
    if array.dtype != np.dtype(dtype.as_numpy_dtype):
        array = array.astype(dtype.as_numpy_dtype)
    return _ops.constant(array, dtype=dtype)


def array(val, dtype=None, copy=True, ndmin=0):
    """tnp.array: the value as a tensor, its dtype NumPy's for the value (Python floats float64
    unless prefer_float32), or `dtype`; `ndmin` leading ones added."""
    dtype = _dtypes.as_kiln_dtype(dtype)
    if is_tensor(val):
        result = _tensor(val)
        if dtype is not None and result.dtype != dtype:
            result = _ops.cast(result, dtype)
        elif copy:
            result = _ops.identity(result)
    else:
        if isinstance(val, str):
            return _ops.constant(val)
        if dtype is None:
            if isinstance(val, np.ndarray):
                dtype = _kdtypes.as_dtype(val.dtype) if val.dtype.kind not in "US" else None
            else:
                dtype = _dtypes.result_type(val)
        result = _to_numpy_value(val, dtype) if dtype is not None else _ops.constant(val)
    if ndmin and result.shape.rank is not None and result.shape.rank < ndmin:
        result = _ops.reshape(result, [1] * (ndmin - result.shape.rank) + result.shape.as_list()
                              if result.shape.is_fully_defined() else
                              _ops.concat([_ops.ones([ndmin - result.shape.rank], _kdtypes.int32),
                                           _ops.shape(result)], 0))
    return result


def asarray(a, dtype=None):
    """tnp.asarray: a tensor is returned as it is (cast when `dtype` differs)."""
    if is_tensor(a) and (dtype is None or _tensor(a).dtype == _dtypes.as_kiln_dtype(dtype)):
        return _tensor(a)
    return array(a, dtype, copy=False)


def promote(*args, to_float=False):
    """The arguments as tensors of one dtype, NumPy's result type for them (float when `to_float` and
    the result type is not inexact: the default float type)."""
    tensors_agree = all(is_tensor(a) for a in args) and len({_tensor(a).dtype for a in args}) == 1
    dtype = _tensor(args[0]).dtype if tensors_agree else _dtypes.result_type(*args)
    if to_float and not (dtype.is_floating or dtype.is_complex):
        dtype = _dtypes.default_float_type()
    return [asarray(a, dtype) for a in args]


def axis_list(axis):
    """One axis or a list/tuple of them, as a list."""
    return list(axis) if isinstance(axis, (list, tuple)) else [axis]


def as_bool(x):
    """`x` as a tensor of truth values: bools as they are, anything else compared with zero."""
    x = asarray(x)
    return x if x.dtype == _kdtypes.bool else _ops.not_equal(x, _ops.zeros_like(x))


def float_or_same(x):
    """`x` as a tensor, integers and bools cast to the default float type (TF's promote_to_float)."""
    x = asarray(x)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        x = _ops.cast(x, _dtypes.default_float_type())
    return x


def static_shape(x):
    return x.shape.as_list() if x.shape.is_fully_defined() else None
