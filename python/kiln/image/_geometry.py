"""tf.image's geometric ops, composed from slicing, padding, reversing and transposing: flips, rot90, transpose,
crops and pads to a bounding box, central_crop, resize_with_crop_or_pad. Offsets and sizes are Python ints
(or eager tensors), as the static-shape path of TF's functions uses them."""
import kiln as tf

from . import _common


def _axes(image):
    """(height axis, width axis) of a 3-D or 4-D image."""
    return (0, 1) if image.shape.rank == 3 else (1, 2)


def flip_left_right(image):
    image = _common.as_image(image)
    return tf.reverse(image, [_axes(image)[1]])


def flip_up_down(image):
    image = _common.as_image(image)
    return tf.reverse(image, [_axes(image)[0]])


def transpose(image, name=None):
    """Swaps height and width."""
    image = _common.as_image(image)
    return tf.transpose(image, [1, 0, 2] if image.shape.rank == 3 else [0, 2, 1, 3])


def rot90(image, k=1, name=None):
    """Rotates counter-clockwise by k quarter turns."""
    image = _common.as_image(image)
    k = _common.static_int(k, "k") % 4
    if k == 0:
        return tf.identity(image)
    if k == 1:
        return transpose(flip_left_right(image))
    if k == 2:
        return flip_up_down(flip_left_right(image))
    return flip_left_right(transpose(image))


def _box_args(offset_height, offset_width, target_height, target_width):
    return [_common.static_int(v, what) for v, what in ((offset_height, "offset_height"),
                                                        (offset_width, "offset_width"),
                                                        (target_height, "target_height"),
                                                        (target_width, "target_width"))]


def _window(image, top, left, height, width):
    if image.shape.rank == 3:
        return tf.slice(image, [top, left, 0], [height, width, -1])
    return tf.slice(image, [0, top, left, 0], [-1, height, width, -1])


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The target_height x target_width window whose top-left corner is (offset_height, offset_width)."""
    image = _common.as_image(image)
    top, left, th, tw = _box_args(offset_height, offset_width, target_height, target_width)
    height, width, _ = _common.hwc(image)
    if left < 0:
        raise ValueError("offset_width must be >= 0.")
    if top < 0:
        raise ValueError("offset_height must be >= 0.")
    if tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th <= 0:
        raise ValueError("target_height must be > 0.")
    if width is not None and width < tw + left:
        raise ValueError("width must be >= target + offset.")
    if height is not None and height < th + top:
        raise ValueError("height must be >= target + offset.")
    return _window(image, top, left, th, tw)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zeros around the image: offset_height rows above, offset_width columns left, up to the target size."""
    image = _common.as_image(image)
    top, left, th, tw = _box_args(offset_height, offset_width, target_height, target_width)
    height, width = _common.known_hw(image, "pad_to_bounding_box")
    bottom, right = th - top - height, tw - left - width
    if top < 0:
        raise ValueError("offset_height must be >= 0")
    if left < 0:
        raise ValueError("offset_width must be >= 0")
    if bottom < 0:
        raise ValueError("height must be <= target - offset")
    if right < 0:
        raise ValueError("width must be <= target - offset")
    paddings = [[top, bottom], [left, right], [0, 0]]
    if image.shape.rank == 4:
        paddings = [[0, 0]] + paddings
    return tf.pad(image, paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Crops (centred) or pads with zeros (centred) to target_height x target_width."""
    image = _common.as_image(image)
    th, tw = _common.target_size(target_height, target_width)
    height, width = _common.known_hw(image, "resize_with_crop_or_pad")
    dh, dw = th - height, tw - width
    cropped = crop_to_bounding_box(image, max(-dh // 2, 0), max(-dw // 2, 0), min(th, height), min(tw, width))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), th, tw)


def central_crop(image, central_fraction):
    """The central region holding central_fraction of each side."""
    image = _common.as_image(image)
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if central_fraction == 1.0:
        return image
    height, width = _common.known_hw(image, "central_crop")
    top = int((float(height) - float(height) * central_fraction) / 2)
    left = int((float(width) - float(width) * central_fraction) / 2)
    return _window(image, top, left, height - 2 * top, width - 2 * left)
