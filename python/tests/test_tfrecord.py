"""TFRecord files and tf.train.Example: TF's framing (checked byte by byte against an
independent CRC-32C), GZIP and ZLIB, a reader fuzzed with damaged files (a clear
DataLossError, never a crash), and Example parsing against TF's documented bytes."""
import gzip
import random
import struct
import zlib

import numpy as np
import pytest

import kiln as tf
from kiln.io import _crc32c

crcmod = pytest.importorskip("crcmod.predefined")
CRC32C = crcmod.mkPredefinedCrcFun("crc-32c")


def masked(data):
    crc = CRC32C(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_crc32c_and_its_mask():
    assert _crc32c.crc32c_python(b"123456789") == 0xE3069283  # the CRC-32C check value
    data = bytes(range(256)) * 3
    assert _crc32c.crc32c_python(data) == CRC32C(data) == _crc32c.crc32c(data)
    assert _crc32c.masked_crc32c(data) == masked(data)
    assert _crc32c.unmask(_crc32c.masked_crc32c(data)) == CRC32C(data)


def test_writer_frames_records_as_tf(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        w.write(b"hello")
        w.write(b"")
        w.write(tf.constant(b"\x00\xff"))
    raw = open(path, "rb").read()
    expected = b""
    for record in (b"hello", b"", b"\x00\xff"):
        length = struct.pack("<Q", len(record))
        expected += length + struct.pack("<I", masked(length)) + record + struct.pack("<I", masked(record))
    assert raw == expected
    ds = tf.data.TFRecordDataset(path)
    assert [r.numpy() for r in ds] == [b"hello", b"", b"\x00\xff"]
    assert ds.element_spec == tf.TensorSpec([], tf.string)


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_files(tmp_path, kind):
    path = str(tmp_path / f"c.{kind}")
    records = [bytes([i]) * i for i in range(50)]
    with tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions(compression_type=kind)) as w:
        for r in records:
            w.write(r)
    raw = open(path, "rb").read()
    plain = gzip.decompress(raw) if kind == "GZIP" else zlib.decompress(raw)
    assert plain[:8] == struct.pack("<Q", 0)
    assert [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=kind)] == records
    assert list(tf.io.tf_record_iterator(path, kind)) == records
    with pytest.raises(tf.errors.DataLossError, match="c."):  # read as plain: a damaged file
        list(tf.data.TFRecordDataset(path))


def test_several_files_in_order_and_interleaved(tmp_path):
    paths = []
    for f in range(3):
        paths.append(str(tmp_path / f"f{f}"))
        with tf.io.TFRecordWriter(paths[-1]) as w:
            for i in range(3):
                w.write(f"{f}-{i}".encode())
    seq = [r.numpy().decode() for r in tf.data.TFRecordDataset(paths)]
    assert seq == [f"{f}-{i}" for f in range(3) for i in range(3)]
    par = [r.numpy().decode() for r in tf.data.TFRecordDataset(paths, num_parallel_reads=3)]
    assert par == [f"{f}-{i}" for i in range(3) for f in range(3)]
    from_ds = tf.data.TFRecordDataset(tf.data.Dataset.from_tensor_slices(paths[:2]))
    assert len(list(from_ds)) == 6


def test_list_files_then_interleave_tfrecord_datasets(tmp_path):
    for f in range(3):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{f}.tfrecord")) as w:
            for i in range(2):
                w.write(f"{f}{i}".encode())
    files = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    assert [f.numpy().decode() for f in files] == [str(tmp_path / f"part-{f}.tfrecord") for f in range(3)]
    shuffled = sorted(f.numpy() for f in tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), seed=3))
    assert shuffled == [f.numpy() for f in files]
    records = files.interleave(tf.data.TFRecordDataset, cycle_length=2)
    assert [r.numpy() for r in records] == [b"00", b"10", b"01", b"11", b"20", b"21"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern"):
        tf.data.Dataset.list_files(str(tmp_path / "*.none"))
    assert tf.data.TFRecordDataset(files).take(1).get_single_element().numpy() == b"00"
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
        tf.data.experimental.get_single_element(tf.data.TFRecordDataset(files))


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_batched_records_as_the_engine_batches_them(tmp_path, compression):
    """TFRecordDataset.batch builds each batch's string vector in Python: the same batches, specs
    and last batch as batching the records one tensor at a time."""
    paths = []
    for k in range(3):
        paths.append(str(tmp_path / f"f{k}.tfrecord"))
        with tf.io.TFRecordWriter(paths[-1], options=compression) as w:
            for i in range(7):
                w.write(f"{k}-{i}".encode())
    for drop in (False, True):
        for parallel in (None, 2):
            ds = tf.data.TFRecordDataset(paths, compression_type=compression, num_parallel_reads=parallel)
            fused, one_by_one = ds.batch(4, drop_remainder=drop), ds.map(lambda r: r).batch(4, drop_remainder=drop)
            assert [b.numpy().tolist() for b in fused] == [b.numpy().tolist() for b in one_by_one]
            assert fused.element_spec == tf.TensorSpec([4 if drop else None], tf.string)
    ds = tf.data.TFRecordDataset(paths, compression_type=compression).batch(5)
    assert [b.numpy().tolist() for b in ds][-2:] == [[b"2-1", b"2-2", b"2-3", b"2-4", b"2-5"], [b"2-6"]]

    @tf.function
    def count(dataset):
        total = tf.constant(0)
        for b in dataset:
            total += tf.shape(b)[0]
        return total

    assert int(count(ds)) == 21
    with pytest.raises(ValueError, match="batch_size must be greater than zero"):
        tf.data.TFRecordDataset(paths).batch(0)


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        list(tf.data.TFRecordDataset(str(tmp_path / "nope")))


def test_damaged_files_are_data_loss_errors(tmp_path):
    path = str(tmp_path / "good")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(20):
            w.write(bytes(range(i * 7 % 256)) * 3)
    good = open(path, "rb").read()
    rng = random.Random(0)
    bad = tmp_path / "bad"
    cases = [good[:5], good[:30], good[:-1]]  # truncations
    for _ in range(150):  # random byte flips and cuts
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        cases.append(bytes(data[:rng.randint(1, len(data))]) if rng.random() < 0.3 else bytes(data))
    for data in cases:
        bad.write_bytes(data)
        try:
            out = [r.numpy() for r in tf.data.TFRecordDataset(str(bad))]
        except tf.errors.DataLossError as e:
            assert str(bad) in str(e) and ("corrupted record" in str(e) or "truncated record" in str(e))
            continue
        # A cut exactly between records reads as a shorter file of whole records.
        assert out == [r.numpy() for r in tf.data.TFRecordDataset(path)][:len(out)]
    bad.write_bytes(good[:-3])  # the last record cut: ignore_errors ends the pass there
    assert len(list(tf.data.TFRecordDataset(str(bad)).ignore_errors())) == 19
    for kind in ("GZIP", "ZLIB"):
        zpath = str(tmp_path / kind)
        with tf.io.TFRecordWriter(zpath, kind) as w:
            w.write(b"x" * 100)
        raw = open(zpath, "rb").read()
        for cut in (raw[:len(raw) // 2], raw[:12] + bytes(len(raw) - 12)):
            bad.write_bytes(cut)
            with pytest.raises(tf.errors.DataLossError, match="bad"):
                list(tf.data.TFRecordDataset(str(bad), compression_type=kind))


# ---- tf.train.Example -----------------------------------------------------------------------

# TF's "TFRecord and tf.train.Example" tutorial: serialize_example(False, 4, b'goat', 0.9876).
TUTORIAL_BYTES = (b"\nR\n\x14\n\x08feature2\x12\x08\n\x06\n\x04goat\n\x14\n\x08feature3\x12\x08\x12\x06\n\x04[\xd3|?"
                  b"\n\x11\n\x08feature0\x12\x05\x1a\x03\n\x01\x00\n\x11\n\x08feature1\x12\x05\x1a\x03\n\x01\x04")


def example(**features):
    def feature(v):
        if not v or isinstance(v[0], bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        if isinstance(v[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(feature={k: feature(v) for k, v in features.items()}))


def test_example_reads_tf_s_bytes_and_prints_as_tf():
    e = tf.train.Example.FromString(TUTORIAL_BYTES)
    f = e.features.feature
    assert f["feature0"].int64_list.value == [0] and f["feature1"].int64_list.value == [4]
    assert f["feature2"].bytes_list.value == [b"goat"]
    assert f["feature3"].float_list.value[0] == pytest.approx(0.9876)
    assert f["feature3"].WhichOneof("kind") == "float_list"
    assert "value: 0.9876000285148621" in str(e)
    again = example(feature0=[0], feature1=[4], feature2=[b"goat"], feature3=[0.9876])
    assert tf.train.Example.FromString(again.SerializeToString()) == e


def test_parse_single_example_by_feature_kind():
    serialized = example(a=[1, 2, 3, 4], b=[b"x"], c=[0.5, 1.5], d=[7, 8, 9]).SerializeToString()
    parsed = tf.io.parse_single_example(serialized, {
        "a": tf.io.FixedLenFeature([2, 2], tf.int64),
        "b": tf.io.FixedLenFeature([], tf.string),
        "c": tf.io.VarLenFeature(tf.float32),
        "d": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
        "missing": tf.io.FixedLenFeature([2], tf.float32, default_value=[-1.0, -2.0]),
    })
    assert parsed["a"].numpy().tolist() == [[1, 2], [3, 4]] and parsed["a"].dtype == tf.int64
    assert parsed["b"].numpy() == b"x"
    assert parsed["c"].values.numpy().tolist() == [0.5, 1.5]
    assert parsed["c"].indices.numpy().tolist() == [[0], [1]]
    assert parsed["c"].dense_shape.numpy().tolist() == [2]
    assert parsed["d"].numpy().tolist() == [7, 8, 9]
    assert parsed["missing"].numpy().tolist() == [-1.0, -2.0]


def test_parse_example_batches_and_pads():
    batch = [example(v=[1.0, 2.0], s=[1, 2, 3, 4]).SerializeToString(),
             example(v=[3.0], s=[5, 6]).SerializeToString()]
    parsed = tf.io.parse_example(tf.constant(batch), {
        "v": tf.io.VarLenFeature(tf.float32),
        "s": tf.io.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=-1),
    })
    assert parsed["v"].indices.numpy().tolist() == [[0, 0], [0, 1], [1, 0]]
    assert parsed["v"].dense_shape.numpy().tolist() == [2, 2]
    assert tf.sparse.to_dense(parsed["v"]).numpy().tolist() == [[1.0, 2.0], [3.0, 0.0]]
    assert parsed["s"].numpy().tolist() == [[[1, 2], [3, 4]], [[5, 6], [-1, -1]]]


def _varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def _unpacked_example(key, floats=(), ints=()):
    """An Example whose lists are written unpacked (one tag per value), which parsers must accept."""
    if len(floats):
        body = b"".join(b"\x0d" + struct.pack("<f", v) for v in floats)
        feature = b"\x12" + _varint(len(body)) + body  # Feature.float_list = 2
    else:
        body = b"".join(b"\x08" + _varint(v) for v in ints)
        feature = b"\x1a" + _varint(len(body)) + body  # Feature.int64_list = 3
    entry = b"\x0a" + _varint(len(key)) + key.encode() + b"\x12" + _varint(len(feature)) + feature
    features = b"\x0a" + _varint(len(entry)) + entry
    return b"\x0a" + _varint(len(features)) + features


def test_long_numeric_lists_parse_exactly():
    """Long float and int64 lists (read from their packed bytes) against the values written, with
    NaN, infinities, negative and 64-bit extremes, and lists written unpacked on the wire."""
    rng = np.random.RandomState(3)
    floats = rng.randn(784).astype(np.float32)
    floats[:4] = [np.nan, np.inf, -np.inf, -0.0]
    ints = rng.randint(-2**62, 2**62, size=300, dtype=np.int64)
    ints[:6] = [0, -1, 2**63 - 1, -2**63, 127, 128]
    spec = {"f": tf.io.FixedLenFeature([784], tf.float32), "i": tf.io.FixedLenFeature([300], tf.int64),
            "v": tf.io.VarLenFeature(tf.int64)}
    serialized = [example(f=[float(x) for x in floats], i=[int(x) for x in ints], v=[int(x) for x in ints[:20]])
                  .SerializeToString() for _ in range(2)]
    parsed = tf.io.parse_example(tf.constant(serialized), spec)
    assert parsed["f"].numpy().tobytes() == np.stack([floats, floats]).tobytes()
    assert parsed["i"].numpy().tolist() == [ints.tolist()] * 2
    assert parsed["v"].values.numpy().tolist() == ints[:20].tolist() * 2
    one = tf.io.parse_single_example(_unpacked_example("f", floats=floats[4:100]),
                                     {"f": tf.io.FixedLenFeature([96], tf.float32)})
    assert one["f"].numpy().tolist() == floats[4:100].tolist()
    one = tf.io.parse_single_example(_unpacked_example("i", ints=ints.tolist()),
                                     {"i": tf.io.FixedLenFeature([300], tf.int64)})
    assert one["i"].numpy().tolist() == ints.tolist()


def test_parse_errors_are_tf_s():
    serialized = example(a=[1, 2, 3]).SerializeToString()
    with pytest.raises(tf.errors.InvalidArgumentError, match="is required but could not be found"):
        tf.io.parse_single_example(serialized, {"b": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        tf.io.parse_single_example(serialized, {"a": tf.io.FixedLenFeature([3], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Values size: 3 but output shape: \\[2\\]"):
        tf.io.parse_single_example(serialized, {"a": tf.io.FixedLenFeature([2], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example input"):
        tf.io.parse_single_example(b"\xff\xff\xff", {"a": tf.io.FixedLenFeature([3], tf.int64)})
    with pytest.raises(ValueError, match="allow_missing"):
        tf.io.parse_single_example(serialized, {"a": tf.io.FixedLenSequenceFeature([], tf.int64)})


def test_tfrecord_of_examples_through_a_mapped_dataset(tmp_path):
    """The tutorial's pipeline: write Examples, read them back, parse in Dataset.map
    (a traced function: the parsing runs as a py_function there)."""
    path = str(tmp_path / "ex.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(5):
            w.write(example(x=[float(i), float(i) * 2], y=[i], tags=[b"t"] * i).SerializeToString())
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64),
            "tags": tf.io.VarLenFeature(tf.string)}
    ds = tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, spec))
    out = list(ds)
    assert [e["x"].numpy().tolist() for e in out] == [[i, 2.0 * i] for i in range(5)]
    assert [int(e["y"]) for e in out] == list(range(5))
    assert [len(e["tags"].values.numpy()) for e in out] == list(range(5))
    assert ds.element_spec["x"].shape.as_list() == [2]
    batched = tf.data.TFRecordDataset(path).batch(5).map(lambda r: tf.io.parse_example(r, spec))
    first = next(iter(batched))
    assert first["y"].numpy().tolist() == list(range(5))
    assert first["tags"].dense_shape.numpy().tolist() == [5, 4]

    @tf.function
    def total(ds):
        s = tf.constant(0.0)
        for e in ds:
            s += tf.reduce_sum(e["x"])
        return s

    # (The loop's element types come from the first element: a VarLenFeature's varying length
    # would not fit it, so the loop parses the fixed features only.)
    fixed = {k: v for k, v in spec.items() if k != "tags"}
    assert float(total(tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, fixed)))) == \
        pytest.approx(3 * sum(range(5)))


def test_example_numpy_values_and_string_features():
    e = example(img=[np.float32(0.25).item()] * 3, label=[b"cat"])
    parsed = tf.io.parse_single_example(tf.constant(e.SerializeToString()), {
        "img": tf.io.FixedLenFeature([3], tf.float32), "label": tf.io.FixedLenFeature([1], tf.string)})
    assert parsed["img"].numpy().tolist() == [0.25] * 3
    assert parsed["label"].numpy().tolist() == [b"cat"]


# ---- per-record decoders -------------------------------------------------------------------------

def test_serialize_and_parse_tensor():
    t = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    raw = tf.io.serialize_tensor(t)
    assert raw.dtype == tf.string
    from kiln.io._messages import TensorProto
    proto = TensorProto.FromString(raw.numpy())
    assert proto.dtype == 1 and [d.size for d in proto.tensor_shape.dim] == [2, 3]
    assert proto.tensor_content == np.arange(6, dtype="<f4").tobytes()
    assert tf.io.parse_tensor(raw, tf.float32).numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    words = tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([b"a", b"bc"])), tf.string)
    assert words.numpy().tolist() == [b"a", b"bc"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Type mismatch"):
        tf.io.parse_tensor(raw, tf.int32)
    # TF's own TensorProto of a scalar int64 7, written with int64_val (not tensor_content).
    assert int(tf.io.parse_tensor(b"\x08\x09\x12\x00\x50\x07", tf.int64)) == 7
    ds = tf.data.Dataset.from_tensor_slices([raw.numpy()] * 2).map(lambda r: tf.io.parse_tensor(r, tf.float32))
    assert [float(tf.reduce_sum(x)) for x in ds] == [15.0, 15.0]


def test_decode_raw_and_decode_csv():
    # An object array: Kiln's constant of a list of bytes drops trailing NULs (NumPy's "S" dtype).
    raw = tf.constant(np.array([np.array([1, 2], "<i4").tobytes(), np.array([3, -4], "<i4").tobytes()], object))
    assert tf.io.decode_raw(raw, tf.int32).numpy().tolist() == [[1, 2], [3, -4]]
    assert tf.io.decode_raw(b"\x01\x02\x03", tf.uint8, fixed_length=4).numpy().tolist() == [1, 2, 3, 0]
    assert tf.io.decode_raw(np.array([1], ">i4").tobytes(), tf.int32, little_endian=False).numpy().tolist() == [1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple of 4"):
        tf.io.decode_raw(b"\x01\x02\x03", tf.int32)
    cols = tf.io.decode_csv(tf.constant(["1,2.5,a", '3,,"b,c"']), [[0], [-1.0], [""]])
    assert [c.numpy().tolist() for c in cols] == [[1, 3], [2.5, -1.0], [b"a", b"b,c"]]
    lines = tf.data.Dataset.from_tensor_slices(["4,x", "5,y"]).map(lambda line: tf.io.decode_csv(line, [[0], [""]]))
    assert [(int(a), b.numpy()) for a, b in lines] == [(4, b"x"), (5, b"y")]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 is required"):
        tf.io.decode_csv(",1", [tf.int32, [0]])
