"""tf.io.encode_base64 / decode_base64 (web-safe base64, as TF's: "-" and "_" for "+"
and "/", padding only when asked) and tf.io.decode_compressed (ZLIB or GZIP), each
applied to every string of a string tensor of any shape."""
import base64 as _base64
import binascii as _binascii
import re as _re
import zlib as _zlib

import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from ._codecs import _host, _symbolic, _value

_WEB_SAFE = _re.compile(rb"^[A-Za-z0-9_\-]*={0,2}$")


def _each_string(tensor, fn, name):
    from .._ops import convert_to_tensor
    tensor = convert_to_tensor(tensor, _dtypes.string) if not hasattr(tensor, "dtype") else tensor
    if tensor.dtype != _dtypes.string:
        raise TypeError(f"{name}: expected a string tensor, got {tensor.dtype.name}")
    if _symbolic(tensor):
        return _host(lambda t: _each_string(t, fn, name), [tensor], _dtypes.string)
    strings = _np.asarray(_value(tensor), dtype=object)
    out = _np.empty(strings.shape, dtype=object)
    for index, s in _np.ndenumerate(strings):
        out[index] = fn(bytes(s))
    return convert_to_tensor(out, _dtypes.string)


def encode_base64(input, pad=False, name=None):  # noqa: A002 - TF's name
    def encode(data):
        text = _base64.urlsafe_b64encode(data)
        return text if pad else text.rstrip(b"=")
    return _each_string(input, encode, "encode_base64")


def decode_base64(input, name=None):  # noqa: A002 - TF's name
    def decode(text):
        if not _WEB_SAFE.match(text) or len(text.rstrip(b"=")) % 4 == 1:
            raise _errors.InvalidArgumentError(f"Invalid character found in base64: {text[:32]!r}")
        body = text.rstrip(b"=")
        try:
            return _base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except _binascii.Error as e:
            raise _errors.InvalidArgumentError(f"Invalid base64 data: {e}") from None
    return _each_string(input, decode, "decode_base64")


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002 - TF's name
    """Each string decompressed: compression_type "" (unchanged), "ZLIB" or "GZIP"."""
    kind = compression_type.numpy().decode() if hasattr(compression_type, "numpy") else compression_type
    if kind not in ("", "ZLIB", "GZIP"):
        raise _errors.InvalidArgumentError(f"Unsupported compression type: {kind}")
    wbits = _zlib.MAX_WBITS if kind == "ZLIB" else 16 + _zlib.MAX_WBITS

    def decode(data):
        if kind == "":
            return data
        try:
            inflater = _zlib.decompressobj(wbits)
            out = inflater.decompress(data) + inflater.flush()
        except _zlib.error as e:
            raise _errors.DataLossError(f"decode_compressed: the input is not valid {kind} data ({e})") from None
        if not inflater.eof:
            raise _errors.DataLossError(f"decode_compressed: the {kind} stream ends early")
        return out
    return _each_string(bytes, decode, "decode_compressed")
