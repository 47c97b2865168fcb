"""map(num_parallel_calls=...): the traced map function runs on a thread pool. Same elements
as the sequential map (in order by default, as TF's deterministic default), errors where the
failing element is, cardinality kept, early stops clean, and inside tf.function loops."""
import threading

import numpy as np
import pytest

import kiln as tf


def heavy(x):
    """Enough graph per element for threads to overlap (the engine runs it without the GIL)."""
    y = tf.cast(tf.fill([2000], 1.0), tf.float32) * tf.cast(x, tf.float32)
    for _ in range(5):
        y = tf.tanh(y * 0.5)
    return x, tf.reduce_sum(y)


def reference(n):
    """NumPy float64 of heavy's sums."""
    out = []
    for x in range(n):
        y = np.full(2000, float(x))
        for _ in range(5):
            y = np.tanh(y * 0.5)
        out.append(y.sum())
    return out


@pytest.mark.parametrize("calls", [2, 4, tf.data.AUTOTUNE])
def test_same_elements_in_order(calls):
    ds = tf.data.Dataset.range(40).map(heavy, num_parallel_calls=calls)
    got = [(int(i), float(s)) for i, s in ds]
    assert [i for i, _ in got] == list(range(40))
    np.testing.assert_allclose([s for _, s in got], reference(40), rtol=1e-5)
    assert ds.cardinality().numpy() == 40
    assert ds.element_spec == (tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.float32))


def test_not_deterministic_gives_every_element():
    ds = tf.data.Dataset.range(30).map(heavy, num_parallel_calls=3, deterministic=False)
    assert sorted(int(i) for i, _ in ds) == list(range(30))


def test_runs_on_several_threads_and_stops_cleanly():
    seen = set()

    def record(x):
        seen.add(threading.get_ident())
        return x

    def where(x):
        return tf.py_function(lambda v: record(v), [x], tf.int64)

    before = threading.active_count()
    ds = tf.data.Dataset.range(100).map(where, num_parallel_calls=4)
    assert [int(x) for x in ds.take(5)] == [0, 1, 2, 3, 4]
    assert len(seen) > 1  # mapped on the pool's threads, not only the pulling one
    assert threading.active_count() == before  # the pool is gone with the pass


def test_error_is_raised_at_its_element():
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 0, 4]).map(
        lambda x: tf.gather([10, 20, 30], x - 1), num_parallel_calls=2)
    it = iter(ds)
    assert [int(next(it)) for _ in range(2)] == [10, 20]
    with pytest.raises(tf.errors.InvalidArgumentError):
        next(it)
    kept = ds.ignore_errors()
    assert [int(x) for x in kept] == [10, 20]


def test_batched_and_in_a_function():
    ds = tf.data.Dataset.range(12).map(lambda x: x * x, num_parallel_calls=tf.data.AUTOTUNE).batch(4)
    assert [b.numpy().tolist() for b in ds] == [[0, 1, 4, 9], [16, 25, 36, 49], [64, 81, 100, 121]]

    @tf.function
    def total():
        s = tf.constant(0, tf.int64)
        for b in ds:
            s += tf.reduce_sum(b)
        return s

    assert int(total()) == sum(x * x for x in range(12))


def test_dataset_argument_keeps_the_engine_map():
    @tf.function
    def total(ds):
        return ds.map(lambda x: x + 1, num_parallel_calls=2).reduce(tf.constant(0, tf.int64), lambda s, x: s + x)

    assert int(total(tf.data.Dataset.range(5))) == 15


def test_bad_num_parallel_calls():
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_parallel_calls must be greater than zero"):
        tf.data.Dataset.range(3).map(lambda x: x, num_parallel_calls=0)
