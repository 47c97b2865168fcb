"""tf.strings' hash buckets and Unicode ops, and tf.where's one-argument form: TF's documented values, Unicode's
edge cases (invalid and truncated sequences, surrogates, control characters), eager = traced."""
import numpy as np
import pytest

import kiln as tf
from kiln import _farmhash


def test_hash_buckets_give_tf_documented_values():
    words = ["Hello", "TensorFlow", "2.x"]
    assert tf.strings.to_hash_bucket_fast(words, 3).numpy().tolist() == [0, 2, 2]
    assert tf.strings.to_hash_bucket(words, 3).numpy().tolist() == [2, 0, 1]
    assert tf.strings.to_hash_bucket_strong(["Hello", "TF"], 3, [1, 2]).numpy().tolist() == [2, 0]
    assert tf.strings.to_hash_bucket_fast(tf.constant([["a", "b"]]), 10).shape == (1, 2)


def test_siphash_matches_the_reference_vectors():
    key = (0x0706050403020100, 0x0f0e0d0c0b0a0908)  # the SipHash paper's key 00 01 .. 0f
    assert _farmhash.siphash24(key, b"") == 0x726fdb47dd0e0e31
    assert _farmhash.siphash24(key, bytes(range(15))) == 0xa129ca6149be45e5


def test_hash_bucket_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets"):
        tf.strings.to_hash_bucket_fast(["a"], 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 elements"):
        tf.strings.to_hash_bucket_strong(["a"], 3, [1])
    with pytest.raises(TypeError):
        tf.strings.to_hash_bucket_fast([1, 2], 3)


def test_unicode_decode_split_and_offsets():
    words = [s.encode("utf8") for s in ("G\xf6\xf6dnight", "\U0001f60a")]
    assert tf.strings.unicode_decode(words, "UTF-8").to_list() == [[71, 246, 246, 100, 110, 105, 103, 104, 116],
                                                                    [128522]]
    assert tf.strings.unicode_split(words, "UTF-8").to_list() == [
        [b"G", b"\xc3\xb6", b"\xc3\xb6", b"d", b"n", b"i", b"g", b"h", b"t"], [b"\xf0\x9f\x98\x8a"]]
    points, offsets = tf.strings.unicode_decode_with_offsets(words, "UTF-8")
    assert offsets.to_list() == [[0, 1, 3, 5, 6, 7, 8, 9, 10], [0]]
    assert points.dtype == tf.int32 and offsets.dtype == tf.int64
    scalar = tf.strings.unicode_decode("ab", "UTF-8")
    assert isinstance(scalar, tf.Tensor) and scalar.numpy().tolist() == [97, 98]
    matrix = tf.strings.unicode_decode([["a", "bc"], ["", "d"]], "UTF-8")
    assert matrix.to_list() == [[[97], [98, 99]], [[], [100]]]


def test_invalid_bytes_follow_errors():
    bad = b"\xe2\x82 ok\xff\xed\xa0\x80"  # truncated 3-byte sequence, a stray byte, an encoded surrogate
    replaced = tf.strings.unicode_decode(bad, "UTF-8").numpy().tolist()
    assert replaced == [65533, 32, 111, 107, 65533, 65533, 65533, 65533]  # one per maximal invalid subpart
    assert tf.strings.unicode_decode(bad, "UTF-8", errors="ignore").numpy().tolist() == [32, 111, 107]
    assert tf.strings.unicode_decode(bad, "UTF-8", replacement_char=63).numpy().tolist()[:2] == [63, 32]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting"):
        tf.strings.unicode_decode(bad, "UTF-8", errors="strict")
    _, offsets = tf.strings.unicode_decode_with_offsets(b"a\xffb", "UTF-8")
    assert offsets.numpy().tolist() == [0, 1, 2]
    controls = tf.strings.unicode_decode("a\x01\tb", "UTF-8", replace_control_characters=True).numpy().tolist()
    assert controls == [97, 65533, 65533, 98]
    with pytest.raises(ValueError, match="errors"):
        tf.strings.unicode_decode("a", "UTF-8", errors="bogus")
    with pytest.raises(tf.errors.InvalidArgumentError, match="encoding"):
        tf.strings.unicode_decode("a", "no-such-encoding")


def test_unicode_encode_and_transcode():
    assert tf.strings.unicode_encode([[99, 97, 116], [100, 111, 103]], "UTF-8").numpy().tolist() == [b"cat", b"dog"]
    assert tf.strings.unicode_encode([104, 105], "UTF-16-BE").numpy() == b"\x00h\x00i"
    assert tf.strings.unicode_encode(tf.ragged.constant([[0x1F60A], []]), "UTF-32-BE").numpy().tolist() == [
        b"\x00\x01\xf6\x0a", b""]
    assert tf.strings.unicode_encode([104, -1, 0xD800, 0x110000], "UTF-8").numpy() == b"h" + "\ufffd".encode() * 3
    assert tf.strings.unicode_encode([104, -1], "UTF-8", errors="ignore").numpy() == b"h"
    with pytest.raises(tf.errors.InvalidArgumentError, match="code point"):
        tf.strings.unicode_encode([104, -1], "UTF-8", errors="strict")
    with pytest.raises(tf.errors.InvalidArgumentError, match="output encoding"):
        tf.strings.unicode_encode([104], "latin-1")
    out = tf.strings.unicode_transcode(["Hello", "TensorFlow", "2.x"], "UTF-8", "UTF-16-BE").numpy().tolist()
    assert out == ["Hello".encode("utf-16-be"), "TensorFlow".encode("utf-16-be"), "2.x".encode("utf-16-be")]
    assert tf.strings.unicode_transcode(["A", "B", "C"], "US ASCII", "UTF-8").numpy().tolist() == [b"A", b"B", b"C"]


def test_unicode_script_bytes_split_and_ngrams():
    assert tf.strings.unicode_script([1, 31, 38]).numpy().tolist() == [0, 0, 0]
    assert tf.strings.unicode_script([33464, 1041, -5]).numpy().tolist() == [17, 8, -1]
    assert tf.strings.bytes_split("hello").numpy().tolist() == [b"h", b"e", b"l", b"l", b"o"]
    assert tf.strings.bytes_split(["hello", "123"]).to_list() == [[b"h", b"e", b"l", b"l", b"o"], [b"1", b"2", b"3"]]
    assert tf.strings.ngrams(["A", "B", "C", "D"], 2).numpy().tolist() == [b"A B", b"B C", b"C D"]
    assert tf.strings.ngrams(["TF", "and", "keras"], 1).numpy().tolist() == [b"TF", b"and", b"keras"]
    assert tf.strings.ngrams([["a", "b", "c"]], (1, 3), separator="|").numpy().tolist() == [[b"a", b"b", b"c",
                                                                                               b"a|b|c"]]
    padded = tf.strings.ngrams(tf.ragged.constant([["a", "b", "c"], ["d"]]), 2, pad_values=("<", ">"))
    assert padded.to_list() == [[b"< a", b"a b", b"b c", b"c >"], [b"< d", b"d >"]]
    short = tf.strings.ngrams(tf.ragged.constant([["a", "b"], ["c", "d", "e", "f"]]), 3,
                              preserve_short_sequences=True)
    assert short.to_list() == [[b"a b"], [b"c d e", b"d e f"]]


def test_traced_equals_eager():
    @tf.function
    def f(x):
        return (tf.strings.unicode_decode(x, "UTF-8"), tf.strings.to_hash_bucket_fast(x, 7),
                tf.strings.bytes_split(x), tf.strings.unicode_transcode(x, "UTF-8", "UTF-32-BE"))
    x = tf.constant(["h\xe9llo", "", "\U0001f60a!"])
    traced, eager = f(x), f.python_function(x)
    assert traced[0].to_list() == eager[0].to_list() == [[104, 233, 108, 108, 111], [], [128522, 33]]
    assert traced[1].numpy().tolist() == eager[1].numpy().tolist()
    assert traced[2].to_list() == eager[2].to_list()
    assert traced[3].numpy().tolist() == eager[3].numpy().tolist()


def test_where_with_one_argument():
    assert tf.where([[True, False], [True, True]]).numpy().tolist() == [[0, 0], [1, 0], [1, 1]]
    assert tf.where(tf.constant([0.0, -0.0, np.nan, 2.0])).numpy().tolist() == [[2], [3]]  # nonzero is true
    assert tf.where(True).shape == (1, 0) and tf.where(False).shape == (0, 0)
    assert tf.where(tf.zeros([0, 3]) > 0).shape == (0, 2)

    @tf.function(input_signature=[tf.TensorSpec([None, 3])])
    def positive(x):
        return tf.where(x > 0)
    assert positive(tf.constant([[1.0, -1.0, 2.0]])).numpy().tolist() == [[0, 0], [0, 2]]
    assert positive.get_concrete_function().outputs[0].shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="both"):
        tf.where([True], x=[1])
