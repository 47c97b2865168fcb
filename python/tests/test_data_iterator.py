"""iter(dataset): TF's iterator object (element_spec, get_next, get_next_as_optional),
eagerly and passed to tf.function, where each call pulls the next element."""
import numpy as np
import pytest

import kiln as tf


def test_iterator_has_the_datasets_element_spec():
    ds = tf.data.Dataset.from_tensor_slices(({"a": [1, 2]}, [[1.0, 2.0], [3.0, 4.0]]))
    it = iter(ds)
    assert it.element_spec == ds.element_spec
    assert it.element_spec == ({"a": tf.TensorSpec([], tf.int32)}, tf.TensorSpec([2], tf.float32))
    assert iter(it) is it
    first = next(it)
    assert first[0]["a"].numpy() == 1 and first[1].numpy().tolist() == [1.0, 2.0]


def test_get_next_raises_out_of_range_at_the_end():
    it = iter(tf.data.Dataset.range(2))
    assert it.get_next().numpy() == 0
    assert it.get_next().numpy() == 1
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)


def test_get_next_as_optional():
    it = iter(tf.data.Dataset.from_tensors(np.float32(2.5)))
    opt = it.get_next_as_optional()
    assert bool(opt.has_value().numpy())
    assert opt.get_value().numpy() == 2.5
    assert opt.element_spec == tf.TensorSpec([], tf.float32)
    empty = it.get_next_as_optional()
    assert not bool(empty.has_value().numpy())
    assert empty.element_spec == tf.TensorSpec([], tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        empty.get_value()


def test_get_next_as_optional_in_a_function_ends_a_loop(capfd):
    """TF's distributed-input tutorial: a tf.range loop over an iterator argument breaks when the Optional is
    empty; has_value() is then a tensor, and get_value() the graph's placeholder zeros."""
    @tf.function
    def total(iterator):
        acc = tf.constant(0, tf.int64)
        for _ in tf.range(5):
            optional = iterator.get_next_as_optional()
            if not optional.has_value():
                break
            acc += tf.reduce_sum(optional.get_value())
        return acc

    it = iter(tf.data.Dataset.range(9).batch(4))
    assert int(total(it)) == 36
    assert int(total(it)) == 0  # exhausted: the first pull is empty


def test_an_iterator_argument_gives_the_element_specs_shapes():
    """A model built inside the function needs the elements' ranks (TF's iterator ops carry the spec's shapes)."""
    traced = []

    @tf.function
    def pull(iterator):
        x, y = next(iterator)
        optional = iterator.get_next_as_optional()
        traced.extend([x.shape.as_list(), y.shape.as_list(), optional.get_value()[0].shape.as_list()])
        return tf.reduce_sum(x)

    ds = tf.data.Dataset.from_tensor_slices((np.ones([6, 28, 28], np.float32), np.zeros([6], np.int64))).batch(4)
    assert float(pull(iter(ds))) == 4 * 28 * 28
    assert traced == [[None, 28, 28], [None], [None, 28, 28]]


def test_each_function_call_advances_the_iterator(capfd):
    @tf.function
    def step(iterator):
        x, y = next(iterator)
        return x * 10 + y

    it = iter(tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6])))
    assert [step(it).numpy() for _ in range(3)] == [14, 25, 36]
    assert step.experimental_get_tracing_count() == 1


def test_python_made_dataset_iterator_in_a_function():
    # padded_batch is a pass made in Python: its iterator is still TF's iterator object.
    ds = tf.data.Dataset.range(1, 5).map(lambda x: tf.zeros_like(tf.range(x)) + x).padded_batch(2)
    it = iter(ds)
    assert it.element_spec == tf.TensorSpec([None, None], tf.int64)

    @tf.function
    def total(iterator):
        return tf.reduce_sum(iterator.get_next())

    # TF: [[1, 0], [2, 2]] then [[3, 3, 3, 0], [4, 4, 4, 4]].
    assert [total(it).numpy() for _ in range(2)] == [5, 25]


def test_two_iterators_are_independent():
    ds = tf.data.Dataset.range(3)
    a, b = iter(ds), iter(ds)
    assert next(a).numpy() == 0 and next(a).numpy() == 1
    assert next(b).numpy() == 0
    assert [x.numpy() for x in a] == [2]
