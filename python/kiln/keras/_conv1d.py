"""Keras' 1-D convolution and pooling layers on [batch, steps, channels]: computed as the 2-D ops on
[batch, 1, steps, channels] (one row), so they use the same engine kernels and gradients as Conv2D and the
2-D poolings. Conv1D's padding="causal" pads (kernel_size - 1) * dilation steps at the start."""
from .. import _C
from ..tensor_shape import TensorShape
from . import activations as _activations
from . import constraints as _constraints
from . import initializers as _initializers
from . import regularizers as _regularizers
from ._layer import InputSpec, Layer
from ._serialization import serialize_keras_object


def _one(value, name):
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError(f"The `{name}` argument must be a tuple of 1 integers. Received: {name}={value}")
        value = value[0]
    value = int(value)
    if value <= 0:
        raise ValueError(f"The `{name}` argument must be a positive integer. Received: {name}={value}")
    return value


def _out_length(length, window, stride, padding, dilation=1):
    if length is None:
        return None
    if padding in ("same", "causal"):
        return (length + stride - 1) // stride if padding == "same" else (length - 1) // stride + 1
    effective = (window - 1) * dilation + 1
    return max(0, (length - effective) // stride + 1)


class Conv1D(Layer):
    """activation(conv1d(inputs, kernel) + bias): kernel [kernel_size, in, filters], bias [filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        from .layers import _data_format
        if int(filters) <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        if int(groups) != 1:
            raise NotImplementedError("kiln.keras.layers.Conv1D: groups > 1 is not supported")
        self.filters = int(filters)
        self.groups = 1
        self.kernel_size = (_one(kernel_size, "kernel_size"),)
        self.strides = (_one(strides, "strides"),)
        self.dilation_rate = (_one(dilation_rate, "dilation_rate"),)
        padding = str(padding).lower()
        if padding not in ("valid", "same", "causal"):
            raise ValueError(f"The `padding` argument must be a list/tuple or one of \"valid\", \"same\" (or "
                             f"\"causal\", only for `Conv1D`). Received: {padding}")
        self.padding = padding
        self.data_format = _data_format(data_format, "Conv1D")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel_regularizer = _regularizers.get(kernel_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.input_spec = InputSpec(ndim=3)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        s = TensorShape(input_shape)
        channels = s[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The input_shape received is "
                             f"{s}, where axis -1 (0-based) is the channel dimension, which found to be `None`.")
        self.kernel = self.add_weight("kernel", [self.kernel_size[0], channels, self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=3, axes={-1: channels})
        self.built = True

    def call(self, inputs):
        x = inputs
        padding = self.padding
        if padding == "causal":
            x = _C.pad(x, [(0, 0), ((self.kernel_size[0] - 1) * self.dilation_rate[0], 0), (0, 0)], 0)
            padding = "valid"
        y = _C.conv2d(_C.expand_dims(x, 1), _C.expand_dims(self.kernel, 0), [1, self.strides[0]], padding.upper(),
                      [1, self.dilation_rate[0]])
        y = _C.squeeze(y, [1])
        if self.use_bias:
            y = _C.bias_add(y, self.bias)
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        steps = _out_length(s[1], self.kernel_size[0], self.strides[0], self.padding, self.dilation_rate[0])
        if steps == 0:
            raise ValueError(f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. "
                             f"Consider increasing the input size. Received input shape {s} which would produce "
                             "output shape with a zero or negative value in a dimension.")
        return TensorShape([s[0], steps, self.filters])

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format, dilation_rate=self.dilation_rate, groups=self.groups,
                      activation=_activations.serialize(self.activation), use_bias=self.use_bias,
                      kernel_initializer=serialize_keras_object(self.kernel_initializer),
                      bias_initializer=serialize_keras_object(self.bias_initializer),
                      kernel_regularizer=serialize_keras_object(self.kernel_regularizer),
                      bias_regularizer=serialize_keras_object(self.bias_regularizer),
                      activity_regularizer=serialize_keras_object(self.activity_regularizer),
                      kernel_constraint=serialize_keras_object(self.kernel_constraint),
                      bias_constraint=serialize_keras_object(self.bias_constraint))
        return config


Convolution1D = Conv1D


class _Pooling1D(Layer):
    _op = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format="channels_last", **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format, _padding
        self.pool_size = (_one(pool_size, "pool_size"),)
        self.strides = self.pool_size if strides is None else (_one(strides, "strides"),)
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, type(self).__name__)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        y = type(self)._op(_C.expand_dims(inputs, 1), [1, self.pool_size[0]], [1, self.strides[0]],
                           self.padding.upper())
        return _C.squeeze(y, [1])

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        steps = _out_length(s[1], self.pool_size[0], self.strides[0], self.padding)
        if steps == 0:
            raise ValueError(f"Computed output size would be negative or zero in {self.name}: input shape {s}, "
                             f"pool_size {self.pool_size}, padding '{self.padding}'")
        return TensorShape([s[0], steps, s[2]])

    def get_config(self):
        config = super().get_config()
        config.update(pool_size=self.pool_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format)
        return config


class MaxPooling1D(_Pooling1D):
    """Max over windows of pool_size steps (strides default to pool_size)."""
    _op = staticmethod(_C.max_pool2d)


class AveragePooling1D(_Pooling1D):
    """Mean over windows of pool_size steps ("same": over the steps inside the input, as TF)."""
    _op = staticmethod(_C.avg_pool2d)


class GlobalMaxPooling1D(Layer):
    """The max of each feature over the steps."""

    def __init__(self, data_format="channels_last", keepdims=False, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "GlobalMaxPooling1D")
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _C.reduce_max(inputs, [1], self.keepdims)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        return TensorShape([s[0], 1, s[2]] if self.keepdims else [s[0], s[2]])

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, keepdims=self.keepdims)
        return config


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D
