"""tf.signal.stft / inverse_stft / inverse_stft_window_fn: frames, a window and the real FFTs, with TF's
defaults (hann_window, pad_end=False, fft_length the smallest power of two >= frame_length)."""
import math as _math

from .._array_ops import _tensor
from .._ops import convert_to_tensor, pad, reduce_sum, reshape, square, tile
from ._fft import irfft, rfft
from ._frames import _scalar_int, frame, overlap_and_add
from ._windows import hann_window


def _enclosing_power_of_two(n):
    return 1 if n <= 1 else 2 ** int(_math.ceil(_math.log2(n)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """[..., samples] -> [..., frames, fft_length // 2 + 1] complex: the windowed frames' real FFTs."""
    signals = _tensor(signals)
    if signals.ndim is None or signals.ndim < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {signals.ndim}")
    frame_length = _scalar_int(frame_length, "frame_length")
    frame_step = _scalar_int(frame_step, "frame_step")
    fft_length = _enclosing_power_of_two(frame_length) if fft_length is None else _scalar_int(fft_length, "fft_length")
    framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=framed.dtype)
    return rfft(framed, [fft_length])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):
    """stft's inverse given a window_fn that undoes the forward window (inverse_stft_window_fn)."""
    stfts = _tensor(stfts)
    if stfts.ndim is None or stfts.ndim < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {stfts.ndim}")
    frame_length = _scalar_int(frame_length, "frame_length")
    frame_step = _scalar_int(frame_step, "frame_step")
    fft_length = _enclosing_power_of_two(frame_length) if fft_length is None else _scalar_int(fft_length, "fft_length")
    frames = irfft(stfts, [fft_length])
    # Each frame cut or zero-padded to frame_length.
    if fft_length > frame_length:
        frames = frames[..., :frame_length]
    elif fft_length < frame_length:
        frames = pad(frames, [[0, 0]] * (frames.ndim - 1) + [[0, frame_length - fft_length]])
    if window_fn is not None:
        frames = frames * window_fn(frame_length, dtype=frames.dtype)
    return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window_fn for inverse_stft: the forward window over the sum of its squares at each overlap."""
    frame_step = _scalar_int(frame_step, "frame_step")

    def window_fn(frame_length, dtype):
        frame_length = _scalar_int(frame_length, "frame_length")
        forward = convert_to_tensor(forward_window_fn(frame_length, dtype=dtype))
        overlaps = -(-frame_length // frame_step)
        squares = pad(square(forward), [[0, overlaps * frame_step - frame_length]])
        per_phase = reduce_sum(reshape(squares, [overlaps, frame_step]), 0, keepdims=True)
        denominator = reshape(tile(per_phase, [overlaps, 1]), [overlaps * frame_step])[:frame_length]
        return forward / denominator

    return window_fn


