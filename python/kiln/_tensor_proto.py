"""tf.make_tensor_proto and tf.make_ndarray: NumPy values to and from TF's TensorProto (tensor.proto, as
TF Serving's Predict requests carry them): numbers of more than one element in tensor_content
(little-endian), single values and strings in the typed *_val fields, as TF writes them."""
import numpy as np

from . import _C
from . import dtypes as _dtypes
from .io import _messages as _pb

# Where each dtype keeps its values when tensor_content is not used (tensor.proto).
_VALUES_FIELD = {"float32": "float_val", "float64": "double_val", "int32": "int_val", "uint8": "int_val",
                 "int16": "int_val", "int8": "int_val", "uint16": "int_val", "int64": "int64_val",
                 "bool": "bool_val", "float16": "half_val", "string": "string_val"}


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """A TensorProto of values (a tensor, array, list or scalar) in dtype (inferred as tf.constant infers it),
    reshaped to `shape` (a single value is repeated to fill it)."""
    from ._ops import convert_to_tensor
    if isinstance(values, _pb.TensorProto):
        return values
    dtype = None if dtype is None else _dtypes.as_dtype(dtype)
    if isinstance(values, (_C.Tensor, _C.Variable)):
        tensor = values if dtype is None or values.dtype == dtype else _C.cast(values, dtype._enum)
    else:
        tensor = convert_to_tensor(values, dtype=dtype)
    dtype = tensor.dtype
    if dtype.name not in _VALUES_FIELD:
        raise TypeError(f"make_tensor_proto does not support dtype {dtype.name}")
    array = np.asarray(tensor.numpy())
    single = array.size == 1  # TF writes a value that fills the shape once, in the typed field
    if shape is not None:
        shape = [int(d) for d in shape]
        size = int(np.prod(shape))
        if array.size != size:
            if verify_shape or (array.size != 1 and not allow_broadcast):
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.")
            array = np.broadcast_to(array, shape) if allow_broadcast and array.size != 1 else \
                np.full(shape, array.reshape(-1)[0], dtype=array.dtype)
        elif verify_shape and list(array.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.")
        array = array.reshape(shape)
    proto = _pb.TensorProto(dtype=_pb.DATA_TYPE_OF[dtype.name])
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if dtype == _dtypes.string:
        proto.string_val.extend(bytes(v) if isinstance(v, (bytes, bytearray)) else str(v).encode()
                                for v in array.reshape(-1))
    elif array.size > 1 and not single:
        proto.tensor_content = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    else:
        flat = array.reshape(-1)[:1]
        if dtype == _dtypes.float16:
            flat = flat.view(np.uint16)
        getattr(proto, _VALUES_FIELD[dtype.name]).extend(flat.tolist())
    return proto


def make_ndarray(tensor):
    """The NumPy array of a TensorProto (strings as an object array of bytes)."""
    name = _pb.DTYPE_NAME_OF.get(tensor.dtype)
    if name is None or name not in _VALUES_FIELD:
        raise TypeError(f"Unsupported tensor type: {tensor.dtype}")
    shape = [d.size for d in tensor.tensor_shape.dim]
    count = int(np.prod(shape)) if shape else 1
    if name == "string":
        values = np.empty(len(tensor.string_val), dtype=object)
        values[:] = list(tensor.string_val)
    elif tensor.tensor_content:
        np_type = np.dtype(_dtypes.as_dtype(name).as_numpy_dtype)
        return np.frombuffer(tensor.tensor_content, np_type.newbyteorder("<")).astype(np_type).reshape(shape)
    else:
        raw = list(getattr(tensor, _VALUES_FIELD[name]))
        np_type = _dtypes.as_dtype(name).as_numpy_dtype
        values = np.asarray(raw, np.uint16).view(np.float16) if name == "float16" else np.asarray(raw, np_type)
    if values.size == 1 and count != 1:  # TF writes a repeated value once
        values = np.full(count, values[0], values.dtype)
    elif values.size == 0 and count:
        values = np.zeros(count, values.dtype)
    return values.reshape(shape)
