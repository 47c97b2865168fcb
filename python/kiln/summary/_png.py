"""PNG encoding of uint8 images (what tf.summary.image writes and TensorBoard shows):
8-bit greyscale, grey+alpha, RGB or RGBA, one IDAT of zlib-compressed rows each with
filter type 0 (none), as TF's encode_png writes at its default settings."""
import struct as _struct
import zlib as _zlib

import numpy as _np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type


def _chunk(kind, data):
    return _struct.pack(">I", len(data)) + kind + data + _struct.pack(">I", _zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(image, compression=-1):
    """The PNG bytes of a [height, width, channels] uint8 array (channels 1 to 4)."""
    image = _np.asarray(image)
    if image.ndim != 3 or image.shape[2] not in _COLOR_TYPE:
        raise ValueError(f"encode_png: image must be [height, width, channels] with 1 to 4 channels, "
                         f"got shape {list(image.shape)}")
    if image.dtype != _np.uint8:
        raise TypeError(f"encode_png: image must be uint8, got {image.dtype}")
    height, width, channels = image.shape
    header = _struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPE[channels], 0, 0, 0)
    rows = _np.concatenate([_np.zeros((height, 1), _np.uint8), image.reshape(height, width * channels)], axis=1)
    return (SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", _zlib.compress(rows.tobytes(), compression))
            + _chunk(b"IEND", b""))
