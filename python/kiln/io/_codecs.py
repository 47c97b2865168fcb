"""tf.io.serialize_tensor / parse_tensor (a TensorProto's bytes), decode_raw and
decode_csv: the per-record decoders of TFRecord and text pipelines. Each runs on eager
tensors, and as a py_function on a symbolic input (inside Dataset.map)."""
import csv as _csv

import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from . import _messages as _pb


def _symbolic(*values):
    return any(getattr(v, "_is_symbolic", False) for v in values)


def _host(fn, inputs, touts):
    from ..function import py_function
    return py_function(fn, list(inputs), touts)


def _value(t):
    return t.numpy() if hasattr(t, "numpy") else t


def serialize_tensor(tensor, name=None):
    """The TensorProto of `tensor` (numbers in tensor_content, strings in string_val) as a
    string scalar."""
    from .._ops import convert_to_tensor
    tensor = convert_to_tensor(tensor)
    if _symbolic(tensor):
        return _host(lambda t: serialize_tensor(t), [tensor], _dtypes.string)
    array = _np.asarray(tensor.numpy())
    proto = _pb.TensorProto(dtype=_pb.DATA_TYPE_OF[tensor.dtype.name])
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if tensor.dtype == _dtypes.string:
        proto.string_val.extend(array.reshape(-1).tolist())
    else:
        proto.tensor_content = _np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    return convert_to_tensor(proto.SerializeToString(), _dtypes.string)


_NUMPY_OF = {"float32": _np.float32, "float64": _np.float64, "int32": _np.int32, "int64": _np.int64,
             "uint8": _np.uint8, "bool": _np.bool_, "float16": _np.float16, "int8": _np.int8, "int16": _np.int16,
             "uint16": _np.uint16, "uint32": _np.uint32, "uint64": _np.uint64, "complex64": _np.complex64,
             "complex128": _np.complex128}
_VALUES_FIELD = {"float32": "float_val", "float64": "double_val", "int32": "int_val", "uint8": "int_val",
                 "int64": "int64_val", "bool": "bool_val"}


def parse_tensor(serialized, out_type, name=None):
    """The tensor a serialize_tensor made; `out_type` must be its dtype."""
    from .._ops import convert_to_tensor
    out_type = _dtypes.as_dtype(out_type)
    if _symbolic(serialized):
        return _host(lambda s: parse_tensor(s, out_type), [serialized], out_type)
    try:
        proto = _pb.TensorProto.FromString(bytes(_value(serialized)))
    except Exception:  # noqa: BLE001 - protobuf's DecodeError
        raise _errors.InvalidArgumentError("Could not parse `serialized` as TensorProto") from None
    name_of = _pb.DTYPE_NAME_OF.get(proto.dtype, str(proto.dtype))
    if name_of != out_type.name:
        raise _errors.InvalidArgumentError(f"Type mismatch between parsed tensor ({name_of}) and dtype "
                                           f"({out_type.name})")
    shape = [d.size for d in proto.tensor_shape.dim]
    if out_type == _dtypes.string:
        array = _np.empty(len(proto.string_val), dtype=object)
        array[:] = list(proto.string_val)
    elif proto.tensor_content:
        array = _np.frombuffer(proto.tensor_content, _np.dtype(_NUMPY_OF[name_of]).newbyteorder("<"))
    else:
        values = list(getattr(proto, _VALUES_FIELD[name_of]))
        size = int(_np.prod(shape))
        array = _np.array(values if len(values) != 1 or size == 1 else values * size, _NUMPY_OF[name_of])
    return convert_to_tensor(array.astype(_NUMPY_OF.get(name_of, object)).reshape(shape), out_type)


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Each string's bytes as a vector of `out_type` ([..., n]); fixed_length pads or cuts them."""
    from .._ops import convert_to_tensor
    out_type = _dtypes.as_dtype(out_type)
    if out_type.name not in _NUMPY_OF or out_type == _dtypes.bool:
        raise TypeError(f"decode_raw: out_type {out_type.name} is not supported")
    if _symbolic(input_bytes):
        return _host(lambda b: decode_raw(b, out_type, little_endian, fixed_length), [input_bytes], out_type)
    strings = _np.asarray(_value(input_bytes), dtype=object)
    dtype = _np.dtype(_NUMPY_OF[out_type.name]).newbyteorder("<" if little_endian else ">")
    rows = []
    for s in strings.reshape(-1):
        s = bytes(s)
        if fixed_length is not None:
            s = s[:int(fixed_length)].ljust(int(fixed_length), b"\x00")
        if len(s) % dtype.itemsize:
            raise _errors.InvalidArgumentError(f"Input to DecodeRaw has length {len(s)} that is not a multiple of "
                                               f"{dtype.itemsize}, the size of {out_type.name}")
        rows.append(_np.frombuffer(s, dtype).astype(_NUMPY_OF[out_type.name]))
    if len({len(r) for r in rows}) > 1:
        raise _errors.InvalidArgumentError("DecodeRaw requires input strings to all be the same size")
    width = len(rows[0]) if rows else 0
    out = _np.stack(rows) if rows else _np.zeros([0, width], _NUMPY_OF[out_type.name])
    return convert_to_tensor(out.reshape(list(strings.shape) + [width]), out_type)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Each CSV record (a string tensor) parsed into one tensor per column, with
    CsvDataset's rules for defaults, na_value, quotes and select_cols."""
    from .._ops import convert_to_tensor
    from ..data._readers import _column_default, _convert_field
    columns = [_column_default(v, i) for i, v in enumerate(record_defaults)]
    if _symbolic(records):
        outs = _host(lambda r: list(decode_csv(r, record_defaults, field_delim, use_quote_delim, name, na_value,
                                               select_cols)), [records], [d for d, _ in columns])
        return list(outs)
    strings = _np.asarray(_value(records), dtype=object)
    values = [[] for _ in columns]
    for record in strings.reshape(-1):
        text = record.decode() if isinstance(record, bytes) else str(record)
        try:
            rows = list(_csv.reader([text], delimiter=field_delim, strict=True,
                                    quoting=_csv.QUOTE_MINIMAL if use_quote_delim else _csv.QUOTE_NONE,
                                    quotechar='"' if use_quote_delim else None))
        except _csv.Error:
            raise _errors.InvalidArgumentError("Quote inside a string has to be escaped by another quote") from None
        fields = rows[0] if rows and rows[0] else [""]
        if select_cols is not None:
            fields = [fields[c] if c < len(fields) else "" for c in select_cols]
        if len(fields) != len(columns):
            raise _errors.InvalidArgumentError(f"Expect {len(columns)} fields but have {len(fields)} in record 0")
        for i, (f, (dtype, default)) in enumerate(zip(fields, columns)):
            values[i].append(_convert_field(f, dtype, default, i, na_value))
    out = []
    for (dtype, _), column in zip(columns, values):
        array = _np.empty(len(column), dtype=object) if dtype == _dtypes.string else None
        if array is not None:
            array[:] = column
        else:
            array = _np.array(column, dtype=_NUMPY_OF[dtype.name])
        out.append(convert_to_tensor(array.reshape(strings.shape), dtype))
    return out
