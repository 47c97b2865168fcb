"""tf.nn's poolings beyond the 2-D ones: 1-D as the 2-D pooling of one row, 3-D as the 2-D pooling of each
depth frame followed by a max (or mean) over the frames each window covers; the N-D dispatchers (max_pool,
avg_pool, pool); max_pool_with_argmax. A "same" window leaves the padding out of the max and of the mean's
count, as TF's kernels."""
import collections

import numpy as np

from . import _C, _ops, dtypes as _dtypes
from ._array_ops import _tensor
from ._nn_conv import check_padding, explicit_padding, refuse_channels_first, spatial, static_dims, window_geometry


def _max_padding(input, padding, name):  # noqa: A002
    """TF's max poolings take explicit paddings too: -inf around the input, then "VALID"."""
    return explicit_padding(input, padding, name, float("-inf"))


def _pool1d(op, name, input, ksize, strides, padding, data_format):  # noqa: A002
    refuse_channels_first(name, data_format, ("NWC",))
    if op is _C.max_pool2d:
        input, padding = _max_padding(input, padding, name)
    y = op(_ops.expand_dims(_tensor(input), 1), [1] + spatial(ksize, 1, "ksize", name),
           [1] + spatial(strides, 1, "strides", name), check_padding(padding, name))
    return _ops.squeeze(y, [1])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The max over each window of [batch, width, channels]."""
    return _pool1d(_C.max_pool2d, "max_pool1d", input, ksize, strides, padding, data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The mean over each window of [batch, width, channels]."""
    return _pool1d(_C.avg_pool2d, "avg_pool1d", input, ksize, strides, padding, data_format)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    refuse_channels_first("max_pool2d", data_format, ("NHWC",))
    input, padding = _max_padding(input, padding, "max_pool2d")
    return _C.max_pool2d(input, spatial(ksize, 2, "ksize", "max_pool2d"), spatial(strides, 2, "strides", "max_pool2d"),
                         check_padding(padding, "max_pool2d"))


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    refuse_channels_first("avg_pool2d", data_format, ("NHWC",))
    return _C.avg_pool2d(input, spatial(ksize, 2, "ksize", "avg_pool2d"), spatial(strides, 2, "strides", "avg_pool2d"),
                         check_padding(padding, "avg_pool2d"))


def _pool3d(is_max, name, input, ksize, strides, padding, data_format):  # noqa: A002
    refuse_channels_first(name, data_format, ("NDHWC",))
    if is_max:
        input, padding = _max_padding(input, padding, name)
    x = _tensor(input)
    if x.shape.rank != 5 or x.shape[1] is None:
        raise ValueError(f"kiln.nn.{name}: input must be 5-D [batch, depth, height, width, channels] with a known "
                         f"depth, got {x.shape}")
    kd, kh, kw = spatial(ksize, 3, "ksize", name)
    sd, sh, sw = spatial(strides, 3, "strides", name)
    padding = check_padding(padding, name)
    depth = x.shape[1]
    planes = (_C.max_pool2d if is_max else _C.avg_pool2d)(
        _ops.reshape(x, static_dims([None], x.shape.as_list()[2:])), [kh, kw], [sh, sw], padding)
    planes = _ops.reshape(planes, static_dims([None, depth], planes.shape.as_list()[1:]))
    out_depth, before = window_geometry(depth, kd, sd, 1, padding)
    frames = np.arange(out_depth)[:, None] * sd + np.arange(kd)[None, :] - before  # [out_depth, kd]
    valid = (frames >= 0) & (frames < depth)
    total = None
    for a in range(kd):
        picked = _ops.gather(planes, _ops.constant(np.clip(frames[:, a], 0, depth - 1).astype(np.int32)), axis=1)
        if not valid[:, a].all():
            mask = _ops.constant(valid[:, a].reshape(1, -1, 1, 1, 1))
            filler = _ops.cast(_ops.constant(float("-inf") if is_max else 0.0), picked.dtype)
            picked = _ops.where(mask, picked, filler)
        if total is None:
            total = picked
        else:
            total = _ops.maximum(total, picked) if is_max else _ops.add(total, picked)
    if is_max:
        return total
    # Each 2-D mean already counts only its window's real pixels, the same for every frame: so the 3-D mean is
    # the mean of the frames' means over the real frames.
    count = valid.sum(axis=1).astype(np.float64).reshape(1, -1, 1, 1, 1)
    return _ops.divide(total, _ops.cast(_ops.constant(count), total.dtype))


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The max over each window of [batch, depth, height, width, channels]."""
    return _pool3d(True, "max_pool3d", input, ksize, strides, padding, data_format)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The mean over each window of [batch, depth, height, width, channels]."""
    return _pool3d(False, "avg_pool3d", input, ksize, strides, padding, data_format)


_BY_RANK = {3: (max_pool1d, avg_pool1d), 4: (max_pool2d, avg_pool2d), 5: (max_pool3d, avg_pool3d)}


def _by_rank(input, name):  # noqa: A002
    rank = _tensor(input).shape.rank
    if rank not in _BY_RANK:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={_tensor(input).shape} "
                         f"of rank {rank}")
    return _BY_RANK[rank]


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """max_pool1d, max_pool2d or max_pool3d by the input's rank (3, 4 or 5)."""
    return _by_rank(input, "max_pool")[0](input, ksize, strides, padding, _default_format(input, data_format))


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """avg_pool1d, avg_pool2d or avg_pool3d by the input's rank (3, 4 or 5)."""
    return _by_rank(input, "avg_pool")[1](input, ksize, strides, padding, _default_format(input, data_format))


def _default_format(input, data_format):  # noqa: A002
    if data_format is not None:
        return data_format
    return {3: "NWC", 4: "NHWC", 5: "NDHWC"}[_tensor(input).shape.rank]


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,  # noqa: A002
         dilations=None, name=None):
    """max or average pooling over windows of window_shape (1, 2 or 3 spatial dims). Dilated windows (1 or 2
    dims, stride 1) read as TF's space-to-batch form reads them: "SAME" padding is zeros that take part in the
    max and the mean."""
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    n = len(list(window_shape))
    if n not in (1, 2, 3):
        raise ValueError(f"kiln.nn.pool: window_shape must have 1, 2 or 3 entries, got {list(window_shape)}")
    rank = _tensor(input).shape.rank
    if rank != n + 2:
        raise ValueError(f"kiln.nn.pool: input must have rank {n + 2} for a window of {n} dims, got rank {rank}")
    window = spatial(window_shape, n, "window_shape", "pool")
    stride = spatial(strides, n, "strides", "pool")
    if any(s > k for s, k in zip(stride, window)):
        raise ValueError("strides > window_shape not supported due to inconsistency between CPU and GPU "
                         "implementations")
    rates = spatial(dilations, n, "dilations", "pool")
    data_format = _default_format(input, data_format)
    if max(rates) == 1:
        return _BY_RANK[n + 2][0 if pooling_type == "MAX" else 1](input, window, stride, padding, data_format)
    if max(stride) > 1:
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    if n == 3:
        raise ValueError("kiln.nn.pool: dilated 3-D pooling is not supported")
    refuse_channels_first("pool", data_format, ("NWC", "NHWC"))
    x = _tensor(input)
    if n == 1:
        x, window, rates = _ops.expand_dims(x, 1), [1] + window, [1] + rates
    found, _ = windows(x, window, (1, 1), rates, check_padding(padding, "pool"), 0.0)
    y = (_ops.reduce_max if pooling_type == "MAX" else _ops.reduce_mean)(found, axis=3)
    return _ops.squeeze(y, [1]) if n == 1 else y


def windows(x, ksize, strides, rates, padding, fill):
    """Every window of a 4-D NHWC x as [n, out_h, out_w, kh * kw, c] (taps in row-major order), positions
    outside x reading `fill`; and the padding before (top, left). Gathers at NumPy-computed positions, so it
    traces and differentiates."""
    n, h, w, c = x.shape.as_list()
    (kh, kw), (sh, sw), (rh, rw) = ksize, strides, rates
    out_h, top = window_geometry(h, kh, sh, rh, padding)
    out_w, left = window_geometry(w, kw, sw, rw, padding)
    bottom = max(0, (out_h - 1) * sh + (kh - 1) * rh + 1 - h - top)
    right = max(0, (out_w - 1) * sw + (kw - 1) * rw + 1 - w - left)
    padded = _ops.pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]], constant_values=fill)
    rows = np.arange(out_h)[:, None] * sh + np.arange(kh)[None, :] * rh  # [out_h, kh] in padded coordinates
    cols = np.arange(out_w)[:, None] * sw + np.arange(kw)[None, :] * rw
    found = _ops.gather(_ops.gather(padded, _ops.constant(rows.reshape(-1).astype(np.int32)), axis=1),
                        _ops.constant(cols.reshape(-1).astype(np.int32)), axis=2)
    found = _ops.reshape(found, static_dims([n, out_h, kh, out_w, kw, c]))
    found = _ops.reshape(_ops.transpose(found, [0, 1, 3, 2, 4, 5]), static_dims([n, out_h, out_w, kh * kw, c]))
    return found, (top, left)


_WithArgmax = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", output_dtype=_dtypes.int64,  # noqa: A002
                         include_batch_in_index=False, name=None):
    """(max_pool2d, the flat index of each max): ((b * height + y) * width + x) * channels + c, b left out
    unless include_batch_in_index; the first of equal maxima in the window's row-major order wins."""
    refuse_channels_first("max_pool_with_argmax", data_format, ("NHWC",))
    x = _tensor(input)
    if x.shape.rank != 4 or None in x.shape.as_list():
        raise ValueError(f"kiln.nn.max_pool_with_argmax: input must be 4-D with a known shape, got {x.shape}")
    n, h, w, c = x.shape.as_list()
    (kh, kw), (sh, sw) = spatial(ksize, 2, "ksize", "max_pool_with_argmax"), spatial(
        strides, 2, "strides", "max_pool_with_argmax")
    padding = check_padding(padding, "max_pool_with_argmax")
    values = _C.max_pool2d(x, [kh, kw], [sh, sw], padding)
    # The first max of each window (padding reads as -inf, so it never wins over a real pixel).
    found, (top, left) = windows(_ops.stop_gradient(x), (kh, kw), (sh, sw), (1, 1), padding, float("-inf"))
    out_h, out_w = found.shape[1], found.shape[2]
    best = _ops.cast(_ops.argmax(found, axis=3), _dtypes.int64)  # [n, out_h, out_w, c]
    dy, dx = _ops.floordiv(best, kw), _ops.floormod(best, kw)
    y = _ops.add(_ops.constant((np.arange(out_h) * sh - top).reshape(1, -1, 1, 1), _dtypes.int64), dy)
    xx = _ops.add(_ops.constant((np.arange(out_w) * sw - left).reshape(1, 1, -1, 1), _dtypes.int64), dx)
    index = _ops.add(_ops.multiply(_ops.add(_ops.multiply(y, w), xx), c),
                     _ops.constant(np.arange(c).reshape(1, 1, 1, -1), _dtypes.int64))
    if include_batch_in_index:
        index = _ops.add(index, _ops.constant((np.arange(n) * h * w * c).reshape(-1, 1, 1, 1), _dtypes.int64))
    return _WithArgmax(values, _ops.cast(index, output_dtype))
