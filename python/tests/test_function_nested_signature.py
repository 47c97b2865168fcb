"""tf.function with a nested input_signature (dicts, tuples, namedtuples of TensorSpecs, composite specs among
them), as TF 2.15 takes it: each argument keeps its structure, its leaves are the graph's inputs."""
import collections

import numpy as np
import pytest

import kiln as tf

Pair = collections.namedtuple("Pair", ["dense", "ragged"])

SIGNATURE = [{"x": tf.TensorSpec([None], tf.float32), "y": (tf.TensorSpec([], tf.int32), tf.TensorSpec([2], tf.float32))},
             tf.TensorSpec([], tf.float32)]


def combine(d, s):
    return d["x"] * s + tf.cast(d["y"][0], tf.float32) + tf.reduce_sum(d["y"][1])


def test_dict_and_tuple_arguments_trace_once_and_convert_python_values():
    f = tf.function(combine, input_signature=SIGNATURE)
    np.testing.assert_array_equal(f({"x": [1.0, 2.0], "y": (3, [1.0, 1.0])}, 2.0).numpy(), [7.0, 9.0])
    out = f({"x": tf.constant([1.0, 2.0, 5.0]), "y": (tf.constant(3), tf.constant([1.0, 1.0]))}, tf.constant(2.0))
    np.testing.assert_array_equal(out.numpy(), [7.0, 9.0, 15.0])
    assert f.experimental_get_tracing_count() == 1
    assert f.input_signature == tuple(SIGNATURE)  # the structures as given
    concrete = f.get_concrete_function()
    np.testing.assert_array_equal(concrete({"x": [0.5], "y": (1, [0.0, 0.0])}, tf.constant(2.0)).numpy(), [2.0])


@pytest.mark.parametrize("bad, message", [
    ({"x": [1.0, 2.0]}, "same sequence length"),
    ({"x": [1.0], "z": (3, [1.0, 1.0])}, "same keys"),
    ({"x": [1.0], "y": (3, [1.0, 1.0, 3.0])}, "has shape"),
    ({"x": [1.0], "y": (3.5, [1.0, 1.0])}, "is not a TensorSpec"),
])
def test_arguments_that_do_not_fit_the_structure_are_refused(bad, message):
    f = tf.function(combine, input_signature=SIGNATURE)
    with pytest.raises((TypeError, ValueError), match=message):
        f(bad, 2.0)
    assert f.experimental_get_tracing_count() == 0


def test_namedtuple_with_a_ragged_spec():
    @tf.function(input_signature=[Pair(tf.TensorSpec([2], tf.float32), tf.RaggedTensorSpec([None, None], tf.float32))])
    def g(p):
        return p.dense * 2, p.ragged.row_lengths()

    dense, lengths = g(Pair(tf.constant([1.0, 2.0]), tf.ragged.constant([[1.0], [2.0, 3.0]])))
    np.testing.assert_array_equal(dense.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(lengths.numpy(), [1, 2])
    _, lengths = g(Pair([1.0, 2.0], tf.ragged.constant([[1.0], [2.0, 3.0], []])))
    np.testing.assert_array_equal(lengths.numpy(), [1, 2, 0])
    assert g.experimental_get_tracing_count() == 1


def test_gradients_flow_through_nested_arguments():
    f = tf.function(lambda d: tf.reduce_sum(d["a"] * d["b"]),
                    input_signature=[{"a": tf.TensorSpec([3], tf.float32), "b": tf.TensorSpec([3], tf.float32)}])
    a, b = tf.constant([1.0, 2.0, 3.0]), tf.constant([4.0, 5.0, 6.0])
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = f({"a": a, "b": b})
    np.testing.assert_array_equal(tape.gradient(y, a).numpy(), b.numpy())


class Features(tf.Module):
    @tf.function(input_signature=[{"a": tf.TensorSpec([None, 2], tf.float32, name="a"),
                                   "b": tf.TensorSpec([None], tf.float32, name="b")}])
    def serve(self, features):
        return {"out": tf.reduce_sum(features["a"], 1) + features["b"]}


def test_saved_and_loaded_with_the_leaves_named_by_their_specs(tmp_path):
    tf.saved_model.save(Features(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    np.testing.assert_array_equal(loaded.serve({"a": [[1.0, 2.0]], "b": [3.0]})["out"].numpy(), [6.0])
    signature = loaded.signatures["serving_default"]
    assert sorted(signature.structured_input_signature[1]) == ["a", "b"]
    np.testing.assert_array_equal(signature(a=tf.constant([[1.0, 2.0]]), b=tf.constant([3.0]))["out"].numpy(), [6.0])


def test_specs_that_are_not_specs_are_still_refused():
    with pytest.raises(TypeError, match="TypeSpec"):
        tf.function(lambda d: d, input_signature=[{"a": 3}])
