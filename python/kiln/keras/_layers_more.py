"""More of Keras 2.15's layers: Identity, UnitNormalization, ThresholdedReLU, PReLU, GroupNormalization and the
augmentation layers RandomBrightness and RandomCrop."""
import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from . import constraints as _constraints
from . import initializers as _initializers
from . import regularizers as _regularizers
from ._image_preprocessing import _Augmentation, _as_float, _crop_box, _factor_range, _image_dims, resize_images
from ._layer import InputSpec, Layer
from ._layer_random import LayerRandom, per_image
from ._preprocessing import crop_window, with_image_size
from ._serialization import serialize_keras_object


class _ShapePreserving(Layer):
    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)


class Identity(_ShapePreserving):
    """Returns its inputs."""

    def call(self, inputs):
        return inputs


class UnitNormalization(_ShapePreserving):
    """x / max(||x||, 1e-6) along `axis` (an int or a list of ints)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axis, (int, list, tuple)):
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. Received: "
                            f"axis={axis}")
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs):
        x = _as_float(inputs, self._dtype)
        axes = [self.axis] if isinstance(self.axis, int) else list(self.axis)
        return _C.l2_normalize(x, axes, 1e-12)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


class ThresholdedReLU(_ShapePreserving):
    """x where x > theta, else 0."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError(f"Theta of a Thresholded ReLU layer cannot be None, expecting a float. Received: {theta}")
        if theta < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}")
        self.theta = float(theta)
        self.supports_masking = True

    def call(self, inputs):
        return _C.multiply(inputs, _C.cast(_C.greater(inputs, self.theta), inputs.dtype._enum))

    def get_config(self):
        config = super().get_config()
        config["theta"] = self.theta
        return config


class PReLU(_ShapePreserving):
    """max(x, 0) + alpha * min(x, 0) with a learned alpha of the input's shape (without the batch dim), shared (size
    1) along shared_axes."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = _initializers.get(alpha_initializer)
        self.alpha_regularizer = _regularizers.get(alpha_regularizer)
        self.alpha_constraint = _constraints.get(alpha_constraint)
        if shared_axes is None or isinstance(shared_axes, (list, tuple)):
            self.shared_axes = None if shared_axes is None else list(shared_axes)
        else:
            self.shared_axes = [shared_axes]
        self.alpha = None

    def build(self, input_shape):
        shape = TensorShape(input_shape).as_list()[1:]
        for axis in self.shared_axes or []:
            shape[axis - 1] = 1
        if any(d is None for d in shape):
            raise ValueError(f"PReLU needs the input's dims (besides the batch and shared_axes) to be known, got "
                             f"{TensorShape(input_shape)}")
        self.alpha = self.add_weight("alpha", shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {}
        if self.shared_axes:
            full = TensorShape(input_shape).as_list()
            axes = {i: full[i] for i in range(1, len(full)) if i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(shape) + 1, axes=axes)
        self.built = True

    def call(self, inputs):
        positive = _C.relu(inputs)
        negative = _C.multiply(_C.negative(self.alpha.read_value()), _C.relu(_C.negative(inputs)))
        return _C.add(positive, negative)

    def get_config(self):
        config = super().get_config()
        config.update(alpha_initializer=serialize_keras_object(self.alpha_initializer),
                      alpha_regularizer=serialize_keras_object(self.alpha_regularizer),
                      alpha_constraint=serialize_keras_object(self.alpha_constraint), shared_axes=self.shared_axes)
        return config


class GroupNormalization(_ShapePreserving):
    """Normalizes each sample's channels in `groups` groups (over the other axes and the group's channels), then
    gamma * x + beta per channel (Wu & He, 2018); groups=1 is layer norm over everything, groups=channels instance
    norm."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups, self.axis, self.epsilon = int(groups), int(axis), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        self.beta_regularizer = _regularizers.get(beta_regularizer)
        self.gamma_regularizer = _regularizers.get(gamma_regularizer)
        self.beta_constraint = _constraints.get(beta_constraint)
        self.gamma_constraint = _constraints.get(gamma_constraint)
        self.gamma = self.beta = None

    def build(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        rank = len(shape)
        axis = self.axis % rank
        if axis != rank - 1:
            raise NotImplementedError("kiln.keras.layers.GroupNormalization: only the last axis (channels_last)")
        channels = shape[axis]
        if channels is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer received "
                             f"an input with shape {TensorShape(input_shape)}.")
        if self.groups == -1:
            self.groups = channels
        if channels < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels "
                             f"({channels}).")
        if channels % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({channels}).")
        if self.scale:
            self.gamma = self.add_weight("gamma", [channels], initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", [channels], initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.input_spec = InputSpec(ndim=rank, axes={axis: channels})
        self.built = True

    def call(self, inputs):
        x = _as_float(inputs, self._dtype)
        shape = TensorShape(x.shape).as_list()
        if any(d is None for d in shape[1:]):
            raise ValueError(f"{self.name}: the input dims besides the batch must be known, got {x.shape}")
        channels = shape[-1]
        grouped = _C.reshape(x, [-1] + shape[1:-1] + [self.groups, channels // self.groups])
        axes = list(range(1, len(shape) - 1)) + [len(shape)]
        mean = _C.reduce_mean(grouped, axes, True)
        variance = _C.reduce_mean(_C.square(_C.subtract(grouped, mean)), axes, True)
        normalized = _C.multiply(_C.subtract(grouped, mean), _C.rsqrt(_C.add(variance, self.epsilon)))
        out = _C.reshape(normalized, [-1] + shape[1:])
        if self.scale:
            out = _C.multiply(out, self.gamma.read_value())
        if self.center:
            out = _C.add(out, self.beta.read_value())
        return out

    def get_config(self):
        config = super().get_config()
        ser = serialize_keras_object
        config.update(groups=self.groups, axis=self.axis, epsilon=self.epsilon, center=self.center, scale=self.scale,
                      beta_initializer=ser(self.beta_initializer), gamma_initializer=ser(self.gamma_initializer),
                      beta_regularizer=ser(self.beta_regularizer), gamma_regularizer=ser(self.gamma_regularizer),
                      beta_constraint=ser(self.beta_constraint), gamma_constraint=ser(self.gamma_constraint))
        return config


class RandomBrightness(_Augmentation):
    """Adds factor * (value_range width) to each image (factor drawn per image from [lower, upper]; a float f:
    [-f, f]) and clips to value_range."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        self.lower, self.upper = _factor_range(factor, "factor", 1.0)
        if len(value_range) != 2:
            raise ValueError(f"The `value_range` argument should be a list of two numbers. Got {value_range}")
        self.value_range = sorted(float(v) for v in value_range)

    def _augment(self, x):
        low, high = self.value_range
        delta = _C.multiply(per_image(self._random, x, self.lower, self.upper), high - low)
        delta = _C.cast(_C.reshape(delta, [-1, 1, 1, 1]), x.dtype._enum)
        return _C.clip(_C.add(x, delta), low, high)

    def get_config(self):
        config = super().get_config()
        # Keras 2.15 saves the factor as its [lower, upper] range.
        config.update(factor=[self.lower, self.upper], value_range=self.value_range)
        return config


class RandomCrop(Layer):
    """Training: one random height x width window for the whole batch (Keras 2.15); inference, or images smaller
    than the window: the largest centred window of the target's aspect ratio, resized (smart_resize)."""

    def __init__(self, height, width, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width, self.seed = int(height), int(width), seed
        self._random = LayerRandom(seed)

    def call(self, inputs, training=True):
        x = _as_float(inputs, self._dtype)
        s = _image_dims(x.shape, self.name)
        h, w = s[-3], s[-2]
        if h is None or w is None:
            raise ValueError(f"{self.name}: the image height and width must be known")
        if not training or h < self.height or w < self.width:
            return resize_images(crop_window(x, *_crop_box(h, w, self.height, self.width)), self.height, self.width)
        draw = self._random.uniform(_C.zeros([2], _dtypes.float32._enum), 0.0, 1.0)
        limits = _C.constant(np.array([h - self.height + 1, w - self.width + 1], np.float32), None)
        starts = _C.cast(_C.floor(_C.multiply(draw, limits)), _dtypes.int32._enum)
        rows = _C.add(_C.constant(np.arange(self.height, dtype=np.int32), None), _C.slice(starts, [0], [1]))
        cols = _C.add(_C.constant(np.arange(self.width, dtype=np.int32), None), _C.slice(starts, [1], [1]))
        return _C.gather(_C.gather(x, rows, len(s) - 3), cols, len(s) - 2)

    def compute_output_shape(self, input_shape):
        return with_image_size(input_shape, self.height, self.width)

    def get_config(self):
        config = super().get_config()
        config.update(height=self.height, width=self.width, seed=self.seed)
        return config
