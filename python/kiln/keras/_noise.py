"""Keras' regularization layers that act only while training: GaussianNoise, GaussianDropout,
SpatialDropout1D/2D, and ActivityRegularization (an identity that adds an activity penalty to the losses).
Random draws come from kiln.random's global generator on every call, graph calls included, as Dropout's."""
import math

from .. import _C
from ..tensor_shape import TensorShape
from . import regularizers as _regularizers
from ._layer import _check_unsupported, InputSpec, Layer
from ._layer_random import generator_for, standard_normal, uniform01


def _check_rate(rate):
    if not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                         f"Received: rate={rate}")
    return float(rate)


def standard_normal_like(x, seed=None):
    """N(0, 1) draws of x's shape (known only at run time included), by Box-Muller from two uniform draws
    (with an op seed, the second draw's seed is another, since two ops of one seed in a graph draw alike)."""
    u1 = _C.random_uniform_like(x, 0.0, 1.0, seed)
    u2 = _C.random_uniform_like(x, 0.0, 1.0, None if seed is None else seed + 1)
    radius = _C.sqrt(_C.multiply(-2.0, _C.log(_C.subtract(1.0, u1))))  # 1 - u1 is in (0, 1]
    return _C.multiply(radius, _C.cos(_C.multiply(2.0 * math.pi, u2)))


class GaussianNoise(Layer):
    """While training: inputs + N(0, stddev^2) noise; otherwise the identity."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev = stddev
        self.seed = seed
        self._generator_draws = generator_for(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        return _C.add(inputs, _C.multiply(standard_normal(self, inputs), float(self.stddev)))

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(stddev=self.stddev, seed=self.seed)
        return config


class GaussianDropout(Layer):
    """While training: inputs * N(1, rate / (1 - rate)) noise; otherwise the identity."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate(rate)
        self.seed = seed
        self._generator_draws = generator_for(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or not 0 < self.rate < 1:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return _C.multiply(inputs, _C.add(1.0, _C.multiply(standard_normal(self, inputs), stddev)))

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, seed=self.seed)
        return config


class _SpatialDropout(Layer):
    """Dropout of whole feature maps: one keep/drop draw per sample and channel, shared by all positions."""

    _rank = 3

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.rate = _check_rate(rate)
        self.seed = seed
        self._generator_draws = generator_for(seed)
        self.data_format = _data_format(data_format, type(self).__name__)
        self.input_spec = InputSpec(ndim=self._rank)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return _C.zeros_like(inputs, None)
        rank = self._rank
        # A [batch, 1, ..., channels] slice gives the noise its shape, the batch dim unknown included.
        one_position = _C.slice(inputs, [0] * rank, [-1] + [1] * (rank - 2) + [-1])
        keep = _C.greater_equal(uniform01(self, one_position), self.rate)
        scale = _C.multiply(_C.cast(keep, inputs.dtype._enum), 1.0 / (1.0 - self.rate))
        return _C.multiply(inputs, scale)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, data_format=self.data_format, seed=self.seed)
        return config


class SpatialDropout1D(_SpatialDropout):
    _rank = 3

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.pop("data_format")
        return config


class SpatialDropout2D(_SpatialDropout):
    _rank = 4


class SpatialDropout3D(_SpatialDropout):
    _rank = 5


class AlphaDropout(Layer):
    """While training, dropped units take SELU's negative saturation value -alpha * scale, then a * x + b keeps the
    mean and variance (Klambauer et al., 2017); otherwise the identity."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_unsupported("AlphaDropout", noise_shape=(noise_shape, None))
        self.rate = _check_rate(rate)
        self.noise_shape = None
        self.seed = seed
        self._generator_draws = generator_for(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or not 0 < self.rate < 1:
            return inputs
        alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
        keep = _C.cast(_C.greater_equal(uniform01(self, inputs), self.rate),
                       inputs.dtype._enum)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = _C.add(_C.multiply(inputs, keep), _C.multiply(_C.subtract(1.0, keep), alpha_p))
        return _C.add(_C.multiply(x, a), b)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return config


class ActivityRegularization(Layer):
    """The identity, adding l1 * sum(|x|) + l2 * sum(x^2) (divided by the batch size) to the layer's losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=_regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True
        self.l1 = l1
        self.l2 = l2

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        config.update(l1=self.l1, l2=self.l2)
        return config
