"""What tf.image's functions share: the 3-D/4-D image checks with TF's messages, static dims, and TF's rule of
computing on float images (convert_image_dtype to float32 unless the image is already float32)."""
import numpy as np

import kiln as tf

from ..tensor_shape import TensorShape


def as_image(image, what="image"):
    """image as a tensor of rank 3 or 4 (ValueError naming `what` otherwise)."""
    image = tf.convert_to_tensor(image)
    rank = image.shape.rank
    if rank is not None and rank not in (3, 4):
        raise ValueError(f"'{what}' (shape {image.shape}) must have either 3 or 4 dimensions.")
    if rank is None:
        raise ValueError(f"'{what}' must have a known rank (3 or 4), got an unknown shape")
    return image


def at_least_3d(image, what="image"):
    image = tf.convert_to_tensor(image)
    if image.shape.rank is None or image.shape.rank < 3:
        raise ValueError(f"'{what}' (shape {image.shape}) must be at least three-dimensional.")
    return image


def hwc(image):
    """The static height, width and channels of a 3-D or 4-D image (None where unknown)."""
    s = TensorShape(image.shape).as_list()
    return s[-3], s[-2], s[-1]


def known_hw(image, op):
    """The static height and width, which `op` needs when the graph is built (ValueError otherwise)."""
    height, width, _ = hwc(image)
    if height is None or width is None:
        raise ValueError(f"{op}: the image's height and width must be known when the graph is built")
    return height, width


def target_size(target_height, target_width):
    """Positive Python ints, with TF's messages (width checked first, as TF)."""
    th, tw = static_int(target_height, "target_height"), static_int(target_width, "target_width")
    if tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th <= 0:
        raise ValueError("target_height must be > 0.")
    return th, tw


def static_int(value, what):
    """A Python int from an int, a NumPy scalar or an eager scalar tensor (TypeError for a traced one)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    if tf.is_tensor(value):
        if value._is_symbolic:
            raise TypeError(f"{what} must be known when the graph is built, got a traced tensor")
        return int(value.numpy())
    return int(value)


def to_float(image):
    """TF's float working copy: float16/float32 kept, anything else through convert_image_dtype to float32."""
    if image.dtype == tf.float32:
        return image
    return tf.image.convert_image_dtype(image, tf.float32)


def back_to(image, dtype):
    return tf.image.convert_image_dtype(image, dtype, saturate=True)
