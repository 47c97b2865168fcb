"""tf.signal.dct / idct (types I to IV; axis -1): I to III through the real FFTs: type II is the real part of
the first n bins of a 2n-point FFT, each turned by exp(-i pi k / 2n); type III is its transpose through irfft;
type IV (MDCTs' kernel) a product with its cosine matrix, made in float64 for the static length."""
import numpy as _np

from .._array_ops import _tensor, reverse
from .._ops import complex as _complex, concat, constant, pad, real, zeros_like
from ._fft import irfft, rfft


def _validate(input, dct_type, n, axis, norm):  # noqa: A002 - TF's argument name
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        if input.shape.as_list()[-1] is not None and input.shape.as_list()[-1] < 2:
            raise ValueError(f"Type-I DCT requires the dimension to be greater than one. Got: "
                             f"{input.shape.as_list()[-1]}")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _edge_weights(first, rest, length, np_type):
    w = _np.full([length], rest, np_type)
    w[0] = first
    return constant(w)


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's argument names
    """The DCT of the last axis (scipy.fftpack.dct's definitions; norm='ortho' for types II and III)."""
    x = _tensor(input)
    _validate(x, type, n, axis, norm)
    length = x.shape.as_list()[-1]
    if length is None:
        raise ValueError(f"kiln.signal.dct needs the last dim known, got {x.shape}")
    if n is not None:
        x = x[..., :n] if n <= length else pad(x, [[0, 0]] * (x.ndim - 1) + [[0, n - length]])
        length = n
    t = _np.dtype(x.dtype.name).type
    complex_type = _np.complex64 if x.dtype.name == "float32" else _np.complex128
    if type == 1:
        mirrored = concat([x, reverse(x[..., 1:-1], [-1])], axis=-1)
        return real(rfft(mirrored))
    if type == 4:  # y_k = 2 sum_n x_n cos(pi (2n + 1)(2k + 1) / 4N), times sqrt(1 / 2N) for 'ortho'
        grid = _np.arange(length, dtype=_np.float64)
        basis = 2.0 * _np.cos(_np.pi * _np.outer(2 * grid + 1, 2 * grid + 1) / (4.0 * length))
        if norm == "ortho":
            basis = basis * _np.sqrt(0.5 / length)
        from .._ops import matmul, reshape, shape
        flat = reshape(x, [-1, length])
        out = matmul(flat, constant(basis.astype(t)))
        return reshape(out, shape(x))
    k = _np.arange(length, dtype=t)
    if type == 2:
        turn = constant((2.0 * _np.exp(-1j * k * _np.pi * 0.5 / length)).astype(complex_type))
        out = real(rfft(x, [2 * length])[..., :length] * turn)
        if norm == "ortho":
            n1 = t(0.5) / _np.sqrt(t(length))
            out = out * _edge_weights(n1, n1 * t(_np.sqrt(2.0)), length, t)
        return out
    # type 3
    if norm == "ortho":
        n1 = _np.sqrt(t(length))
        x = x * _edge_weights(n1, n1 * t(_np.sqrt(0.5)), length, t)
    else:
        x = x * constant(t(length))
    turn = constant((2.0 * _np.exp(1j * k * _np.pi * 0.5 / length)).astype(complex_type))
    spectrum = turn * _complex(x, zeros_like(x))
    return irfft(spectrum, [2 * length])[..., :length]


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's argument names
    """The inverse DCT: dct of the inverse type (II <-> III; I and IV are their own, up to 2 (n - 1) and 2n)."""
    _validate(_tensor(input), type, n, axis, norm)
    return dct(input, type={1: 1, 2: 3, 3: 2, 4: 4}[type], n=n, axis=axis, norm=norm)
