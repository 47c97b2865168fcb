"""tf.ensure_shape, Tensor.set_shape and TensorShape's merging methods; and the While gradient that needed the
static shape back (a Split of a loop variable of unknown batch inside the loop)."""
import numpy as np
import pytest

import kiln as tf


def test_ensure_shape_checks_eagerly_and_refines_in_a_graph():
    x = tf.constant([[1.0, 2.0, 3.0]])
    assert tf.ensure_shape(x, [None, 3]) is not None and tf.ensure_shape(x, None).shape == (1, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not compatible with expected shape"):
        tf.ensure_shape(x, [2, 3])

    @tf.function(input_signature=[tf.TensorSpec(None)])
    def f(t):
        y = tf.ensure_shape(t, [None, 3])
        assert y.shape.as_list() == [None, 3]
        return y * 2.0
    assert f(x).numpy().tolist() == [[2.0, 4.0, 6.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not compatible with expected shape"):
        f(tf.ones([2, 2]))  # checked when the graph runs

    v = tf.Variable([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.ensure_shape(v * v, [1, 3]))
    assert tape.gradient(loss, v).numpy().tolist() == [[2.0, 4.0, 6.0]]


def test_set_shape_as_tf():
    x = tf.constant([[1, 2]])
    x.set_shape([1, None])  # compatible: nothing changes
    with pytest.raises(ValueError, match=r"Tensor's shape \(1, 2\) is not compatible with supplied shape \(2, 2\)"):
        x.set_shape([2, 2])

    @tf.function
    def parse(t):
        y = tf.py_function(lambda a: a * 2, [t], tf.int32)  # shape unknown, as in TF
        y.set_shape([None, 2])
        assert y.shape.as_list() == [None, 2]
        return tf.reshape(y, [-1])
    assert parse(x).numpy().tolist() == [2, 4]
    def plus_one(row):  # the tf.data guide's pattern: a py_function's result given its shape back
        y = tf.py_function(lambda a: a + 1, [row], tf.int32)
        y.set_shape([2])
        return y
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.int32).reshape(3, 2)).map(plus_one)
    assert ds.element_spec == tf.TensorSpec([2], tf.int32)
    assert ds.batch(2).element_spec == tf.TensorSpec([None, 2], tf.int32)
    assert [e.numpy().tolist() for e in ds] == [[1, 2], [3, 4], [5, 6]]


def test_tensor_shape_merge_and_friends():
    s = tf.TensorShape([None, 3])
    assert s.merge_with([2, None]) == tf.TensorShape([2, 3])
    with pytest.raises(ValueError, match="are not compatible"):
        s.merge_with([2, 4])
    assert s.concatenate([4]).as_list() == [None, 3, 4] and ([1] + s).as_list() == [1, None, 3]
    assert not tf.TensorShape(None) and tf.TensorShape([])
    assert s.most_specific_compatible_shape([2, 3]).as_list() == [None, 3]
    assert tf.TensorShape(None).with_rank(2).as_list() == [None, None]
    with pytest.raises(ValueError):
        s.with_rank(3)
    with pytest.raises(ValueError):
        s.assert_is_compatible_with([3, 3, 3])


def test_split_of_a_loop_variable_of_unknown_batch_differentiates_in_a_trace():
    @tf.function(input_signature=[tf.TensorSpec([None, 6])])
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)

            def body(i, acc):
                a, b, c = tf.split(acc, 3, axis=1)
                return i + 1, tf.concat([b * 2.0, c, a], axis=1)
            _, y = tf.while_loop(lambda i, acc: i < 3, body, (0, x))
            loss = tf.reduce_sum(y * y)
        return tape.gradient(loss, x)

    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    # Three rotations each doubling one block: every block is doubled once, so y = 2x permuted; dL/dx = 8x.
    np.testing.assert_allclose(grad(x).numpy(), 8 * x)
