"""tf.image.resize and resize_with_pad over the engine's ResizeImage op (src/ops/image_ops.cpp), with TF 2.15's
rules: 3-D or 4-D images, float32 results except for nearest (which keeps the dtype), half-pixel centers,
preserve_aspect_ratio, antialias."""
import numpy as np

import kiln as tf

from .. import _C
from . import _common


class ResizeMethod:
    """tf.image.ResizeMethod: the method names resize takes."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _size(size):
    """[new_height, new_width] as Python ints, with TF's errors."""
    if tf.is_tensor(size):
        if size._is_symbolic:
            raise TypeError("resize: `size` must be known when the graph is built (a Python list or an eager "
                            "tensor), got a traced tensor")
        size = size.numpy()
    values = np.asarray(size)
    if values.shape != (2,):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"'size' must be integers, got {values.dtype}")
    return [int(v) for v in values]


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """Resizes [batch,] height, width, channels images to `size` = [new_height, new_width]."""
    images = _common.as_image(images, "images")
    method = method.lower() if isinstance(method, str) else method
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: {method}")
    new_h, new_w = _size(size)
    height, width, _ = _common.hwc(images)
    if preserve_aspect_ratio:
        if height is None or width is None:
            raise ValueError("resize: preserve_aspect_ratio needs the image's height and width when the graph is built")
        # TF's arithmetic: float32 ratios, the smaller one, rounded half to even.
        scale = min(np.float32(new_h) / np.float32(height), np.float32(new_w) / np.float32(width))
        new_h = int(np.round(np.float32(scale) * np.float32(height)))
        new_w = int(np.round(np.float32(scale) * np.float32(width)))
    if new_h <= 0 or new_w <= 0:
        raise tf.errors.InvalidArgumentError(f"output dimensions must be positive, got [{new_h}, {new_w}]")
    batched = images.shape.rank == 4
    x = images if batched else tf.expand_dims(images, 0)
    if method != "nearest" and x.dtype != tf.float32:
        x = tf.cast(x, tf.float32)
    if method == "nearest" and x.dtype not in (tf.float32, tf.float64, tf.uint8, tf.int32, tf.int64):
        x = tf.cast(x, tf.float32)
    out = _C.resize_image(x, [new_h, new_w], method, bool(antialias) and method not in ("nearest", "area"))
    if method == "nearest" and out.dtype != images.dtype:
        out = tf.cast(out, images.dtype)
    return out if batched else tf.squeeze(out, 0)


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """Resizes keeping the aspect ratio, then pads with zeros (centred) to target_height x target_width."""
    image = _common.as_image(image)
    target_height, target_width = _common.target_size(target_height, target_width)
    height, width = _common.known_hw(image, "resize_with_pad")
    # TF computes the ratio and paddings in float32.
    f32 = np.float32
    ratio = max(f32(width) / f32(target_width), f32(height) / f32(target_height))
    resized_h_f, resized_w_f = f32(height) / ratio, f32(width) / ratio
    resized_h, resized_w = int(np.floor(resized_h_f)), int(np.floor(resized_w_f))
    pad_h = max(0, int(np.floor((f32(target_height) - resized_h_f) / f32(2))))
    pad_w = max(0, int(np.floor((f32(target_width) - resized_w_f) / f32(2))))
    resized = resize(image, [resized_h, resized_w], method=method, antialias=antialias)
    return tf.image.pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
