"""Conv3DTranspose (Keras 2.15): the transpose of Conv3D, kernel [kd, kh, kw, filters, in]. Depth is folded
into the batch as Conv3D folds it: each depth tap i is a 2-D transposed convolution of every input frame, and
frame t lands at output depth t * stride + i - pad (pad: the "same" padding's front half), summed over the taps
through a 0/1 placement matrix (an einsum), so the gradients are the engine's."""
import numpy as np

import kiln as _tf

from . import activations as _activations
from . import initializers as _initializers
from ._conv3d import _triple
from ._layer import InputSpec, Layer


def _deconv_length(length, kernel, stride, padding):
    """Keras' deconv_output_length without output_padding."""
    if length is None:
        return None
    return length * stride if padding == "same" else length * stride + max(kernel - stride, 0)


class Conv3DTranspose(Layer):

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", output_padding=None,
                 data_format=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        from .layers import _data_format, _padding, _set_penalties
        _set_penalties(self, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if int(filters) <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        for name, value, default in (("output_padding", output_padding, None),
                                     ("dilation_rate", _triple(dilation_rate, "dilation_rate"), (1, 1, 1))):
            if value != default:
                raise NotImplementedError(f"kiln.keras.layers.Conv3DTranspose: {name}={value!r} is not supported")
        self.filters = int(filters)
        self.kernel_size = _triple(kernel_size, "kernel_size")
        self.strides = _triple(strides, "strides")
        self.padding = _padding(padding, self.name)
        self.data_format = _data_format(data_format, "Conv3DTranspose")
        self.output_padding, self.dilation_rate = None, (1, 1, 1)
        self.activation = _activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.input_spec = InputSpec(ndim=5)
        self.kernel = self.bias = None

    def build(self, input_shape):
        channels = _tf.TensorShape(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.kernel = self.add_weight("kernel", [*self.kernel_size, self.filters, channels],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=5, axes={-1: channels})
        self.built = True

    def _out_dims(self, shape):
        return [_deconv_length(n, k, s, self.padding) for n, k, s in zip(shape[1:4], self.kernel_size, self.strides)]

    def call(self, inputs):
        shape = inputs.shape.as_list()
        depth, height, width, channels = shape[1:]
        if None in (depth, height, width):
            raise ValueError(f"{self.name}: the input depth, height and width must be known")
        out_depth, out_height, out_width = self._out_dims(shape)
        kd, stride = self.kernel_size[0], self.strides[0]
        front = max(kd - stride, 0) // 2 if self.padding == "same" else 0
        frames = _tf.reshape(inputs, [-1, height, width, channels])
        total = None
        for tap in range(kd):
            place = np.zeros((out_depth, depth), np.float32)
            for t in range(depth):
                d = t * stride + tap - front
                if 0 <= d < out_depth:
                    place[d, t] = 1.0
            if not place.any():
                continue
            planes = _tf.nn.conv2d_transpose(frames, self.kernel[tap], [None, out_height, out_width, self.filters],
                                             list(self.strides[1:]), self.padding.upper())
            planes = _tf.reshape(planes, [-1, depth, out_height, out_width, self.filters])
            placed = _tf.einsum("dt,bthwf->bdhwf", _tf.constant(place, planes.dtype), planes)
            total = placed if total is None else total + placed
        if self.use_bias:
            total = _tf.nn.bias_add(total, self.bias)
        return self.activation(total)

    def compute_output_shape(self, input_shape):
        shape = _tf.TensorShape(input_shape).as_list()
        return _tf.TensorShape([shape[0]] + self._out_dims(shape) + [self.filters])

    def get_config(self):
        from ._separable import transpose_config
        return dict(super().get_config(), **transpose_config(self))


Convolution3DTranspose = Conv3DTranspose
