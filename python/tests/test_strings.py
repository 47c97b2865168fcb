"""tf.strings' elementwise ops against Python's own string functions (and the values TF's API docs show), eager,
inside tf.function and in a dataset map (where they run as host calls), with TF's error classes."""
import re
import string

import numpy as np
import pytest

import kiln as tf

TEXTS = [b"Hello <br />World!", b"  ABC def  ", "\u00c9t\u00e9".encode("utf-8")]


def _values(t):
    return t.numpy().tolist()


def test_elementwise_ops_match_python():
    x = tf.constant(TEXTS)
    assert _values(tf.strings.lower(x)) == [t.lower() for t in TEXTS]  # ASCII only, as encoding=""
    assert _values(tf.strings.lower(x, encoding="utf-8"))[2] == "\u00e9t\u00e9".encode("utf-8")
    assert _values(tf.strings.upper(x)) == [t.upper() for t in TEXTS]
    assert _values(tf.strings.strip(x)) == [t.strip() for t in TEXTS]
    assert _values(tf.strings.length(x)) == [len(t) for t in TEXTS]
    assert _values(tf.strings.length(x, unit="UTF8_CHAR")) == [len(t.decode()) for t in TEXTS]
    assert tf.strings.length(x).dtype == tf.int32
    assert _values(tf.strings.substr(x, 1, 3)) == [t[1:4] for t in TEXTS]
    assert _values(tf.strings.substr(x, -2, 2)) == [t[-2:] for t in TEXTS]


def test_regex_ops():
    x = tf.constant(TEXTS)
    punct = f"[{re.escape(string.punctuation)}]"
    assert _values(tf.strings.regex_replace(x, punct, "")) == [re.sub(punct.encode(), b"", t) for t in TEXTS]
    assert _values(tf.strings.regex_replace(x, "l", "L", replace_global=False))[0] == b"HeLlo <br />World!"
    assert _values(tf.strings.regex_replace(["ab12cd"], r"(\d)(\d)", r"\2\1")) == [b"ab21cd"]
    assert _values(tf.strings.regex_full_match(x, r"[A-Za-z <>/!]+")) == [True, True, False]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.strings.regex_replace(x, "(", "")


def test_join_reduce_join_and_conversions():
    # TF's docs: tf.strings.join(['abc','def']) -> b'abcdef'; reduce_join over an axis.
    assert tf.strings.join(["abc", "def"]).numpy() == b"abcdef"
    assert _values(tf.strings.join([["a", "b"], "c"], separator="-")) == [b"a-c", b"b-c"]
    m = tf.constant([["abc", "123"], ["def", "456"]])
    assert tf.strings.reduce_join(m).numpy() == b"abc123def456"
    assert _values(tf.strings.reduce_join(m, axis=-1)) == [b"abc123", b"def456"]
    assert _values(tf.strings.reduce_join(m, axis=0, separator=".")) == [b"abc.def", b"123.456"]
    assert tf.strings.reduce_join(m, axis=1, keepdims=True).shape == (2, 1)
    np.testing.assert_allclose(tf.strings.to_number(["1.5", " -2 "]).numpy(), [1.5, -2.0])
    assert tf.strings.to_number(["7"], out_type=tf.int64).dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert"):
        tf.strings.to_number(["x1"])
    assert _values(tf.strings.as_string([1.5, 2.0])) == [b"1.500000", b"2.000000"]
    assert _values(tf.strings.as_string([3, 42], width=3)) == [b"  3", b" 42"]
    assert _values(tf.strings.as_string([0.25], precision=1)) == [b"0.2"]


def test_traced_and_in_a_dataset_map():
    @tf.function
    def clean(s):
        return tf.strings.regex_replace(tf.strings.lower(s), "<br />", " ")

    x = tf.constant(TEXTS)
    assert _values(clean(x)) == [t.lower().replace(b"<br />", b" ") for t in TEXTS]
    assert clean.get_concrete_function(tf.TensorSpec([None], tf.string)).outputs[0].shape.as_list() == [None]
    ds = tf.data.Dataset.from_tensor_slices(TEXTS).map(lambda s: (tf.strings.upper(s), tf.strings.length(s)))
    assert [(a.numpy(), int(b)) for a, b in ds] == [(t.upper(), len(t)) for t in TEXTS]


def test_errors():
    with pytest.raises(TypeError, match="string tensor"):
        tf.strings.lower(tf.constant([1.0]))
    with pytest.raises(ValueError, match="unit"):
        tf.strings.length(["a"], unit="CHAR")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.strings.substr(["ab"], 5, 1)
