"""tf.summary: event files decoded here (TFRecord framing checked with crcmod's CRC-32C,
Event protos) and compared with what TF 2 and TensorBoard write: file name, file
version event, plugin metadata, tensor contents, histogram buckets (against NumPy),
eagerly and inside tf.function."""
import os
import socket
import struct

import numpy as np
import pytest

import kiln as tf
from kiln.io._messages import Event

crcmod = pytest.importorskip("crcmod.predefined")
CRC32C = crcmod.mkPredefinedCrcFun("crc-32c")


def masked(data):
    crc = CRC32C(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def events(logdir):
    """Every event of the one event file in `logdir`, the framing checked byte by byte."""
    (name,) = os.listdir(logdir)
    raw = open(os.path.join(logdir, name), "rb").read()
    out, pos = [], 0
    while pos < len(raw):
        (length,) = struct.unpack_from("<Q", raw, pos)
        assert struct.unpack_from("<I", raw, pos + 8)[0] == masked(raw[pos:pos + 8])
        data = raw[pos + 12:pos + 12 + length]
        assert struct.unpack_from("<I", raw, pos + 12 + length)[0] == masked(data)
        out.append(Event.FromString(data))
        pos += 16 + length
    return name, out


def tensor_value(proto):
    dtype = {1: np.float32, 2: np.float64}[proto.dtype]
    shape = [d.size for d in proto.tensor_shape.dim]
    return np.frombuffer(proto.tensor_content, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)


def test_scalars_as_tf_writes_them(tmp_path):
    logdir = str(tmp_path / "logs")
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step in range(3):
            assert bool(tf.summary.scalar("loss", 0.5 * step, step=step, description="the loss"))
    writer.flush()
    name, evs = events(logdir)
    assert name.startswith("events.out.tfevents.") and f".{socket.gethostname()}." in name and name.endswith(".v2")
    assert evs[0].file_version == "brain.Event:2" and evs[0].wall_time > 0
    assert [e.step for e in evs[1:]] == [0, 1, 2]
    value = evs[2].summary.value[0]
    assert value.tag == "loss"
    assert value.metadata.plugin_data.plugin_name == "scalars"
    assert value.metadata.summary_description == "the loss"
    assert value.metadata.data_class == 1  # DATA_CLASS_SCALAR
    assert value.tensor.dtype == 1 and list(value.tensor.tensor_shape.dim) == []
    assert tensor_value(value.tensor) == np.float32(0.5)


def test_step_from_set_step_and_as_default(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with pytest.raises(ValueError, match="No step set"):
        with writer.as_default():
            tf.summary.scalar("x", 1.0)
    with writer.as_default(step=7):
        tf.summary.scalar("x", 1.0)
        assert tf.summary.experimental.get_step() == 7
    assert tf.summary.experimental.get_step() is None
    step = tf.Variable(3, dtype=tf.int64)
    tf.summary.experimental.set_step(step)
    try:
        with writer.as_default():
            tf.summary.scalar("x", 2.0)
            step.assign(4)
            tf.summary.text("note", "**bold**")
    finally:
        tf.summary.experimental.set_step(None)
    _, evs = events(str(tmp_path))
    assert [e.step for e in evs[1:]] == [7, 3, 4]
    text = evs[3].summary.value[0]
    assert text.metadata.plugin_data.plugin_name == "text" and text.tensor.dtype == 7
    assert list(text.tensor.string_val) == [b"**bold**"]


def test_without_a_writer_or_recording_nothing_is_written(tmp_path):
    assert not bool(tf.summary.scalar("x", 1.0, step=0))
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(), tf.summary.record_if(False):
        assert not bool(tf.summary.scalar("x", 1.0, step=0))
    with writer.as_default(), tf.summary.record_if(lambda: True):
        assert tf.summary.should_record_summaries()
    with tf.summary.create_noop_writer().as_default():
        assert not bool(tf.summary.scalar("x", 1.0, step=0))
    _, evs = events(str(tmp_path))
    assert len(evs) == 1


def test_histogram_buckets_as_tensorboard_makes_them(tmp_path):
    rng = np.random.default_rng(0)
    data = rng.normal(size=1000)
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        tf.summary.histogram("w", data, step=1)
        tf.summary.histogram("few", tf.constant([1.0, 2.0, 2.0, 4.0]), step=1, buckets=3)
        tf.summary.histogram("one", [5.0, 5.0], step=1, buckets=4)
        tf.summary.histogram("none", np.zeros([0]), step=1, buckets=2)
    _, evs = events(str(tmp_path))
    w = evs[1].summary.value[0]
    assert w.metadata.plugin_data.plugin_name == "histograms" and w.metadata.data_class == 2
    buckets = tensor_value(w.tensor)
    assert buckets.shape == (30, 3)
    counts, edges = np.histogram(data, bins=30)  # NumPy's equal-width bins, the max in the last
    np.testing.assert_array_equal(buckets[:, 2], counts)
    np.testing.assert_allclose(buckets[:, 0], edges[:-1])
    np.testing.assert_allclose(buckets[:, 1], edges[1:])
    assert tensor_value(evs[2].summary.value[0].tensor).tolist() == [[1, 2, 1], [2, 3, 2], [3, 4, 1]]
    assert tensor_value(evs[3].summary.value[0].tensor).tolist() == [[5, 5, 0]] * 3 + [[5, 5, 2]]
    assert tensor_value(evs[4].summary.value[0].tensor).tolist() == [[0, 0, 0]] * 2


def test_summaries_inside_a_function_are_written_each_run(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path), max_queue=100)
    step = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def train(x):
        with writer.as_default(step=step):
            tf.summary.scalar("x2", x * x)
            tf.summary.histogram("xs", tf.stack([x, x + 1.0]), buckets=2)
        step.assign_add(1)
        return x

    for x in (1.0, 2.0, 3.0):
        train(tf.constant(x))
    writer.close()
    _, evs = events(str(tmp_path))
    scalars = [(e.step, float(tensor_value(e.summary.value[0].tensor))) for e in evs[1:]
               if e.summary.value[0].tag == "x2"]
    assert scalars == [(0, 1.0), (1, 4.0), (2, 9.0)]
    assert len([e for e in evs if e.summary.value and e.summary.value[0].tag == "xs"]) == 3
    assert train.experimental_get_tracing_count() == 1


def test_flush_on_max_queue_and_close(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path), max_queue=2, flush_millis=10 ** 9)
    with writer.as_default(step=0):
        tf.summary.scalar("a", 1.0)
        assert len(events(str(tmp_path))[1]) == 1  # queued
        tf.summary.scalar("b", 1.0)
        assert len(events(str(tmp_path))[1]) == 3  # two queued: written
        tf.summary.scalar("c", 1.0)
        tf.summary.flush()
        assert len(events(str(tmp_path))[1]) == 4
    writer.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed"):
        with writer.as_default(step=0):
            tf.summary.scalar("d", 1.0)
