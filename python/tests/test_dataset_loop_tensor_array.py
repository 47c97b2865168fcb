"""A TensorArray as the state of a loop over a dataset (TF's idiom for collecting per-element results in a
tf.function): AutoGraph's dataset loop, Dataset.reduce, eagerly and traced, with break."""
import numpy as np
import pytest

import kiln as tf


def _collect(ds):
    ta = tf.TensorArray(tf.int64, size=0, dynamic_size=True)
    i = 0
    for x in ds:
        ta = ta.write(i, x * 2)
        i += 1
    return ta.stack(), i


def _collect_until_three(ds):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    n = 0
    for x in ds:
        if x >= 3:
            break
        ta = ta.write(n, tf.cast(x, tf.float32) + 0.5)
        n += 1
    return ta.stack()


@pytest.mark.parametrize("traced", [False, True])
def test_a_tensor_array_collects_over_a_dataset_argument(traced):
    f = tf.function(_collect) if traced else _collect
    stacked, count = f(tf.data.Dataset.range(5))
    np.testing.assert_array_equal(stacked.numpy(), [0, 2, 4, 6, 8])
    assert int(count) == 5
    stacked, count = f(tf.data.Dataset.range(3))  # the same trace, other data
    np.testing.assert_array_equal(stacked.numpy(), [0, 2, 4])
    if traced:
        assert f.experimental_get_tracing_count() == 1


def test_a_tensor_array_collects_until_a_break_in_a_traced_loop():
    f = tf.function(_collect_until_three)
    np.testing.assert_array_equal(f(tf.data.Dataset.range(10)).numpy(), [0.5, 1.5, 2.5])


def test_dataset_reduce_carries_a_tensor_array():
    ds = tf.data.Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def step(state, row):
        ta, i = state
        return ta.write(i, tf.reduce_sum(row)), i + 1

    for fn in (lambda: ds.reduce((tf.TensorArray(tf.float32, size=3), 0), step),
               tf.function(lambda: ds.reduce((tf.TensorArray(tf.float32, size=3), 0), step))):
        ta, n = fn()
        np.testing.assert_array_equal(ta.stack().numpy(), [3.0, 7.0, 11.0])
        assert int(n) == 3


def test_a_state_that_stops_being_a_tensor_array_is_a_type_error():
    ds = tf.data.Dataset.range(2)
    with pytest.raises(TypeError, match="must match the initial state"):
        ds.reduce(tf.TensorArray(tf.int64, size=2), lambda ta, x: tf.constant(1, tf.int64))
