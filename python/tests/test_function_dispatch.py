"""A trace made by get_concrete_function serves later calls its specs accept, as TF 2.15's function
cache dispatches a call to a traced supertype: the call does not trace again."""
import numpy as np

import kiln as tf


def _counting():
    traces = []

    def double(x):
        traces.append(1)
        return x * 2
    return double, traces


def test_a_signature_traced_by_get_concrete_function_serves_the_calls():
    double, traces = _counting()
    f = tf.function(double, input_signature=[tf.TensorSpec([None], tf.float32)])
    f.get_concrete_function()
    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0, 3.0])).numpy(), [2.0, 4.0, 6.0])
    assert len(traces) == 1 and f.experimental_get_tracing_count() == 1


def test_a_concrete_function_of_unknown_dims_serves_calls_of_known_ones():
    double, traces = _counting()
    f = tf.function(double)
    f.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    f(tf.ones([2, 3]))
    f(tf.ones([5, 3]))
    assert len(traces) == 1
    f(tf.ones([2, 4]))  # not a subtype of [None, 3]: a trace of its own
    assert len(traces) == 2
    f(tf.ones([2, 3], tf.int32))  # another dtype: another trace
    assert len(traces) == 3
