"""keras.preprocessing.image's array transforms (Keras 2.15): affine transforms (rotation, shift, shear, zoom)
about the image centre, channel and brightness shifts, flips.

Keras resamples with SciPy's ndimage.affine_transform; Kiln does the same sampling in NumPy (SciPy is not
a dependency): each output pixel reads the input at `matrix @ (row, col) + offset`, interpolated with
order 0 (nearest) or 1 (linear), and points outside follow SciPy's modes: "constant" (cval), "nearest"
(the edge), "reflect" (mirrored about the edge, the edge repeated) and "wrap" (SciPy's: the first and last
samples coincide, a period of n - 1)."""
import numpy as np

_FILL_MODES = ("constant", "nearest", "reflect", "wrap")


def flip_axis(x, axis):
    return np.flip(np.asarray(x), axis).copy()


def transform_matrix_offset_center(matrix, x, y):
    """`matrix` applied about the centre of an x-by-y image instead of its corner."""
    o_x, o_y = float(x) / 2 - 0.5, float(y) / 2 - 0.5
    offset = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    reset = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return offset @ matrix @ reset


def _fold(index, n, mode):
    """Integer sample positions mapped into 0..n-1 by the fill mode ("constant" is handled by the caller)."""
    if mode == "nearest" or n == 1:
        return np.clip(index, 0, n - 1)
    if mode == "reflect":
        period = 2 * n
        index = np.mod(index, period)
        return np.where(index >= n, period - 1 - index, index)
    if mode == "wrap":  # inside stays; outside repeats with period n - 1
        return np.where((index < 0) | (index > n - 1), np.mod(index, n - 1), index)
    return np.clip(index, 0, n - 1)


def _sample(channel, rows, cols, order, mode, cval):
    """channel (h, w) read at real positions rows, cols (same shape), as SciPy's affine_transform reads it."""
    h, w = channel.shape
    if mode == "constant":
        eps = 1e-9
        outside = (rows < -eps) | (rows > h - 1 + eps) | (cols < -eps) | (cols > w - 1 + eps)
        rows, cols = np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1)
    else:
        outside = None
    if order == 0:
        r = _fold(np.floor(rows + 0.5).astype(np.int64), h, mode)
        c = _fold(np.floor(cols + 0.5).astype(np.int64), w, mode)
        out = channel[r, c]
    else:
        r0, c0 = np.floor(rows), np.floor(cols)
        fr, fc = rows - r0, cols - c0
        r0, c0 = r0.astype(np.int64), c0.astype(np.int64)
        r1, c1 = _fold(r0 + 1, h, mode), _fold(c0 + 1, w, mode)
        r0, c0 = _fold(r0, h, mode), _fold(c0, w, mode)
        top = channel[r0, c0] * (1 - fc) + channel[r0, c1] * fc
        bottom = channel[r1, c0] * (1 - fc) + channel[r1, c1] * fc
        out = top * (1 - fr) + bottom * fr
    if outside is not None:
        out = np.where(outside, cval, out)
    return out


def _affine(channel, matrix, offset, order, mode, cval):
    h, w = channel.shape
    rr, cc = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    rows = matrix[0, 0] * rr + matrix[0, 1] * cc + offset[0]
    cols = matrix[1, 0] * rr + matrix[1, 1] * cc + offset[1]
    return _sample(channel.astype(np.float64), rows, cols, order, mode, cval).astype(channel.dtype)


def apply_affine_transform(x, theta=0, tx=0, ty=0, shear=0, zx=1, zy=1, row_axis=1, col_axis=2, channel_axis=0,
                           fill_mode="nearest", cval=0.0, order=1):
    """Rotates by theta degrees, shifts by (tx, ty) pixels, shears by `shear` degrees and zooms by (zx, zy), about
    the image centre, as Keras composes them (rotation, shift, shear, zoom)."""
    x = np.asarray(x)
    if np.unique([row_axis, col_axis, channel_axis]).size != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    if {row_axis, col_axis, channel_axis} != {0, 1, 2}:
        raise ValueError(f"Invalid axis' indices: {set([row_axis, col_axis, channel_axis]) - {0, 1, 2}}")
    if x.ndim != 3:
        raise ValueError("Input arrays must be multi-channel 2D images.")
    if channel_axis not in (0, 2):
        raise ValueError("Channels are allowed and the first and last dimensions.")
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"boundary mode not supported: {fill_mode!r} (one of {', '.join(_FILL_MODES)})")
    if order not in (0, 1):
        raise NotImplementedError(f"interpolation_order={order}: Kiln resamples with order 0 or 1 only")
    matrix = None

    def then(m):
        return m if matrix is None else matrix @ m

    if theta != 0:
        t = np.deg2rad(theta)
        matrix = then(np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]]))
    if tx != 0 or ty != 0:
        matrix = then(np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]]))
    if shear != 0:
        s = np.deg2rad(shear)
        matrix = then(np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]]))
    if zx != 1 or zy != 1:
        matrix = then(np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]]))
    if matrix is None:
        return x
    h, w = x.shape[row_axis], x.shape[col_axis]
    matrix = transform_matrix_offset_center(matrix, h, w)
    channels = np.moveaxis(x, channel_axis, 0)
    if col_axis > row_axis:
        # Keras' matrices are in (x, y) order; the array is indexed (row, col): swap both axes of the matrix.
        matrix[:, [0, 1]] = matrix[:, [1, 0]]
        matrix[[0, 1]] = matrix[[1, 0]]
    out = np.stack([_affine(c, matrix[:2, :2], matrix[:2, 2], order, fill_mode, cval) for c in channels])
    return np.moveaxis(out, 0, channel_axis)


def apply_channel_shift(x, intensity, channel_axis=0):
    """Adds `intensity` to every channel, clipped to the image's own range."""
    x = np.moveaxis(np.asarray(x), channel_axis, 0)
    low, high = np.min(x), np.max(x)
    x = np.stack([np.clip(c + intensity, low, high) for c in x])
    return np.moveaxis(x, 0, channel_axis)


def random_channel_shift(x, intensity_range, channel_axis=0):
    return apply_channel_shift(x, np.random.uniform(-intensity_range, intensity_range), channel_axis=channel_axis)


def apply_brightness_shift(x, brightness, scale=True):
    """PIL's ImageEnhance.Brightness(brightness) on the image (Keras goes through PIL too)."""
    try:
        from PIL import ImageEnhance
    except ImportError as e:
        raise ImportError("Using brightness shifts requires PIL. Install PIL or Pillow.") from e
    from ._image_utils import array_to_img, img_to_array
    x = np.asarray(x)
    low, high = np.min(x), np.max(x)
    local_scale = (low < 0) or (high > 255)
    img = ImageEnhance.Brightness(array_to_img(x, scale=local_scale or scale)).enhance(brightness)
    x = img_to_array(img)
    if not scale and local_scale:
        x = x / 255 * (high - low) + low
    return x


def random_brightness(x, brightness_range, scale=True):
    if len(brightness_range) != 2:
        raise ValueError("`brightness_range should be tuple or list of two floats. Received: "
                         f"{brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(brightness_range[0], brightness_range[1]), scale)


def random_rotation(x, rg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                    interpolation_order=1):
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(x, theta=theta, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shift(x, wrg, hrg, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                 interpolation_order=1):
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shear(x, intensity, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                 interpolation_order=1):
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_zoom(x, zoom_range, row_axis=1, col_axis=2, channel_axis=0, fill_mode="nearest", cval=0.0,
                interpolation_order=1):
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: {zoom_range}")
    zx, zy = (1, 1) if zoom_range[0] == 1 and zoom_range[1] == 1 else np.random.uniform(zoom_range[0],
                                                                                            zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)
