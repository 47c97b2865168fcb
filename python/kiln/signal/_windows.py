"""tf.signal's windows: raised cosines a - b cos(2 pi n / N), computed in the window's dtype as TF's ops do
(N = length - 1, or length for a periodic window of even length; a window of one sample is [1])."""
import numpy as _np

from .. import dtypes as _dtypes
from .._array_ops import _python_ints
from .._ops import cast, constant


def _raised_cosine(window_length, periodic, dtype, a, b):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    n = _python_ints(window_length, "signal.window_length")
    if not isinstance(n, int):
        raise ValueError(f"window_length must be a scalar, got {window_length!r}")
    exact = dtype.name in ("float32", "float64")
    np_type = _np.dtype(dtype.name) if exact else _np.float32  # half types: computed in float32, rounded once
    if n == 1:
        values = _np.ones([1], np_type)
    else:
        even = 1 - n % 2
        denominator = np_type.type(n + int(bool(periodic)) * even - 1)
        count = _np.arange(n, dtype=np_type)
        values = np_type.type(a) - np_type.type(b) * _np.cos(np_type.type(2 * _np.pi) * count / denominator)
    window = constant(values.astype(np_type))
    return window if exact else cast(window, dtype)


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N) (tf.signal.hann_window)."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N) (tf.signal.hamming_window)."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)
