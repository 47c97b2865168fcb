"""TensorFlow 2.15's tf.function rules (issue #39, group 3): input_signature conversion,
concrete functions bound to Python values, trace reuse, outputs, variable creation,
leaked tensors, recursion, py_function as a decorator, init_scope."""
import numpy as np
import pytest

import kiln as tf


def test_input_signature_converts_python_values_to_the_spec_dtype():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def inc(x):
        return x + 1

    out = inc([1, 2])
    assert out.dtype == tf.int32 and out.numpy().tolist() == [2, 3]
    assert inc(np.array([4, 5], dtype=np.int32)).numpy().tolist() == [5, 6]

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def double(x):
        return x * 2

    out = double(3)
    assert out.dtype == tf.float32 and out.numpy() == 6.0
    assert double([1, 2]).numpy().tolist() == [2.0, 4.0]
    assert inc.experimental_get_tracing_count() == 1 and double.experimental_get_tracing_count() == 1


def test_input_signature_mismatch_error_shows_the_signature_as_tf_prints_it():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def inc(x):
        return x + 1

    printed = "TensorSpec(shape=(None,), dtype=tf.int32, name=None)"
    assert repr(tf.TensorSpec([None], tf.int32)) == printed
    for bad in ([1.5, 2.0], [[1, 2]], tf.constant([1.0]), "a"):
        with pytest.raises((TypeError, ValueError)) as info:
            inc(bad)
        assert printed in str(info.value)
    with pytest.raises(TypeError, match="input_signature"):
        inc([1], [2])


def test_get_concrete_function_with_python_arg_takes_tensor_args_alone():
    @tf.function
    def scale(a, b):
        return a * b

    concrete = scale.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    assert concrete(tf.constant(3.0)).numpy() == 6.0
    assert concrete(a=tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert concrete(tf.constant(1.5), 2).numpy() == 3.0  # the traced value again is fine
    with pytest.raises(TypeError):
        concrete(tf.constant(3.0), 3)
    with pytest.raises(TypeError):
        concrete(a=tf.constant(3.0), b=5)
    with pytest.raises(TypeError):
        concrete()


def test_concrete_function_traced_for_python_value_rejects_another():
    @tf.function
    def ident(x):
        return x

    one = ident.get_concrete_function(1)
    assert one(1) == 1 or one(1).numpy() == 1
    with pytest.raises(TypeError):
        one(2)


def test_get_concrete_function_same_trace_same_object():
    @tf.function
    def f(x):
        return x + 1

    assert f.get_concrete_function(tf.constant(1)) is f.get_concrete_function(tf.constant(2))
    assert f.get_concrete_function(tf.constant(1)) is f.get_concrete_function(tf.TensorSpec([], tf.int32))
    assert f.get_concrete_function(tf.constant(1)) is not f.get_concrete_function(tf.constant(1.0))


def test_python_value_seen_before_reuses_its_trace():
    traces = []

    @tf.function
    def f(x):
        traces.append(x)
        return tf.constant(0)

    for v in ["a", "b", "a", 1, 2, 1, "b", 2.5, 2.5]:
        f(v)
    assert traces == ["a", "b", 1, 2, 2.5]
    assert f.experimental_get_tracing_count() == 5


def test_returned_python_string_becomes_string_tensor():
    @tf.function
    def greet(x):
        return "hello", {"name": "kiln", "x": x}

    text, parts = greet(tf.constant(1))
    assert isinstance(text, tf.Tensor) and text.dtype == tf.string
    assert text.numpy() == b"hello"
    assert parts["name"].numpy() == b"kiln" and parts["x"].numpy() == 1


def test_returned_python_numbers_become_tensors():
    @tf.function
    def values():
        return 1, 2.5, True, [3, None], np.float64(0.5)

    one, half, flag, (three, nothing), np_half = values()
    assert (one.dtype, half.dtype, flag.dtype, three.dtype, np_half.dtype) == (
        tf.int32, tf.float32, tf.bool, tf.int32, tf.float64)
    assert (one.numpy(), half.numpy(), flag.numpy(), three.numpy()) == (1, 2.5, True, 3)
    assert nothing is None  # None stays None, as in TF


def test_variable_created_on_non_first_call_raises_value_error(capfd):
    @tf.function
    def fresh(x):
        v = tf.Variable(1.0)
        y = v + x
        print("PRINT:", y)
        tf.print("RUN:", y)
        return y

    with pytest.raises(ValueError, match="tf.function-decorated function tried to create variables on "
                                         "non-first call."):
        fresh(1.0)
    out, err = capfd.readouterr()
    assert out == 'PRINT: Tensor("add:0", shape=(), dtype=float32)\n'
    assert "RUN:" not in err

    # Made once (on the first trace only), variables are fine; a later trace making one is not.
    class Lazy(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x, make_new=False):
            if self.v is None or make_new:
                self.v = tf.Variable(2.0)
            return self.v * x

    lazy = Lazy()
    assert lazy(tf.constant(3.0)).numpy() == 6.0
    with pytest.raises(ValueError, match="non-first call"):
        lazy(tf.constant(3.0), make_new=True)


def test_tensor_leaked_out_of_trace_numpy_raises_attribute_error():
    leaked = []

    @tf.function
    def leaky(a):
        leaked.append(a + 1)
        return a + 2

    assert leaky(tf.constant(1)).numpy() == 3
    with pytest.raises(AttributeError):
        leaked[0].numpy()
    assert str(leaked[0]) == 'Tensor("add:0", shape=(), dtype=int32)'


def test_recursive_function_behaves_as_tf(capfd):
    @tf.function
    def countdown(n):
        if n > 0:
            print("tracing")
            return countdown(n - 1)
        return tf.constant(1)

    assert countdown(5).numpy() == 1  # Python values: one trace per value, as TF
    out, _ = capfd.readouterr()
    assert out.count("tracing") == 5

    @tf.function
    def forever(n):
        if n > 0:
            return forever(n - 1)
        return n

    with pytest.raises(RecursionError):  # TF: a tensor recurses until Python's limit
        forever(tf.constant(5))


def test_py_function_as_decorator():
    @tf.py_function(Tout=tf.float32)
    def halve(x):
        return x.numpy() / 2

    out = halve(tf.constant(3.0))
    assert out.dtype == tf.float32 and out.numpy() == 1.5

    @tf.function
    def traced(x):
        return halve(x) + 1

    assert traced(tf.constant(5.0)).numpy() == 3.5


def test_init_scope_lifts_ops_out_of_the_trace():
    seen = []

    @tf.function
    def f(x):
        with tf.init_scope():
            c = tf.constant(2.0) * 3
            seen.append(c.numpy())  # eager inside the trace
        return x * c

    assert f(tf.constant(1.0)).numpy() == 6.0
    assert seen == [6.0]


def test_concrete_function_takes_numpy_values_as_tensors():
    @tf.function
    def scale(x, factor):
        return x * factor

    concrete = scale.get_concrete_function(np.ones(3, np.float32), 2.0)
    np.testing.assert_array_equal(concrete(np.arange(3, dtype=np.float32)).numpy(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(concrete(tf.constant([1.0, 1.0, 1.0]), 2.0).numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(TypeError):
        concrete(np.ones(3, np.float32), 3.0)


class _SpecIterator:
    """An iterator that states its element_spec, as tf.data's iterators do."""

    def __init__(self, values):
        self._values = iter(values)
        self.element_spec = (tf.TensorSpec([], tf.int32), tf.TensorSpec([2], tf.float32))

    def __iter__(self):
        return self

    def __next__(self):
        v = next(self._values)
        return tf.constant(v), tf.constant([v / 2, v * 2.0])


def test_dataset_iterator_argument_advances_on_every_call(capfd):
    @tf.function
    def consume(iterator):
        index, pair = next(iterator)
        tf.print(index, pair)
        return index

    it = _SpecIterator([1, 2, 3])
    assert [int(consume(it)) for _ in range(3)] == [1, 2, 3]
    _, err = capfd.readouterr()
    assert err == "1 [0.5 2]\n2 [1 4]\n3 [1.5 6]\n"
    assert consume.experimental_get_tracing_count() == 1


def test_dataset_iterator_from_iter_dataset_advances(capfd):
    @tf.function
    def consume(iterator):
        tf.print(next(iterator))

    iterator = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3]))
    for _ in range(3):
        consume(iterator)
    _, err = capfd.readouterr()
    assert err == "1\n2\n3\n"
