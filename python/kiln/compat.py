"""kiln.compat (tf.compat): TF's text/bytes conversions, the number type tuples, shape dimension helpers and
the forward-compatibility window. tf.compat.v2 is the package itself; tf.compat.v1 holds only the few TF 1
calls TF 2 programs still make (_compat_v1.py)."""
import contextlib as _contextlib
import datetime as _datetime
import numbers as _numbers
import os as _os

import numpy as _np

from . import _compat_v1 as v1  # noqa: F401

bytes_or_text_types = (bytes, str)
integral_types = (_numbers.Integral, _np.integer)
real_types = (_numbers.Real, _np.integer, _np.floating)
complex_types = (_numbers.Complex, _np.number)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """bytes from bytes, bytearray or str (encoded)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """str from str or bytes (decoded)."""
    encoding = encoding or "utf-8"
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """str of any value: bytes decoded, anything else through str()."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object's string; anything else as it is."""
    return _os.fspath(path) if isinstance(path, _os.PathLike) else path


def dimension_value(dimension):
    """The int (or None) of a shape dimension, whether a Dimension or already an int."""
    return getattr(dimension, "value", dimension)


def dimension_at_index(shape, index):
    """The dimension `index` of `shape` (a TensorShape or what makes one); unknown when the rank is."""
    from .tensor_shape import TensorShape
    shape = TensorShape(shape)
    return None if shape.rank is None else shape[index]


# TF 2.15's horizon: code asking forward_compatible(y, m, d) for an earlier date may use what came before it.
_horizon = [_datetime.date(2023, 11, 14)]


def forward_compatible(year, month, day):
    """Whether the forward-compatibility horizon is past year-month-day."""
    return _horizon[0] > _datetime.date(year, month, day)


@_contextlib.contextmanager
def forward_compatibility_horizon(year, month, day):
    """The horizon moved to year-month-day inside the block (TF's testing aid)."""
    saved = _horizon[0]
    _horizon[0] = _datetime.date(year, month, day)
    try:
        yield
    finally:
        _horizon[0] = saved
