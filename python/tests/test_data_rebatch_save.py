"""Dataset.rebatch (TF's docstring outputs), Dataset.random, Dataset.save/load (Kiln's
format), FixedLengthRecordDataset and tf.io's decode_compressed / encode_base64 /
decode_base64, eagerly and inside tf.function."""
import base64
import gzip
import os
import zlib

import numpy as np
import pytest

import kiln as tf


def arrays(ds):
    return [a.tolist() for a in ds.as_numpy_iterator()]


# ---- rebatch -----------------------------------------------------------------------

def test_rebatch_as_tf_documents():
    assert arrays(tf.data.Dataset.range(6).batch(2).rebatch(3)) == [[0, 1, 2], [3, 4, 5]]
    assert arrays(tf.data.Dataset.range(7).batch(4).rebatch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert arrays(tf.data.Dataset.range(7).batch(2).rebatch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert arrays(tf.data.Dataset.range(8).batch(4).rebatch([2, 1, 1])) == [[0, 1], [2], [3], [4, 5], [6], [7]]


def test_rebatch_specs_structures_and_lists_with_drop_remainder():
    assert tf.data.Dataset.range(8).batch(4).rebatch(3).element_spec == tf.TensorSpec([None], tf.int64)
    assert tf.data.Dataset.range(8).batch(4).rebatch(3, True).element_spec == tf.TensorSpec([3], tf.int64)
    assert tf.data.Dataset.range(8).batch(4).rebatch([3, 1], True).element_spec == tf.TensorSpec([None], tf.int64)
    # The list is cycled: 3, 1, 3, then 1 remains for a 1 (kept); with 9 elements, 2 remain for a 3.
    assert arrays(tf.data.Dataset.range(8).batch(5).rebatch([3, 1], drop_remainder=True)) == [
        [0, 1, 2], [3], [4, 5, 6], [7]]
    assert arrays(tf.data.Dataset.range(9).batch(5).rebatch([3, 1], drop_remainder=True)) == [
        [0, 1, 2], [3], [4, 5, 6], [7]]
    ds = tf.data.Dataset.from_tensor_slices(({"a": [[1, 2], [3, 4], [5, 6]]}, [b"x", b"y", b"z"])).batch(2)
    out = list(ds.rebatch(1))
    assert [(e[0]["a"].numpy().tolist(), e[1].numpy().tolist()) for e in out] == [
        ([[1, 2]], [b"x"]), ([[3, 4]], [b"y"]), ([[5, 6]], [b"z"])]
    assert arrays(tf.data.Dataset.range(4).batch(2).rebatch(0).take(2)) == [[], []]


def test_rebatch_errors():
    with pytest.raises(ValueError, match="scalar"):
        tf.data.Dataset.range(3).rebatch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        tf.data.Dataset.range(3).batch(2).rebatch([2, -1])


@tf.function
def count_and_square_sums(ds):
    """The number of batches and the sum of each batch's sum squared (one dataset loop)."""
    n = tf.constant(0, tf.int64)
    total = tf.constant(0, tf.int64)
    for b in ds:
        n += 1
        total += tf.reduce_sum(b) ** 2
    return n, total


def test_rebatch_and_random_inside_tf_function():
    n, total = count_and_square_sums(tf.data.Dataset.range(10).batch(3).rebatch([4, 1]))
    assert (int(n), int(total)) == (4, (0 + 1 + 2 + 3) ** 2 + 4 ** 2 + (5 + 6 + 7 + 8) ** 2 + 9 ** 2)
    n, total = count_and_square_sums(tf.data.Dataset.random(seed=7).take(6).map(lambda x: x % 1000).batch(2))
    expected = [v % 1000 for v in tf.data.Dataset.random(seed=7).take(6).as_numpy_iterator()]
    assert (int(n), int(total)) == (3, sum((a + b) ** 2 for a, b in zip(expected[::2], expected[1::2])))


# ---- random ------------------------------------------------------------------------

def test_random_is_seeded_uint32_range_and_infinite():
    ds = tf.data.Dataset.random(seed=4).take(2000)
    first, again = list(ds.as_numpy_iterator()), list(ds.as_numpy_iterator())
    assert first == again and len(set(first)) > 1990
    values = np.array(first)
    assert values.min() >= 0 and values.max() < 2 ** 32 and values.max() > 2 ** 31  # uniform over [0, 2**32)
    assert abs(values.mean() / 2 ** 32 - 0.5) < 0.03
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    assert tf.data.Dataset.random().cardinality().numpy() == tf.data.INFINITE_CARDINALITY
    other = list(tf.data.Dataset.random(seed=5).take(20).as_numpy_iterator())
    assert other != first[:20]
    fresh = tf.data.Dataset.random(seed=4, rerandomize_each_iteration=True).take(20)
    assert list(fresh.as_numpy_iterator()) != list(fresh.as_numpy_iterator())


# ---- save / load -------------------------------------------------------------------

def test_save_and_load_round_trip(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices(({"x": np.arange(12, dtype=np.float32).reshape(6, 2)},
                                             [b"a", b"b", b"c", b"d", b"e", b"f"], np.arange(6)))
    path = str(tmp_path / "saved")
    ds.save(path)
    loaded = tf.data.Dataset.load(path)
    assert loaded.element_spec == ds.element_spec
    assert loaded.cardinality().numpy() == 6
    got = [(e[0]["x"].numpy().tolist(), e[1].numpy(), int(e[2])) for e in loaded]
    assert got == [(list(map(float, [2 * i, 2 * i + 1])), b"abcdef"[i:i + 1], i) for i in range(6)]
    assert sorted(os.listdir(path)) == ["dataset_spec.json", "shard_0.tfrecord"]


def test_save_gzip_with_shards_and_experimental_names(tmp_path):
    path = str(tmp_path / "gz")
    tf.data.experimental.save(tf.data.Dataset.range(10), path, compression="GZIP",
                              shard_func=lambda x: x % 3)
    assert sorted(os.listdir(path)) == ["dataset_spec.json"] + [f"shard_{k}.tfrecord" for k in range(3)]
    raw = open(os.path.join(path, "shard_1.tfrecord"), "rb").read()
    assert raw[:2] == b"\x1f\x8b"  # a GZIP stream
    loaded = tf.data.experimental.load(path)
    assert sorted(int(v) for v in loaded) == list(range(10))
    assert [int(v) for v in loaded] == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]  # shard by shard
    mixed = tf.data.Dataset.load(path, reader_func=lambda shards: shards.interleave(lambda d: d, cycle_length=3))
    assert [int(v) for v in mixed] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_load_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="dataset_spec.json"):
        tf.data.Dataset.load(str(tmp_path))
    (tmp_path / "dataset_spec.json").write_text("{not json")
    with pytest.raises(tf.errors.DataLossError, match="dataset_spec.json"):
        tf.data.Dataset.load(str(tmp_path))


# ---- FixedLengthRecordDataset --------------------------------------------------------

def test_fixed_length_records_with_header_footer_and_gzip(tmp_path):
    body = bytes(range(12))
    plain = tmp_path / "r.bin"
    plain.write_bytes(b"HEAD" + body + b"FT")
    ds = tf.data.FixedLengthRecordDataset(str(plain), 4, header_bytes=4, footer_bytes=2)
    assert [r.numpy() for r in ds] == [body[0:4], body[4:8], body[8:12]]
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    packed = tmp_path / "r.gz"
    packed.write_bytes(gzip.compress(b"HEAD" + body + b"FT"))
    ds = tf.data.FixedLengthRecordDataset([str(plain), str(packed)], 6, 4, 2, compression_type=["GZIP", ""][0])
    with pytest.raises(tf.errors.DataLossError):  # the plain file is not a GZIP stream
        list(ds)
    ds = tf.data.FixedLengthRecordDataset(str(packed), 6, 4, 2, compression_type="GZIP")
    decoded = ds.map(lambda r: tf.io.decode_raw(r, tf.uint8))
    assert [r.numpy().tolist() for r in decoded] == [list(range(6)), list(range(6, 12))]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not an exact multiple of the record length"):
        list(tf.data.FixedLengthRecordDataset(str(plain), 5, 4, 2))


# ---- tf.io codecs ----------------------------------------------------------------------

def test_base64_is_web_safe_as_tf():
    data = [b"\xfb\xff\xbf", b"hello", b""]
    encoded = tf.io.encode_base64(data)
    assert encoded.numpy().tolist() == [b"-_-_", b"aGVsbG8", b""]
    assert tf.io.encode_base64(data, pad=True).numpy().tolist() == [b"-_-_", b"aGVsbG8=", b""]
    assert tf.io.decode_base64(encoded).numpy().tolist() == data
    assert tf.io.decode_base64([[b"aGVsbG8="]]).numpy().tolist() == [[b"hello"]]
    for raw in (bytes(range(256)), b"x" * 7):
        assert tf.io.encode_base64(raw).numpy() == base64.urlsafe_b64encode(raw).rstrip(b"=")
    with pytest.raises(tf.errors.InvalidArgumentError, match="base64"):
        tf.io.decode_base64(b"a+b/")


def test_decode_compressed():
    texts = [b"first record", b"x" * 1000]
    assert tf.io.decode_compressed([zlib.compress(t) for t in texts], "ZLIB").numpy().tolist() == texts
    assert tf.io.decode_compressed([gzip.compress(t) for t in texts], "GZIP").numpy().tolist() == texts
    assert tf.io.decode_compressed(b"as is").numpy() == b"as is"
    with pytest.raises(tf.errors.DataLossError):
        tf.io.decode_compressed(b"not zlib", compression_type="ZLIB")
    ds = tf.data.Dataset.from_tensor_slices([zlib.compress(t) for t in texts]).map(
        lambda r: tf.io.decode_compressed(r, "ZLIB"))
    assert [r.numpy() for r in ds] == texts


def test_snapshot_computes_once_then_reads_the_files(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from range(5)

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))
    snap = ds.snapshot(str(tmp_path / "snap"))
    assert [int(v) for v in snap] == [0, 1, 2, 3, 4]
    assert [int(v) for v in snap.map(lambda x: x * 2)] == [0, 2, 4, 6, 8]
    assert len(calls) == 1  # the second pass read the snapshot
    assert open(tmp_path / "snap" / "shard_0.tfrecord", "rb").read(2) == b"\x1f\x8b"  # "AUTO": GZIP
    again = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))
    assert [int(v) for v in again.snapshot(str(tmp_path / "snap"))] == [0, 1, 2, 3, 4] and len(calls) == 1


def test_damaged_saved_datasets_are_clear_errors(tmp_path):
    path = str(tmp_path / "saved")
    tf.data.Dataset.from_tensor_slices(np.arange(20, dtype=np.float32)).save(path)
    spec = os.path.join(path, "dataset_spec.json")
    good = open(spec).read()
    for bad in ('{"format": "kiln-dataset-1"}', good.replace('"float32"', '"no_such_dtype"'),
                good.replace('"shards": [0]', '"shards": "x"')):
        open(spec, "w").write(bad)
        with pytest.raises(tf.errors.DataLossError, match="dataset_spec.json"):
            tf.data.Dataset.load(path)
    open(spec, "w").write(good)
    shard = os.path.join(path, "shard_0.tfrecord")
    data = open(shard, "rb").read()
    open(shard, "wb").write(data[:len(data) // 2 + 3])
    with pytest.raises(tf.errors.DataLossError, match="shard_0.tfrecord"):
        list(tf.data.Dataset.load(path))
    open(shard, "wb").write(data[:len(data) // 2])  # whole records: a shorter file
    with pytest.raises(tf.errors.DataLossError, match="10 elements read, 20 saved"):
        list(tf.data.Dataset.load(path))
    os.remove(shard)
    with pytest.raises(tf.errors.NotFoundError, match="shard_0.tfrecord"):
        list(tf.data.Dataset.load(path))


def test_experimental_tfrecord_writer_writes_a_dataset(tmp_path):
    records = [b"first", b"", b"\x00third"]
    path = str(tmp_path / "out.tfrecord.gz")
    writer = tf.data.experimental.TFRecordWriter(path, compression_type="GZIP")
    writer.write(tf.data.Dataset.from_tensor_slices(records))
    assert [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type="GZIP")] == records
    assert gzip.decompress(open(path, "rb").read())[:8] == (5).to_bytes(8, "little")
    with pytest.raises(TypeError, match="scalar `tf.string` elements"):
        writer.write(tf.data.Dataset.range(3))
