"""TensorFlow 2.15's shape arguments built from tensors inside kiln.function (issue #39, group 2):
lists mixing Python ints and scalar tensors, such as [tf.shape(x)[0], 3]. Each function is
called with two batch sizes, so the second call may run a trace whose batch dim is unknown."""
import numpy as np
import pytest

import kiln as tf

BATCHES = (2, 5, 3)


def _inputs(n, *rest):
    return tf.constant(np.arange(n * int(np.prod(rest)), dtype=np.float32).reshape((n,) + rest))


def test_reshape_with_tensor_dims_in_function():
    @tf.function
    def flatten(z):
        return tf.reshape(z, [tf.shape(z)[0], -1])

    @tf.function
    def split_last(z):
        return tf.reshape(z, [tf.shape(z)[0], 2, 3])

    for n in BATCHES:
        z = _inputs(n, 2, 3)
        np.testing.assert_array_equal(flatten(z).numpy(), z.numpy().reshape(n, 6))
        z6 = _inputs(n, 6)
        np.testing.assert_array_equal(split_last(z6).numpy(), z6.numpy().reshape(n, 2, 3))
    # Eagerly too.
    z = _inputs(4, 3, 2)
    np.testing.assert_array_equal(tf.reshape(z, [tf.shape(z)[0], -1]).numpy(), z.numpy().reshape(4, 6))


def test_zeros_ones_fill_with_tensor_dims_in_function():
    @tf.function
    def make(x):
        n = tf.shape(x)[0]
        return (tf.zeros([n, 3]), tf.ones([n, 2], dtype=tf.int32), tf.fill([2, n], 7.5),
                tf.zeros([tf.shape(x)[1], n], dtype=tf.float64))

    for n in BATCHES:
        zeros, ones, filled, zeros64 = make(_inputs(n, 4))
        assert zeros.dtype == tf.float32 and ones.dtype == tf.int32 and zeros64.dtype == tf.float64
        np.testing.assert_array_equal(zeros.numpy(), np.zeros((n, 3), np.float32))
        np.testing.assert_array_equal(ones.numpy(), np.ones((n, 2), np.int32))
        np.testing.assert_array_equal(filled.numpy(), np.full((2, n), 7.5, np.float32))
        np.testing.assert_array_equal(zeros64.numpy(), np.zeros((4, n)))


def test_shape_dims_from_any_scalar_tensor_in_function():
    # A dim computed from tensors, not read off a shape.
    @tf.function
    def make(k):
        return tf.zeros([k + 1, 2]), tf.ones([2, k * 2])

    for k in (1, 3):
        a, b = make(tf.constant(k))
        assert a.shape == (k + 1, 2) and b.shape == (2, 2 * k)
        assert a.numpy().sum() == 0 and b.numpy().sum() == 4 * k


def test_random_ops_with_tensor_dims_in_function():
    @tf.function
    def draw(x):
        n = tf.shape(x)[0]
        return (tf.random.uniform([n, 4]), tf.random.normal([n, 3000]),
                tf.random.uniform([n, 2], maxval=5, dtype=tf.int32))

    for n in (3, 6):
        u, g, ints = draw(_inputs(n, 2))
        assert u.shape == (n, 4) and g.shape == (n, 3000) and ints.shape == (n, 2)
        assert 0.0 <= u.numpy().min() and u.numpy().max() < 1.0
        assert abs(g.numpy().mean()) < 0.05 and abs(g.numpy().std() - 1.0) < 0.05
        assert ints.dtype == tf.int32 and set(np.unique(ints.numpy())) <= {0, 1, 2, 3, 4}


def test_eager_scalar_tensors_in_shape_lists():
    n = tf.constant(3)
    assert tf.zeros([n, 2]).shape == (3, 2)
    assert tf.ones([2, tf.constant(4, tf.int64)]).shape == (2, 4)
    assert tf.fill([n], 1).numpy().tolist() == [1, 1, 1]
    assert tf.random.uniform([n]).shape == (3,)
    with pytest.raises(TypeError):
        tf.zeros([tf.constant(2.0), 3])


def test_shape_tensor_and_its_slices_as_shape_in_function():
    @tf.function
    def like(x):
        return (tf.zeros(tf.shape(x)), tf.ones(tf.shape(x)[1:]), tf.fill(tf.shape(x)[:1], 2.0),
                tf.reshape(x, tf.shape(x)), tf.random.uniform(tf.shape(x)))

    for n in BATCHES:
        x = _inputs(n, 3)
        zeros, ones, filled, same, drawn = like(x)
        np.testing.assert_array_equal(zeros.numpy(), np.zeros((n, 3), np.float32))
        np.testing.assert_array_equal(ones.numpy(), np.ones(3, np.float32))
        np.testing.assert_array_equal(filled.numpy(), np.full(n, 2.0, np.float32))
        np.testing.assert_array_equal(same.numpy(), x.numpy())
        assert drawn.shape == (n, 3)
