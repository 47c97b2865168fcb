"""Keras' image preprocessing layers: Resizing (tf.image.resize's half-pixel rules), and the augmentation layers
RandomFlip, RandomRotation, RandomZoom, RandomTranslation and RandomContrast, which change images only while
training. The geometric ones sample each output pixel through an affine map, with the fill modes and
interpolations of TF's ImageProjectiveTransformV3, as engine ops (gather_nd), so they trace into a fit step.

Each augmentation layer draws from its own source (_layer_random.py): seeded, the same sequence for every fresh
layer of that seed, as Keras 2.15's per-layer generators; new draws on every call, none in inference."""
import math

import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from ._layer import Layer
from ._layer_random import LayerRandom, per_image
from ._preprocessing import crop_window, with_image_size

_INTERPOLATIONS = ("bilinear", "nearest")
_FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def _as_float(x, dtype):
    return _C.cast(x, dtype._enum) if x.dtype != dtype else x


def _check_interpolation(value, layer):
    if value in ("bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"):
        raise NotImplementedError(f"kiln.keras.layers.{layer}: interpolation={value!r} is not supported (only "
                                  "'bilinear' and 'nearest')")
    if value not in _INTERPOLATIONS:
        raise NotImplementedError(f"Value not recognized for `interpolation`: {value}. Expected values are: "
                                  f"{list(_INTERPOLATIONS)}")
    return value


def _image_dims(shape, layer):
    s = TensorShape(shape).as_list()
    if len(s) not in (3, 4):
        raise ValueError(f"{layer}: expected images of rank 3 (height, width, channels) or 4 (batch, height, width, "
                         f"channels), got shape {TensorShape(shape)}")
    return s


# ---- Resizing ---------------------------------------------------------------------------------------------------

_RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def resize_images(images, height, width, interpolation="bilinear"):
    """tf.image.resize(images, (height, width), method) without antialiasing, on [..., h, w, c] float images:
    the engine's ResizeImage op (src/ops/image_ops.cpp), whose gradient is its transpose."""
    s = TensorShape(images.shape).as_list()
    if s[-3] is None or s[-2] is None:
        raise ValueError("Resizing: the image height and width must be known")
    batched = len(s) == 4
    x = images if batched else _C.expand_dims(images, 0)
    out = _C.resize_image(x, [int(height), int(width)], interpolation, False)
    return out if batched else _C.squeeze(out, [0])


def _crop_box(in_h, in_w, height, width):
    """Keras' smart_resize crop: the largest centred window with the target's aspect ratio."""
    crop_h = min(in_h, int(np.float32(in_w * height) / np.float32(width)))
    crop_w = min(in_w, int(np.float32(in_h * width) / np.float32(height)))
    return (in_h - crop_h) // 2, (in_w - crop_w) // 2, crop_h, crop_w


class Resizing(Layer):
    """Resizes [batch,] height, width, channels images to (height, width) as tf.image.resize does (half-pixel
    centres, no antialiasing); crop_to_aspect_ratio=True first crops the largest centred window of the target's
    aspect ratio (Keras' smart_resize)."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, **kwargs):
        super().__init__(**kwargs)
        self.height = int(height)
        self.width = int(width)
        if interpolation not in _RESIZE_METHODS:
            raise NotImplementedError(f"Value not recognized for `interpolation`: {interpolation}. Expected values "
                                      f"are: {list(_RESIZE_METHODS)}")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)

    def call(self, inputs):
        x = _as_float(inputs, self._dtype)
        s = _image_dims(x.shape, self.name)
        if self.crop_to_aspect_ratio:
            x = crop_window(x, *_crop_box(s[-3], s[-2], self.height, self.width))
        return resize_images(x, self.height, self.width, self.interpolation)

    def compute_output_shape(self, input_shape):
        return with_image_size(input_shape, self.height, self.width)

    def get_config(self):
        config = super().get_config()
        config.update(height=self.height, width=self.width, interpolation=self.interpolation,
                      crop_to_aspect_ratio=self.crop_to_aspect_ratio)
        return config


# ---- the affine sampler -------------------------------------------------------------------------------------------

def _map_coordinate(coord, length, fill_mode):
    """TF's MapCoordinate: where a sample position outside [0, length - 1] reads from, per fill mode."""
    if fill_mode == "constant":
        return coord
    last = float(length - 1)
    if length <= 1:
        return _C.multiply(coord, 0.0)
    if fill_mode == "reflect":
        size2 = 2.0 * length
        neg = _C.add(_C.multiply(_C.floor(_C.divide(_C.negative(coord), size2)), size2), coord)
        neg = _C.where(_C.less(neg, -float(length)), _C.add(neg, size2), _C.subtract(_C.negative(neg), 1.0))
        pos = _C.subtract(coord, _C.multiply(_C.floor(_C.divide(coord, size2)), size2))
        pos = _C.where(_C.greater_equal(pos, float(length)), _C.subtract(size2 - 1.0, pos), pos)
        coord = _C.where(_C.less(coord, 0.0), neg, _C.where(_C.greater(coord, last), pos, coord))
    elif fill_mode == "wrap":
        neg = _C.add(coord, _C.multiply(_C.add(_C.floor(_C.divide(_C.negative(coord), last)), 1.0), float(length)))
        pos = _C.subtract(coord, _C.multiply(_C.floor(_C.divide(coord, last)), float(length)))
        coord = _C.where(_C.less(coord, 0.0), neg, _C.where(_C.greater(coord, last), pos, coord))
    return _C.clip(coord, 0.0, last)


def _round_half_away(v):
    """std::round, as TF's nearest sampler (tf.round would round halves to even)."""
    up = _C.floor(_C.add(_C.abs(v), 0.5))
    return _C.where(_C.less(v, 0.0), _C.negative(up), up)


def transform_images(images, transforms, interpolation="bilinear", fill_mode="reflect", fill_value=0.0):
    """Keras' transform(): output pixel (x, y) of image b samples the input at ((a0 x + a1 y + a2) / k,
    (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, with `transforms` [batch, 8] = a0 a1 a2 b0 b1 b2 c0 c1.
    Positions outside the image follow `fill_mode`; reads outside it give `fill_value`."""
    _, h, w, _ = TensorShape(images.shape).as_list()
    dt = images.dtype
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    xs = _C.constant(xs, None)
    ys = _C.constant(ys, None)
    t = [_C.reshape(_C.slice(transforms, [0, i], [-1, 1]), [-1, 1, 1]) for i in range(8)]
    k = _C.add(_C.add(_C.multiply(t[6], xs), _C.multiply(t[7], ys)), 1.0)
    x_in = _C.divide(_C.add(_C.add(_C.multiply(t[0], xs), _C.multiply(t[1], ys)), t[2]), k)
    y_in = _C.divide(_C.add(_C.add(_C.multiply(t[3], xs), _C.multiply(t[4], ys)), t[5]), k)
    x_in = _map_coordinate(x_in, w, fill_mode)
    y_in = _map_coordinate(y_in, h, fill_mode)
    # The batch index of every output pixel, for gather_nd (the batch may be unknown while tracing).
    batch = _C.cast(_C.subtract(_C.cumsum(_C.ones_like(t[0], None), 0, False, False), 1.0), _dtypes.int32._enum)
    batch = _C.add(batch, _C.zeros_like(x_in, _dtypes.int32._enum))
    fill = _C.constant(float(fill_value), dt._enum)

    def read(yf, xf):
        inside = _C.logical_and(_C.logical_and(_C.greater_equal(yf, 0.0), _C.less_equal(yf, h - 1.0)),
                                _C.logical_and(_C.greater_equal(xf, 0.0), _C.less_equal(xf, w - 1.0)))
        yi = _C.cast(_C.clip(yf, 0.0, h - 1.0), _dtypes.int32._enum)
        xi = _C.cast(_C.clip(xf, 0.0, w - 1.0), _dtypes.int32._enum)
        values = _C.gather_nd(images, _C.stack([batch, yi, xi], -1))
        return _C.where(_C.expand_dims(inside, -1), values, fill)

    if interpolation == "nearest":
        return read(_round_half_away(y_in), _round_half_away(x_in))
    y0, x0 = _C.floor(y_in), _C.floor(x_in)
    y1, x1 = _C.add(y0, 1.0), _C.add(x0, 1.0)

    def weight(v):
        return _C.cast(_C.expand_dims(v, -1), dt._enum)

    def row(yf):
        return _C.add(_C.multiply(weight(_C.subtract(x1, x_in)), read(yf, x0)),
                      _C.multiply(weight(_C.subtract(x_in, x0)), read(yf, x1)))

    return _C.add(_C.multiply(weight(_C.subtract(y1, y_in)), row(y0)),
                  _C.multiply(weight(_C.subtract(y_in, y0)), row(y1)))


def _factor_range(factor, name, symmetric_bound=None):
    """A float f -> (-f, f); a pair -> itself, lower first."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"`{name}` must be a float or a tuple of 2 floats. Received: {name}={factor}")
        lower, upper = float(factor[0]), float(factor[1])
    else:
        lower, upper = -float(factor), float(factor)
    if upper < lower:
        raise ValueError(f"`{name}` cannot have upper bound less than lower bound. Received: {name}={factor}")
    if symmetric_bound is not None and (abs(lower) > symmetric_bound or abs(upper) > symmetric_bound):
        raise ValueError(f"`{name}` must have values between [-{symmetric_bound}, {symmetric_bound}]. Received: "
                         f"{name}={factor}")
    return lower, upper


class _Augmentation(Layer):
    """An augmentation layer: changes [batch,] h, w, c images while training, returns them (in the layer's dtype)
    otherwise. Subclasses implement `_augment(images)` on a 4-D batch."""

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self._random = LayerRandom(seed)

    def call(self, inputs, training=True):
        x = _as_float(inputs, self._dtype)
        if not training:
            return x
        single = len(_image_dims(x.shape, self.name)) == 3
        if single:
            x = _C.expand_dims(x, 0)
        out = self._augment(x)
        return _C.squeeze(out, [0]) if single else out

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(seed=self.seed)
        return config


class RandomFlip(_Augmentation):
    """Flips each image left-right and/or upside down with probability 1/2 ("horizontal", "vertical",
    "horizontal_and_vertical": each axis decided apart)."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode argument {mode}")
        self.mode = mode

    def _flip(self, x, axis):
        n = TensorShape(x.shape)[axis]
        flipped = _C.gather(x, _C.constant(np.arange(n - 1, -1, -1, dtype=np.int32), None), axis)
        coin = _C.reshape(_C.less(per_image(self._random, x, 0.0, 1.0), 0.5), [-1, 1, 1, 1])
        return _C.where(coin, flipped, x)

    def _augment(self, x):
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            x = self._flip(x, 2)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            x = self._flip(x, 1)
        return x

    def get_config(self):
        config = super().get_config()
        config.update(mode=self.mode)
        return config


class _AffineAugmentation(_Augmentation):
    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Only `reflect`, `wrap`, `constant` and "
                                      "`nearest` are supported.")
        self.fill_mode = fill_mode
        self.interpolation = _check_interpolation(interpolation, type(self).__name__)
        self.fill_value = fill_value

    def _augment(self, x):
        _, h, w, _ = TensorShape(x.shape).as_list()
        if h is None or w is None:
            raise ValueError(f"{self.name}: the image height and width must be known")
        return transform_images(x, self._transforms(x, float(h), float(w)), self.interpolation, self.fill_mode,
                                self.fill_value)

    def get_config(self):
        config = super().get_config()
        config.update(fill_mode=self.fill_mode, fill_value=self.fill_value, interpolation=self.interpolation)
        return config


def _zeros_like_column(c):
    return _C.multiply(c, 0.0)


class RandomRotation(_AffineAugmentation):
    """Rotates each image by an angle drawn from [lower, upper] * 2 pi (factor f: [-f, f]) about its centre
    (counter-clockwise for positive angles)."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.factor = factor
        self.lower, self.upper = _factor_range(factor, "factor")

    def _transforms(self, x, h, w):
        angle = per_image(self._random, x, self.lower * 2 * math.pi, self.upper * 2 * math.pi)
        cos, sin = _C.cos(angle), _C.sin(angle)
        x_offset = _C.divide(_C.subtract(w - 1, _C.subtract(_C.multiply(cos, w - 1), _C.multiply(sin, h - 1))), 2.0)
        y_offset = _C.divide(_C.subtract(h - 1, _C.add(_C.multiply(sin, w - 1), _C.multiply(cos, h - 1))), 2.0)
        zero = _zeros_like_column(cos)
        return _C.concat([cos, _C.negative(sin), x_offset, sin, cos, y_offset, zero, zero], 1)

    def get_config(self):
        config = super().get_config()
        config.update(factor=self.factor)
        return config


class RandomZoom(_AffineAugmentation):
    """Zooms each image by 1 + a draw from height_factor (negative: in, positive: out), and by its own draw
    from width_factor, or the height's when width_factor is None; about the centre."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor = height_factor
        self.width_factor = width_factor
        self.height_lower, self.height_upper = _factor_range(height_factor, "height_factor")
        if self.height_lower < -1.0 or self.height_upper < -1.0:
            raise ValueError(f"`height_factor` argument must have values larger than -1. Received: height_factor="
                             f"{height_factor}")
        if width_factor is not None:
            self.width_lower, self.width_upper = _factor_range(width_factor, "width_factor")
            if self.width_lower < -1.0 or self.width_upper < -1.0:
                raise ValueError(f"`width_factor` argument must have values larger than -1. Received: width_factor="
                                 f"{width_factor}")

    def _transforms(self, x, h, w):
        zy = _C.add(per_image(self._random, x, self.height_lower, self.height_upper), 1.0)
        zx = zy if self.width_factor is None else \
            _C.add(per_image(self._random, x, self.width_lower, self.width_upper), 1.0)
        x_offset = _C.multiply(_C.subtract(1.0, zx), (w - 1) / 2.0)
        y_offset = _C.multiply(_C.subtract(1.0, zy), (h - 1) / 2.0)
        zero = _zeros_like_column(zx)
        return _C.concat([zx, zero, x_offset, zero, zy, y_offset, zero, zero], 1)

    def get_config(self):
        config = super().get_config()
        config.update(height_factor=self.height_factor, width_factor=self.width_factor)
        return config


class RandomTranslation(_AffineAugmentation):
    """Shifts each image by a draw from height_factor * height rows and width_factor * width columns
    (positive: down / right)."""

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor = height_factor
        self.width_factor = width_factor
        self.height_lower, self.height_upper = _factor_range(height_factor, "height_factor", 1.0)
        self.width_lower, self.width_upper = _factor_range(width_factor, "width_factor", 1.0)

    def _transforms(self, x, h, w):
        dy = _C.multiply(per_image(self._random, x, self.height_lower, self.height_upper), h)
        dx = _C.multiply(per_image(self._random, x, self.width_lower, self.width_upper), w)
        one = _C.add(_zeros_like_column(dx), 1.0)
        zero = _zeros_like_column(dx)
        return _C.concat([one, zero, _C.negative(dx), zero, one, _C.negative(dy), zero, zero], 1)

    def get_config(self):
        config = super().get_config()
        config.update(height_factor=self.height_factor, width_factor=self.width_factor)
        return config


class RandomContrast(_Augmentation):
    """(x - mean) * f + mean per image and channel (the mean over height and width), f drawn from
    [1 - lower, 1 + upper]; then clipped to [0, 255], as Keras 2.15."""

    def __init__(self, factor, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        if isinstance(factor, (tuple, list)):
            self.lower, self.upper = float(factor[0]), float(factor[1])
        else:
            self.lower = self.upper = float(factor)
        if self.lower < 0.0 or self.upper < 0.0 or self.lower > 1.0:
            raise ValueError(f"`factor` argument cannot have negative values or values greater than 1. Received: "
                             f"factor={factor}")

    def _augment(self, x):
        f = _C.reshape(per_image(self._random, x, 1.0 - self.lower, 1.0 + self.upper), [-1, 1, 1, 1])
        f = _C.cast(f, x.dtype._enum)
        mean = _C.reduce_mean(x, [1, 2], True)
        return _C.clip(_C.add(_C.multiply(_C.subtract(x, mean), f), mean), 0.0, 255.0)

    def get_config(self):
        config = super().get_config()
        config.update(factor=self.factor)
        return config
