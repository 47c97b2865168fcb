"""tf.random.shuffle (TF2's seeds), tf.where with broadcasting, tf.nn.dropout (issue #18)."""
import numpy as np
import pytest

import kiln as tf


def test_shuffle_permutes_rows_with_tf2_seeds():
    x = np.arange(24).reshape(6, 2, 2)
    y = tf.random.shuffle(x).numpy()
    assert sorted(map(tuple, y.reshape(6, 4))) == sorted(map(tuple, x.reshape(6, 4)))  # the same rows
    order = y[:, 0, 0] // 4
    np.testing.assert_array_equal(y, x[order])  # whole rows moved
    tf.random.set_seed(5)
    first = [tf.random.shuffle(tf.range(10), seed=3).numpy() for _ in range(2)]
    tf.random.set_seed(5)
    again = [tf.random.shuffle(tf.range(10), seed=3).numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, again)  # the sequence of calls repeats
    assert not np.array_equal(first[0], first[1])  # each call draws a new order
    strings = tf.random.shuffle(tf.constant(["a", "b", "c"])).numpy()
    assert sorted(strings.tolist()) == [b"a", b"b", b"c"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least 1-D"):
        tf.random.shuffle(tf.constant(1.0))


def test_shuffle_traced_and_gradient():
    f = tf.function(lambda v: tf.random.shuffle(v), input_signature=[tf.TensorSpec([5, 3], tf.float64)])
    x = np.arange(15.0).reshape(5, 3)
    runs = [f(x).numpy() for _ in range(4)]
    for r in runs:
        np.testing.assert_array_equal(np.sort(r[:, 0]), x[:, 0])
        np.testing.assert_array_equal(r, x[(r[:, 0] // 3).astype(int)])
    assert any(not np.array_equal(runs[0], r) for r in runs[1:])  # a new order per run
    unknown = tf.function(lambda v: tf.random.shuffle(v), input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="known size"):
        unknown(x)
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.reduce_sum(tf.random.shuffle(v) * tf.constant([1.0, 2.0, 3.0], tf.float64))
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), np.tile([1.0, 2.0, 3.0], (5, 1)))


def test_where_broadcasts_condition_x_and_y():
    cond = np.array([[True], [False]])
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([[10.0], [20.0]])
    np.testing.assert_array_equal(tf.where(cond, x, y).numpy(), np.where(cond, x, y))
    np.testing.assert_array_equal(tf.where([True, False, True], x, -1.0).numpy(), [1.0, -1.0, 3.0])
    xt, yt = tf.constant(x), tf.constant(y)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([xt, yt])
        out = tf.reduce_sum(tf.where(cond, xt, yt))
    np.testing.assert_array_equal(tape.gradient(out, xt).numpy(), [1.0, 1.0, 1.0])  # summed over broadcast rows
    np.testing.assert_array_equal(tape.gradient(out, yt).numpy(), [[0.0], [3.0]])
    traced = tf.function(lambda c, a, b: tf.where(c, a, b))
    np.testing.assert_array_equal(traced(tf.constant(cond), xt, yt).numpy(), np.where(cond, x, y))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.where(np.array([True, False]), x, y)


def test_dropout():
    x = tf.ones([200, 50])
    y = tf.nn.dropout(x, 0.25, seed=1).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.03
    np.testing.assert_array_equal(tf.nn.dropout(x, 0.0).numpy(), x.numpy())
    # TF multiplies by 1 / (1 - rate) in x's dtype; dividing by 1 - rate differs in the last bit for these.
    values = np.array([0.11451451, 0.16386387, 0.16676676], np.float32)
    kept = tf.nn.dropout(tf.constant(np.tile(values, 100)), 0.3, seed=4).numpy()
    scaled = np.tile(values * np.float32(1 / 0.7), 100)
    np.testing.assert_array_equal(kept[kept != 0], scaled[kept != 0])
    columns = tf.nn.dropout(x, 0.5, noise_shape=[1, 50], seed=2).numpy()
    assert (columns == columns[0]).all()  # one mask row broadcast down
    rows = tf.nn.dropout(x, 0.5, noise_shape=[None, 1]).numpy()
    assert (rows == rows[:, :1]).all()
    with tf.GradientTape() as tape:
        v = tf.constant(np.full((4, 5), 2.0))
        tape.watch(v)
        out = tf.nn.dropout(v, 0.5, seed=3)
        total = tf.reduce_sum(out)
    grad = tape.gradient(total, v).numpy()
    np.testing.assert_array_equal(grad, np.where(out.numpy() != 0, 2.0, 0.0))
    f = tf.function(lambda t: tf.nn.dropout(t, 0.5), input_signature=[tf.TensorSpec([None, 8], tf.float32)])
    assert f(tf.ones([3, 8])).shape == (3, 8)
    with pytest.raises(ValueError, match=r"range \[0, 1\)"):
        tf.nn.dropout(x, 1.0)
