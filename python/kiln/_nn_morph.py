"""tf.nn.dilation2d and erosion2d, grayscale morphology per channel: the max (min) over each window of the input
plus (minus) the filter, positions outside the input left out. Composed of gathers and a reduction, so they
trace and differentiate; the gradient goes to every tied extremum as reduce_max's does, where TF's kernel
picks the first."""
from . import _ops
from ._array_ops import _tensor, reverse
from ._nn_conv import check_padding, refuse_channels_first, spatial
from ._nn_pool import windows


def _window_args(op, filters, strides, padding, data_format, dilations):
    refuse_channels_first(op, data_format, ("NHWC",))
    f = _tensor(filters)
    if f.shape.rank != 3:
        raise ValueError(f"kiln.nn.{op}: filters must be 3-D [filter_height, filter_width, depth], got {f.shape}")
    return (f, spatial(strides, 2, "strides", op), check_padding(padding, op),
            spatial(dilations, 2, "dilations", op))


def dilation2d(input, filters, strides, padding, data_format, dilations, name=None):  # noqa: A002
    """out[b, y, x, c] = max over (i, j) of input[b, y * sy + i * ry, x * sx + j * rx, c] + filters[i, j, c]."""
    x = _tensor(input)
    f, strides, padding, rates = _window_args("dilation2d", filters, strides, padding, data_format, dilations)
    if x.shape.rank != 4 or None in x.shape.as_list()[1:]:
        raise ValueError(f"kiln.nn.dilation2d: input must be 4-D NHWC with known height, width and depth, got "
                         f"{x.shape}")
    kh, kw, c = f.shape.as_list()
    found, _ = windows(x, (kh, kw), strides, rates, padding, float("-inf"))
    return _ops.reduce_max(_ops.add(found, _ops.reshape(f, [kh * kw, c])), axis=3)


def erosion2d(value, filters, strides, padding, data_format, dilations, name=None):
    """-dilation2d(-value, the filters mirrored): out[b, y, x, c] = min over (i, j) of
    value[b, y * sy + i * ry, x * sx + j * rx, c] - filters[kh - 1 - i, kw - 1 - j, c], as TF computes it."""
    f = _tensor(filters)
    mirrored = reverse(f, [0, 1]) if f.shape.rank == 3 else f
    return _ops.negative(dilation2d(_ops.negative(_tensor(value)), mirrored, strides, padding, data_format,
                                    dilations))
