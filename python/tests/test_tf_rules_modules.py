"""TensorFlow 2.15's rules for tf.Module name scopes and restored SavedModels (issue #39, group 5)."""
import numpy as np
import pytest

import kiln as tf


def test_name_scope_prefixes_variable_names_eagerly():
    class DemoModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.v = tf.Variable(1.0)
                self.w = tf.Variable(2.0, name="w")
            self.outside = tf.Variable(3.0)

    demo = DemoModule()
    assert demo.v.name == "demo_module/Variable:0"
    assert demo.w.name == "demo_module/w:0"
    assert demo.outside.name == "Variable:0"
    assert DemoModule(name="custom").v.name == "custom/Variable:0"

    with tf.name_scope("a") as scope:
        assert scope == "a/"
        assert tf.Variable(1.0).name == "a/Variable:0"
        with tf.name_scope("b"):
            assert tf.Variable(1.0, name="x").name == "a/b/x:0"
        inner = DemoModule()  # made inside a scope: the module's scope nests in it
    assert inner.v.name == "a/demo_module/Variable:0"
    assert tf.Variable(1.0).name == "Variable:0"

    class Dense(tf.Module):
        @tf.Module.with_name_scope
        def build(self):
            self.kernel = tf.Variable(tf.ones([2, 2]), name="kernel")

    layer = Dense()
    layer.build()
    assert layer.kernel.name == "dense/kernel:0"


class _Scaler(tf.Module):
    def __init__(self):
        super().__init__()
        self.factor = tf.Variable(2.0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return x * self.factor

    @tf.function
    def affine(self, x, shift):
        return x * self.factor + shift

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32, name="x")])
    def parts(self, x):
        return {"scaled": x * self.factor, "raw": x}

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32, name="x")])
    def pair(self, x):
        return x + 1, x - 1


def _saved(tmp_path):
    module = _Scaler()
    module.affine(tf.constant(1.0), tf.constant(0.5))
    module.affine(tf.constant([1.0, 2.0]), tf.constant([0.0, 1.0]))
    tf.saved_model.save(module, str(tmp_path), signatures={"parts": module.parts, "pair": module.pair})
    return tf.saved_model.load(str(tmp_path))


def test_restored_object_callable_when_call_was_a_function(tmp_path):
    loaded = _saved(tmp_path)
    np.testing.assert_array_equal(loaded(tf.constant([1.0, 3.0])).numpy(), [2.0, 6.0])
    np.testing.assert_array_equal(loaded([4.0]).numpy(), [8.0])

    class Plain(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(1.0)

    tf.saved_model.save(Plain(), str(tmp_path / "plain"))
    with pytest.raises(TypeError, match="not callable"):
        tf.saved_model.load(str(tmp_path / "plain"))(1.0)


def test_restored_functions_accept_keyword_args_by_parameter_name(tmp_path):
    loaded = _saved(tmp_path)
    assert loaded.affine(x=tf.constant(3.0), shift=tf.constant(1.0)).numpy() == 7.0
    assert loaded.affine(tf.constant(3.0), shift=tf.constant(1.0)).numpy() == 7.0
    np.testing.assert_array_equal(loaded.affine(shift=tf.constant([1.0, 1.0]), x=tf.constant([1.0, 2.0])).numpy(),
                                  [3.0, 5.0])
    with pytest.raises(TypeError):
        loaded.affine(tf.constant(3.0), scale=tf.constant(1.0))


def test_signature_dict_keeps_keys_tuple_becomes_output_n(tmp_path):
    loaded = _saved(tmp_path)
    parts = loaded.signatures["parts"](x=tf.constant(3.0))
    assert sorted(parts) == ["raw", "scaled"]
    assert parts["scaled"].numpy() == 6.0 and parts["raw"].numpy() == 3.0
    assert sorted(loaded.signatures["parts"].structured_outputs) == ["raw", "scaled"]
    pair = loaded.signatures["pair"](x=tf.constant(3.0))
    assert sorted(pair) == ["output_0", "output_1"]
    assert pair["output_0"].numpy() == 4.0 and pair["output_1"].numpy() == 2.0
    # The restored function itself returns the structure the Python function returned.
    restored = loaded.parts(tf.constant(1.0))
    assert isinstance(restored, dict) and restored["scaled"].numpy() == 2.0
    first, second = loaded.pair(tf.constant(1.0))
    assert (first.numpy(), second.numpy()) == (2.0, 0.0)


def test_restored_function_with_no_matching_trace_raises(tmp_path):
    loaded = _saved(tmp_path)
    with pytest.raises((ValueError, TypeError)):
        loaded.affine(tf.constant([[1.0]]), tf.constant(1.0))
    with pytest.raises((ValueError, TypeError)):
        loaded.affine(tf.constant(1), tf.constant(1))


def test_function_without_input_signature_saved_with_its_traces(tmp_path):
    loaded = _saved(tmp_path)
    assert len(loaded.affine.concrete_functions) == 2
    assert loaded.affine(tf.constant(2.0), tf.constant(0.5)).numpy() == 4.5
    np.testing.assert_array_equal(loaded.affine(tf.constant([2.0, 3.0]), tf.constant([1.0, 0.0])).numpy(), [5.0, 6.0])
