"""Keras' 3-D layers on [batch, depth, height, width, channels]: Conv3D, MaxPooling3D, AveragePooling3D,
UpSampling3D, ZeroPadding3D and Cropping3D.

The engine has 2-D kernels only, so a 3-D window is split into its depth taps: each tap is a 2-D convolution (or
pooling) of the depth frames it reads, folded into the batch ([batch * out_depth, h, w, c]), and the taps are
summed (or maxed / averaged). Frames a "same" window reads outside the volume count as zeros for Conv3D and are
left out of the max and the mean for the poolings, as TF's ops do."""
import numpy as np

from .. import _C
from ..tensor_shape import TensorShape
from . import activations as _activations
from . import initializers as _initializers
from ._layer import InputSpec, Layer
from ._conv1d import _out_length
from ._reshaping import _crop, _repeat_axis


def _triple(value, name, positive=True):
    if isinstance(value, int):
        out = (value,) * 3
    else:
        out = tuple(int(v) for v in value)
    if len(out) != 3:
        raise ValueError(f"The `{name}` argument must be a tuple of 3 integers. Received: {name}={value}")
    if positive and any(v <= 0 for v in out):
        raise ValueError(f"The `{name}` argument must be a tuple of 3 positive integers. Received: {name}={value}")
    return out


def _depth_taps(depth, window, stride, padding, dilation=1):
    """For each tap of the depth window: the frame each output position reads (clamped into the volume) and
    whether that frame is inside it."""
    out = _out_length(depth, window, stride, padding, dilation)
    before = 0
    if padding == "same":
        before = max((out - 1) * stride + (window - 1) * dilation + 1 - depth, 0) // 2
    starts = np.arange(out) * stride - before
    taps = []
    for i in range(window):
        frames = starts + i * dilation
        valid = (frames >= 0) & (frames < depth)
        taps.append((np.clip(frames, 0, depth - 1).astype(np.int32), valid))
    return out, taps


def _frames_2d(x, frames):
    """The depth frames `frames` of x, folded into the batch: [batch * len(frames), h, w, c]."""
    picked = _C.gather(x, _C.constant(frames, None), 1)
    s = TensorShape(x.shape).as_list()
    return _C.reshape(picked, [-1, s[2], s[3], s[4]])


def _unfold(y, out_depth):
    s = TensorShape(y.shape).as_list()
    return _C.reshape(y, [-1, out_depth, s[1], s[2], s[3]])


def _mask(valid, dtype):
    return _C.cast(_C.constant(valid.astype(np.float32).reshape(1, -1, 1, 1, 1), None), dtype._enum)


def _check_rank5(layer, shape):
    s = TensorShape(shape)
    if s.rank != 5:
        raise ValueError(f'Input 0 of layer "{layer.name}" is incompatible with the layer: expected ndim=5, found '
                         f"ndim={s.rank}. Full shape received: {s}")
    return s.as_list()


def conv3d(inputs, kernel, strides, padding, dilation_rate=(1, 1, 1)):
    """[batch, depth, h, w, in] with kernel [kd, kh, kw, in, out]: per depth tap, a 2-D convolution of the frames
    it reads (folded into the batch), the taps summed (frames outside the volume masked out)."""
    s = TensorShape(inputs.shape).as_list()
    kernel_size = TensorShape(kernel.shape).as_list()[:3]
    filters = TensorShape(kernel.shape)[4]
    out_depth, taps = _depth_taps(s[1], kernel_size[0], strides[0], padding, dilation_rate[0])
    total = None
    for i, (frames, valid) in enumerate(taps):
        if not valid.any():
            continue
        tap = _C.reshape(_C.slice(kernel, [i, 0, 0, 0, 0], [1, -1, -1, -1, -1]), [*kernel_size[1:], s[4], filters])
        y = _C.conv2d(_frames_2d(inputs, frames), tap, list(strides[1:]), padding.upper(), list(dilation_rate[1:]))
        y = _unfold(y, out_depth)
        if not valid.all():
            y = _C.multiply(y, _mask(valid, y.dtype))
        total = y if total is None else _C.add(total, y)
    return total


class Conv3D(Layer):
    """activation(conv3d(inputs, kernel) + bias): kernel [kd, kh, kw, in, filters], bias [filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        from .layers import _data_format, _padding, _set_penalties
        _set_penalties(self, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if int(filters) <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        if int(groups) != 1:
            raise NotImplementedError("kiln.keras.layers.Conv3D: groups > 1 is not supported")
        self.filters = int(filters)
        self.groups = 1
        self.kernel_size = _triple(kernel_size, "kernel_size")
        self.strides = _triple(strides, "strides")
        self.dilation_rate = _triple(dilation_rate, "dilation_rate")
        if self.dilation_rate != (1, 1, 1) and self.strides != (1, 1, 1):
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, "Conv3D")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.input_spec = InputSpec(ndim=5)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        channels = TensorShape(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The input_shape received is "
                             f"{TensorShape(input_shape)}, where axis -1 (0-based) is the channel dimension, which "
                             "found to be `None`.")
        self.kernel = self.add_weight("kernel", [*self.kernel_size, channels, self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=5, axes={-1: channels})
        self.built = True

    def call(self, inputs):
        s = _check_rank5(self, inputs.shape)
        if s[1] is None:
            raise ValueError(f"{self.name}: the input depth must be known")
        total = conv3d(inputs, self.kernel, self.strides, self.padding, self.dilation_rate)
        if self.use_bias:
            total = _C.bias_add(total, self.bias)
        return self.activation(total)

    def compute_output_shape(self, input_shape):
        s = _check_rank5(self, input_shape)
        dims = [_out_length(s[i + 1], self.kernel_size[i], self.strides[i], self.padding, self.dilation_rate[i])
                for i in range(3)]
        if 0 in dims:
            raise ValueError(f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. "
                             f"Consider increasing the input size. Received input shape {TensorShape(input_shape)} "
                             "which would produce output shape with a zero or negative value in a dimension.")
        return TensorShape([s[0], *dims, self.filters])

    def get_config(self):
        from .layers import _penalty_config
        config = super().get_config()
        config.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format, dilation_rate=self.dilation_rate, groups=self.groups,
                      activation=_activations.serialize(self.activation), use_bias=self.use_bias)
        config.update(_penalty_config(self))
        return config


Convolution3D = Conv3D


class _Pooling3D(Layer):
    _max = True

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format, _padding
        self.pool_size = _triple(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _triple(strides, "strides")
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, type(self).__name__)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        s = _check_rank5(self, inputs.shape)
        if s[1] is None:
            raise ValueError(f"{self.name}: the input depth must be known")
        op = _C.max_pool2d if self._max else _C.avg_pool2d
        out_depth, taps = _depth_taps(s[1], self.pool_size[0], self.strides[0], self.padding)
        # Pool each frame over height and width once, then combine the frames of each depth window.
        planes = op(_C.reshape(inputs, [-1, s[2], s[3], s[4]]), list(self.pool_size[1:]), list(self.strides[1:]),
                    self.padding.upper())
        p = TensorShape(planes.shape).as_list()
        planes = _C.reshape(planes, [-1, s[1], p[1], p[2], p[3]])
        count = np.zeros(out_depth)
        total = None
        for frames, valid in taps:
            y = _C.gather(planes, _C.constant(frames, None), 1)
            if self._max:
                if not valid.all():
                    y = _C.where(_C.constant(valid.reshape(1, -1, 1, 1, 1), None), y, float("-inf"))
                total = y if total is None else _C.maximum(total, y)
            else:
                if not valid.all():
                    y = _C.multiply(y, _mask(valid, y.dtype))
                total = y if total is None else _C.add(total, y)
                count += valid
        if not self._max:
            total = _C.divide(total, _C.cast(_C.constant(count.reshape(1, -1, 1, 1, 1), None), total.dtype._enum))
        return total

    def compute_output_shape(self, input_shape):
        s = _check_rank5(self, input_shape)
        dims = [_out_length(s[i + 1], self.pool_size[i], self.strides[i], self.padding) for i in range(3)]
        if 0 in dims:
            raise ValueError(f"Computed output size would be negative or zero in {self.name}: input shape "
                             f"{TensorShape(input_shape)}, pool_size {self.pool_size}, padding '{self.padding}'")
        return TensorShape([s[0], *dims, s[4]])

    def get_config(self):
        config = super().get_config()
        config.update(pool_size=self.pool_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format)
        return config


class MaxPooling3D(_Pooling3D):
    """Max over pool_size windows of the volume (strides default to pool_size)."""
    _max = True


class AveragePooling3D(_Pooling3D):
    """Mean over pool_size windows of the volume ("same": over the window's part inside the volume)."""
    _max = False


MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D


def _pairs3(value, name):
    """3-D padding or cropping: an int, three ints (symmetric per axis) or three pairs."""
    if isinstance(value, int):
        return ((value, value),) * 3
    value = tuple(value)
    if len(value) != 3:
        raise ValueError(f"`{name}` should have 3 elements. Received: {name}={value}.")
    out = []
    for v in value:
        pair = (int(v), int(v)) if isinstance(v, int) else tuple(int(u) for u in v)
        if len(pair) != 2:
            raise ValueError(f"`{name}[{len(out)}]` should have two elements. Received: {name}={value}.")
        out.append(pair)
    return tuple(out)


class UpSampling3D(Layer):
    """Each voxel repeated size[0] x size[1] x size[2] times (nearest)."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "UpSampling3D")
        self.size = _triple(size, "size")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        x = inputs
        for axis in range(3):
            x = _repeat_axis(x, axis + 1, self.size[axis], TensorShape(x.shape).as_list())
        return x

    def compute_output_shape(self, input_shape):
        s = _check_rank5(self, input_shape)
        return TensorShape([s[0]] + [None if s[i + 1] is None else s[i + 1] * self.size[i] for i in range(3)] +
                           [s[4]])

    def get_config(self):
        config = super().get_config()
        config.update(size=self.size, data_format=self.data_format)
        return config


class ZeroPadding3D(Layer):
    """Zeros around the three spatial axes: an int, three ints, or three (before, after) pairs."""

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "ZeroPadding3D")
        self.padding = _pairs3(padding, "padding")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        return _C.pad(inputs, [(0, 0), *self.padding, (0, 0)], 0)

    def compute_output_shape(self, input_shape):
        s = _check_rank5(self, input_shape)
        return TensorShape([s[0]] + [None if s[i + 1] is None else s[i + 1] + sum(self.padding[i]) for i in range(3)]
                           + [s[4]])

    def get_config(self):
        config = super().get_config()
        config.update(padding=self.padding, data_format=self.data_format)
        return config


class Cropping3D(Layer):
    """Drops voxels at the borders of the three spatial axes: an int, three ints, or three (before, after) pairs."""

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "Cropping3D")
        self.cropping = _pairs3(cropping, "cropping")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        x = inputs
        for axis in range(3):
            x = _crop(x, axis + 1, *self.cropping[axis], TensorShape(x.shape).as_list())
        return x

    def compute_output_shape(self, input_shape):
        s = _check_rank5(self, input_shape)
        dims = [None if s[i + 1] is None else s[i + 1] - sum(self.cropping[i]) for i in range(3)]
        if any(d is not None and d <= 0 for d in dims):
            raise ValueError("`cropping` parameter of `Cropping3D` layer must be smaller than the input size. "
                             f"Received: inputs.shape={tuple(s)}, and cropping={self.cropping}")
        return TensorShape([s[0], *dims, s[4]])

    def get_config(self):
        config = super().get_config()
        config.update(cropping=self.cropping, data_format=self.data_format)
        return config


__all__ = ["Conv3D", "Convolution3D", "MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D", "UpSampling3D",
           "ZeroPadding3D", "Cropping3D"]
