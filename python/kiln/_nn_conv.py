"""tf.nn's convolutions beyond conv2d: conv1d (and its transpose) as the 2-D ops on one row; conv3d (and its
transpose) as 2-D convolutions of depth frames; the N-D dispatchers; separable and atrous convolutions;
depth_to_space and space_to_depth. Channels-last layouts only (NWC, NHWC, NDHWC), as the engine's kernels.

conv3d: each depth tap a of the filter reads, for output frame i, input frame i * stride + a * dilation - pad
(zeros where that is padding): a gather of frames, folded into the batch for conv2d with filter[a], the taps
summed. conv3d_transpose runs the same steps transposed: conv2d_transpose per tap, its frames added back where
the gather took them (an unsorted segment sum). Plain differentiable ops, each the exact adjoint of the other."""
import numpy as np

from . import _C, _ops
from . import math as _math
from ._array_ops import _static_values, _tensor
from . import errors as _errors


def refuse_channels_first(op, data_format, allowed):
    if data_format is not None and data_format not in allowed:
        raise ValueError(f"kiln.nn.{op}: data_format {data_format!r} is not supported (only "
                         f"{' and '.join(repr(a) for a in allowed)})")


def spatial(value, n, what, op):
    """An int, or n ints, or the n + 2 of TF's full form [1, ..., 1] (whose batch and channel entries must
    be 1), as a list of n positive ints."""
    if value is None:
        return [1] * n
    if isinstance(value, (int, np.integer)):
        values = [int(value)] * n
    else:
        values = [int(v) for v in (value.numpy().tolist() if hasattr(value, "numpy") else value)]
        if len(values) == 1:
            values = values * n
        elif len(values) == n + 2:
            if values[0] != 1 or values[-1] != 1:
                raise _errors.InvalidArgumentError(f"kiln.nn.{op}: {what} in the batch and depth dimensions must "
                                                   f"be 1, got {values}")
            values = values[1:-1]
        elif len(values) != n:
            raise ValueError(f"kiln.nn.{op}: {what} must be an int or a list of 1, {n} or {n + 2} ints, got {values}")
    if min(values) < 1:
        raise ValueError(f"kiln.nn.{op}: {what} must be positive, got {values}")
    return values


def check_padding(padding, op):
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"kiln.nn.{op}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return padding.upper()


def window_geometry(size, k, stride, rate, padding):
    """(output size, padding before) along one axis, as TF's windows: SAME gives ceil(size / stride) and puts
    the odd padding element after."""
    effective = (k - 1) * rate + 1
    if padding == "VALID":
        return max(0, (size - effective) // stride + 1), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def static_dims(*parts):
    """Static dims (lists of ints or None) joined for a reshape, an unknown dim as -1: Kiln's reshape takes
    one dim known only at run time."""
    return [-1 if d is None else int(d) for part in parts for d in part]


def _dims_list(output_shape):
    """output_shape (a list, TensorShape or 1-D tensor) as ints, a dim known only when the graph runs (the
    batch, as tf.shape(x)[0] gives it inside a trace) as -1."""
    if isinstance(output_shape, _C.Tensor):
        if not output_shape._is_symbolic:
            return [int(d) for d in output_shape.numpy().tolist()]
        known = _static_values(output_shape)
        if known is None:  # element by element: the trace may know all but the batch
            if output_shape.shape.rank != 1 or output_shape.shape[0] is None:
                raise ValueError(f"kiln.nn: output_shape must be a vector of known length, got {output_shape}")
            known = [_static_values(output_shape[i]) for i in range(output_shape.shape[0])]
        output_shape = known
    elif hasattr(output_shape, "as_list"):
        output_shape = output_shape.as_list()

    def one(d):
        if isinstance(d, _C.Tensor):
            d = int(d.numpy()) if not d._is_symbolic else _static_values(d)
        return -1 if d is None else int(d)

    return [one(d) for d in output_shape]


# ---- 2-D ----------------------------------------------------------------------------------

def explicit_padding(x, padding, op, fill=0.0):
    """(x, padding) with TF's explicit paddings ([[0, 0], *[[before, after] per spatial dim], [0, 0]]) applied
    as `fill`, the window op then "VALID"; a string padding as it is."""
    if isinstance(padding, str):
        return x, padding
    x = _tensor(x)
    rank = x.shape.rank
    pads = np.asarray(padding, np.int64).reshape(-1, 2) if len(padding) else np.zeros((0, 2), np.int64)
    if pads.shape != (rank, 2) or pads[0].any() or pads[-1].any() or (pads < 0).any():
        raise ValueError(f"kiln.nn.{op}: explicit padding must be [[0, 0], [before, after] per spatial dim, [0, 0]] "
                         f"of non-negative ints, got {padding}")
    return _ops.pad(x, pads.tolist(), constant_values=fill), "VALID"


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """[batch, h, w, in] * filters [fh, fw, in / groups, out] (grouped when in is a multiple of the filter's
    input channels); padding "SAME", "VALID" or TF's explicit list."""
    refuse_channels_first("conv2d", data_format, ("NHWC",))
    x, padding = explicit_padding(input, padding, "conv2d")
    return _C.conv2d(x, filters, spatial(strides, 2, "strides", "conv2d"), padding,
                     spatial(dilations, 2, "dilations", "conv2d"))


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",  # noqa: A002
                     dilations=None, name=None):
    """The transpose of conv2d: filters [h, w, output_channels, input_channels]; output_shape
    [batch, height, width, output_channels] (a list, TensorShape or 1-D tensor; batch may be None)."""
    refuse_channels_first("conv2d_transpose", data_format, ("NHWC",))
    return _C.conv2d_transpose(input, filters, _dims_list(output_shape),
                               spatial(strides, 2, "strides", "conv2d_transpose"), padding,
                               spatial(dilations, 2, "dilations", "conv2d_transpose"))


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """Each input channel convolved with its own filters: filter [h, w, in_channels, channel_multiplier]
    gives in_channels * channel_multiplier output channels (channel c * multiplier + m from input channel c)."""
    refuse_channels_first("depthwise_conv2d", data_format, ("NHWC",))
    x, padding = explicit_padding(input, padding, "depthwise_conv2d")
    return _C.depthwise_conv2d(x, filter, spatial(strides, 2, "strides", "depthwise_conv2d"), padding,
                               spatial(dilations, 2, "dilations", "depthwise_conv2d"))


# ---- 1-D ----------------------------------------------------------------------------------

def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """[batch..., width, in] * filters [width, in, out], computed as conv2d on one row."""
    refuse_channels_first("conv1d", data_format, ("NWC",))
    x, f = _tensor(input), _tensor(filters)
    if x.shape.rank is not None and x.shape.rank < 3:
        raise ValueError(f"kiln.nn.conv1d: input must have rank >= 3 [batch, width, channels], got {x.shape}")
    batch_dims = x.shape.rank - 3
    if batch_dims:  # extra leading batch dims fold into one
        outer = x.shape.as_list()[:-2]
        x = _ops.reshape(x, static_dims([None], x.shape.as_list()[-2:]))
    y = _C.conv2d(_ops.expand_dims(x, 1), _ops.expand_dims(f, 0), [1] + spatial(stride, 1, "stride", "conv1d"),
                  check_padding(padding, "conv1d"), [1] + spatial(dilations, 1, "dilations", "conv1d"))
    y = _ops.squeeze(y, [1])
    if batch_dims:
        y = _ops.reshape(y, static_dims(outer, y.shape.as_list()[1:]))
    return y


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",  # noqa: A002
                     dilations=None, name=None):
    """The transpose of conv1d: filters [width, out, in], output_shape [batch, width, out]."""
    refuse_channels_first("conv1d_transpose", data_format, ("NWC",))
    dims = _dims_list(output_shape)
    if len(dims) != 3:
        raise ValueError(f"kiln.nn.conv1d_transpose: output_shape must have 3 entries, got {dims}")
    y = _C.conv2d_transpose(_ops.expand_dims(_tensor(input), 1), _ops.expand_dims(_tensor(filters), 0),
                            [dims[0], 1, dims[1], dims[2]], [1] + spatial(strides, 1, "strides", "conv1d_transpose"),
                            check_padding(padding, "conv1d_transpose"),
                            [1] + spatial(dilations, 1, "dilations", "conv1d_transpose"))
    return _ops.squeeze(y, [1])


# ---- 3-D ----------------------------------------------------------------------------------

def _tap_frames(in_depth, out_depth, stride, rate, pad_before, tap):
    """Input frame read by each output frame for filter depth tap `tap`: i * stride + tap * rate - pad_before,
    -1 where that frame is padding."""
    frames = np.arange(out_depth) * stride + tap * rate - pad_before
    return np.where((frames >= 0) & (frames < in_depth), frames, -1).astype(np.int32)


def _read_frames(x, frames):
    """x's depth frames (axis 1) at `frames`, zeros where a frame is -1 (padding)."""
    valid = frames >= 0
    picked = _ops.gather(x, _ops.constant(np.where(valid, frames, 0).astype(np.int32)), axis=1)
    if valid.all():
        return picked
    return _ops.multiply(picked, _ops.cast(_ops.constant(valid.reshape(1, -1, 1, 1, 1)), x.dtype))


def _write_frames(y, frames, depth):
    """The transpose of _read_frames: y's frames (axis 1) added into `depth` frames at `frames` (-1 dropped)."""
    moved = _ops.transpose(y, [1, 0, 2, 3, 4])
    summed = _math.unsorted_segment_sum(moved, _ops.constant(frames), depth)
    return _ops.transpose(summed, [1, 0, 2, 3, 4])


def _fold_depth(x):
    """[n, d, h, w, c] -> [n * d, h, w, c]."""
    return _ops.reshape(x, static_dims([None], x.shape.as_list()[2:]))


def _unfold_depth(y, depth):
    return _ops.reshape(y, static_dims([None, depth], y.shape.as_list()[1:]))


def _static_5d(x, op, what="input"):
    if x.shape.rank != 5:
        raise ValueError(f"kiln.nn.{op}: {what} must be 5-D [batch, depth, height, width, channels], got {x.shape}")
    if x.shape[1] is None:
        raise ValueError(f"kiln.nn.{op}: the depth of {what} must be known while tracing, got {x.shape}")


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    """[batch, depth, height, width, in] * filters [depth, height, width, in, out]."""
    refuse_channels_first("conv3d", data_format, ("NDHWC",))
    x, f = _tensor(input), _tensor(filters)
    _static_5d(x, "conv3d")
    padding = check_padding(padding, "conv3d")
    sd, sh, sw = spatial(strides, 3, "strides", "conv3d")
    rd, rh, rw = spatial(dilations, 3, "dilations", "conv3d")
    taps, in_depth = f.shape[0], x.shape[1]
    out_depth, before = window_geometry(in_depth, taps, sd, rd, padding)
    total = None
    for a in range(taps):
        frames = _read_frames(x, _tap_frames(in_depth, out_depth, sd, rd, before, a))
        y = _C.conv2d(_fold_depth(frames), f[a], [sh, sw], padding, [rh, rw])
        total = y if total is None else _ops.add(total, y)
    return _unfold_depth(total, out_depth)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC",  # noqa: A002
                     dilations=None, name=None):
    """The transpose of conv3d: filters [depth, height, width, out, in], output_shape [batch, depth, height,
    width, out]."""
    refuse_channels_first("conv3d_transpose", data_format, ("NDHWC",))
    x, f = _tensor(input), _tensor(filters)
    _static_5d(x, "conv3d_transpose")
    padding = check_padding(padding, "conv3d_transpose")
    dims = _dims_list(output_shape)
    if len(dims) != 5:
        raise ValueError(f"kiln.nn.conv3d_transpose: output_shape must have 5 entries, got {dims}")
    sd, sh, sw = spatial(strides, 3, "strides", "conv3d_transpose")
    rd, rh, rw = spatial(dilations, 3, "dilations", "conv3d_transpose")
    taps, out_depth = f.shape[0], dims[1]
    expected, before = window_geometry(out_depth, taps, sd, rd, padding)
    if expected != x.shape[1]:
        raise ValueError(f"kiln.nn.conv3d_transpose: output depth {out_depth} does not give the input's depth "
                         f"{x.shape[1]} under conv3d (it gives {expected})")
    planes = _fold_depth(x)
    total = None
    for a in range(taps):
        y = _C.conv2d_transpose(planes, f[a], [-1, dims[2], dims[3], dims[4]], [sh, sw], padding, [rh, rw])
        y = _write_frames(_unfold_depth(y, expected), _tap_frames(out_depth, expected, sd, rd, before, a), out_depth)
        total = y if total is None else _ops.add(total, y)
    return total


# ---- dispatchers and the 2-D variants ------------------------------------------------------

def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None,  # noqa: A002
                name=None):
    """conv1d, conv2d or conv3d by the filters' rank (3, 4 or 5)."""
    rank = _tensor(filters).shape.rank
    if rank == 3:
        return conv1d(input, filters, 1 if strides is None else strides, padding,
                      "NWC" if data_format is None else data_format, dilations)
    if rank == 4:
        return conv2d(input, filters, strides, check_padding(padding, "convolution"),
                      "NHWC" if data_format is None else data_format, dilations)
    if rank == 5:
        return conv3d(input, filters, strides, padding, "NDHWC" if data_format is None else data_format, dilations)
    raise ValueError(f"kiln.nn.convolution: filters must have rank 3, 4 or 5, got rank {rank}")


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,  # noqa: A002
                   dilations=None, name=None):
    """conv1d_transpose, conv2d_transpose or conv3d_transpose by output_shape's length (3, 4 or 5)."""
    n = len(_dims_list(output_shape))
    if n == 3:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format or "NWC", dilations)
    if n == 4:
        return conv2d_transpose(input, filters, output_shape, strides, check_padding(padding, "conv_transpose"),
                                data_format or "NHWC", dilations)
    if n == 5:
        return conv3d_transpose(input, filters, output_shape, strides, padding, data_format or "NDHWC", dilations)
    raise ValueError(f"kiln.nn.conv_transpose: output_shape must have 3, 4 or 5 entries, got {n}")


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """depthwise_conv2d with depthwise_filter [h, w, in, multiplier], then a 1x1 conv2d with pointwise_filter
    [1, 1, in * multiplier, out]."""
    refuse_channels_first("separable_conv2d", data_format, ("NHWC",))
    pointwise = _tensor(pointwise_filter)
    if pointwise.shape.rank == 4 and (pointwise.shape[0] != 1 or pointwise.shape[1] != 1):
        raise ValueError(f"kiln.nn.separable_conv2d: pointwise_filter must be [1, 1, channels, out], got "
                         f"{pointwise.shape}")
    depthwise = _C.depthwise_conv2d(input, depthwise_filter, spatial(strides, 2, "strides", "separable_conv2d"),
                                    check_padding(padding, "separable_conv2d"),
                                    spatial(dilations, 2, "dilations", "separable_conv2d"))
    return _C.conv2d(depthwise, pointwise, [1, 1], "VALID", [1, 1])


def _rate(rate):
    rate = int(rate)
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return rate


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with the filter's taps `rate` apart (stride 1)."""
    rate = _rate(rate)
    return _C.conv2d(value, filters, [1, 1], check_padding(padding, "atrous_conv2d"), [rate, rate])


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of atrous_conv2d: filters [h, w, out, in]."""
    rate = _rate(rate)
    return _C.conv2d_transpose(value, filters, _dims_list(output_shape), [1, 1],
                               check_padding(padding, "atrous_conv2d_transpose"), [rate, rate])


# ---- rearrangements -----------------------------------------------------------------------

def _block(block_size):
    block_size = int(block_size)
    if block_size < 2:
        raise _errors.InvalidArgumentError(f"Value for attr 'block_size' of {block_size} must be at least minimum 2")
    return block_size


def _nhwc(x, op):
    if x.shape.rank != 4:
        raise ValueError(f"kiln.nn.{op}: input must be 4-D [batch, height, width, depth], got {x.shape}")
    if None in x.shape.as_list()[1:]:
        raise ValueError(f"kiln.nn.{op}: the input's height, width and depth must be known, got {x.shape}")
    return x.shape.as_list()[1:]


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Depth moved into b x b spatial blocks: out[n, h * b + i, w * b + j, c] = in[n, h, w, (i * b + j) * C' + c]."""
    refuse_channels_first("depth_to_space", data_format, ("NHWC",))
    x, b = _tensor(input), _block(block_size)
    h, w, c = _nhwc(x, "depth_to_space")
    if c % (b * b):
        raise _errors.InvalidArgumentError(f"Input depth dimension {c} should be divisible by: {b * b}")
    y = _ops.transpose(_ops.reshape(x, [-1, h, w, b, b, c // (b * b)]), [0, 1, 3, 2, 4, 5])
    return _ops.reshape(y, [-1, h * b, w * b, c // (b * b)])


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """The inverse of depth_to_space: each b x b block of pixels becomes one pixel of b * b * depth channels."""
    refuse_channels_first("space_to_depth", data_format, ("NHWC",))
    x, b = _tensor(input), _block(block_size)
    h, w, c = _nhwc(x, "space_to_depth")
    if h % b or w % b:
        raise _errors.InvalidArgumentError(f"Image width {w} and height {h} should be divisible by block_size: {b}")
    y = _ops.transpose(_ops.reshape(x, [-1, h // b, b, w // b, b, c]), [0, 1, 3, 2, 4, 5])
    return _ops.reshape(y, [-1, h // b, w // b, b * b * c])


# ---- depthwise_conv2d's gradients as functions ------------------------------------------------------

def _linear_gradient(forward, at, out_backprop):
    """d <forward(v), out_backprop> / d v at `at`: for a forward linear in v, its transpose applied to
    out_backprop (whatever `at` is)."""
    from .gradient import GradientTape

    with GradientTape() as tape:
        tape.watch(at)
        total = _ops.reduce_sum(_ops.multiply(forward(at), out_backprop))
    return tape.gradient(total, at)


def _int_dims(sizes, what, op):
    dims = _dims_list(sizes)
    if len(dims) != 4 or min(dims) < 0:
        raise ValueError(f"kiln.nn.{op}: {what} must be 4 non-negative ints, got {dims}")
    return dims


def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                    data_format="NHWC", dilations=None, name=None):
    """The gradient of depthwise_conv2d with respect to its input of shape input_sizes, given the output's
    gradient out_backprop."""
    refuse_channels_first("depthwise_conv2d_backprop_input", data_format, ("NHWC",))
    f, dy = _tensor(filter), _tensor(out_backprop)
    dims = _int_dims(input_sizes, "input_sizes", "depthwise_conv2d_backprop_input")
    stride = spatial(strides, 2, "strides", "depthwise_conv2d_backprop_input")
    rate = spatial(dilations, 2, "dilations", "depthwise_conv2d_backprop_input")
    pad = check_padding(padding, "depthwise_conv2d_backprop_input")
    return _linear_gradient(lambda v: _C.depthwise_conv2d(v, f, stride, pad, rate), _ops.zeros(dims, dy.dtype), dy)


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                     data_format="NHWC", dilations=None, name=None):
    """The gradient of depthwise_conv2d with respect to its filter of shape filter_sizes, given the output's
    gradient out_backprop."""
    refuse_channels_first("depthwise_conv2d_backprop_filter", data_format, ("NHWC",))
    x, dy = _tensor(input), _tensor(out_backprop)
    dims = _int_dims(filter_sizes, "filter_sizes", "depthwise_conv2d_backprop_filter")
    stride = spatial(strides, 2, "strides", "depthwise_conv2d_backprop_filter")
    rate = spatial(dilations, 2, "dilations", "depthwise_conv2d_backprop_filter")
    pad = check_padding(padding, "depthwise_conv2d_backprop_filter")
    return _linear_gradient(lambda v: _C.depthwise_conv2d(x, v, stride, pad, rate), _ops.zeros(dims, dy.dtype), dy)


# ---- space_to_batch -------------------------------------------------------------------------------

def space_to_batch(input, block_shape, paddings, name=None):  # noqa: A002
    """[batch, *spatial, *rest] padded by `paddings` ([M, 2]) and cut into block_shape ([M]) blocks, whose
    positions go to the batch: [prod(block_shape) * batch, *(padded spatial / block_shape), *rest], the batch
    index being (position in the block, row-major) * batch + b, as TF's SpaceToBatchND."""
    x = _tensor(input)
    blocks = [int(b) for b in _dims_list(block_shape)]
    pads = np.asarray(paddings.numpy() if hasattr(paddings, "numpy") else paddings, np.int64).reshape(-1, 2)
    m = len(blocks)
    if pads.shape[0] != m:
        raise ValueError(f"paddings must be [{m}, 2] for block_shape of {m} entries, got {pads.tolist()}")
    if min(blocks, default=1) < 1 or (pads < 0).any():
        raise _errors.InvalidArgumentError(f"block_shape must be positive and paddings non-negative, got "
                                           f"{blocks} and {pads.tolist()}")
    dims = x.shape.as_list()
    if None in dims[1:m + 1]:
        raise ValueError(f"kiln.nn.space_to_batch needs the spatial dims known, got {x.shape}")
    rest = dims[m + 1:]
    padded = _ops.pad(x, [[0, 0], *pads.tolist(), *[[0, 0]] * len(rest)])
    spatial_dims = [dims[1 + i] + int(pads[i].sum()) for i in range(m)]
    for size, b in zip(spatial_dims, blocks):
        if size % b:
            raise _errors.InvalidArgumentError(f"padded_shape {spatial_dims} must be divisible by block_shape "
                                               f"{blocks}")
    split = [d for size, b in zip(spatial_dims, blocks) for d in (size // b, b)]
    y = _ops.reshape(padded, static_dims([dims[0]], split, rest))
    # [batch, s1, b1, s2, b2, ..., rest] -> [b1, b2, ..., batch, s1, s2, ..., rest]
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, 1 + 2 * m +
                                                                                           len(rest)))
    y = _ops.transpose(y, order)
    return _ops.reshape(y, static_dims([None], [s // b for s, b in zip(spatial_dims, blocks)], rest))


def _batch_to_space(x, blocks, crops, spatial_dims, rest):
    """The inverse of space_to_batch (with crops where it padded): [prod(blocks) * batch, *spatial, *rest]
    back to [batch, *(spatial * blocks) - crops, *rest]."""
    m = len(blocks)
    y = _ops.reshape(x, static_dims(blocks, [None], spatial_dims, rest))
    # [b1, ..., bm, batch, s1, ..., sm, rest] -> [batch, s1, b1, ..., sm, bm, rest]
    order = [m] + [d for i in range(m) for d in (m + 1 + i, i)] + list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = _ops.reshape(_ops.transpose(y, order), static_dims([None], [s * b for s, b in zip(spatial_dims, blocks)],
                                                                rest))
    begin = [0] + [int(c[0]) for c in crops] + [0] * len(rest)
    size = [-1] + [s * b - int(c[0]) - int(c[1]) for s, b, c in zip(spatial_dims, blocks, crops)] + [-1] * len(rest)
    return _ops.slice(y, begin, size)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,  # noqa: A002
                        data_format=None):
    """op(input, num_spatial_dims, padding) computed with its windows dilated by dilation_rate: the input cut
    by space_to_batch into dilation_rate-strided sub-grids (padded as "SAME" asks, and to a multiple of the
    rate), op run on them with "VALID" padding, the results put back by the inverse."""
    refuse_channels_first("with_space_to_batch", data_format, ("NWC", "NHWC", "NDHWC"))
    x = _tensor(input)
    rates = [int(r) for r in _dims_list(dilation_rate)]
    m = len(rates)
    dims_spatial = list(range(1, m + 1)) if spatial_dims is None else [int(d) for d in spatial_dims]
    if dims_spatial != list(range(1, m + 1)):
        raise ValueError(f"kiln.nn.with_space_to_batch: spatial_dims must be 1..{m} (channels-last), got "
                         f"{dims_spatial}")
    if min(rates, default=1) < 1:
        raise ValueError(f"dilation_rate must be positive, got {rates}")
    padding = check_padding(padding, "with_space_to_batch")
    if max(rates, default=1) == 1:
        return op(x, m, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        extra = [(int(k) - 1) * r for k, r in zip(_dims_list(filter_shape), rates)]
        base = [[e // 2, e - e // 2] for e in extra]
    else:
        base = [[0, 0]] * m
    dims = x.shape.as_list()
    if None in dims[1:m + 1]:
        raise ValueError(f"kiln.nn.with_space_to_batch needs the spatial dims known, got {x.shape}")
    # pad the end further so every padded size is a multiple of its rate; crop that back afterwards
    ends = [(r - (s + b[0] + b[1]) % r) % r for s, b, r in zip(dims[1:m + 1], base, rates)]
    paddings = [[b[0], b[1] + e] for b, e in zip(base, ends)]
    y = op(space_to_batch(x, rates, paddings), m, "VALID")
    out_dims = y.shape.as_list()
    return _batch_to_space(y, rates, [[0, e] for e in ends], out_dims[1:m + 1], out_dims[m + 1:])
