"""tf.signal.mdct / inverse_mdct as TF composes them: frames of frame_length hopping by half of it, windowed
(Vorbis by default, 1/sqrt(2) without a window), folded into half-length frames and taken through a type IV
DCT; the inverse unfolds the type IV inverse, windows again and overlaps and adds."""
import numpy as _np

from .._array_ops import _tensor, reverse
from .._ops import concat, constant, negative, split
from ._dct import dct, idct
from ._frames import frame, overlap_and_add
from ._windows import vorbis_window


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """[..., frames, frame_length / 2] MDCT coefficients of signals [..., samples]."""
    signals = _tensor(signals)
    if not signals.dtype.is_floating:
        raise ValueError(f"signals must be floating point, got {signals.dtype}")
    frame_length = int(frame_length)
    if frame_length % 4:
        raise ValueError("The frame length must be a multiple of 4.")
    frames = frame(signals, frame_length, frame_length // 2, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(frame_length, dtype=signals.dtype)
    else:
        frames = frames * constant(1.0 / _np.sqrt(2), dtype=signals.dtype)
    a, b, c, d = split(frames, 4, axis=-1)
    first = negative(reverse(c, [-1])) - d
    second = a - reverse(b, [-1])
    return dct(concat([first, second], axis=-1), type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """The signal back from mdct's coefficients [..., frames, half_len] (with norm='ortho' and the default
    window, mdct then inverse_mdct gives the signal back, less its first and last half frames)."""
    mdcts = _tensor(mdcts)
    if not mdcts.dtype.is_floating:
        raise ValueError(f"mdcts must be floating point, got {mdcts.dtype}")
    half_len = mdcts.shape.as_list()[-1]
    if half_len is None:
        raise ValueError("inverse_mdct in Kiln needs the last dimension known")
    result = idct(mdcts, type=4, norm=norm)
    if norm is None:
        result = result * constant(0.5 / half_len, dtype=mdcts.dtype)
    first, second = split(result, 2, axis=-1)
    frames = concat([second, negative(reverse(second, [-1])), negative(reverse(first, [-1])), negative(first)],
                    axis=-1)
    if window_fn is not None:
        frames = frames * window_fn(2 * half_len, dtype=mdcts.dtype)
    else:
        frames = frames * constant(1.0 / _np.sqrt(2), dtype=mdcts.dtype)
    return overlap_and_add(frames, half_len)


