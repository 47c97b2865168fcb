"""kiln.data: TF's Dataset API on the engine's pipelines (structures, sources,
transformations, reduce, and the one-op loop inside kiln.function)."""
import collections
import gc
import threading

import numpy as np
import pytest

import kiln as tf


def values(ds):
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in ds]


def test_from_tensor_slices_keeps_the_structure():
    ds = tf.data.Dataset.from_tensor_slices(({"a": [1, 2], "b": [[1.0], [2.0]]}, np.array([7, 8], np.int64)))
    assert values(ds) == [({"a": 1, "b": [1.0]}, 7), ({"a": 2, "b": [2.0]}, 8)]
    spec = ds.element_spec
    assert spec[0]["a"] == tf.TensorSpec([], tf.int32)
    assert spec[0]["b"] == tf.TensorSpec([1], tf.float32)
    assert spec[1] == tf.TensorSpec([], tf.int64)


def test_a_list_is_one_tensor_as_in_tf():
    ds = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]])
    assert values(ds) == [[1, 2], [3, 4]]
    assert ds.element_spec == tf.TensorSpec([2], tf.int32)


def test_namedtuple_elements_come_back_as_namedtuples():
    Point = collections.namedtuple("Point", "x y")
    ds = tf.data.Dataset.from_tensor_slices(Point([1, 2], [3, 4])).map(lambda p: Point(p.y, p.x))
    out = list(ds)
    assert isinstance(out[0], Point) and int(out[0].x) == 3 and int(out[1].y) == 2


def test_from_tensors_is_one_element():
    ds = tf.data.Dataset.from_tensors(([1, 2, 3], 5))
    assert values(ds) == [([1, 2, 3], 5)]
    assert len(ds) == 1


def test_scalar_slices_are_an_error():
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.data.Dataset.from_tensor_slices(3)


def test_range_is_int64_like_python_range():
    assert values(tf.data.Dataset.range(4)) == [0, 1, 2, 3]
    assert values(tf.data.Dataset.range(2, 8, 3)) == [2, 5]
    assert values(tf.data.Dataset.range(3, 0, -1)) == [3, 2, 1]
    assert tf.data.Dataset.range(3).element_spec == tf.TensorSpec([], tf.int64)
    assert list(tf.data.Dataset.range(2, output_type=tf.int32))[1].dtype == tf.int32


def test_map_spreads_tuples_and_returns_structures():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2], [10, 20])).map(lambda x, y: {"sum": x + y, "x": x})
    assert values(ds) == [{"sum": 11, "x": 1}, {"sum": 22, "x": 2}]
    assert ds.element_spec == {"sum": tf.TensorSpec([], tf.int32), "x": tf.TensorSpec([], tf.int32)}


def test_map_function_is_traced_once(capfd):
    def f(x):
        print("tracing f")
        return x * 2

    ds = tf.data.Dataset.range(5).map(f)
    assert values(ds) == [0, 2, 4, 6, 8]
    assert values(ds) == [0, 2, 4, 6, 8]
    out, _ = capfd.readouterr()
    assert out.count("tracing f") == 1


def test_map_with_python_control_flow_on_tensors_is_converted():
    def clip(x):
        if x > 2:
            x = x * 0
        return x

    assert values(tf.data.Dataset.range(5).map(clip)) == [0, 1, 2, 0, 0]


def test_filter_keeps_true_elements_and_checks_the_predicate():
    assert values(tf.data.Dataset.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar"):
        list(tf.data.Dataset.range(3).filter(lambda x: x))


def test_batch_with_and_without_remainder():
    ds = tf.data.Dataset.range(5)
    assert values(ds.batch(2)) == [[0, 1], [2, 3], [4]]
    assert values(ds.batch(2, drop_remainder=True)) == [[0, 1], [2, 3]]
    assert ds.batch(2).element_spec == tf.TensorSpec([None], tf.int64)
    assert ds.batch(2, drop_remainder=True).element_spec == tf.TensorSpec([2], tf.int64)
    with pytest.raises(ValueError, match="batch_size must be greater than zero"):
        ds.batch(0)


def test_repeat_take_skip_and_cardinality():
    ds = tf.data.Dataset.range(3)
    assert values(ds.repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(ds.repeat().take(5)) == [0, 1, 2, 0, 1]
    assert values(ds.skip(1)) == [1, 2]
    assert int(ds.cardinality()) == 3
    assert int(ds.repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(ds.filter(lambda x: x > 0).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="infinite"):
        len(ds.repeat())


def test_shard_splits_the_elements_between_workers():
    ds = tf.data.Dataset.range(10)
    shards = [values(ds.shard(3, i)) for i in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert [int(ds.shard(3, i).cardinality()) for i in range(3)] == [4, 3, 3]
    assert values(ds.shard(2, 1).batch(2)) == [[1, 3], [5, 7], [9]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"index must be in \[0, 3\), got 3"):
        ds.shard(3, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_shards must be positive, got 0"):
        ds.shard(0, 0)


def test_shuffle_is_a_permutation_reproducible_with_a_seed():
    a = values(tf.data.Dataset.range(20).shuffle(20, seed=7))
    b = values(tf.data.Dataset.range(20).shuffle(20, seed=7))
    assert sorted(a) == list(range(20))
    assert a == b and a != list(range(20))
    ds = tf.data.Dataset.range(20).shuffle(20, seed=7)
    assert values(ds) != values(ds)  # every pass draws a new order, as TF's reshuffle_each_iteration


def test_from_generator_calls_the_generator_on_every_pass():
    calls = []

    def gen():
        calls.append(1)
        for i in range(3):
            yield i, [float(i)] * 2

    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([2], tf.float32)))
    assert values(ds) == [(0, [0.0, 0.0]), (1, [1.0, 1.0]), (2, [2.0, 2.0])]
    assert values(ds.take(1)) == [(0, [0.0, 0.0])]
    assert list(ds)[2][0].dtype == tf.int64
    assert len(calls) >= 3


def test_from_generator_checks_what_it_yields():
    ds = tf.data.Dataset.from_generator(lambda: iter([[1.0, 2.0]]), output_signature=tf.TensorSpec([3], tf.float32))
    with pytest.raises(TypeError, match=r"shape \(2,\) where an element of shape \(3,\) was expected"):
        list(ds)
    with pytest.raises(TypeError, match="output_signature"):
        tf.data.Dataset.from_generator(lambda: iter([1]))


def test_errors_in_a_map_function_reach_the_caller():
    def bad(x):
        raise KeyError("no such feature")

    with pytest.raises(KeyError, match="no such feature"):
        list(tf.data.Dataset.range(2).map(bad))


def test_reduce_eagerly():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [1.0, 2.0, 3.0]))
    total, count = ds.reduce((0, 0.0), lambda s, e: (s[0] + e[0], s[1] + e[1]))
    assert int(total) == 6 and float(count) == 6.0
    with pytest.raises(TypeError, match="must match the initial state"):
        ds.reduce((0, 0.0), lambda s, e: s[0])


def test_reduce_inside_a_function_is_one_loop_op():
    @tf.function
    def total(ds):
        return ds.reduce(tf.constant(0, tf.int64), lambda s, x: s + x)

    small, big = tf.data.Dataset.range(3), tf.data.Dataset.range(1000)
    assert int(total(small)) == 3
    assert int(total(big)) == 499500
    size = lambda ds: len(total.get_concrete_function(ds).graph.as_graph_def().node)  # noqa: E731
    assert size(small) == size(big)
    assert int(total(small)) == 3  # every call is a new pass
    # Datasets are keyed by element spec, as in TF: one trace for both.
    assert total.experimental_get_tracing_count() == 1


def test_datasets_of_one_element_spec_share_a_trace():
    @tf.function
    def total(ds):
        s = tf.constant(0.0)
        for x, y in ds:
            s += tf.reduce_sum(x * y)
        return s

    def pairs(n):
        return tf.data.Dataset.from_tensor_slices((np.arange(n, dtype=np.float32), np.full(n, 2, np.float32)))

    assert float(total(pairs(3))) == 6.0
    assert float(total(pairs(5))) == 20.0
    # A generator with an output_signature is keyed by it too.
    gen = tf.data.Dataset.from_generator(lambda: ((np.float32(i), np.float32(1)) for i in range(4)),
                                         output_signature=(tf.TensorSpec([], tf.float32),) * 2)
    assert float(total(gen)) == 6.0
    assert total.experimental_get_tracing_count() == 1
    # Another structure or another element spec traces again.
    assert float(total(pairs(4).batch(2))) == 12.0
    assert total.experimental_get_tracing_count() == 2

    @tf.function
    def first(ds):
        return ds.reduce(tf.constant(0.0), lambda s, e: s + e["a"])

    assert float(first(tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0]}))) == 3.0
    assert float(first(tf.data.Dataset.from_tensor_slices({"a": [5.0]}))) == 5.0
    assert first.experimental_get_tracing_count() == 1
    with pytest.raises(KeyError):  # another structure: traced again, and the function needs "a"
        first(tf.data.Dataset.from_tensor_slices({"b": [5.0]}))


def test_transformations_of_a_dataset_argument_apply_to_each_call_s_dataset():
    @tf.function
    def f(ds):
        return ds.map(lambda x: x * 2).filter(lambda x: x > 2).batch(2).reduce(
            tf.constant(0, tf.int64), lambda s, b: s + tf.reduce_sum(b))

    assert int(f(tf.data.Dataset.range(4))) == 4 + 6
    assert int(f(tf.data.Dataset.range(10, 12))) == 20 + 22
    assert f.experimental_get_tracing_count() == 1


def test_for_loop_over_a_dataset_in_a_function():
    @tf.function
    def mean_of_batches(ds):
        s = tf.constant(0.0)
        n = tf.constant(0.0)
        for x, y in ds:
            s += tf.reduce_sum(x * y)
            n += tf.cast(tf.shape(x)[0], tf.float32)
        return s / n

    x = np.arange(10, dtype=np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, np.ones(10, np.float32))).batch(3)
    assert float(mean_of_batches(ds)) == pytest.approx(4.5)


def test_prefetch_with_a_python_map_and_an_early_stop_do_not_hang():
    ds = tf.data.Dataset.range(1000).map(lambda x: x + 1).prefetch(tf.data.AUTOTUNE)
    for i, x in enumerate(ds):
        if i == 3:
            break
    gc.collect()
    assert values(ds.take(3)) == [1, 2, 3]


def test_a_prefetch_thread_keeps_its_python_thread_state():
    """Every callback on a prefetch's thread runs in one Python thread state for the whole pass
    (its threading.local data stays, as on TF's own input threads); a pass dropped early or
    finished ends it, many passes in a row included."""
    local = threading.local()
    fresh = []

    def gen():
        for i in range(50):
            fresh.append(getattr(local, "seen", None) is None)
            local.seen = True
            yield i

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))
    ds = ds.map(lambda x: x + 1).prefetch(2)
    for _ in range(30):
        fresh.clear()
        assert values(ds) == list(range(1, 51))
        assert sum(fresh) == 1  # the pass's first callback only
    for _ in range(5):
        next(iter(ds))
        gc.collect()


def test_pipelines_from_several_threads():
    ds = tf.data.Dataset.range(200).map(lambda x: x * 2).batch(10).prefetch(2)
    results = [None] * 4

    def run(i):
        results[i] = sum(int(tf.reduce_sum(b)) for b in ds)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [2 * sum(range(200))] * 4


def test_numpy_iterator():
    ds = tf.data.Dataset.from_tensor_slices(np.array([[1, 2], [3, 4]], np.uint8))
    out = list(ds.as_numpy_iterator())
    assert out[1].dtype == np.uint8 and out[1].tolist() == [3, 4]


def test_from_generator_with_output_types_and_shapes():
    ds = tf.data.Dataset.from_generator(lambda: iter([([1, 2], 3)]), output_types=(tf.int32, tf.int64),
                                        output_shapes=([2], []))
    assert values(ds) == [([1, 2], 3)]
    assert ds.element_spec == (tf.TensorSpec([2], tf.int32), tf.TensorSpec([], tf.int64))


def test_zip_pairs_elements_in_the_given_structure_and_stops_at_the_shortest():
    a = tf.data.Dataset.range(10, 13)
    b = tf.data.Dataset.from_tensor_slices(({"x": [1.0, 2.0, 3.0, 4.0]}, [True, False, True, False]))
    assert values(tf.data.Dataset.zip((a, b))) == [(10, ({"x": 1.0}, True)), (11, ({"x": 2.0}, False)),
                                                   (12, ({"x": 3.0}, True))]
    assert values(tf.data.Dataset.zip(a, b)) == values(tf.data.Dataset.zip(datasets=(a, b)))
    assert values(tf.data.Dataset.zip({"first": a, "second": a.skip(1)})) == [
        {"first": 10, "second": 11}, {"first": 11, "second": 12}]
    zipped = tf.data.Dataset.zip((a, b.batch(3)))
    assert zipped.element_spec == (tf.TensorSpec([], tf.int64),
                                   ({"x": tf.TensorSpec([None], tf.float32)}, tf.TensorSpec([None], tf.bool)))
    assert len(zipped) == 2
    assert int(tf.data.Dataset.zip((a.repeat(), b)).cardinality()) == 4
    # A mapped input's structure is known once its function has run.
    mapped = tf.data.Dataset.zip((a.map(lambda x: (x, x * 2)), a))
    assert values(mapped)[0] == ((10, 20), 10)
    assert mapped.element_spec == ((tf.TensorSpec([], tf.int64),) * 2, tf.TensorSpec([], tf.int64))
    # A zip is a Dataset like any other: map spreads its tuple over the arguments.
    assert values(tf.data.Dataset.zip((a, a)).map(lambda x, y: x * y)) == [100, 121, 144]


def test_zip_rejects_what_tf_rejects():
    a = tf.data.Dataset.range(3)
    with pytest.raises(TypeError, match="Must pass at least one dataset to `zip`"):
        tf.data.Dataset.zip()
    with pytest.raises(TypeError, match="Both `\\*args` and `datasets` cannot be set"):
        tf.data.Dataset.zip(a, datasets=(a,))
    with pytest.raises(TypeError, match="Python `list` is not supported"):
        tf.data.Dataset.zip([a, a])
    with pytest.raises(TypeError, match="encountered object of type <class 'int'>"):
        tf.data.Dataset.zip((a, 3))


def test_zip_of_dataset_arguments_is_one_loop_fed_on_every_call():
    @tf.function
    def dot(xs, ys):
        return tf.data.Dataset.zip((xs, ys)).reduce(tf.constant(0, tf.int64), lambda s, e: s + e[0] * e[1])

    assert int(dot(tf.data.Dataset.range(3), tf.data.Dataset.range(1, 10))) == 0 * 1 + 1 * 2 + 2 * 3
    assert int(dot(tf.data.Dataset.range(10, 12), tf.data.Dataset.range(4))) == 10 * 0 + 11 * 1
    assert dot.experimental_get_tracing_count() == 1
    size = lambda *ds: dot.get_concrete_function(*ds).graph.num_nodes()  # noqa: E731
    assert size(tf.data.Dataset.range(2), tf.data.Dataset.range(2)) == \
        size(tf.data.Dataset.range(500), tf.data.Dataset.range(500))
    assert dot.experimental_get_tracing_count() == 1


def test_a_zip_passed_to_a_function_is_keyed_by_its_element_spec():
    a = tf.data.Dataset.range(5)
    b = tf.data.Dataset.from_tensor_slices({"w": np.arange(5, dtype=np.float32) * 2})

    @tf.function
    def f(ds):
        s = tf.constant(0.0)
        for i, d in ds:
            s += tf.cast(i, tf.float32) * d["w"]
        return s

    assert float(f(tf.data.Dataset.zip((a, b)))) == 0 * 0 + 1 * 2 + 2 * 4 + 3 * 6 + 4 * 8
    assert float(f(tf.data.Dataset.zip((a.skip(1), b)))) == 1 * 0 + 2 * 2 + 3 * 4 + 4 * 6
    assert f.experimental_get_tracing_count() == 1
