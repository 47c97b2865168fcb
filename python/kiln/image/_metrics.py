"""tf.image's image comparisons and derivatives: psnr, ssim (Gaussian-weighted local statistics through a
depthwise convolution, as TF), image_gradients, sobel_edges, total_variation."""
import math

import numpy as np

import kiln as tf

from . import _color, _common


def _float_pair(a, b, max_val):
    a, b = tf.convert_to_tensor(a), tf.convert_to_tensor(b)
    if a.dtype != b.dtype:
        raise TypeError(f"images must have the same dtype, got {a.dtype.name} and {b.dtype.name}")
    if a.shape.rank is not None and a.shape.rank < 3:
        raise ValueError(f"Shape must be at least rank 3, got {a.shape}")
    if a.shape.is_fully_defined() and b.shape.is_fully_defined():
        sa, sb = a.shape.as_list(), b.shape.as_list()
        if sa[-3:] != sb[-3:]:
            raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible")
    max_val = _color.convert_image_dtype(tf.cast(max_val, a.dtype), tf.float32)
    return _color.convert_image_dtype(a, tf.float32), _color.convert_image_dtype(b, tf.float32), max_val


def psnr(a, b, max_val, name=None):
    """20 log10(max_val) - 10 log10(mse) per image (the last three axes)."""
    a, b, max_val = _float_pair(a, b, max_val)
    mse = tf.reduce_mean(tf.math.squared_difference(a, b), axis=[-3, -2, -1])
    return tf.subtract(tf.multiply(tf.math.log(max_val), 20.0 / math.log(10.0)),
                       tf.multiply(tf.math.log(mse), 10.0 / math.log(10.0)))


def _gaussian(size, sigma):
    """TF's _fspecial_gauss: a normalized size x size Gaussian, [size, size, 1, 1]."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2.0
    g = np.square(coords) * np.float32(-0.5 / sigma ** 2)
    g = (g.reshape(1, -1) + g.reshape(-1, 1)).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).reshape(size, size, 1, 1).astype(np.float32)


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2):
    height, width, channels = _common.hwc(x)
    if height is None or width is None or channels is None:
        raise ValueError("ssim: the images' height, width and channels must be known when the graph is built")
    if height < filter_size or width < filter_size:
        raise tf.errors.InvalidArgumentError(f"ssim: the images ({height} x {width}) must be at least filter_size "
                                             f"x filter_size ({filter_size} x {filter_size})")
    kernel = tf.constant(np.tile(_gaussian(filter_size, filter_sigma), [1, 1, channels, 1]))
    batch_dims = x.shape.as_list()[:-3]

    def reducer(t):
        flat = tf.reshape(t, [-1, height, width, channels])
        out = tf.nn.depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID")
        return tf.reshape(out, batch_dims + out.shape.as_list()[1:])
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = tf.multiply(tf.multiply(mean0, mean1), 2.0)
    den0 = tf.add(tf.square(mean0), tf.square(mean1))
    luminance = tf.divide(tf.add(num0, c1), tf.add(den0, c1))
    num1 = tf.multiply(reducer(tf.multiply(x, y)), 2.0)
    den1 = reducer(tf.add(tf.square(x), tf.square(y)))
    cs = tf.divide(tf.add(tf.subtract(num1, num0), c2), tf.add(tf.subtract(den1, den0), c2))
    return tf.multiply(luminance, cs), cs


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity per image (the mean over positions and channels), or per position with
    return_index_map=True."""
    x, y, max_val = _float_pair(img1, img2, max_val)
    ssim_map, _ = _ssim_per_channel(x, y, max_val, int(filter_size), float(filter_sigma), float(k1), float(k2))
    if return_index_map:
        return tf.reduce_mean(ssim_map, axis=[-1])
    return tf.reduce_mean(ssim_map, axis=[-3, -2, -1])


def image_gradients(image):
    """(dy, dx): forward differences down and right, zero in the last row and column; 4-D images."""
    image = tf.convert_to_tensor(image)
    if image.shape.rank != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    dy = tf.subtract(image[:, 1:, :, :], image[:, :-1, :, :])
    dx = tf.subtract(image[:, :, 1:, :], image[:, :, :-1, :])
    dy = tf.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = tf.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


def sobel_edges(image):
    """[batch, h, w, d, 2]: the vertical and horizontal Sobel responses, the image reflected at its border."""
    image = tf.convert_to_tensor(image)
    if image.shape.rank != 4:
        raise ValueError(f"sobel_edges expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    channels = image.shape.as_list()[-1]
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    kernels = np.stack([ky, ky.T], axis=-1)  # [3, 3, 2]
    kernel = np.tile(kernels[:, :, None, :], [1, 1, channels, 1])  # [3, 3, d, 2]
    # REFLECT padding by one: the second row (column) before, the last but one after.
    padded = tf.concat([image[:, 1:2], image, image[:, -2:-1]], axis=1)
    padded = tf.concat([padded[:, :, 1:2], padded, padded[:, :, -2:-1]], axis=2)
    out = tf.nn.depthwise_conv2d(padded, tf.constant(kernel, image.dtype), [1, 1, 1, 1], "VALID")
    s = out.shape.as_list()
    return tf.reshape(out, [-1 if s[0] is None else s[0], s[1], s[2], channels, 2])


def total_variation(images, name=None):
    """The sum of absolute differences of neighbouring pixels, per image for a 4-D batch."""
    images = tf.convert_to_tensor(images)
    rank = images.shape.rank
    if rank == 3:
        dh = tf.subtract(images[1:, :, :], images[:-1, :, :])
        dw = tf.subtract(images[:, 1:, :], images[:, :-1, :])
        axes = None
    elif rank == 4:
        dh = tf.subtract(images[:, 1:, :, :], images[:, :-1, :, :])
        dw = tf.subtract(images[:, :, 1:, :], images[:, :, :-1, :])
        axes = [1, 2, 3]
    else:
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    return tf.add(tf.reduce_sum(tf.abs(dh), axis=axes), tf.reduce_sum(tf.abs(dw), axis=axes))


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                    k2=0.03):
    """Multi-scale SSIM as TF computes it: at each scale the per-channel contrast-structure term (ReLU'd), the
    images then halved by 2x2 average pooling (an odd side first padded symmetrically); at the last scale the
    SSIM itself; the weighted geometric mean over scales, averaged over channels."""
    x, y, max_val = _float_pair(img1, img2, max_val)
    if x.shape.rank is None or x.shape.rank < 3:
        raise ValueError(f"ssim_multiscale needs images of rank >= 3, got {x.shape}")
    heads = x.shape.as_list()[:-3]
    imgs = [x, y]
    mcs, ssim_per_channel = [], None
    for k in range(len(power_factors)):
        if k > 0:
            height, width, channels = imgs[0].shape.as_list()[-3:]
            flat = [tf.reshape(t, [-1, height, width, channels]) for t in imgs]
            if height % 2:  # a symmetric pad of one: the last row repeated
                flat = [tf.concat([t, t[:, -1:]], axis=1) for t in flat]
            if width % 2:
                flat = [tf.concat([t, t[:, :, -1:]], axis=2) for t in flat]
            pooled = [tf.nn.avg_pool(t, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for t in flat]
            imgs = [tf.reshape(t, heads + t.shape.as_list()[1:]) for t in pooled]
        ssim_map, cs_map = _ssim_per_channel(imgs[0], imgs[1], max_val, int(filter_size), float(filter_sigma),
                                             float(k1), float(k2))
        ssim_per_channel = tf.reduce_mean(ssim_map, axis=[-3, -2])
        mcs.append(tf.nn.relu(tf.reduce_mean(cs_map, axis=[-3, -2])))
    mcs.pop()  # the last scale contributes its SSIM (luminance included) instead
    stacked = tf.stack(mcs + [tf.nn.relu(ssim_per_channel)], axis=-1)
    weights = tf.constant([float(w) for w in power_factors], dtype=stacked.dtype)
    return tf.reduce_mean(tf.reduce_prod(tf.pow(stacked, weights), axis=-1), axis=-1)
