"""tf.signal's windows: raised cosines a - b cos(2 pi n / N), computed in the window's dtype as TF's ops do
(N = length - 1, or length for a periodic window of even length; a window of one sample is [1])."""
import numpy as _np

from .. import dtypes as _dtypes
from .._array_ops import _python_ints
from .._ops import cast, constant


def _length(window_length, dtype):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    n = _python_ints(window_length, "signal.window_length")
    if not isinstance(n, int):
        raise ValueError(f"window_length must be a scalar, got {window_length!r}")
    return n, dtype


def _raised_cosine(window_length, periodic, dtype, a, b):
    n, dtype = _length(window_length, dtype)
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


def _as_window(values, dtype):
    return cast(constant(_np.asarray(values, _np.float64)), dtype)


def kaiser_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """I0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / I0(beta), n in [0, N) (NumPy's np.kaiser, in float64, rounded
    once to dtype); a window of one sample is [1]."""
    n, dtype = _length(window_length, dtype)
    return _as_window(_np.ones(1) if n == 1 else _np.kaiser(n, float(beta)), dtype)


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """sqrt(cumsum(w)[:-1] / sum(w)) for w the Kaiser window of N//2 + 1 samples, and its mirror (TF's KBD
    window, as used by MDCTs)."""
    n, dtype = _length(window_length, dtype)
    half = n // 2
    kaiser = _np.ones(1) if half + 1 == 1 else _np.kaiser(half + 1, float(beta))
    csum = _np.cumsum(kaiser)
    halfw = _np.sqrt(csum[:-1] / csum[-1])
    return _as_window(_np.concatenate([halfw, halfw[::-1]]), dtype)


def vorbis_window(window_length, dtype=_dtypes.float32, name=None):
    """sin(pi/2 sin^2(pi (n + 1/2) / N)), the Vorbis power-complementary window."""
    n, dtype = _length(window_length, dtype)
    arg = _np.pi * (_np.arange(n) + 0.5) / n
    return _as_window(_np.sin(_np.pi / 2 * _np.sin(arg) ** 2), dtype)
