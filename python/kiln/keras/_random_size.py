"""RandomHeight and RandomWidth (Keras 2.15): while training, the batch resized along one axis by a factor drawn
per call from [1 + lower, 1 + upper) (the new size truncated to an integer), with tf.image.resize's rules
(half-pixel centres, bilinear or nearest). The size is known only when the draw is, so the axis is resampled by
gathers whose count is a run-time value: traced, that dim is None, as in Keras."""
import kiln as _tf

from ._image_preprocessing import _check_interpolation
from ._layer import Layer
from ._layer_random import LayerRandom


def resample_axis(images, new_size, axis, method):
    """images resized to new_size (an int32 scalar tensor) along `axis` (1: rows, 2: columns) as tf.image.resize
    resizes without antialiasing: source position (i + 0.5) * old / new - 0.5 (its floor, unshifted, for
    nearest)."""
    old = images.shape[axis]
    scale = _tf.cast(old, _tf.float32) / _tf.cast(new_size, _tf.float32)
    centres = _tf.cast(_tf.range(new_size), _tf.float32) + 0.5
    if method == "nearest":
        index = _tf.minimum(_tf.cast(_tf.floor(centres * scale), _tf.int32), old - 1)
        return _tf.gather(images, index, axis=axis)
    source = _tf.clip_by_value(centres * scale - 0.5, 0.0, float(old - 1))
    low = _tf.cast(_tf.floor(source), _tf.int32)
    high = _tf.minimum(low + 1, old - 1)
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    weight = _tf.cast(_tf.reshape(source - _tf.floor(source), shape), images.dtype)
    top, bottom = _tf.gather(images, low, axis=axis), _tf.gather(images, high, axis=axis)
    return top + (bottom - top) * weight


class _RandomSize(Layer):
    _axis = 1
    _dim_name = "height"

    def __init__(self, factor, interpolation="bilinear", seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        if isinstance(factor, (tuple, list)):
            lower, upper = factor[0], factor[1]
        else:
            lower, upper = -factor, factor
        if upper < lower:
            raise ValueError("`factor` argument cannot have an upper bound lesser than the lower bound. Received: "
                             f"factor={factor}")
        if lower < -1.0 or upper < -1.0:
            raise ValueError(f"`factor` argument must have values larger than -1. Received: factor={factor}")
        self.lower, self.upper = float(lower), float(upper)
        self.interpolation = _check_interpolation(interpolation, type(self).__name__)
        self.seed = seed
        self._random = LayerRandom(seed)

    def call(self, inputs, training=True):
        if not training:
            return inputs
        images = _tf.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        single = images.shape.rank == 3
        if single:
            images = _tf.expand_dims(images, 0)
        if images.shape.rank != 4:
            raise ValueError(f"{self.name}: expected images of rank 3 or 4, got shape {inputs.shape}")
        axis = self._axis
        if images.shape[axis] is None:
            raise ValueError(f"{self.name}: the image {self._dim_name} must be known")
        factor = self._random.uniform(_tf.zeros([], _tf.float32), 1.0 + self.lower, 1.0 + self.upper)
        new_size = _tf.cast(factor * float(images.shape[axis]), _tf.int32)
        out = resample_axis(images, new_size, axis, self.interpolation)
        return _tf.squeeze(out, [0]) if single else out

    def compute_output_shape(self, input_shape):
        shape = _tf.TensorShape(input_shape).as_list()
        shape[self._axis - 4] = None
        return _tf.TensorShape(shape)

    def get_config(self):
        return dict(super().get_config(), factor=self.factor, interpolation=self.interpolation, seed=self.seed)


class RandomHeight(_RandomSize):
    _axis = 1
    _dim_name = "height"


class RandomWidth(_RandomSize):
    _axis = 2
    _dim_name = "width"
