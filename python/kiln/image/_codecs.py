"""tf.image's PNG and JPEG codecs over Debian's libpng and libjpeg-turbo (python/src/image.cpp). Contents are
string tensors (tf.io.read_file's) or bytes. They run eagerly on the bytes, or as host functions inside traces (as
tf.strings does: not exportable), since the engine's ops carry no byte strings; a traced decode has an unknown
height and width. A damaged or hostile file raises InvalidArgumentError."""
import numpy as np

import kiln as tf

from .. import _C


def _bytes_of(contents):
    if isinstance(contents, (bytes, bytearray)):
        return bytes(contents)
    value = contents.numpy() if tf.is_tensor(contents) else contents
    if isinstance(value, np.ndarray):
        if value.shape != ():
            raise tf.errors.InvalidArgumentError(f"contents must be scalar, got shape {list(value.shape)}")
        value = value.item()
    if isinstance(value, str):
        value = value.encode("latin-1")
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"contents must be a string tensor or bytes, got {type(contents).__name__}")
    return bytes(value)


def _string_tensor(contents):
    if tf.is_tensor(contents):
        if contents.dtype != tf.string:
            raise TypeError(f"contents must be a string tensor, got {contents.dtype.name}")
        return contents
    return tf.constant(_bytes_of(contents), tf.string)


def _is_traced(t):
    return tf.is_tensor(t) and (t._is_symbolic or _C.is_tracing())


def _decoded(contents, decode, channels):
    """decode(bytes) -> uint8 [h, w, c] array, eager or as a host call (its shape known when it runs)."""
    if not _is_traced(contents):
        return tf.constant(decode(_bytes_of(contents)), tf.uint8)
    return tf.py_function(lambda c: decode(_bytes_of(c)), [_string_tensor(contents)], tf.uint8)


def _encoded(image, encode):
    image = tf.convert_to_tensor(image)
    if not _is_traced(image):
        return tf.constant(encode(image.numpy()), tf.string)
    return tf.py_function(lambda x: np.array(encode(x.numpy()), dtype=object), [image], tf.string)


def _check_uint8_image(image, op, channels):
    image = tf.convert_to_tensor(image)
    if image.dtype != tf.uint8:
        raise TypeError(f"{op}: image must be uint8, got {image.dtype.name}")
    if image.shape.rank is not None and image.shape.rank != 3:
        raise tf.errors.InvalidArgumentError(f"{op}: image must be 3-dimensional [height, width, channels], got "
                                             f"shape {image.shape}")
    c = image.shape.as_list()[-1] if image.shape.rank else None
    if c is not None and c not in channels:
        raise tf.errors.InvalidArgumentError(f"{op}: image must have {' or '.join(map(str, channels))} channels, "
                                             f"got {c}")
    return image


def decode_png(contents, channels=0, dtype=tf.uint8, name=None):
    """[height, width, channels] uint8 pixels; channels 0 keeps the file's (gray, gray+alpha, RGB, RGBA)."""
    if channels not in (0, 1, 2, 3, 4):
        raise tf.errors.InvalidArgumentError(f"channels must be 0, 1, 2, 3 or 4, got {channels}")
    if tf.as_dtype(dtype) != tf.uint8:
        raise TypeError(f"decode_png: dtype must be uint8 (Kiln has no uint16), got {tf.as_dtype(dtype).name}")
    return _decoded(contents, lambda b: _C.decode_png(b, int(channels)), channels)


def encode_png(image, compression=-1, name=None):
    """PNG bytes of a uint8 [height, width, 1..4] image (zlib's default compression whatever `compression`)."""
    if not -1 <= int(compression) <= 9:
        raise tf.errors.InvalidArgumentError(f"compression should be in [-1,9], got {compression}")
    image = _check_uint8_image(image, "encode_png", (1, 2, 3, 4))
    return _encoded(image, _C.encode_png)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """[height, width, channels] uint8 pixels; channels 0 keeps the file's (1 or 3); ratio 1, 2, 4 or 8 downscales."""
    if channels not in (0, 1, 3):
        raise tf.errors.InvalidArgumentError(f"channels must be 0, 1, or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise tf.errors.InvalidArgumentError(f"ratio must be 1, 2, 4, or 8, got {ratio}")
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise tf.errors.InvalidArgumentError(f"dct_method must be one of '', 'INTEGER_FAST', 'INTEGER_ACCURATE', got "
                                             f"{dct_method!r}")
    return _decoded(contents, lambda b: _C.decode_jpeg(b, int(channels), int(ratio), bool(fancy_upscaling)), channels)


_DENSITY_UNITS = {"in": 1, "cm": 2}


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 - TF's name
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """JPEG bytes of a uint8 [height, width, 1 or 3] image."""
    if format not in ("", "grayscale", "rgb"):
        raise tf.errors.InvalidArgumentError(f"format must be '', 'grayscale' or 'rgb', got {format!r}")
    if not 0 <= int(quality) <= 100:
        raise tf.errors.InvalidArgumentError(f"quality must be in [0,100], got {quality}")
    if density_unit not in _DENSITY_UNITS:
        raise tf.errors.InvalidArgumentError(f"density_unit must be 'in' or 'cm', got {density_unit!r}")
    if xmp_metadata:
        raise NotImplementedError("encode_jpeg: xmp_metadata is not supported")
    channels = {"": (1, 3), "grayscale": (1,), "rgb": (3,)}[format]
    image = _check_uint8_image(image, "encode_jpeg", channels)
    return _encoded(image, lambda x: _C.encode_jpeg(x, int(quality), bool(progressive), bool(optimize_size),
                                                     bool(chroma_downsampling), _DENSITY_UNITS[density_unit],
                                                     int(x_density), int(y_density)))


def _format_of(data):
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return None


def _decode_any(data, channels):
    kind = _format_of(data)
    if kind == "jpeg":
        if channels not in (0, 1, 3):
            raise tf.errors.InvalidArgumentError(f"channels must be 0, 1, or 3 for JPEG, got {channels}")
        return _C.decode_jpeg(data, channels, 1, True)
    if kind == "png":
        return _C.decode_png(data, channels)
    if kind in ("gif", "bmp"):
        raise tf.errors.UnimplementedError(f"decode_image: {kind.upper()} files are not supported by Kiln (PNG and "
                                           "JPEG are)")
    raise tf.errors.InvalidArgumentError("Unknown image file format. One of JPEG, PNG, GIF, BMP required.")


def decode_image(contents, channels=None, dtype=tf.uint8, name=None, expand_animations=True):
    """PNG or JPEG by the file's signature, converted to `dtype` by convert_image_dtype."""
    channels = 0 if channels is None else int(channels)
    image = _decoded(contents, lambda b: _decode_any(b, channels), channels)
    dtype = tf.as_dtype(dtype)
    return image if dtype == tf.uint8 else tf.image.convert_image_dtype(image, dtype)


def is_jpeg(contents, name=None):
    return tf.constant(_format_of(_bytes_of(contents)) == "jpeg")


def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """The image encoded as JPEG at jpeg_quality and decoded again, in its own dtype."""
    image = tf.convert_to_tensor(image)
    if image.shape.rank is not None and image.shape.rank not in (3, 4):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    pixels = tf.image.convert_image_dtype(image, tf.uint8, saturate=True)

    def round_trip(x, q):
        x, q = np.asarray(x), int(q)
        one = lambda im: _C.decode_jpeg(_C.encode_jpeg(im, q, False, False, True, 1, 300, 300), int(im.shape[-1]),
                                        1, True)  # noqa: E731
        return np.stack([one(i) for i in x]) if x.ndim == 4 else one(x)
    if not _is_traced(pixels) and not _is_traced(jpeg_quality):
        q = jpeg_quality.numpy() if tf.is_tensor(jpeg_quality) else jpeg_quality
        out = tf.constant(round_trip(pixels.numpy(), q), tf.uint8)
    else:
        out = tf.py_function(lambda x, q: round_trip(x.numpy(), q.numpy()),
                             [pixels, tf.convert_to_tensor(jpeg_quality, tf.int32)], tf.uint8)
        out = tf.reshape(out, tf.shape(pixels))
    return tf.image.convert_image_dtype(out, image.dtype)
