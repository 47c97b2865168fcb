"""Keras' image helpers (keras.utils.array_to_img, img_to_array, save_img, load_img; also under
keras.preprocessing.image) on PIL (Debian's python3-pil), with Keras 2.15's rules: channels_last arrays,
`scale=True` stretching the values to 0..255, one channel as a grayscale ('L') image."""
import numpy as np

from . import backend


def _pil():
    try:
        from PIL import Image
    except ImportError as e:  # Keras' message
        raise ImportError("Could not import PIL.Image. The use of `array_to_img` requires PIL.") from e
    return Image


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A PIL image from a 3-D array (height, width, channels): 1 channel 'L' (or 'I' when values pass 255),
    3 'RGB', 4 'RGBA'."""
    Image = _pil()
    data_format = data_format or backend.image_data_format()
    x = np.asarray(x, dtype=dtype or backend.floatx())
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid data_format: {data_format}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    if x.shape[2] == 4:
        return Image.fromarray(x.astype("uint8"), "RGBA")
    if x.shape[2] == 3:
        return Image.fromarray(x.astype("uint8"), "RGB")
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {x.shape[2]}")


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image as a float array (height, width, channels)."""
    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    x = np.asarray(img, dtype=dtype or backend.floatx())
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x[np.newaxis] if data_format == "channels_first" else x[:, :, np.newaxis]
    raise ValueError(f"Unsupported image shape: {x.shape}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes an image array to a file (format from the name unless `file_format`)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format in ("jpg", "jpeg"):
        img = img.convert("RGB")  # JPEG has no alpha, as Keras warns
    img.save(path, format=file_format, **kwargs)


_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def load_img(path, grayscale=False, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """Reads an image file as a PIL image in `color_mode` ("grayscale", "rgb", "rgba"), resized to
    target_size=(height, width) when given."""
    Image = _pil()
    if grayscale:
        color_mode = "grayscale"
    if hasattr(path, "read"):
        img = Image.open(path)
    else:
        with open(str(path), "rb") as f:
            img = Image.open(f)
            img.load()
    wanted = {"grayscale": ("L", "I;16", "I"), "rgba": ("RGBA",), "rgb": ("RGB",)}
    if color_mode not in wanted:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode not in wanted[color_mode]:
        img = img.convert("L" if color_mode == "grayscale" else color_mode.upper())
    if target_size is not None:
        width_height = (target_size[1], target_size[0])
        if img.size != width_height:
            if interpolation not in _INTERPOLATIONS:
                raise ValueError(f"Invalid interpolation method {interpolation!r}. Supported methods are "
                                 f"{', '.join(_INTERPOLATIONS)}")
            resample = getattr(Image, interpolation.upper())
            if keep_aspect_ratio:
                width, height = img.size
                target_width, target_height = width_height
                crop_height = (width * target_height) // target_width
                crop_width = (height * target_width) // target_height
                crop_height, crop_width = min(height, crop_height), min(width, crop_width)
                left, top = (width - crop_width) // 2, (height - crop_height) // 2
                img = img.crop((left, top, left + crop_width, top + crop_height))
            img = img.resize(width_height, resample)
    return img


def smart_resize(x, size, interpolation="bilinear"):
    """The largest centred window of x with size's aspect ratio, resized to size = (height, width) with
    tf.image.resize's `interpolation` (float32 out); a NumPy array in gives a NumPy array out, a tensor a tensor."""
    from .. import _C
    from ._image_preprocessing import _crop_box
    from ._preprocessing import crop_window
    import kiln as tf
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    numpy_in = not isinstance(x, (_C.Tensor, _C.Variable))
    img = tf.convert_to_tensor(x)
    if img.shape.rank is not None and not 3 <= img.shape.rank <= 4:
        raise ValueError("Expected an image array with shape `(height, width, channels)`, or `(batch_size, height, "
                         f"width, channels)`, but got input with incorrect rank, of shape {img.shape}.")
    height, width = img.shape[-3], img.shape[-2]
    if height is None or width is None:
        raise ValueError("kiln.keras smart_resize: the image height and width must be known")
    img = crop_window(img, *_crop_box(height, width, int(size[0]), int(size[1])))
    out = tf.image.resize(img, list(size), method=interpolation)
    return out.numpy() if numpy_in else out
