"""kiln.keras.layers: Keras' core layers with TF's argument names and defaults. Images are
channels_last (NHWC) and convolution kernels HWIO, as in TensorFlow. Each layer computes with the
same engine ops as the C++ kiln::nn layer of the same name, so a traced step fuses the same way
(matmul/conv + bias + relu)."""
from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from . import activations as _activations
from . import initializers as _initializers
from ._layer import InputSpec, Layer, Input, InputLayer, KerasTensor, _check_unsupported, _to_tensor  # noqa: F401
from ._masking import set_mask, weights_from_mask
from ._normalization import BatchNormalization, LayerNormalization  # noqa: F401
from ._recurrent import RNN, SimpleRNNCell, LSTMCell, GRUCell, SimpleRNN, LSTM, GRU  # noqa: F401
from ._rnn_cells import AbstractRNNCell, StackedRNNCells  # noqa: F401
from ._spectral_normalization import SpectralNormalization  # noqa: F401
from ._layer_random import generator_for, uniform01
from ._locally_connected import LocallyConnected1D, LocallyConnected2D  # noqa: F401
from ._random_size import RandomHeight, RandomWidth  # noqa: F401
from ._conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D  # noqa: F401
from ._conv3d_transpose import Conv3DTranspose, Convolution3DTranspose  # noqa: F401
from ._hashed_crossing import HashedCrossing  # noqa: F401
from ._attention import MultiHeadAttention  # noqa: F401
from . import constraints as _constraints
from . import regularizers as _regularizers
from ._serialization import serialize_keras_object as _serialize
from ._merge import (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot, add, subtract,  # noqa: F401
                     multiply, average, maximum, minimum, concatenate, dot)
from ._lambda import Lambda  # noqa: F401
from ._reshaping import (RepeatVector, Permute, UpSampling1D, UpSampling2D, ZeroPadding1D, ZeroPadding2D,  # noqa: F401
                         Cropping1D, Cropping2D)
from ._conv1d import (Conv1D, Convolution1D, MaxPooling1D, MaxPool1D, AveragePooling1D, AvgPool1D,  # noqa: F401
                      GlobalMaxPooling1D, GlobalMaxPool1D)
from ._noise import (GaussianNoise, GaussianDropout, SpatialDropout1D, SpatialDropout2D,  # noqa: F401
                     ActivityRegularization)
from ._preprocessing import Rescaling, Normalization, CenterCrop  # noqa: F401
from ._image_preprocessing import (Resizing, RandomFlip, RandomRotation, RandomZoom, RandomTranslation,  # noqa: F401
                                   RandomContrast)
from ._conv3d import (Conv3D, Convolution3D, MaxPooling3D, AveragePooling3D, MaxPool3D, AvgPool3D,  # noqa: F401
                      UpSampling3D, ZeroPadding3D, Cropping3D)
from ._separable import (SeparableConv1D, SeparableConv2D, SeparableConvolution1D,  # noqa: F401
                         SeparableConvolution2D, Conv1DTranspose, Convolution1DTranspose, DepthwiseConv1D)
from ._dense_features import DenseFeatures  # noqa: F401
from ._lookup import (CategoryEncoding, Discretization, StringLookup, IntegerLookup,  # noqa: F401
                      TextVectorization)
from ._hashing import Hashing  # noqa: F401
from ._noise import SpatialDropout3D, AlphaDropout  # noqa: F401
from ._dense_attention import Attention, AdditiveAttention  # noqa: F401
from ._einsum_dense import EinsumDense  # noqa: F401
from ._layers_more import (Identity, UnitNormalization, ThresholdedReLU, PReLU, GroupNormalization,  # noqa: F401
                           RandomBrightness, RandomCrop)
from ._wrappers import Wrapper, TimeDistributed, Bidirectional  # noqa: F401

__all__ = ["Layer", "InputSpec", "Input", "InputLayer", "Dense", "Conv2D", "Convolution2D", "MaxPooling2D",
           "MaxPool2D", "AveragePooling2D", "AvgPool2D", "Flatten", "Reshape", "Dropout", "ReLU", "Softmax",
           "Activation", "BatchNormalization", "LayerNormalization", "Embedding", "GlobalAveragePooling2D",
           "GlobalAvgPool2D", "GlobalMaxPooling2D", "GlobalMaxPool2D", "Conv2DTranspose", "Convolution2DTranspose"]
__all__ += ["DepthwiseConv2D"]
__all__ += ["RNN", "SimpleRNNCell", "LSTMCell", "GRUCell", "SimpleRNN", "LSTM", "GRU", "AbstractRNNCell",
            "StackedRNNCells", "SpectralNormalization", "LocallyConnected1D", "LocallyConnected2D", "RandomHeight",
            "RandomWidth", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D", "Conv3DTranspose", "Convolution3DTranspose",
            "HashedCrossing"]
__all__ += ["MultiHeadAttention"]
__all__ += ["Masking", "GlobalAveragePooling1D", "GlobalAvgPool1D"]
__all__ += ["LeakyReLU", "ELU"]
__all__ += ["Resizing", "RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast",
            "CategoryEncoding", "Discretization", "StringLookup", "IntegerLookup", "TextVectorization"]
__all__ += ["Conv3D", "Convolution3D", "MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D", "UpSampling3D",
            "ZeroPadding3D", "Cropping3D", "SeparableConv1D", "SeparableConv2D", "SeparableConvolution1D",
            "SeparableConvolution2D", "Conv1DTranspose", "Convolution1DTranspose"]
__all__ += ["Hashing", "GlobalAveragePooling3D", "GlobalMaxPooling3D", "GlobalAvgPool3D", "GlobalMaxPool3D",
            "SpatialDropout3D", "AlphaDropout", "Identity", "UnitNormalization", "ThresholdedReLU", "PReLU",
            "GroupNormalization", "RandomBrightness", "RandomCrop", "Attention", "AdditiveAttention",
            "EinsumDense", "DepthwiseConv1D"]
__all__ += ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot", "add", "subtract",
            "multiply", "average", "maximum", "minimum", "concatenate", "dot", "Lambda", "RepeatVector", "Permute",
            "UpSampling1D", "UpSampling2D", "ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D", "Conv1D",
            "Convolution1D", "MaxPooling1D", "MaxPool1D", "AveragePooling1D", "AvgPool1D", "GlobalMaxPooling1D",
            "GlobalMaxPool1D", "GaussianNoise", "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D",
            "ActivityRegularization", "Rescaling", "Normalization", "CenterCrop", "Wrapper", "TimeDistributed",
            "Bidirectional", "serialize", "deserialize"]


def _set_penalties(layer, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint):
    """The weight regularizers and constraints of a layer with a kernel and a bias (Dense, Conv2D, ...)."""
    layer.kernel_regularizer = _regularizers.get(kernel_regularizer)
    layer.bias_regularizer = _regularizers.get(bias_regularizer)
    layer.kernel_constraint = _constraints.get(kernel_constraint)
    layer.bias_constraint = _constraints.get(bias_constraint)


def _penalty_config(layer):
    return dict(kernel_initializer=_serialize(layer.kernel_initializer),
                bias_initializer=_serialize(layer.bias_initializer),
                kernel_regularizer=_serialize(layer.kernel_regularizer),
                bias_regularizer=_serialize(layer.bias_regularizer),
                activity_regularizer=_serialize(layer.activity_regularizer),
                kernel_constraint=_serialize(layer.kernel_constraint),
                bias_constraint=_serialize(layer.bias_constraint))


def _tuple2(value, name, layer):
    if isinstance(value, int):
        out = (value, value)
    else:
        out = tuple(int(v) for v in value)
        if len(out) == 1:
            out = (out[0], out[0])
    if len(out) != 2:
        raise ValueError(f"The `{name}` argument must be a tuple of 2 integers. Received: {name}={value!r} "
                         f"(layer {layer})")
    if any(v <= 0 for v in out):
        raise ValueError(f"The `{name}` argument must be a tuple of 2 positive integers. Received: {name}={value!r}"
                         f" (layer {layer})")
    return out


def _padding(value, layer):
    p = str(value).lower()
    if p not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be a list/tuple or one of \"valid\", \"same\" (or "
                         f"\"causal\", only for `Conv1D`). Received: {value!r} (layer {layer})")
    return p


def _data_format(value, layer):
    fmt = "channels_last" if value is None else str(value).lower()
    if fmt == "channels_first":
        raise ValueError(f"kiln.keras.layers.{layer}: data_format='channels_first' is not supported (only "
                         "'channels_last', NHWC)")
    if fmt != "channels_last":
        raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                         f"Received: {value!r}")
    return fmt


def _out_length(length, window, stride, padding, dilation=1):
    if length is None:
        return None
    if padding == "same":
        return (length + stride - 1) // stride
    effective = (window - 1) * dilation + 1
    if length < effective:
        return 0
    return (length - effective) // stride + 1


def _leaky_relu(x, alpha=0.0, max_value=None, threshold=0.0):
    if threshold == 0 and alpha == 0:
        y = _C.relu(x)
    else:
        y = _C.where(_C.greater_equal(x, threshold), x, _C.multiply(alpha, _C.subtract(x, threshold)))
    if max_value is not None:
        y = _C.minimum(y, max_value)
    return y


# ---- Dense ------------------------------------------------------------------------------

class Dense(Layer):
    """activation(inputs @ kernel + bias): kernel [in, units] (glorot_uniform), bias [units] (zeros)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _set_penalties(self, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        units = int(units) if not isinstance(units, int) else units
        if units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. Received: "
                             f"units={units}")
        self.units = units
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.input_spec = InputSpec(min_ndim=2)
        self.kernel = None
        self.bias = None
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        last = input_shape[-1] if input_shape.rank else None
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be defined. Found None. "
                             f"Full input shape received: {input_shape}")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight("kernel", [last, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs):
        from ..ragged_tensor import RaggedTensor
        from ..sparse_tensor import SparseTensor
        if isinstance(inputs, RaggedTensor):
            # Keras: a ragged batch of rows with a fixed last dimension is the Dense of its flat rows.
            if inputs.shape[-1] is None:
                raise ValueError("Dense layer only supports RaggedTensors when the innermost dimension is "
                                 f"non-ragged. Received: inputs.shape={inputs.shape}.")
            return inputs.with_flat_values(self.call(inputs.flat_values))
        if isinstance(inputs, SparseTensor):
            from .. import sparse as _sparse
            if inputs.dtype != self._dtype:
                inputs = _sparse.map_values(lambda v: _C.cast(v, self._dtype._enum), inputs)
            y = _sparse.sparse_dense_matmul(inputs, self.kernel)
        else:
            if inputs.dtype != self._dtype:
                inputs = _C.cast(inputs, self._dtype._enum)  # Keras' Dense casts integer inputs too
            y = _C.matmul(inputs, self.kernel, False, False)
        if self.use_bias:
            y = _C.bias_add(y, self.bias)
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.rank is None or input_shape.rank < 2:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected min_ndim=2, '
                             f"found ndim={input_shape.rank}. Full shape received: {input_shape}")
        return TensorShape(input_shape.as_list()[:-1] + [self.units])

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, activation=_activations.serialize(self.activation), use_bias=self.use_bias)
        config.update(_penalty_config(self))
        return config


# ---- Conv2D -----------------------------------------------------------------------------

class Conv2D(Layer):
    """activation(conv2d(inputs, kernel) + bias): kernel [kh, kw, in, filters] (glorot_uniform over
    fan_in = kh*kw*in, fan_out = kh*kw*filters), bias [filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _set_penalties(self, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if int(filters) <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        if int(groups) <= 0 or int(filters) % int(groups):
            raise ValueError("The number of filters must be evenly divisible by the number of groups. Received: "
                             f"groups={groups}, filters={filters}.")
        self.filters = int(filters)
        self.groups = int(groups)
        self.kernel_size = _tuple2(kernel_size, "kernel_size", self.name)
        self.strides = _tuple2(strides, "strides", self.name)
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, "Conv2D")
        self.dilation_rate = _tuple2(dilation_rate, "dilation_rate", self.name)
        if self.dilation_rate != (1, 1) and self.strides != (1, 1):
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.input_spec = InputSpec(min_ndim=4)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        channels = input_shape[-1] if input_shape.rank else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The input_shape received is "
                             f"{input_shape}, where axis -1 (0-based) is the channel dimension, which found to be "
                             "`None`.")
        if channels % self.groups:
            raise ValueError("The number of input channels must be evenly divisible by the number of groups. Received "
                             f"groups={self.groups}, but the input has {channels} channels (full input shape is "
                             f"{input_shape}).")
        self.kernel = self.add_weight(self._kernel_name, self._kernel_shape(channels),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self._output_channels(channels)], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=4, axes={-1: channels})
        self.built = True

    _kernel_name = "kernel"

    def _kernel_shape(self, channels):
        return [*self.kernel_size, channels // self.groups, self.filters]  # grouped: conv2d reads the groups from it

    def _output_channels(self, channels):
        return self.filters

    def call(self, inputs):
        y = self._convolve(inputs)
        if self.use_bias:
            y = _C.bias_add(y, self.bias)
        return self.activation(y)

    def _convolve(self, inputs):
        return _C.conv2d(inputs, self.kernel, list(self.strides), self.padding.upper(), list(self.dilation_rate))

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        if s.rank != 4:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected ndim=4, found '
                             f"ndim={s.rank}. Full shape received: {s}")
        h = _out_length(s[1], self.kernel_size[0], self.strides[0], self.padding, self.dilation_rate[0])
        w = _out_length(s[2], self.kernel_size[1], self.strides[1], self.padding, self.dilation_rate[1])
        if h == 0 or w == 0:
            raise ValueError(f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. "
                             f"Consider increasing the input size. Received input shape {s} which would produce "
                             "output shape with a zero or negative value in a dimension.")
        return TensorShape([s[0], h, w, self._output_channels(s[3])])

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format, dilation_rate=self.dilation_rate, groups=self.groups,
                      activation=_activations.serialize(self.activation), use_bias=self.use_bias)
        config.update(_penalty_config(self))
        return config


Convolution2D = Conv2D


class Conv2DTranspose(Conv2D):
    """activation(conv2d_transpose(inputs, kernel) + bias), the transpose of Conv2D: kernel
    [kh, kw, filters, in] (glorot_uniform), output height Keras' deconv_output_length: in*stride ("same")
    or in*stride + max(kh_dilated - stride, 0) ("valid"); with output_padding p,
    (in - 1)*stride + kh_dilated - 2*pad + p, pad kh_dilated // 2 ("same") or 0 ("valid")."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, data_format=None,
                 dilation_rate=(1, 1), **kwargs):
        _check_unsupported("Conv2DTranspose", groups=(kwargs.pop("groups", 1), 1))
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)
        self.output_padding = None
        if output_padding is not None:
            pads = (output_padding,) * 2 if isinstance(output_padding, int) else tuple(int(p) for p in output_padding)
            if len(pads) != 2 or any(p < 0 for p in pads):
                raise ValueError(f"The `output_padding` argument must be a tuple of 2 non-negative integers. "
                                 f"Received: output_padding={output_padding!r} (layer {self.name})")
            self.output_padding = pads
            for stride, pad in zip(self.strides, self.output_padding):
                if pad >= stride:
                    raise ValueError(f"Strides {self.strides} must be greater than output padding "
                                     f"{self.output_padding}. Received strides={self.strides}, "
                                     f"output_padding={self.output_padding}.")

    def _kernel_shape(self, channels):
        return [*self.kernel_size, self.filters, channels]

    def _length(self, length, axis):
        if length is None:
            return None
        stride = self.strides[axis]
        kernel = (self.kernel_size[axis] - 1) * self.dilation_rate[axis] + 1
        if self.output_padding is not None:
            pad = kernel // 2 if self.padding == "same" else 0
            return (length - 1) * stride + kernel - 2 * pad + self.output_padding[axis]
        if self.padding == "same":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def _convolve(self, inputs):
        s = inputs.shape
        out = [s[0], self._length(s[1], 0), self._length(s[2], 1), self.filters]
        return _C.conv2d_transpose(inputs, self.kernel, [-1 if d is None else d for d in out], list(self.strides),
                                   self.padding.upper(), list(self.dilation_rate))

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        if s.rank != 4:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected ndim=4, found '
                             f"ndim={s.rank}. Full shape received: {s}")
        return TensorShape([s[0], self._length(s[1], 0), self._length(s[2], 1), self.filters])

    def get_config(self):
        config = super().get_config()
        config.update(output_padding=self.output_padding)
        return config


Convolution2DTranspose = Conv2DTranspose


class DepthwiseConv2D(Conv2D):
    """activation(depthwise_conv2d(inputs, depthwise_kernel) + bias): depthwise_kernel
    [kh, kw, in, depth_multiplier] (glorot_uniform from that shape), bias [in * depth_multiplier];
    output channel c * depth_multiplier + m is input channel c through depthwise_kernel[:, :, c, m]."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        # python/tests/test_depthwise_conv.py (not this helper's) asserts these stay unsupported.
        _check_unsupported("DepthwiseConv2D", depthwise_regularizer=(depthwise_regularizer, None),
                           depthwise_constraint=(depthwise_constraint, None))
        if int(depth_multiplier) <= 0:
            raise ValueError("Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                             f"Received depth_multiplier={depth_multiplier}.")
        super().__init__(depth_multiplier, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         kernel_initializer=depthwise_initializer, bias_initializer=bias_initializer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, **kwargs)
        self.filters = None  # as Keras': the output channels follow the input's
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = self.kernel_initializer

    _kernel_name = "depthwise_kernel"

    @property
    def depthwise_kernel(self):
        return self.kernel

    def _kernel_shape(self, channels):
        return [*self.kernel_size, channels, self.depth_multiplier]

    def _output_channels(self, channels):
        return None if channels is None else channels * self.depth_multiplier

    def _convolve(self, inputs):
        return _C.depthwise_conv2d(inputs, self.kernel, list(self.strides), self.padding.upper(),
                                   list(self.dilation_rate))

    def get_config(self):
        config = super().get_config()
        del config["filters"]
        config["depthwise_initializer"] = config.pop("kernel_initializer")  # Keras' name for the kernel's
        config.pop("kernel_regularizer")
        config.pop("kernel_constraint")
        config.update(depth_multiplier=self.depth_multiplier)
        return config


# ---- pooling ----------------------------------------------------------------------------

class _Pooling2D(Layer):
    _op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _tuple2(pool_size, "pool_size", self.name)
        self.strides = self.pool_size if strides is None else _tuple2(strides, "strides", self.name)
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, type(self).__name__)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        return type(self)._op(inputs, list(self.pool_size), list(self.strides), self.padding.upper())

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        if s.rank != 4:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected ndim=4, found '
                             f"ndim={s.rank}. Full shape received: {s}")
        h = _out_length(s[1], self.pool_size[0], self.strides[0], self.padding)
        w = _out_length(s[2], self.pool_size[1], self.strides[1], self.padding)
        if h == 0 or w == 0:
            raise ValueError(f"Computed output size would be negative or zero in {self.name}: input shape {s}, "
                             f"pool_size {self.pool_size}, padding '{self.padding}'")
        return TensorShape([s[0], h, w, s[3]])

    def get_config(self):
        config = super().get_config()
        config.update(pool_size=self.pool_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format)
        return config


class MaxPooling2D(_Pooling2D):
    """Max over pool_size windows (strides default to pool_size)."""
    _op = staticmethod(_C.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """Mean over pool_size windows (strides default to pool_size)."""
    _op = staticmethod(_C.avg_pool2d)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D


class _GlobalPooling2D(Layer):
    _op = None
    _spatial = 2  # the axes reduced: 1 .. _spatial

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self._spatial + 2)

    def call(self, inputs):
        return type(self)._op(inputs, list(range(1, self._spatial + 1)), self.keepdims)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0]] + [1] * self._spatial + [s[-1]] if self.keepdims else [s[0], s[-1]])

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, keepdims=self.keepdims)
        return config


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean of each channel over height and width."""
    _op = staticmethod(_C.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The max of each channel over height and width."""
    _op = staticmethod(_C.reduce_max)


GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D


class GlobalAveragePooling3D(GlobalAveragePooling2D):
    """The mean of each channel over depth, height and width."""
    _spatial = 3


class GlobalMaxPooling3D(GlobalMaxPooling2D):
    """The max of each channel over depth, height and width."""
    _spatial = 3


GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D


class GlobalAveragePooling1D(Layer):
    """The mean of each feature over the steps of [batch, steps, features]; with a mask [batch, steps], over
    the kept steps only (sum of the kept / their count, Keras' formula). The output has no mask."""

    def __init__(self, data_format="channels_last", keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format, "GlobalAveragePooling1D")
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=3)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return _C.reduce_mean(inputs, [1], self.keepdims)
        weights = _C.expand_dims(weights_from_mask(_to_tensor(mask), inputs), 2)
        kept = _C.reduce_sum(_C.multiply(inputs, weights), [1], self.keepdims)
        return _C.divide(kept, _C.reduce_sum(weights, [1], self.keepdims))

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        return TensorShape([s[0], 1, s[2]] if self.keepdims else [s[0], s[2]])

    def get_config(self):
        config = super().get_config()
        config.update(data_format=self.data_format, keepdims=self.keepdims)
        return config


GlobalAvgPool1D = GlobalAveragePooling1D


# ---- Masking ------------------------------------------------------------------------------

class Masking(Layer):
    """Masks the steps of [batch, steps, features] whose features all equal `mask_value`: they become zeros
    and the output carries the mask [batch, steps] (true where a step is kept), as Keras'."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def _keep(self, inputs, keepdims):
        return _C.reduce_any(_C.not_equal(inputs, self.mask_value), [-1], keepdims)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, False)

    def call(self, inputs):
        keep = self._keep(inputs, True)
        outputs = _C.multiply(inputs, _C.cast(keep, inputs.dtype._enum))
        set_mask(outputs, _C.squeeze(keep, [-1]))  # computed with the output, as Keras'
        return outputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config


# ---- Embedding ----------------------------------------------------------------------------

class Embedding(Layer):
    """Rows of an [input_dim, output_dim] table ("uniform": U(-0.05, 0.05)) picked by integer indices:
    [batch, ...] -> [batch, ..., output_dim]. The gradient reaches the picked rows. With mask_zero, index 0
    is padding: the output carries the mask `inputs != 0`."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None,
                 sparse=False, **kwargs):
        if "input_shape" not in kwargs:  # as Keras 2: a Sequential starting with an Embedding is built at once
            kwargs["input_shape"] = (input_length,) if input_length else (None,)
        # Keras: float indices are not cast to a 16-bit compute dtype first (that would round them).
        kwargs["autocast"] = False
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _check_unsupported("Embedding", sparse=(sparse, False))
        self.embeddings_regularizer = _regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = _constraints.get(embeddings_constraint)
        if input_dim <= 0 or output_dim <= 0:
            raise ValueError("Both `input_dim` and `output_dim` should be positive, Received input_dim = "
                             f"{input_dim} and output_dim = {output_dim}")
        self.input_dim, self.output_dim, self.input_length = int(input_dim), int(output_dim), input_length
        self.embeddings_initializer = _initializers.get(embeddings_initializer)
        self.embeddings = None
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint, experimental_autocast=False)
        self.built = True

    def call(self, inputs):
        from ..ragged_tensor import RaggedTensor
        if isinstance(inputs, RaggedTensor):
            return inputs.with_flat_values(self.call(inputs.flat_values))  # ragged in, ragged out (Keras)
        if inputs.dtype.is_floating or inputs.dtype.name == "bool":
            inputs = _C.cast(inputs, _dtypes.int32._enum)  # truncated, as Keras casts to int32
        out = _C.gather(self.embeddings, inputs, 0)
        if self._dtype != self._variable_dtype:
            out = _C.cast(out, self._dtype._enum)  # Keras casts the rows, not the table (the same values, faster)
        return out

    def compute_mask(self, inputs, mask=None):
        """With mask_zero, index 0 is padding: the mask is `inputs != 0` (ragged inputs need none)."""
        from ..ragged_tensor import RaggedTensor
        if not self.mask_zero or isinstance(inputs, RaggedTensor):
            return None
        return _C.not_equal(inputs, _C.zeros_like(inputs, None))

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        return TensorShape(None) if s.rank is None else TensorShape(s.as_list() + [self.output_dim])

    def get_config(self):
        config = super().get_config()
        config.update(input_dim=self.input_dim, output_dim=self.output_dim, input_length=self.input_length,
                      mask_zero=self.mask_zero,
                      embeddings_initializer=_serialize(self.embeddings_initializer),
                      embeddings_regularizer=_serialize(self.embeddings_regularizer),
                      activity_regularizer=_serialize(self.activity_regularizer),
                      embeddings_constraint=_serialize(self.embeddings_constraint))
        return config


# ---- shape layers -----------------------------------------------------------------------

def _non_batch_elements(shape):
    n = 1
    for d in list(shape)[1:]:
        if d is None:
            return None
        n *= d
    return n


class Flatten(Layer):
    """[batch, d1, d2, ...] -> [batch, d1 * d2 * ...]; rank-1 inputs become [batch, 1]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format, "Flatten")
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        out = self.compute_output_shape(inputs.shape)
        if out[0] is None and out[1] is None:
            raise ValueError(f'Layer "{self.name}": cannot flatten inputs of shape {inputs.shape}: the batch dim '
                             "or the others must be known")
        return _C.reshape(inputs, [-1, out[1]] if out[0] is None else [out[0], -1])

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        if s.rank is None or s.rank < 1:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected min_ndim=1, '
                             f"found ndim={s.rank}. Full shape received: {s}")
        return TensorShape([s[0], _non_batch_elements(s)])

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        return config


class Reshape(Layer):
    """[batch, ...] -> [batch, *target_shape]; one target dim may be -1, inferred from the others."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        if isinstance(target_shape, int):
            target_shape = (target_shape,)
        self.target_shape = tuple(int(d) for d in target_shape)
        if any(d < -1 or d == 0 for d in self.target_shape):
            raise ValueError(f"Reshape '{self.name}': target dims must be positive or -1, got {self.target_shape}")
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(f"Reshape '{self.name}': there must be at most one unknown dimension in output_shape. "
                             f"Received: output_shape={self.target_shape}.")

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        if s.rank is None or s.rank < 1:
            raise ValueError(f'Input 0 of layer "{self.name}" is incompatible with the layer: expected min_ndim=1, '
                             f"found ndim={s.rank}. Full shape received: {s}")
        n = _non_batch_elements(s)
        known = 1
        for d in self.target_shape:
            if d > 0:
                known *= d
        out = [s[0]]
        for d in self.target_shape:
            if d == -1:
                if n is not None and n % known:
                    raise ValueError(f'Layer "{self.name}": total size of the new array must be unchanged, '
                                     f"input_shape = {list(s)[1:]}, output_shape = {list(self.target_shape)}")
                out.append(None if n is None else n // known)
            else:
                out.append(d)
        if n is not None and _non_batch_elements(out) != n:
            raise ValueError(f'Layer "{self.name}": total size of the new array must be unchanged, input_shape = '
                             f"{list(s)[1:]}, output_shape = {list(self.target_shape)}")
        return TensorShape(out)

    def call(self, inputs):
        out = self.compute_output_shape(inputs.shape).as_list()
        if sum(d is None for d in out) > 1:
            raise ValueError(f'Layer "{self.name}": cannot reshape inputs of shape {inputs.shape} into '
                             f"{self.target_shape}: too many unknown dims")
        return _C.reshape(inputs, [-1 if d is None else d for d in out])

    def get_config(self):
        config = super().get_config()
        config["target_shape"] = self.target_shape
        return config


# ---- elementwise layers -------------------------------------------------------------------

class Dropout(Layer):
    """While training, zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate);
    otherwise the identity. A new mask on every call, graph calls included: from kiln.random's global
    generator, or with `seed` from the op-seeded stream TF's seeded ops draw from (kiln.random.set_seed
    makes either reproducible)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.rate = float(rate)
        self.seed = seed
        self._generator_draws = generator_for(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return _C.zeros_like(inputs, None)
        keep = _C.greater_equal(uniform01(self, self._noise_like(inputs)), self.rate)
        return _C.multiply(inputs, _C.multiply(_C.cast(keep, inputs.dtype._enum), 1.0 / (1.0 - self.rate)))

    def _noise_like(self, inputs):
        """A slice of the inputs of noise_shape (its 1s: one draw shared along that axis; None: the input's)."""
        if self.noise_shape is None:
            return inputs
        shape = inputs.shape.as_list()
        if len(self.noise_shape) != len(shape) or any(n not in (None, 1, d) for n, d in zip(self.noise_shape, shape)):
            raise ValueError(f"Dropout: noise_shape {self.noise_shape} does not broadcast to inputs of shape "
                             f"{inputs.shape}")
        return _C.slice(inputs, [0] * len(shape), [1 if n == 1 and d != 1 else -1
                                                   for n, d in zip(self.noise_shape, shape)])

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return config


class ReLU(Layer):
    """max(x, 0) (with Keras' max_value, negative_slope and threshold)."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: {max_value}")
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value. Received: {negative_slope}")
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold
        self.supports_masking = True

    def call(self, inputs):
        return _leaky_relu(inputs, self.negative_slope, self.max_value, self.threshold)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(max_value=self.max_value, negative_slope=self.negative_slope, threshold=self.threshold)
        return config


class _AlphaActivation(Layer):
    """An elementwise activation with one parameter, alpha (LeakyReLU, ELU): the shape stays, masks pass
    through, and alpha is part of the config. `_none_message` is Keras' error for alpha=None."""

    _none_message = ""

    def __init__(self, alpha, **kwargs):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError(self._none_message.format(alpha=alpha))
        self.alpha = float(alpha)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(alpha=self.alpha)
        return config


class LeakyReLU(_AlphaActivation):
    """x above 0, alpha * x below (TF 2 Keras' LeakyReLU, alpha 0.3 by default): tf.nn.leaky_relu, the op the
    C++ nn::LeakyReLU computes with."""

    _none_message = ("The alpha value of a Leaky ReLU layer cannot be None, Expected a float. Received: "
                     "alpha={alpha}")

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(alpha, **kwargs)

    def call(self, inputs):
        return _C.leaky_relu(inputs, self.alpha)


class ELU(_AlphaActivation):
    """x above 0, alpha * (exp(x) - 1) at or below (TF 2 Keras' ELU, alpha 1 by default): tf.nn.elu when alpha is
    1, else where(x > 0, x, alpha * elu(x)), as Keras' backend.elu and the C++ nn::ELU."""

    _none_message = "Alpha of an ELU layer cannot be None, expecting a float. Received: {alpha}"

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(alpha, **kwargs)

    def call(self, inputs):
        return _activations.elu(inputs, self.alpha)


class Softmax(Layer):
    """softmax along `axis` (default the last)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs, mask=None):
        return _C.softmax(inputs, int(self.axis))

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


class Activation(Layer):
    """An activation by name or callable, as a layer."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = _activations.get(activation)
        self.supports_masking = True

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config["activation"] = _activations.serialize(self.activation)
        return config


def serialize(layer):
    """A layer as Keras' {"module", "class_name", "config", "registered_name"} dict."""
    return _serialize(layer)


def deserialize(config, custom_objects=None):
    """The layer a serialize() dict describes (custom classes through custom_objects or the registry)."""
    from ._serialization import deserialize_keras_object
    from ._model import Model
    from ._sequential import Sequential
    table = {k: v for k, v in globals().items() if isinstance(v, type) and issubclass(v, Layer)}
    from ._tf_op_layer import TFOpLambda, SlicingOpLambda
    from ._functional_side import AddLoss, AddMetric
    from ._layers_experimental import RandomFourierFeatures, SyncBatchNormalization
    from ._feature_space import FeatureSpace
    table.update(FeatureSpace=FeatureSpace, Model=Model, Functional=Model, Sequential=Sequential, TFOpLambda=TFOpLambda, SlicingOpLambda=SlicingOpLambda, AddLoss=AddLoss,
                 AddMetric=AddMetric, SyncBatchNormalization=SyncBatchNormalization,
                 RandomFourierFeatures=RandomFourierFeatures)
    return deserialize_keras_object(config, module_objects=table, custom_objects=custom_objects,
                                    printable_module_name="layer")


# tf.keras.layers.experimental (and its preprocessing module), once the layers above exist.
from ._layers_experimental import experimental_module as _experimental_module  # noqa: E402
experimental = _experimental_module()
