"""tf.image's PNG and JPEG codecs (libpng, libjpeg-turbo): round trips, channels, decode_image's format sniffing,
files read by tf.io.read_file, codecs inside traces and dataset maps, and fuzzed files, which must decode or raise
InvalidArgumentError, never crash."""
import struct
import zlib

import numpy as np
import pytest

import kiln as tf

RNG = np.random.default_rng(5)
RGB = RNG.integers(0, 256, (7, 9, 3), dtype=np.uint8)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_png_round_trip_is_exact(channels):
    image = RNG.integers(0, 256, (6, 5, channels), dtype=np.uint8)
    data = tf.image.encode_png(image)
    assert data.dtype == tf.string and data.numpy()[:8] == b"\x89PNG\r\n\x1a\n"
    np.testing.assert_array_equal(tf.image.decode_png(data).numpy(), image)
    np.testing.assert_array_equal(tf.image.decode_image(data).numpy(), image)


def test_png_channel_conversions():
    data = tf.image.encode_png(RGB)
    rgba = tf.image.decode_png(data, channels=4).numpy()
    np.testing.assert_array_equal(rgba[..., :3], RGB)
    assert (rgba[..., 3] == 255).all()
    assert tf.image.decode_png(data, channels=1).shape == (7, 9, 1)
    gray = RNG.integers(0, 256, (4, 4, 1), dtype=np.uint8)
    np.testing.assert_array_equal(tf.image.decode_png(tf.image.encode_png(gray), channels=3).numpy(),
                                  np.repeat(gray, 3, axis=2))


def _hand_made_png(width, height, rows):
    """A minimal 8-bit RGB PNG written here (not by libpng), to check the decoder against an independent writer."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = b"".join(b"\x00" + r.tobytes() for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_decode_png_of_an_independently_written_file(tmp_path):
    path = tmp_path / "hand.png"
    path.write_bytes(_hand_made_png(9, 7, RGB))
    np.testing.assert_array_equal(tf.image.decode_png(tf.io.read_file(str(path))).numpy(), RGB)


def test_jpeg_round_trip_is_close():
    smooth = np.clip(np.add.outer(np.arange(16) * 8, np.arange(16) * 4), 0, 255).astype(np.uint8)
    image = np.stack([smooth, smooth[::-1], smooth.T], axis=-1)
    data = tf.image.encode_jpeg(image, quality=95)
    assert tf.image.is_jpeg(data).numpy()
    decoded = tf.image.decode_jpeg(data).numpy()
    assert decoded.shape == image.shape and decoded.dtype == np.uint8
    assert np.abs(decoded.astype(int) - image).mean() < 3
    assert tf.image.decode_jpeg(data, channels=1).shape == (16, 16, 1)
    assert tf.image.decode_jpeg(data, ratio=2).shape == (8, 8, 3)
    as_float = tf.image.decode_image(data, dtype=tf.float32)
    assert as_float.dtype == tf.float32 and 0 <= float(tf.reduce_min(as_float)) <= float(tf.reduce_max(as_float)) <= 1
    low = tf.image.decode_jpeg(tf.image.encode_jpeg(image, quality=5)).numpy()
    assert np.abs(low.astype(int) - image).mean() > np.abs(decoded.astype(int) - image).mean()
    gray = tf.image.encode_jpeg(image[..., :1], format="grayscale")
    assert tf.image.decode_jpeg(gray).shape == (16, 16, 1)
    quality = tf.image.adjust_jpeg_quality(image.astype(np.float32) / 255, 90)
    assert quality.dtype == tf.float32 and quality.shape == image.shape


def test_codecs_in_traces_and_dataset_maps(tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(tf.image.encode_png(RGB).numpy())

    @tf.function
    def load(p):
        return tf.image.convert_image_dtype(tf.image.decode_png(tf.io.read_file(p), channels=3), tf.float32)
    np.testing.assert_allclose(load(tf.constant(str(path))).numpy(), RGB / 255.0, rtol=1e-6)
    ds = tf.data.Dataset.from_tensor_slices([str(path), str(path)]).map(lambda p: tf.image.decode_image(
        tf.io.read_file(p)))
    for image in ds:
        np.testing.assert_array_equal(image.numpy(), RGB)
    encoded = tf.function(lambda x: tf.image.encode_png(x))(tf.constant(RGB))
    np.testing.assert_array_equal(tf.image.decode_png(encoded).numpy(), RGB)


def test_bad_arguments_and_formats():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        tf.image.decode_image(b"not an image at all")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.decode_png(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.decode_jpeg(b"\xff\xd8\xff\xe0garbage")
    with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
        tf.image.decode_jpeg(tf.image.encode_jpeg(RGB), channels=4)
    with pytest.raises(TypeError, match="uint8"):
        tf.image.encode_png(RGB.astype(np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
        tf.image.encode_jpeg(RNG.integers(0, 256, (4, 4, 2), dtype=np.uint8))
    with pytest.raises(tf.errors.UnimplementedError, match="GIF"):
        tf.image.decode_image(b"GIF89a" + b"\x00" * 20)


def test_hostile_sizes_are_refused_before_allocating():
    huge_png = _hand_made_png(2 ** 31 - 1, 2 ** 31 - 1, [])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.decode_png(huge_png)
    # a JPEG whose frame header says 65535 x 65535: refused by size, not decoded
    data = bytearray(tf.image.encode_jpeg(RGB).numpy())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = b"\xff\xff\xff\xff"
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.decode_jpeg(bytes(data))


def _mutations(data, rng, count):
    for _ in range(count):
        b = bytearray(data)
        kind = rng.integers(0, 4)
        if kind == 0:  # flip a few bytes
            for i in rng.integers(0, len(b), rng.integers(1, 8)):
                b[i] = rng.integers(0, 256)
        elif kind == 1:  # truncate
            b = b[:rng.integers(0, len(b))]
        elif kind == 2:  # splice a run of random bytes in
            i = rng.integers(0, len(b))
            b[i:i] = rng.integers(0, 256, rng.integers(1, 64), dtype=np.uint8).tobytes()
        else:  # overwrite a 4-byte field with an extreme value
            i = rng.integers(0, max(1, len(b) - 4))
            b[i:i + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x7f\xff\xff\xff"])
        yield bytes(b)


@pytest.mark.parametrize("encode,decode", [(tf.image.encode_png, tf.image.decode_png),
                                           (tf.image.encode_jpeg, tf.image.decode_jpeg),
                                           (tf.image.encode_jpeg, tf.image.decode_image)])
def test_fuzzed_files_decode_or_raise_invalid_argument(encode, decode):
    rng = np.random.default_rng(2024)
    seed = encode(RGB).numpy()
    decoded = failed = 0
    for data in _mutations(seed, rng, 400):
        try:
            out = decode(data)
            assert out.dtype == tf.uint8 and out.shape.rank == 3
            decoded += 1
        except tf.errors.InvalidArgumentError:
            failed += 1
    assert decoded + failed == 400 and failed > 0


def test_random_jpeg_quality_and_random_split():
    image = tf.image.convert_image_dtype(RGB, tf.float32)
    out = tf.image.random_jpeg_quality(image, 50, 90)
    assert out.dtype == tf.float32 and out.shape == (7, 9, 3)
    assert 0 < float(tf.reduce_mean(tf.abs(out - image))) < 0.25
    a = tf.image.stateless_random_jpeg_quality(RGB, 10, 95, seed=(1, 2))
    np.testing.assert_array_equal(a.numpy(), tf.image.stateless_random_jpeg_quality(RGB, 10, 95, seed=(1, 2)).numpy())
    with pytest.raises(ValueError, match="less than"):
        tf.image.random_jpeg_quality(image, 90, 50)
    seeds = tf.random.split(tf.constant([7, 8], tf.int64), num=3)
    assert seeds.shape == (3, 2) and seeds.dtype == tf.int64
    np.testing.assert_array_equal(seeds.numpy(), tf.random.split(tf.constant([7, 8], tf.int64), num=3).numpy())
    assert tf.random.split((7, 8), num=3).dtype == tf.int32  # the seed's dtype, as TF's
    assert len({tuple(s) for s in seeds.numpy()}) == 3
