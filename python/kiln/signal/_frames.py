"""tf.signal.frame and overlap_and_add: frames as one gather of [num_frames, frame_length] indices, and
their sum back into one signal as `segments` shifted pads (frame_length / frame_step rounded up)."""
import numpy as _np

from .. import _C
from .._array_ops import _python_ints, _static_shape, _tensor
from .._ops import gather, pad, reshape


def _scalar_int(value, what):
    v = _python_ints(value, f"signal.{what}")
    if not isinstance(v, int):
        raise ValueError(f"{what} must be a scalar, got {value!r}")
    return v


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of `frame_length` samples every `frame_step` along `axis`: that axis becomes
    [num_frames, frame_length]. pad_end=False drops a last partial frame; True pads it with pad_value."""
    signal = _tensor(signal)
    frame_length = _scalar_int(frame_length, "frame_length")
    frame_step = _scalar_int(frame_step, "frame_step")
    if frame_length < 0 or frame_step <= 0:
        raise ValueError(f"frame_length must be non-negative and frame_step positive, got {frame_length} and "
                         f"{frame_step}")
    rank = signal.ndim
    if rank is None or rank < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {rank}")
    axis = _scalar_int(axis, "axis")
    axis = axis + rank if axis < 0 else axis
    length = signal.shape.as_list()[axis]  # only the framed axis must be known (a batch dim may not be)
    if length is None:
        raise ValueError(f"kiln.signal.frame needs the framed axis' length known while tracing; got {signal.shape}")
    if pad_end:
        num_frames = -(-length // frame_step)
        extra = max(0, frame_length + frame_step * (num_frames - 1) - length)
        paddings = [[0, 0]] * rank
        paddings[axis] = [0, extra]
        signal = pad(signal, paddings, constant_values=pad_value)
    else:
        num_frames = max(0, 1 + (length - frame_length) // frame_step)
    starts = _np.arange(num_frames, dtype=_np.int64)[:, None] * frame_step
    indices = starts + _np.arange(frame_length, dtype=_np.int64)[None, :]
    return gather(signal, _C.constant(indices.reshape(num_frames, frame_length), None), axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """[..., frames, frame_length] -> [..., (frames - 1) * frame_step + frame_length]: the frames summed where
    they overlap."""
    signal = _tensor(signal)
    if signal.ndim is None or signal.ndim < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {signal.ndim}")
    frame_step = _scalar_int(frame_step, "frame_step")
    if frame_step <= 0:
        raise ValueError(f"frame_step must be positive, got {frame_step}")
    dims = _static_shape(signal, "signal.overlap_and_add")
    outer, (frames, frame_length) = dims[:-2], dims[-2:]
    segments = -(-frame_length // frame_step)
    keep = [[0, 0]] * (len(dims) - 2)
    padded = pad(signal, keep + [[0, 0], [0, segments * frame_step - frame_length]])
    pieces = reshape(padded, outer + [frames, segments, frame_step])
    total = None
    for s in range(segments):
        # The s-th step of every frame lands s steps after that frame's start.
        placed = pad(pieces[..., s, :], keep + [[s, segments - 1 - s], [0, 0]])
        total = placed if total is None else total + placed
    output_length = max(0, (frames - 1) * frame_step + frame_length)
    joined = reshape(total, outer + [(frames + segments - 1) * frame_step])
    return joined[..., :output_length]
