"""tf.io.decode_json_example: Example protos written in protobuf's JSON mapping (camelCase or proto field names,
bytes in base64) to their binary encoding, element by element; a host function inside traces."""
import json as _json

import numpy as _np

from .. import _C
from .. import dtypes as _dtypes
from . import _messages as _pb

_FIELDS = {"bytesList": "bytes_list", "floatList": "float_list", "int64List": "int64_list"}


def _binary(text):
    from google.protobuf import json_format
    try:
        example = _json.loads(text.decode() if isinstance(text, bytes) else text)
        for feature in example.get("features", {}).get("feature", {}).values():
            for key in [k for k in feature if k in _FIELDS]:
                feature[_FIELDS[key]] = feature.pop(key)
        return json_format.ParseDict(example, _pb.Example()).SerializeToString()
    except (ValueError, AttributeError, json_format.ParseError) as e:
        raise _C.InvalidArgumentError(f"Error while parsing JSON: {e}") from None


def decode_json_example(json_examples, name=None):
    """The binary Example of each JSON one (a string tensor of any shape, the same shape back)."""
    from .._ops import constant, convert_to_tensor
    examples = convert_to_tensor(json_examples)
    if examples.dtype != _dtypes.string:
        raise TypeError(f"json_examples must be a string tensor, got {examples.dtype.name}")

    def run(values):
        values = _np.asarray(values.numpy() if hasattr(values, "numpy") else values, dtype=object)
        out = _np.empty(values.shape, dtype=object)
        for index, text in _np.ndenumerate(values):
            out[index] = _binary(text)
        return out
    if not _C.is_tracing() and not examples._is_symbolic:
        return constant(run(examples), dtype=_dtypes.string)
    from ..function import py_function
    out = py_function(run, [examples], _dtypes.string)
    shape = examples.shape
    return out if shape.rank is None or None in shape.as_list() else _C.reshape(out, shape.as_list())
