"""tf.image.extract_patches: every (strided, dilated) window of a 4-D image as one vector, composed of strided
slices (one per position in the window) stacked and reshaped, so it traces and differentiates."""
import math

import kiln as tf


def _four(values, what):
    values = [int(v) for v in values]
    if len(values) != 4 or values[0] != 1 or values[3] != 1 or min(values) < 1:
        raise ValueError(f"{what} must be [1, rows, cols, 1] with positive rows and cols, got {values}")
    return values[1], values[2]


def _geometry(size, k, stride, rate, padding):
    """(output size, padding before) of one axis, as TF's convolution windows."""
    effective = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        return max(0, math.ceil((size - effective + 1) / stride)), 0
    out = math.ceil(size / stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """[batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]: each window's pixels in row, column, depth
    order."""
    images = tf.convert_to_tensor(images)
    if images.shape.rank != 4:
        raise ValueError(f"images must be 4-D [batch, in_rows, in_cols, depth], got shape {images.shape}")
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}")
    kh, kw = _four(sizes, "sizes")
    sh, sw = _four(strides, "strides")
    rh, rw = _four(rates, "rates")
    batch, height, width, depth = images.shape.as_list()
    if height is None or width is None or depth is None:
        raise ValueError("extract_patches: the images' height, width and depth must be known when the graph is built")
    out_h, top = _geometry(height, kh, sh, rh, padding)
    out_w, left = _geometry(width, kw, sw, rw, padding)
    bottom = max(0, (out_h - 1) * sh + (kh - 1) * rh + 1 - height - top)
    right = max(0, (out_w - 1) * sw + (kw - 1) * rw + 1 - width - left)
    padded = tf.pad(images, [[0, 0], [top, bottom], [left, right], [0, 0]])
    if out_h == 0 or out_w == 0:
        return tf.zeros([batch if batch is not None else 0, out_h, out_w, kh * kw * depth], images.dtype)
    windows = [padded[:, i * rh:i * rh + (out_h - 1) * sh + 1:sh, j * rw:j * rw + (out_w - 1) * sw + 1:sw, :]
               for i in range(kh) for j in range(kw)]
    stacked = tf.stack(windows, axis=3)  # [batch, out_h, out_w, kh * kw, depth]
    return tf.reshape(stacked, [-1, out_h, out_w, kh * kw * depth])
