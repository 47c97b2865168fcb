"""tf.train.Example parsing's fast path (kiln/io/_example_wire.py, features read from the wire
bytes) against protobuf's parsing of the same bytes: random Examples, encodings protobuf accepts
but the fast path leaves to it (duplicate keys, unpacked lists, repeated messages, unknown fields),
and damaged bytes, where both must agree or protobuf must give its error. Every feature of the
damaged Examples is asked for: like TF's own fast parser, the fast path checks only the features
a parse asks for."""
import random

import numpy as np
import pytest
from google.protobuf.message import DecodeError

import kiln as tf
from kiln.io import _example_wire, _parsing


def proto_table(serialized):
    return _parsing._ProtoFeatures(tf.train.Example.FromString(serialized).features.feature)


def as_lists(table, keys_kinds):
    out = {}
    for key, dtype in keys_kinds:
        try:
            values = _parsing._values(table, key, dtype, "<test>")
        except tf.errors.InvalidArgumentError as e:
            if "Data types don't match" not in str(e):
                raise
            values = ("error", str(e))
        if values is not None and not isinstance(values, tuple):
            if values.dtype == np.float32:  # NaNs compare by place: protobuf quiets signalling ones, TF does not
                values = np.where(np.isnan(values), np.float32(np.nan), values)
            values = (values.dtype, values.tobytes() if values.dtype != object else values.tolist())
        out[key] = values
    return out


def random_example(rng):
    feature = {}
    for i in range(rng.randint(0, 5)):
        kind = rng.choice(["float", "int", "bytes", "empty"])
        n = rng.choice([0, 1, 3, 8, 9, 200])
        if kind == "float":
            values = [rng.choice([rng.uniform(-1e30, 1e30), float("nan"), float("inf"), -0.0, 1.5]) for _ in range(n)]
            feature[f"f{i}"] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif kind == "int":
            values = [rng.choice([rng.randint(-2**63, 2**63 - 1), -1, 0, 127, 128, 2**35]) for _ in range(n)]
            feature[f"i{i}"] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif kind == "bytes":
            values = [bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 140))) for _ in range(n)]
            feature[f"b{i}"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        else:
            feature[f"e{i}"] = tf.train.Feature()
    key = "ключ"  # non-ASCII keys are UTF-8 on the wire
    feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


KEYS = [(f"{p}{i}", d) for i in range(5) for p, d in (("f", tf.float32), ("i", tf.int64), ("b", tf.string),
                                                      ("e", tf.float32))] + [("ключ", tf.int64), ("i0", tf.float32)]


def test_random_examples_read_as_protobuf_reads_them():
    rng = random.Random(5)
    for _ in range(300):
        serialized = random_example(rng)
        table = _example_wire.features_of(serialized)
        assert table is not None, serialized  # protobuf's own serialization takes the fast path
        wire = _parsing._WireFeatures(table, serialized)
        assert as_lists(wire, KEYS) == as_lists(proto_table(serialized), KEYS)


def _len(payload):
    n, out = len(payload), b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out + payload


def entry(key, feature):
    return b"\x0a" + _len(b"\x0a" + _len(key) + b"\x12" + _len(feature))


@pytest.mark.parametrize("name,serialized", [
    # the same key twice: protobuf keeps the last
    ("duplicate key", b"\x0a" + _len(entry(b"k", b"\x1a" + _len(b"\x0a\x01\x01")) +
                                     entry(b"k", b"\x1a" + _len(b"\x0a\x01\x02")))),
    # Features twice: protobuf merges the two maps
    ("repeated Features", b"\x0a" + _len(entry(b"k", b"\x1a" + _len(b"\x0a\x01\x01"))) +
     b"\x0a" + _len(entry(b"j", b"\x1a" + _len(b"\x0a\x01\x02")))),
    # an int64 list written unpacked
    ("unpacked", b"\x0a" + _len(entry(b"k", b"\x1a" + _len(b"\x08\x05\x08\x06")))),
    # a packed list in two pieces: protobuf concatenates them
    ("two packed pieces", b"\x0a" + _len(entry(b"k", b"\x1a" + _len(b"\x0a\x01\x05\x0a\x01\x06")))),
    # a float_list then an int64_list in one Feature: the oneof keeps the last
    ("oneof twice", b"\x0a" + _len(entry(b"k", b"\x12" + _len(b"\x0a\x04\x00\x00\x80\x3f") +
                                         b"\x1a" + _len(b"\x0a\x01\x03")))),
    # an unknown varint field in Example
    ("unknown field", b"\x0a" + _len(entry(b"k", b"\x1a" + _len(b"\x0a\x01\x01"))) + b"\x10\x01"),
])
def test_other_encodings_fall_back_to_protobuf(name, serialized):
    assert _example_wire.features_of(serialized) is None
    keys = [("k", tf.int64), ("j", tf.int64)]
    parsed = as_lists(_parsing._features(serialized, "<test>"), keys)
    assert parsed == as_lists(proto_table(serialized), keys)


def test_damaged_bytes_agree_with_protobuf_or_raise_its_error():
    keys = KEYS[:-1]  # each key asked for as the kind written: a kind error can only come from damage
    rng = random.Random(9)
    good = [random_example(rng) for _ in range(20)]
    for _ in range(1500):
        data = bytearray(rng.choice(good))
        for _ in range(rng.randint(1, 3)):
            if data and rng.random() < 0.7:
                data[rng.randrange(len(data))] = rng.randrange(256)
            else:
                cut = rng.randrange(len(data) + 1)
                del data[cut:cut + rng.randint(1, 4)]
        data = bytes(data)
        try:
            expected = as_lists(proto_table(data), keys)
        except DecodeError:
            expected = "protobuf rejects it"
        try:
            table = _parsing._features(data, "<test>")
            got = as_lists(table, keys)
        except tf.errors.InvalidArgumentError as e:
            assert "Could not parse example input" in str(e)
            got = "protobuf rejects it"
        if got != expected and expected == "protobuf rejects it":
            # Damage in a feature no parse asks for (its key damaged too) is not looked at, nor the
            # bytes of a list asked for as another kind (the kinds' mismatch is the error, as in TF).
            asked = {key for key, _ in keys}
            assert isinstance(table, _parsing._WireFeatures)
            assert set(_example_wire.features_of(data)) - asked or any(
                isinstance(v, tuple) and v[0] == "error" for v in got.values())
            continue
        assert got == expected
