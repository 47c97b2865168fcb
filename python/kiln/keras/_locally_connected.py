"""LocallyConnected1D / 2D (Keras 2.15, implementation 1): convolutions whose filters are not shared, one set per
output position: kernel [positions, window * channels, filters] (the window flattened as its rows, columns, then
channels), bias per position. The windows are gathered (one gather per spatial axis) and multiplied per position
(einsum); "valid" padding, channels_last. backend.local_conv1d / local_conv2d are the same products."""
import numpy as np

import kiln as _tf

from . import activations as _activations
from . import constraints as _constraints
from . import initializers as _initializers
from . import regularizers as _regularizers
from ._layer import InputSpec, Layer
from ._serialization import serialize_keras_object


def _windows(steps, window, stride):
    """[positions, window] indices of each window along an axis of `steps` steps; the number of positions."""
    positions = (steps - window) // stride + 1
    return np.arange(positions)[:, None] * stride + np.arange(window)[None, :], positions


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """[batch, steps, channels] with kernel [positions, k * channels, filters] -> [batch, positions, filters]."""
    inputs = _tf.convert_to_tensor(inputs)
    if data_format == "channels_first":
        inputs = _tf.transpose(inputs, [0, 2, 1])
    index, _ = _windows(inputs.shape[1], int(kernel_size[0]), int(strides[0]))
    patches = _tf.gather(inputs, index, axis=1)  # [batch, positions, k, channels]
    patches = _tf.reshape(patches, [-1, index.shape[0], index.shape[1] * inputs.shape[2]])
    out = _tf.einsum("bpi,pif->bpf", patches, kernel)
    return _tf.transpose(out, [0, 2, 1]) if data_format == "channels_first" else out


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """[batch, rows, cols, channels] with kernel [rows' * cols', kh * kw * channels, filters] -> [batch, rows',
    cols', filters]."""
    inputs = _tf.convert_to_tensor(inputs)
    if data_format == "channels_first":
        inputs = _tf.transpose(inputs, [0, 2, 3, 1])
    rows, out_rows = _windows(inputs.shape[1], int(kernel_size[0]), int(strides[0]))
    cols, out_cols = _windows(inputs.shape[2], int(kernel_size[1]), int(strides[1]))
    patches = _tf.gather(_tf.gather(inputs, rows, axis=1), cols, axis=3)  # [b, rows', kh, cols', kw, c]
    patches = _tf.transpose(patches, [0, 1, 3, 2, 4, 5])
    patches = _tf.reshape(patches, [-1, out_rows * out_cols, rows.shape[1] * cols.shape[1] * inputs.shape[3]])
    out = _tf.reshape(_tf.einsum("bpi,pif->bpf", patches, kernel), [-1, out_rows, out_cols, kernel.shape[-1]])
    return _tf.transpose(out, [0, 3, 1, 2]) if data_format == "channels_first" else out


class _LocallyConnected(Layer):
    _rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 implementation=1, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        name = type(self).__name__
        if implementation not in (1, 2, 3):
            raise ValueError(f"Unrecognized implementation mode: {implementation}.")
        if implementation != 1:
            raise NotImplementedError(f"kiln.keras.layers.{name}: implementation={implementation} (its other "
                                      "kernel layout) is not supported; implementation=1 computes the same")
        if str(padding).lower() != "valid":
            raise ValueError(f"Invalid border mode for {name} (only \"valid\" is supported if implementation is 1): "
                             f"{padding}")
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"kiln.keras.layers.{name}: data_format={data_format!r} is not supported")
        self.filters = int(filters)
        self.kernel_size = self._tuple(kernel_size)
        self.strides = self._tuple(strides)
        self.padding, self.data_format, self.implementation = "valid", "channels_last", implementation
        self.activation = _activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel_regularizer = _regularizers.get(kernel_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.input_spec = InputSpec(ndim=self._rank + 2)
        self.kernel = self.bias = None

    def _tuple(self, value):
        return tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else (int(value),) * self._rank

    def _output_dims(self, input_shape):
        return [(int(n) - k) // s + 1 for n, k, s in zip(input_shape[1:-1], self.kernel_size, self.strides)]

    def build(self, input_shape):
        shape = _tf.TensorShape(input_shape).as_list()
        if shape[-1] is None or any(d is None for d in shape[1:-1]):
            raise ValueError(f"{type(self).__name__}: the spatial and channel dims of the inputs must be known. "
                             f"Found shape: {tuple(shape)}")
        dims = self._output_dims(shape)
        if min(dims) <= 0:
            raise ValueError(f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. "
                             f"Consider increasing the input size. Received input shape {tuple(shape)} which would "
                             "produce output shape with a zero or negative value in a dimension.")
        window = int(np.prod(self.kernel_size)) * shape[-1]
        self.kernel = self.add_weight("kernel", (int(np.prod(dims)), window, self.filters),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", tuple(dims) + (self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=self._rank + 2, axes={-1: shape[-1]})
        self.built = True

    def call(self, inputs):
        inputs = _tf.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        if self._rank == 1:
            out = local_conv1d(inputs, self.kernel, self.kernel_size, self.strides)
        else:
            out = local_conv2d(inputs, self.kernel, self.kernel_size, self.strides,
                               self._output_dims(inputs.shape.as_list()))
        if self.use_bias:
            out = out + self.bias
        return self.activation(out)

    def compute_output_shape(self, input_shape):
        shape = _tf.TensorShape(input_shape).as_list()
        return _tf.TensorShape([shape[0]] + self._output_dims(shape) + [self.filters])

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides, padding=self.padding,
                      data_format=self.data_format, activation=_activations.serialize(self.activation),
                      use_bias=self.use_bias, kernel_initializer=serialize_keras_object(self.kernel_initializer),
                      bias_initializer=serialize_keras_object(self.bias_initializer),
                      kernel_regularizer=serialize_keras_object(self.kernel_regularizer),
                      bias_regularizer=serialize_keras_object(self.bias_regularizer),
                      activity_regularizer=serialize_keras_object(self.activity_regularizer),
                      kernel_constraint=serialize_keras_object(self.kernel_constraint),
                      bias_constraint=serialize_keras_object(self.bias_constraint),
                      implementation=self.implementation)
        return config


class LocallyConnected1D(_LocallyConnected):
    _rank = 1


class LocallyConnected2D(_LocallyConnected):
    _rank = 2
