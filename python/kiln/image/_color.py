"""tf.image's pixel-value ops: convert_image_dtype (TF's scale and saturate rules), brightness, contrast, gamma,
saturation and hue adjustments, RGB <-> grayscale/HSV/YUV, per_image_standardization. Composed from elementwise
ops and reductions, so they trace and differentiate like any other op."""
import numpy as np

import kiln as tf

from . import _common

_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538],
               [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1],
               [0, -0.394642334, 2.03206185],
               [1.13988303, -0.58062185, 0]]
# TF's YIQ kernels (NTSC), right-multiplied as the YUV ones.
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115],
               [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1],
               [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]


def _limits(dtype):
    """(min, max) of an integer dtype, as DType.min/max in TF."""
    info = np.iinfo(dtype.as_numpy_dtype)
    return int(info.min), int(info.max)


def _saturate_cast(x, dtype):
    """Clamped into dtype's range before the cast (tf.dtypes.saturate_cast, for a float x)."""
    lo, hi = _limits(dtype)
    return tf.cast(tf.clip_by_value(x, float(lo), float(hi)), dtype)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Integers are [0, MAX], floats [0, 1): converting scales between the two (and between integer widths)."""
    image = tf.convert_to_tensor(image)
    dtype = tf.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == image.dtype:
        return tf.identity(image)
    src = image.dtype
    if src.is_integer and dtype.is_integer:
        in_max, out_max = _limits(src)[1], _limits(dtype)[1]
        if in_max > out_max:
            scale = (in_max + 1) // (out_max + 1)
            scaled = tf.math.floordiv(image, tf.cast(scale, src))
            return tf.cast(scaled, dtype)
        scaled = tf.cast(image, dtype)
        return tf.multiply(scaled, tf.cast((out_max + 1) // (in_max + 1), dtype))
    if src.is_floating and dtype.is_floating:
        return tf.cast(image, dtype)
    if src.is_integer:
        return tf.multiply(tf.cast(image, dtype), 1.0 / _limits(src)[1])
    scaled = tf.multiply(image, _limits(dtype)[1] + 0.5)
    return _saturate_cast(scaled, dtype) if saturate else tf.cast(scaled, dtype)


def adjust_brightness(image, delta):
    """image + delta on the float image."""
    image = tf.convert_to_tensor(image)
    flt = _common.to_float(image)
    return _common.back_to(tf.add(flt, tf.cast(delta, flt.dtype)), image.dtype)


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, the mean per image and channel over height and width."""
    images = _common.at_least_3d(images, "images")
    flt = _common.to_float(images)
    mean = tf.reduce_mean(flt, axis=[-3, -2], keepdims=True)
    factor = tf.cast(contrast_factor, flt.dtype)
    return _common.back_to(tf.add(tf.multiply(tf.subtract(flt, mean), factor), mean), images.dtype)


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma on the float image (gamma >= 0)."""
    image = tf.convert_to_tensor(image)
    if not tf.is_tensor(gamma) and gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    flt = _common.to_float(image)
    out = tf.multiply(tf.cast(gain, flt.dtype), tf.pow(flt, tf.cast(gamma, flt.dtype)))
    return _common.back_to(out, image.dtype)


def _check_rgb(images, what="images"):
    images = tf.convert_to_tensor(images)
    last = images.shape.as_list()[-1] if images.shape.rank else None
    if images.shape.rank is not None and (images.shape.rank < 1 or (last is not None and last != 3)):
        raise tf.errors.InvalidArgumentError(f"{what} must have 3 channels (the last dimension), got shape "
                                             f"{images.shape}")
    return images


def rgb_to_grayscale(images, name=None):
    """0.2989 R + 0.5870 G + 0.1140 B, with a last dimension of 1; the dtype kept."""
    images = _check_rgb(images)
    flt = _common.to_float(images)
    weights = tf.constant([0.2989, 0.5870, 0.1140], flt.dtype)
    gray = tf.reduce_sum(tf.multiply(flt, weights), axis=-1, keepdims=True)
    return tf.image.convert_image_dtype(gray, images.dtype)


def grayscale_to_rgb(images, name=None):
    """The one channel repeated three times."""
    images = tf.convert_to_tensor(images)
    if images.shape.rank is not None and (images.shape.rank < 2 or images.shape.as_list()[-1] not in (1, None)):
        raise ValueError(f"Last dimension of a grayscale image should be size 1, got shape {images.shape}")
    return tf.tile(images, [1] * (images.shape.rank - 1) + [3])


def _channels(x):
    return tf.unstack(x, 3, axis=-1)


def rgb_to_hsv(images, name=None):
    """Float RGB in [0, 1] to hue, saturation, value in [0, 1] (TF's kernel: hue 0 on grays)."""
    images = _check_rgb(images)
    if not images.dtype.is_floating:
        raise TypeError(f"rgb_to_hsv: images must be float32 or float64, got {images.dtype.name}")
    r, g, b = _channels(images)
    value = tf.reduce_max(images, axis=-1)
    span = tf.subtract(value, tf.reduce_min(images, axis=-1))
    zero = tf.zeros_like(value)
    safe_value = tf.where(value > 0, value, tf.ones_like(value))
    saturation = tf.where(value > 0, tf.divide(span, safe_value), zero)
    norm = tf.divide(1.0 / 6.0, tf.where(span > 0, span, tf.ones_like(span)))
    hue = tf.where(tf.equal(r, value), tf.multiply(norm, tf.subtract(g, b)),
                   tf.where(tf.equal(g, value), tf.add(tf.multiply(norm, tf.subtract(b, r)), 2.0 / 6.0),
                            tf.add(tf.multiply(norm, tf.subtract(r, g)), 4.0 / 6.0)))
    hue = tf.where(span > 0, hue, zero)
    hue = tf.where(hue < 0, tf.add(hue, 1.0), hue)
    return tf.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name=None):
    """Hue, saturation, value in [0, 1] to RGB (TF's piecewise-linear channels)."""
    images = _check_rgb(images)
    if not images.dtype.is_floating:
        raise TypeError(f"hsv_to_rgb: images must be float32 or float64, got {images.dtype.name}")
    h, s, v = _channels(images)
    dh = tf.multiply(h, 6.0)

    def ramp(x):
        return tf.clip_by_value(x, 0.0, 1.0)
    dr = ramp(tf.subtract(tf.abs(tf.subtract(dh, 3.0)), 1.0))
    dg = ramp(tf.subtract(2.0, tf.abs(tf.subtract(dh, 2.0))))
    db = ramp(tf.subtract(2.0, tf.abs(tf.subtract(dh, 4.0))))
    one_minus_s = tf.subtract(1.0, s)
    return tf.stack([tf.multiply(tf.add(one_minus_s, tf.multiply(s, c)), v) for c in (dr, dg, db)], axis=-1)


def _mix(images, kernel):
    images = _check_rgb(images)
    return tf.tensordot(images, tf.constant(kernel, images.dtype), axes=[[images.shape.rank - 1], [0]])


def rgb_to_yuv(images):
    return _mix(images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    return _mix(images, _YUV_TO_RGB)


def rgb_to_yiq(images):
    return _mix(images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    return _mix(images, _YIQ_TO_RGB)


def adjust_saturation(image, saturation_factor, name=None):
    """Saturation (HSV) times saturation_factor, clipped to [0, 1]."""
    image = _check_rgb(image, "image")
    flt = _common.to_float(image)
    h, s, v = _channels(rgb_to_hsv(flt))
    s = tf.clip_by_value(tf.multiply(s, tf.cast(saturation_factor, flt.dtype)), 0.0, 1.0)
    return _common.back_to(hsv_to_rgb(tf.stack([h, s, v], axis=-1)), image.dtype)


def adjust_hue(image, delta, name=None):
    """Hue (HSV) rotated by delta in [-1, 1] turns."""
    image = _check_rgb(image, "image")
    if not tf.is_tensor(delta) and not -1.0 <= delta <= 1.0:
        raise tf.errors.InvalidArgumentError(f"delta must be in the interval [-1, 1], got {delta}")
    flt = _common.to_float(image)
    h, s, v = _channels(rgb_to_hsv(flt))
    h = tf.math.floormod(tf.add(h, tf.cast(delta, flt.dtype)), 1.0)
    return _common.back_to(hsv_to_rgb(tf.stack([h, s, v], axis=-1)), image.dtype)


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(N)) per image, N its number of elements; float32."""
    image = _common.at_least_3d(image)
    image = tf.cast(image, tf.float32)
    height, width, channels = _common.hwc(image)
    if None in (height, width, channels):
        count = tf.cast(tf.reduce_prod(tf.shape(image)[-3:]), tf.float32)
    else:
        count = float(height * width * channels)
    mean = tf.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
    stddev = tf.math.reduce_std(image, axis=[-1, -2, -3], keepdims=True)
    adjusted = tf.maximum(stddev, tf.math.rsqrt(tf.cast(count, tf.float32)))
    return tf.divide(tf.subtract(image, mean), adjusted)
