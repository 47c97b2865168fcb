"""TensorFlow's guide "Introduction to graphs and tf.function" (site/en/guide/intro_to_graphs.ipynb),
its code cells run with `import kiln as tf` (the timing cell shrunk), asserting what the guide
prints and states. `print(graph.as_graph_def())` prints Kiln's nodes in a GraphDef's text layout
(names, ops and inputs, no attrs): listed in the README's difference table."""
import numpy as np
import pytest

import kiln as tf


def a_regular_function(x, y, b):
    x = tf.matmul(x, y)
    x = x + b
    return x


def simple_relu(x):
    if tf.greater(x, 0):
        return x
    else:
        return 0


def test_functions_run_as_graphs():
    a_function_that_uses_a_graph = tf.function(a_regular_function)
    x1 = tf.constant([[1.0, 2.0]])
    y1 = tf.constant([[2.0], [3.0]])
    b1 = tf.constant(4.0)
    orig_value = a_regular_function(x1, y1, b1).numpy()
    assert orig_value == a_function_that_uses_a_graph(x1, y1, b1).numpy()

    @tf.function
    def outer_function(x):
        y = tf.constant([[2.0], [3.0]])
        b = tf.constant(4.0)
        return a_regular_function(x, y, b)

    np.testing.assert_array_equal(outer_function(tf.constant([[1.0, 2.0]])).numpy(), [[12.0]])


def test_autograph_converts_python_control_flow():
    tf_simple_relu = tf.function(simple_relu)
    assert tf_simple_relu(tf.constant(1)).numpy() == 1  # First branch, with graph
    assert tf_simple_relu(tf.constant(-1)).numpy() == 0  # Second branch, with graph
    code = tf.autograph.to_code(simple_relu)
    assert "def simple_relu(x):" in code and "if_stmt" in code
    text = str(tf_simple_relu.get_concrete_function(tf.constant(1)).graph.as_graph_def())
    assert text.startswith('node {\n  name: "x"\n') and 'input: "x"' in text


def test_polymorphism_one_function_many_graphs():
    @tf.function
    def my_relu(x):
        return tf.maximum(0., x)

    assert my_relu(tf.constant(5.5)).numpy() == 5.5
    out = my_relu([1, -1])  # a Python list: tf.maximum converts it to float32 as TF does
    assert out.dtype == tf.float32 and out.numpy().tolist() == [1.0, 0.0]
    assert my_relu(tf.constant([3., -3.])).numpy().tolist() == [3.0, 0.0]
    # Input types seen before reuse their graphs.
    assert my_relu(tf.constant(-2.5)).numpy() == 0.0
    assert my_relu(tf.constant([-1., 1.])).numpy().tolist() == [0.0, 1.0]
    assert my_relu.experimental_get_tracing_count() == 3
    assert len(my_relu.pretty_printed_concrete_signatures().split("\n\n")) == 3


def test_run_functions_eagerly_and_tracing_side_effects(capfd):
    @tf.function
    def get_MSE(y_true, y_pred):
        print("Calculating MSE!")
        sq_diff = tf.pow(y_true - y_pred, 2)
        return tf.reduce_mean(sq_diff)

    y_true = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    y_pred = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    expected = int(np.mean((y_true.numpy() - y_pred.numpy()) ** 2))  # integer mean, as TF's int32
    for _ in range(3):
        error = get_MSE(y_true, y_pred)
    assert error.dtype == tf.int32 and error.numpy() == expected
    out, _ = capfd.readouterr()
    assert out == "Calculating MSE!\n"

    tf.config.run_functions_eagerly(True)
    try:
        for _ in range(3):
            assert get_MSE(y_true, y_pred).numpy() == expected
    finally:
        tf.config.run_functions_eagerly(False)
    out, _ = capfd.readouterr()
    assert out == "Calculating MSE!\n" * 3


def test_non_strict_execution_prunes_unused_ops():
    def unused_return_eager(x):
        tf.gather(x, [1])  # unused
        return x

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 1 is not in \[0, 1\)"):
        unused_return_eager(tf.constant([0.0]))

    @tf.function
    def unused_return_graph(x):
        tf.gather(x, [1])  # unused
        return x

    assert unused_return_graph(tf.constant([0.0])).numpy().tolist() == [0.0]


def test_graph_execution_matches_eager_power():
    x = tf.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=tf.dtypes.int32)

    def power(x, y):
        result = tf.eye(10, dtype=tf.dtypes.int32)
        for _ in range(y):
            result = tf.matmul(x, result)
        return result

    power_as_graph = tf.function(power)
    np.testing.assert_array_equal(power(x, 5).numpy(), power_as_graph(x, 5).numpy())
    np.testing.assert_array_equal(power(x, 5).numpy(), np.linalg.matrix_power(x.numpy().astype(np.int64), 5))


def test_tracing_once_per_signature(capfd):
    @tf.function
    def a_function_with_python_side_effect(x):
        print("Tracing!")  # An eager-only side effect.
        return x * x + tf.constant(2)

    assert a_function_with_python_side_effect(tf.constant(2)).numpy() == 6
    assert a_function_with_python_side_effect(tf.constant(3)).numpy() == 11
    out, _ = capfd.readouterr()
    assert out == "Tracing!\n"
    assert a_function_with_python_side_effect(2).numpy() == 6
    assert a_function_with_python_side_effect(3).numpy() == 11
    out, _ = capfd.readouterr()
    assert out == "Tracing!\nTracing!\n"
