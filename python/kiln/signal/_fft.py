"""tf.signal's FFTs over the engine's FFT ops (src/ops/fft_ops.cpp), and fftshift / ifftshift."""
from .. import _C
from .. import dtypes as _dtypes
from .._array_ops import _python_ints, roll
from .._ops import convert_to_tensor, op_input

_COMPLEX = ("complex64", "complex128")
_REAL = ("float32", "float64")


def _input(x, hint, allowed, parameter):
    return op_input(x, parameter, allowed, dtype_hint=hint)


def _lengths(fft_length, rank):
    """fft_length as a list of `rank` Python ints ([] for None: the op takes the input's lengths)."""
    if fft_length is None:
        return []
    values = _python_ints(fft_length, "signal.fft_length")
    if values is None:
        raise ValueError("kiln.signal: fft_length must be known while tracing (a constant)")
    values = [values] if isinstance(values, int) else list(values)
    if len(values) != rank:
        raise ValueError(f"fft_length must have {rank} elements (shape [{rank}]), got {len(values)}")
    return values


def _complex_fft(op):
    def transform(input, name=None):  # noqa: A002 - TF's argument name
        return op(_input(input, _dtypes.complex64, _COMPLEX, "input"))
    transform.__name__ = op.__name__ if hasattr(op, "__name__") else "fft"
    return transform


fft = _complex_fft(_C.fft)
ifft = _complex_fft(_C.ifft)
fft2d = _complex_fft(_C.fft2d)
ifft2d = _complex_fft(_C.ifft2d)
fft3d = _complex_fft(_C.fft3d)
ifft3d = _complex_fft(_C.ifft3d)


def _real_fft(op, rank, forward):
    def transform(input_tensor, fft_length=None, name=None):
        x = (_input(input_tensor, _dtypes.float32, _REAL, "input") if forward
             else _input(input_tensor, _dtypes.complex64, _COMPLEX, "input"))
        return op(x, _lengths(fft_length, rank))
    return transform


rfft = _real_fft(_C.rfft, 1, True)
irfft = _real_fft(_C.irfft, 1, False)
rfft2d = _real_fft(_C.rfft2d, 2, True)
irfft2d = _real_fft(_C.irfft2d, 2, False)
rfft3d = _real_fft(_C.rfft3d, 3, True)
irfft3d = _real_fft(_C.irfft3d, 3, False)


def _shift(x, axes, sign):
    x = convert_to_tensor(x) if not isinstance(x, (_C.Tensor, _C.Variable)) else x
    dims = x.shape.as_list()
    if axes is None:
        axes = list(range(len(dims)))
    single = isinstance(axes, int)
    axis_list = [axes] if single else list(_python_ints(axes, "signal.fftshift"))
    for a in axis_list:
        if dims[a] is None:
            raise ValueError(f"kiln.signal.fftshift needs the shifted axes' lengths known, got {x.shape}")
    shifts = [sign * (dims[a] // 2) for a in axis_list]
    if not axis_list:
        return x
    return roll(x, shifts[0] if single else shifts, axes if single else axis_list)


def fftshift(x, axes=None, name=None):
    """The zero frequency moved to the middle: each axis rolled by n // 2 (numpy.fft.fftshift)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None, name=None):
    """The inverse of fftshift: each axis rolled by -(n // 2)."""
    return _shift(x, axes, -1)
