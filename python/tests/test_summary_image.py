"""tf.summary.image: PNGs in the event file as TensorBoard's image plugin reads them
(a string tensor [width, height, png...], plugin "images", BLOB_SEQUENCE), checked by
decoding the event file with the protos and each PNG with a decoder written here
(chunks, CRCs, zlib and all five row filters), and kiln.board's page showing them."""
import base64
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import kiln as tf
from kiln import board
from kiln.io import _messages as pb
from kiln.io._tfrecord import read_records
from kiln.summary._reader import event_files


def decode_png(data):
    """[height, width, channels] uint8 of an 8-bit non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth == 8 and interlace == 0
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = width * channels
    out = np.zeros((height, stride), np.int64)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        prior = out[y - 1] if y else np.zeros(stride, np.int64)
        for x in range(stride):
            left = out[y, x - channels] if x >= channels else 0
            up, corner = prior[x], (prior[x - channels] if x >= channels else 0)
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = left
            elif kind == 2:
                pred = up
            elif kind == 3:
                pred = (left + up) // 2
            else:
                p = left + up - corner
                pa, pb_, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb_ and pa <= pc else (up if pb_ <= pc else corner)
            out[y, x] = (line[x] + pred) % 256
    return out.astype(np.uint8).reshape(height, width, channels)


def image_values(logdir):
    """(step, Summary.Value) of every image summary in the event files under logdir."""
    found = []
    for _, path in event_files(logdir):
        for record in read_records(path):
            event = pb.Event.FromString(record)
            if event.WhichOneof("what") == "summary":
                found += [(event.step, v) for v in event.summary.value
                          if v.metadata.plugin_data.plugin_name == "images"]
    return found


def test_uint8_images_as_tensorboard_reads_them(tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(4, 5, 7, 3), dtype=np.uint8)
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert bool(tf.summary.image("batch", images, step=3, description="four RGB images").numpy())
    writer.close()
    ((step, value),) = image_values(str(tmp_path))
    assert step == 3 and value.tag == "batch"
    assert value.metadata.data_class == 3  # DATA_CLASS_BLOB_SEQUENCE
    assert value.metadata.summary_description == "four RGB images"
    tensor = value.tensor
    assert tensor.dtype == 7 and [d.size for d in tensor.tensor_shape.dim] == [2 + 3]  # max_outputs=3
    assert tensor.string_val[:2] == [b"7", b"5"]  # width, then height
    for i, png in enumerate(tensor.string_val[2:]):
        np.testing.assert_array_equal(decode_png(png), images[i])


@pytest.mark.parametrize("channels", [1, 2, 4])
def test_float_images_scaled_as_convert_image_dtype(tmp_path, channels):
    data = np.linspace(-0.25, 1.25, 2 * 3 * 4 * channels, dtype=np.float32).reshape(2, 3, 4, channels)
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=1):
        tf.summary.image("floats", tf.constant(data), max_outputs=5)
    writer.close()
    ((_, value),) = image_values(str(tmp_path))
    pngs = value.tensor.string_val[2:]
    assert len(pngs) == 2
    expected = np.clip(data.astype(np.float64) * 255.5, 0, 255).astype(np.uint8)  # saturate_cast truncates
    for png, want in zip(pngs, expected):
        np.testing.assert_array_equal(decode_png(png), want)
    assert decode_png(pngs[0])[0, 0, 0] == 0 and decode_png(pngs[1])[-1, -1, -1] == 255


def test_image_inside_tf_function_and_max_outputs_zero(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def log(images, step):
        with writer.as_default():
            tf.summary.image("traced", images, step=step, max_outputs=1)
            tf.summary.image("none", images, step=step, max_outputs=0)

    for step in range(2):
        log(tf.constant(np.full([2, 2, 2, 1], step * 100, np.uint8)), tf.constant(step, tf.int64))
    writer.close()
    found = image_values(str(tmp_path))
    traced = [(s, v) for s, v in found if v.tag == "traced"]
    assert [s for s, _ in traced] == [0, 1]
    assert decode_png(traced[1][1].tensor.string_val[2]).reshape(-1).tolist() == [100] * 4
    assert [list(v.tensor.string_val) for _, v in found if v.tag == "none"] == [[b"2", b"2"]] * 2


def test_image_errors(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=0):
        with pytest.raises(ValueError, match="must have rank 4"):
            tf.summary.image("rank3", np.zeros((2, 2, 3), np.uint8))
        with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
            tf.summary.image("five", np.zeros((1, 2, 2, 5), np.uint8))
    writer.close()


def test_board_shows_the_images(tmp_path):
    checker = np.indices((8, 8)).sum(axis=0) % 2 * 255
    writer = tf.summary.create_file_writer(str(tmp_path / "train"))
    with writer.as_default():
        for step in range(8):
            frames = np.stack([checker, 255 - checker]).astype(np.uint8)[..., None]
            tf.summary.image("digits", frames, step=step, max_outputs=2)
        tf.summary.scalar("loss", 0.5, step=0)
    writer.close()
    page = board.render_html(str(tmp_path))
    root = ET.fromstring(page.split("\n", 1)[1])
    assert [h.text for h in root.iter("h2")] == ["Scalars", "Images"]
    (card,) = [c for c in root.iter("div") if c.get("data-tag") == "digits"]
    rows = [r for r in card.iter("div") if r.get("class") == "images"]
    assert len(rows) == 6  # six of the eight steps, the first and last among them
    assert "step 0" in "".join(rows[0].itertext()) and "step 7" in "".join(rows[-1].itertext())
    imgs = rows[-1].findall("img")
    assert len(imgs) == 2 and imgs[0].get("width") == "96"  # 8 px drawn 12 times larger
    prefix = "data:image/png;base64,"
    assert imgs[0].get("src").startswith(prefix)
    pixels = decode_png(base64.b64decode(imgs[1].get("src")[len(prefix):]))
    np.testing.assert_array_equal(pixels[..., 0], 255 - checker)


def test_tf1_image_values_are_read_too(tmp_path):
    """TF 1's Summary.Image (one PNG with its size) reads as an image summary."""
    from kiln._C import encode_png
    from kiln.summary._reader import read_logdir
    pixels = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    event = pb.Event(step=5, wall_time=1.0)
    image = event.summary.value.add(tag="old").image
    image.height, image.width, image.colorspace, image.encoded_image_string = 2, 2, 3, encode_png(pixels)
    with tf.io.TFRecordWriter(str(tmp_path / "events.out.tfevents.1.host")) as w:
        w.write(event.SerializeToString())
    (series,) = read_logdir(str(tmp_path))["."].values()
    assert series.kind == "images"
    ((step, _, images),) = series.points
    assert (step, images.width, images.height) == (5, 2, 2)
    np.testing.assert_array_equal(decode_png(images.pngs[0]), pixels)


def test_tensorboard_callback_writes_weight_images_as_keras(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((4, 5)), tf.keras.layers.Dense(3, name="dense"),
                                 tf.keras.layers.Conv1D(4, 2, name="conv")])
    model.compile("sgd", "mse")
    x, y = np.ones((8, 4, 5), np.float32), np.zeros((8, 3, 4), np.float32)
    model.fit(x, y, epochs=2, verbose=0, callbacks=[
        tf.keras.callbacks.TensorBoard(str(tmp_path), histogram_freq=1, write_images=True)])
    found = {(v.tag, s): v for s, v in image_values(str(tmp_path / "train"))}
    tags = sorted({tag for tag, _ in found})
    assert tags == ["conv/bias_0/image", "conv/kernel_0/image", "dense/bias_0/image", "dense/kernel_0/image"]
    assert sorted({s for _, s in found}) == [0, 1]
    kernel = model.get_layer("dense").kernel.numpy()  # (5, 3): the longer side goes across
    value = found[("dense/kernel_0/image", 1)]
    assert value.tensor.string_val[:2] == [b"5", b"3"]
    np.testing.assert_array_equal(decode_png(value.tensor.string_val[2])[..., 0],
                                  np.clip(kernel.T.astype(np.float64) * 255.5, 0, 255).astype(np.uint8))
    conv = found[("conv/kernel_0/image", 1)]  # (2, 3, 4): one 2x3 image per output channel
    assert len(conv.tensor.string_val) == 2 + 3  # max_outputs=3
    assert found[("dense/bias_0/image", 0)].tensor.string_val[:2] == [b"1", b"3"]  # a 1-pixel-wide column


def test_board_scales_thin_images_within_bounds(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=0):
        tf.summary.image("bias", np.zeros((1, 16, 1, 1), np.uint8))  # Keras' bias image: 1 wide, 16 high
    writer.close()
    root = ET.fromstring(board.render_html(str(tmp_path)).split("\n", 1)[1])
    (img,) = root.iter("img")
    assert (img.get("width"), img.get("height")) == ("30", "480")  # 30 times: the long side at 480
