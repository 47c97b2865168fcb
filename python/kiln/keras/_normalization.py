"""BatchNormalization and LayerNormalization (kiln.keras.layers), with the arithmetic of the C++
kiln::nn layers of the same names (src/nn/normalization.cpp), so both give the same values."""
from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from . import initializers as _initializers
from ._layer import InputSpec, Layer, _check_unsupported
from ._masking import weights_from_mask


def _moments(x, axes):
    """tf.nn.moments with keepdims: the mean and the biased variance over `axes`."""
    return _C.moments(x, axes, True)


def _weighted_moments(x, axes, weights):
    """tf.nn.weighted_moments with keepdims: the mean and variance over `axes` with each element counted
    `weights` times (weights broadcast against x)."""
    weights = _C.multiply(weights, _C.ones_like(x, None))
    count = _C.reduce_sum(weights, axes, True)
    mean = _C.divide(_C.reduce_sum(_C.multiply(x, weights), axes, True), count)
    variance = _C.divide(_C.reduce_sum(_C.multiply(_C.square(_C.subtract(x, mean)), weights), axes, True), count)
    return mean, variance


def _normalize(x, mean, variance, gamma, beta, epsilon):
    """tf.nn.batch_normalization's arithmetic: x * inv + (beta - mean * inv), inv = rsqrt(var + eps) * gamma."""
    inv = _C.rsqrt(_C.add(variance, epsilon))
    if gamma is not None:
        inv = _C.multiply(inv, gamma)
    shift = _C.multiply(mean, inv)
    shift = _C.subtract(beta, shift) if beta is not None else _C.negative(shift)
    return _C.add(_C.multiply(x, inv), shift)


def _to_float32(x):
    """Keras 2.15: 16-bit inputs are normalized in float32 (their statistics would overflow or lose precision), and
    the result is cast back to the input's dtype (`_from_float32`)."""
    if x.dtype.name in ("float16", "bfloat16"):
        return _C.cast(x, _dtypes.float32._enum), x.dtype
    return x, None


def _from_float32(y, dtype):
    return y if dtype is None else _C.cast(y, dtype._enum)


class _Normalization(Layer):
    """What both layers share: one features `axis`, and gamma / beta of its size."""

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                 gamma_regularizer, beta_constraint, gamma_constraint, **kwargs):
        super().__init__(**kwargs)
        _check_unsupported(type(self).__name__, beta_regularizer=(beta_regularizer, None),
                           gamma_regularizer=(gamma_regularizer, None), beta_constraint=(beta_constraint, None),
                           gamma_constraint=(gamma_constraint, None))
        self.supports_masking = True  # the mask passes through
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise NotImplementedError(f"kiln.keras.layers.{type(self).__name__}: only one axis is supported, "
                                          f"got axis={axis!r}")
            axis = axis[0]
        if not isinstance(axis, int):
            raise TypeError(f"Expected an int or a list/tuple of ints for the argument 'axis', but received: {axis!r}")
        if not epsilon > 0:
            raise ValueError(f"epsilon must be positive, got {epsilon}")
        self.axis, self.epsilon, self.center, self.scale = axis, float(epsilon), bool(center), bool(scale)
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        self.gamma = self.beta = None

    def _resolve_axis(self, rank):
        axis = self.axis + rank if self.axis < 0 else self.axis
        if not 0 <= axis < rank:
            raise ValueError(f"Invalid axis: {self.axis} (layer {self.name}, inputs of rank {rank})")
        return axis

    def _build_params(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.rank is None:
            raise ValueError(f"Input has undefined rank (layer {self.name})")
        axis = self._resolve_axis(input_shape.rank)
        size = input_shape[axis]
        if size is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {input_shape}.")
        self.input_spec = InputSpec(ndim=input_shape.rank, axes={axis: size})
        # Keras: the parameters are float32 under a mixed policy, and read as float32 (no autocasting).
        if self.scale:
            self.gamma = self.add_weight("gamma", [size], initializer=self.gamma_initializer,
                                         experimental_autocast=False)
        if self.center:
            self.beta = self.add_weight("beta", [size], initializer=self.beta_initializer,
                                        experimental_autocast=False)
        return size

    def _along(self, v, rank, axis):
        """A [features] tensor shaped to broadcast along `axis` of rank-`rank` inputs."""
        if v is None or axis == rank - 1:
            return v
        shape = [1] * rank
        shape[axis] = -1
        return _C.reshape(v, shape)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(axis=self.axis, epsilon=self.epsilon, center=self.center, scale=self.scale)
        return config


class BatchNormalization(_Normalization):
    """(x - mean) / sqrt(variance + epsilon) * gamma + beta. With training=True the batch's statistics
    (over every axis but `axis`) normalize and each call moves the non-trainable moving_mean and
    moving_variance: moving -= (moving - batch) * (1 - momentum), inside the traced step when traced.
    Otherwise the moving statistics normalize."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 synchronized=False, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                 virtual_batch_size=None, adjustment=None, **kwargs):
        # `fused` picks TF's kernel, not the result: accepted, ignored.
        _check_unsupported("BatchNormalization", synchronized=(synchronized, False), renorm=(renorm, False),
                           renorm_clipping=(renorm_clipping, None), virtual_batch_size=(virtual_batch_size, None),
                           adjustment=(adjustment, None))
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                         gamma_regularizer, beta_constraint, gamma_constraint, **kwargs)
        if not 0 <= momentum <= 1:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        self.momentum = float(momentum)
        self.moving_mean_initializer = _initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = _initializers.get(moving_variance_initializer)
        self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        size = self._build_params(input_shape)
        self.moving_mean = self.add_weight("moving_mean", [size], initializer=self.moving_mean_initializer,
                                           trainable=False, experimental_autocast=False)
        self.moving_variance = self.add_weight("moving_variance", [size],
                                               initializer=self.moving_variance_initializer, trainable=False,
                                               experimental_autocast=False)
        self.built = True

    def call(self, inputs, training=None, mask=None):
        inputs, half = _to_float32(inputs)
        return _from_float32(self._normalized(inputs, training, mask), half)

    def _normalized(self, inputs, training, mask):
        rank = len(inputs.shape)
        axis = self._resolve_axis(rank)
        if not self.trainable:
            training = False  # TF 2: a frozen BatchNormalization normalizes with its moving statistics
        if not training:
            return _normalize(inputs, self._along(self.moving_mean, rank, axis),
                              self._along(self.moving_variance, rank, axis), self._along(self.gamma, rank, axis),
                              self._along(self.beta, rank, axis), self.epsilon)
        axes = [i for i in range(rank) if i != axis]
        if mask is None:
            mean, variance = _moments(inputs, axes)
        else:
            # Keras 2.12: the batch statistics of the kept positions only (a [batch, steps] mask gains the
            # features' dim).
            weights = weights_from_mask(mask, inputs)
            if weights.shape.rank == rank - 1:
                weights = _C.expand_dims(weights, -1)
            mean, variance = _weighted_moments(inputs, axes, weights)
        decay = 1.0 - self.momentum
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            moving.assign_sub(_C.multiply(_C.subtract(moving, _C.reshape(batch, [-1])), decay))
        return _normalize(inputs, mean, variance, self._along(self.gamma, rank, axis),
                          self._along(self.beta, rank, axis), self.epsilon)

    def get_config(self):
        config = super().get_config()
        config.update(momentum=self.momentum)
        return config


class LayerNormalization(_Normalization):
    """(x - mean) / sqrt(variance + epsilon) * gamma + beta with the mean and (biased) variance of each
    sample along `axis`; the same in training and inference."""

    def __init__(self, axis=-1, epsilon=0.001, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                         gamma_regularizer, beta_constraint, gamma_constraint, **kwargs)

    def build(self, input_shape):
        self._build_params(input_shape)
        self.built = True

    def call(self, inputs):
        inputs, half = _to_float32(inputs)
        rank = len(inputs.shape)
        axis = self._resolve_axis(rank)
        mean, variance = _moments(inputs, [axis])
        return _from_float32(_normalize(inputs, mean, variance, self._along(self.gamma, rank, axis),
                                        self._along(self.beta, rank, axis), self.epsilon), half)
