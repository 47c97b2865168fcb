"""Keras' SeparableConv1D / SeparableConv2D (a depthwise convolution, then a 1x1 pointwise one, then the bias) and
Conv1DTranspose (Conv2DTranspose on one row). The 1-D layers run the 2-D engine ops on [batch, 1, steps, c]."""
from .. import _C
from ..tensor_shape import TensorShape
from . import activations as _activations
from . import constraints as _constraints
from . import initializers as _initializers
from . import regularizers as _regularizers
from ._layer import InputSpec, Layer
from ._serialization import serialize_keras_object


def _ints(value, n, name):
    out = (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)
    if len(out) == 1 and n > 1:
        out = out * n
    if len(out) != n or any(v <= 0 for v in out):
        raise ValueError(f"The `{name}` argument must be a tuple of {n} positive integers. Received: {name}={value}")
    return out


def _causal_pad(x, kernel_size, dilation):
    """Conv1D's padding="causal": (kernel_size - 1) * dilation zero steps at the start."""
    return _C.pad(x, [(0, 0), ((kernel_size - 1) * dilation, 0), (0, 0)], 0)


class _Depthwise(Layer):
    """The depthwise part shared by SeparableConv1D/2D and DepthwiseConv1D: the settings, the depthwise_kernel
    [*kernel_size, in, depth_multiplier] and the convolution (1-D: the 2-D op on one row, "causal" allowed)."""

    _rank = 2

    def __init__(self, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier, activation,
                 use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                 activity_regularizer, depthwise_constraint, bias_constraint, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        from .layers import _data_format
        n = self._rank
        if int(depth_multiplier) <= 0:
            raise ValueError("Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                             f"Received depth_multiplier={depth_multiplier}.")
        self.kernel_size = _ints(kernel_size, n, "kernel_size")
        self.strides = _ints(strides, n, "strides")
        self.dilation_rate = _ints(dilation_rate, n, "dilation_rate")
        padding = str(padding).lower()
        if padding not in ("valid", "same") + (("causal",) if n == 1 else ()):
            raise ValueError(f"The `padding` argument must be a list/tuple or one of \"valid\", \"same\" (or "
                             f"\"causal\", only for `Conv1D`). Received: {padding}")
        self.padding = padding
        self.data_format = _data_format(data_format, type(self).__name__)
        self.depth_multiplier = int(depth_multiplier)
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = _initializers.get(depthwise_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.depthwise_regularizer = _regularizers.get(depthwise_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.depthwise_constraint = _constraints.get(depthwise_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.input_spec = InputSpec(ndim=n + 2)
        self.depthwise_kernel = self.bias = None

    def _build_depthwise(self, input_shape):
        channels = TensorShape(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The input_shape received is "
                             f"{TensorShape(input_shape)}, where axis -1 (0-based) is the channel dimension, which "
                             "found to be `None`.")
        self.depthwise_kernel = self.add_weight("depthwise_kernel", [*self.kernel_size, channels,
                                                                     self.depth_multiplier],
                                                initializer=self.depthwise_initializer,
                                                regularizer=self.depthwise_regularizer,
                                                constraint=self.depthwise_constraint)
        self.input_spec = InputSpec(ndim=self._rank + 2, axes={-1: channels})
        return channels

    def _add_bias(self, size):
        if self.use_bias:
            self.bias = self.add_weight("bias", [size], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _convolve(self, inputs, after=None):
        """The depthwise convolution of inputs, then after(y) (the pointwise step) on the 2-D layout, then the bias
        and the activation."""
        if self._rank == 2:
            y = _C.depthwise_conv2d(inputs, self.depthwise_kernel, list(self.strides), self.padding.upper(),
                                    list(self.dilation_rate))
            y = after(y) if after else y
        else:
            x, padding = inputs, self.padding
            if padding == "causal":
                x, padding = _causal_pad(x, self.kernel_size[0], self.dilation_rate[0]), "valid"
            y = _C.depthwise_conv2d(_C.expand_dims(x, 1), _C.expand_dims(self.depthwise_kernel, 0),
                                    [1, self.strides[0]], padding.upper(), [1, self.dilation_rate[0]])
            y = _C.squeeze(after(y) if after else y, [1])
        if self.use_bias:
            y = _C.bias_add(y, self.bias)
        return self.activation(y)

    def _spatial_output(self, input_shape):
        from ._conv1d import _out_length
        s = TensorShape(input_shape).as_list()
        dims = [_out_length(s[i + 1], self.kernel_size[i], self.strides[i], self.padding, self.dilation_rate[i])
                for i in range(self._rank)]
        if 0 in dims:
            raise ValueError(f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. "
                             f"Consider increasing the input size. Received input shape {TensorShape(input_shape)} "
                             "which would produce output shape with a zero or negative value in a dimension.")
        return s, dims

    def get_config(self):
        config = super().get_config()
        ser = serialize_keras_object
        config.update(kernel_size=self.kernel_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format, dilation_rate=self.dilation_rate,
                      depth_multiplier=self.depth_multiplier, activation=_activations.serialize(self.activation),
                      use_bias=self.use_bias, depthwise_initializer=ser(self.depthwise_initializer),
                      bias_initializer=ser(self.bias_initializer), depthwise_regularizer=ser(self.depthwise_regularizer),
                      bias_regularizer=ser(self.bias_regularizer), activity_regularizer=ser(self.activity_regularizer),
                      depthwise_constraint=ser(self.depthwise_constraint), bias_constraint=ser(self.bias_constraint))
        return config


class _SeparableConv(_Depthwise):
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, **kwargs):
        # Keras' base Conv takes these too, and the separable convolution leaves them out (NASNet passes one).
        for unused in ("kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            kwargs.pop(unused, None)
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier, activation,
                         use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
        if int(filters) <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        self.filters = int(filters)
        self.pointwise_initializer = _initializers.get(pointwise_initializer)
        self.pointwise_regularizer = _regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = _constraints.get(pointwise_constraint)
        self.pointwise_kernel = None

    def build(self, input_shape):
        channels = self._build_depthwise(input_shape)
        self.pointwise_kernel = self.add_weight("pointwise_kernel",
                                                [1] * self._rank + [channels * self.depth_multiplier, self.filters],
                                                initializer=self.pointwise_initializer,
                                                regularizer=self.pointwise_regularizer,
                                                constraint=self.pointwise_constraint)
        self._add_bias(self.filters)

    def call(self, inputs):
        pointwise = self.pointwise_kernel if self._rank == 2 else _C.expand_dims(self.pointwise_kernel, 0)
        return self._convolve(inputs, lambda y: _C.conv2d(y, pointwise, [1, 1], "VALID", [1, 1]))

    def compute_output_shape(self, input_shape):
        s, dims = self._spatial_output(input_shape)
        return TensorShape([s[0], *dims, self.filters])

    def get_config(self):
        config = super().get_config()
        ser = serialize_keras_object
        config.update(filters=self.filters, groups=1, pointwise_initializer=ser(self.pointwise_initializer),
                      pointwise_regularizer=ser(self.pointwise_regularizer),
                      pointwise_constraint=ser(self.pointwise_constraint))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("groups", None)
        return cls(**config)


class SeparableConv2D(_SeparableConv):
    """Depthwise [kh, kw, in, depth_multiplier] then pointwise [1, 1, in * depth_multiplier, filters] convolution."""
    _rank = 2


class SeparableConv1D(_SeparableConv):
    """Depthwise [k, in, depth_multiplier] then pointwise [1, in * depth_multiplier, filters] convolution
    (padding "causal" too)."""
    _rank = 1


SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D


class Conv1DTranspose(Layer):
    """The transpose of Conv1D: kernel [k, filters, in]; output length in*stride ("same") or
    in*stride + max(k_dilated - stride, 0) ("valid"); with output_padding p, (in - 1)*stride + k_dilated - 2*pad + p."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        from .layers import _data_format, _padding, _set_penalties
        _set_penalties(self, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if int(filters) <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        self.filters = int(filters)
        self.kernel_size = _ints(kernel_size, 1, "kernel_size")
        self.strides = _ints(strides, 1, "strides")
        self.dilation_rate = _ints(dilation_rate, 1, "dilation_rate")
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, "Conv1DTranspose")
        self.output_padding = None
        if output_padding is not None:
            pad = (int(output_padding),) if isinstance(output_padding, int) else tuple(int(p) for p in output_padding)
            if len(pad) != 1 or pad[0] < 0:
                raise ValueError(f"The `output_padding` argument must be a tuple of 1 non-negative integers. "
                                 f"Received: output_padding={output_padding!r}")
            if pad[0] >= self.strides[0]:
                raise ValueError(f"Stride {self.strides} must be greater than output padding {pad}. Received "
                                 f"strides={self.strides}, output_padding={pad}.")
            self.output_padding = pad
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.input_spec = InputSpec(ndim=3)
        self.kernel = self.bias = None

    def build(self, input_shape):
        channels = TensorShape(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs to `Conv1DTranspose` should be defined. Found "
                             "`None`.")
        self.kernel = self.add_weight("kernel", [self.kernel_size[0], self.filters, channels],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=3, axes={-1: channels})
        self.built = True

    def _length(self, length):
        if length is None:
            return None
        stride = self.strides[0]
        kernel = (self.kernel_size[0] - 1) * self.dilation_rate[0] + 1
        if self.output_padding is not None:
            pad = kernel // 2 if self.padding == "same" else 0
            return (length - 1) * stride + kernel - 2 * pad + self.output_padding[0]
        if self.padding == "same":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def call(self, inputs):
        s = TensorShape(inputs.shape).as_list()
        out = [-1 if s[0] is None else s[0], 1, self._length(s[1]), self.filters]
        y = _C.conv2d_transpose(_C.expand_dims(inputs, 1), _C.expand_dims(self.kernel, 0), out,
                                [1, self.strides[0]], self.padding.upper(), [1, self.dilation_rate[0]])
        y = _C.squeeze(y, [1])
        if self.use_bias:
            y = _C.bias_add(y, self.bias)
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], self._length(s[1]), self.filters])

    def get_config(self):
        return dict(super().get_config(), **transpose_config(self))


def transpose_config(layer):
    """The config entries of Keras' transposed convolutions (Conv1DTranspose, Conv3DTranspose)."""
    from .layers import _penalty_config
    config = dict(filters=layer.filters, kernel_size=layer.kernel_size, strides=layer.strides, padding=layer.padding,
                  output_padding=layer.output_padding, data_format=layer.data_format,
                  dilation_rate=layer.dilation_rate, activation=_activations.serialize(layer.activation),
                  use_bias=layer.use_bias)
    config.update(_penalty_config(layer))
    return config


Convolution1DTranspose = Conv1DTranspose


class DepthwiseConv1D(_Depthwise):
    """Each input channel through its own depth_multiplier filters over the steps: depthwise_kernel
    [k, in, depth_multiplier], bias [in * depth_multiplier] (output channel c * depth_multiplier + m)."""

    _rank = 1

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1, data_format=None, dilation_rate=1,
                 activation=None, use_bias=True, depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier, activation,
                         use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)

    def build(self, input_shape):
        self._add_bias(self._build_depthwise(input_shape) * self.depth_multiplier)

    def call(self, inputs):
        return self._convolve(inputs)

    def compute_output_shape(self, input_shape):
        s, dims = self._spatial_output(input_shape)
        return TensorShape([s[0], *dims, None if s[-1] is None else s[-1] * self.depth_multiplier])
