"""kiln.data's transformations made in Python (padded_batch, unbatch, window, flat_map,
interleave, cache, enumerate, concatenate, scan, unique, counter, cardinality, options,
ignore_errors, assert_cardinality, group_by_window, bucket_by_sequence_length,
sample_from_datasets, choose_from_datasets), against the outputs TF's documentation
prints, eagerly and inside tf.function."""
import numpy as np
import pytest

import kiln as tf


def values(ds):
    return [tf.nest.map_structure(lambda t: t.numpy() if t.dtype == tf.string and t.shape.rank == 0
                                  else t.numpy().tolist(), e) for e in ds]


def repeated(x):
    """x copies of x: TF's docstrings write tf.fill([x], x), whose traced length Kiln's fill
    does not take (its dims must be known while tracing)."""
    return tf.zeros_like(tf.range(x)) + x


def fills():
    """TF's docstring dataset: range(1, 5) as int32, each x as x copies of x."""
    return tf.data.Dataset.range(1, 5, output_type=tf.int32).map(repeated)


# ---- padded_batch ---------------------------------------------------------------------------

def test_padded_batch_pads_to_the_longest_in_each_batch():
    b = fills().padded_batch(2)
    assert values(b) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert b.element_spec == tf.TensorSpec([None, None], tf.int32)


def test_padded_batch_to_a_fixed_shape_and_value():
    assert values(fills().padded_batch(2, padded_shapes=5)) == [
        [[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]], [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]]]
    assert values(fills().padded_batch(2, padded_shapes=5, padding_values=-1)) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]
    assert fills().padded_batch(2, padded_shapes=5, drop_remainder=True).element_spec == \
        tf.TensorSpec([2, 5], tf.int32)


def test_padded_batch_of_components_each_their_own_way():
    elements = [([1, 2, 3], [10]), ([4, 5], [11, 12])]
    ds = tf.data.Dataset.from_generator(lambda: iter(elements), (tf.int32, tf.int32))
    out = values(ds.padded_batch(2, padded_shapes=([4], [None]), padding_values=(-1, 100)))
    assert out == [([[1, 2, 3, -1], [4, 5, -1, -1]], [[10, 100], [11, 12]])]
    # One padding value for every component.
    e = tf.data.Dataset.zip((fills(), fills())).padded_batch(2, padding_values=-1)
    assert values(e.take(1)) == [([[1, -1], [2, 2]], [[1, -1], [2, 2]])]


def test_padded_batch_from_the_tf_data_guide():
    ds = tf.data.Dataset.range(100).map(repeated)
    out = values(ds.padded_batch(4, padded_shapes=(None,)).take(2))
    assert out == [[[0, 0, 0], [1, 0, 0], [2, 2, 0], [3, 3, 3]],
                   [[4, 4, 4, 4, 0, 0, 0], [5, 5, 5, 5, 5, 0, 0], [6, 6, 6, 6, 6, 6, 0], [7] * 7]]
    assert int(ds.padded_batch(4).cardinality()) == 25
    assert int(ds.padded_batch(3, drop_remainder=True).cardinality()) == 33


def test_padded_batch_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="pad to a smaller size"):
        list(fills().padded_batch(2, padded_shapes=[2]))
    with pytest.raises(ValueError, match="not compatible"):
        fills().padded_batch(2, padded_shapes=[2, 2])
    with pytest.raises(TypeError, match="should have type int32"):
        fills().padded_batch(2, padding_values=tf.constant(1.0))
    with pytest.raises(ValueError, match="batch_size must be greater than zero"):
        fills().padded_batch(0)


def test_padded_batch_of_strings_and_scalars():
    ds = tf.data.Dataset.from_tensor_slices((["a", "bc", "d"], [1.5, 2.5, 3.5])).map(
        lambda s, x: (tf.gather(tf.stack([s, s, s]), tf.range(tf.cast(x, tf.int32))), x))
    words, xs = next(iter(ds.padded_batch(3)))
    assert words.numpy().tolist() == [[b"a", b"", b""], [b"bc", b"bc", b""], [b"d", b"d", b"d"]]
    assert xs.numpy().tolist() == [1.5, 2.5, 3.5]


# ---- unbatch, window, flat_map, interleave --------------------------------------------------------

def test_unbatch_undoes_batch():
    ds = tf.data.Dataset.from_tensor_slices((np.arange(6), np.arange(6) * 10.0)).batch(4)
    assert values(ds.unbatch()) == [(i, i * 10.0) for i in range(6)]
    assert ds.unbatch().element_spec == (tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.float64))
    assert int(tf.data.Dataset.range(6).batch(2, drop_remainder=True).unbatch().cardinality()) == 6
    assert int(ds.unbatch().cardinality()) == tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(ValueError, match="scalar components"):
        tf.data.Dataset.range(3).unbatch()


def windows(ds):
    return [tf.nest.map_structure(lambda w: [int(a) for a in w.as_numpy_iterator()], w) for w in ds]


def test_window_from_tf_s_docstring():
    r = tf.data.Dataset.range(7)
    assert windows(r.window(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert windows(r.window(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert windows(r.window(3, 2, drop_remainder=True)) == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert windows(r.window(3, 1, 2, drop_remainder=True)) == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).window(2)
    assert windows(pairs) == [([1, 2], [6, 7]), ([3, 4], [8, 9]), ([5], [10])]
    d = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}).window(2)
    assert windows(d) == [{"a": [1, 2], "b": [4, 5], "c": [7, 8]}, {"a": [3], "b": [6], "c": [9]}]
    assert r.window(3).element_spec == tf.data.DatasetSpec(tf.TensorSpec([], tf.int64))
    assert [int(r.window(3, 2, 1, d).cardinality()) for d in (False, True)] == [4, 3]


def test_windows_of_elements_of_different_shapes():
    ws = fills().window(3, shift=1, drop_remainder=True)
    padded = ws.flat_map(lambda w: w.padded_batch(3))
    assert values(padded) == [[[1, 0, 0], [2, 2, 0], [3, 3, 3]], [[2, 2, 0, 0], [3, 3, 3, 0], [4, 4, 4, 4]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        list(ws.take(1))  # the engine's node carries a window as one stacked tensor


def test_window_and_flat_map_from_the_tf_data_guide():
    range_ds = tf.data.Dataset.range(100000)
    ws = range_ds.window(5, shift=1)
    assert len(windows(ws.take(5))) == 5
    flat = [int(x) for x in ws.flat_map(lambda x: x).take(30)]
    assert flat == [v for s in range(6) for v in range(s, s + 5)]
    batches = values(ws.flat_map(lambda sub: sub.batch(5, drop_remainder=True)).take(5))
    assert batches == [list(range(s, s + 5)) for s in range(5)]
    strided = range_ds.window(10, shift=5, stride=3).flat_map(lambda sub: sub.batch(10, drop_remainder=True))
    assert values(strided.take(3)) == [list(range(s, s + 30, 3)) for s in (0, 5, 10)]


def test_flat_map_and_interleave_from_tf_s_docstrings():
    ds = tf.data.Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert values(ds.flat_map(tf.data.Dataset.from_tensor_slices)) == list(range(1, 10))
    inter = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(6),
                                                   cycle_length=2, block_length=4)
    assert values(inter) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4,
                             5, 5, 5, 5, 5, 5]
    assert inter.element_spec == tf.TensorSpec([], tf.int64)
    # Datasets of different lengths: an exhausted one's slot takes the next input element.
    uneven = tf.data.Dataset.range(1, 4).interleave(lambda x: tf.data.Dataset.range(x), cycle_length=2,
                                                    num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    assert values(uneven) == [0, 0, 1, 0, 1, 2]
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        list(ds.flat_map(lambda x: x))


@pytest.mark.parametrize("cycle_length,block_length", [(1, 1), (2, 1), (3, 2), (4, 3), (5, 1)])
def test_parallel_interleave_keeps_the_sequential_order(cycle_length, block_length):
    # Inner datasets of uneven lengths (0..4): slots run out at different times and are refilled.
    make = lambda x: tf.data.Dataset.range(x % 5).map(lambda y: x * 10 + y)  # noqa: E731
    ds = tf.data.Dataset.range(12)
    sequential = values(ds.interleave(make, cycle_length, block_length))
    for calls in (2, 3, tf.data.AUTOTUNE):
        assert values(ds.interleave(make, cycle_length, block_length, num_parallel_calls=calls)) == sequential
    sloppy = ds.interleave(make, cycle_length, block_length, num_parallel_calls=3, deterministic=False)
    assert sorted(values(sloppy)) == sorted(sequential)


def test_parallel_interleave_reads_the_open_datasets_at_once():
    import threading
    import time
    inside, most = [0], [0]
    lock = threading.Lock()

    def slow(n):
        for i in range(n):
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.01)
            with lock:
                inside[0] -= 1
            yield i

    inner = lambda _: tf.data.Dataset.from_generator(slow, args=(3,),  # noqa: E731
                                                     output_signature=tf.TensorSpec([], tf.int64))
    out = values(tf.data.Dataset.range(4).interleave(inner, cycle_length=4, num_parallel_calls=4))
    assert out == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2] and most[0] > 1
    bad = tf.data.Dataset.range(3).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).map(lambda y: tf.gather(tf.constant([1, 2]), y * 5)),
        cycle_length=3, num_parallel_calls=2)  # the second inner dataset's element fails
    with pytest.raises(tf.errors.InvalidArgumentError):
        values(bad)


# ---- cache, enumerate, concatenate, scan, unique, counter ----------------------------------------

def test_cache_replays_the_first_complete_pass():
    calls = []

    def gen():
        calls.append(1)
        yield from range(4)

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64)).map(lambda x: x ** 2)
    cached = ds.cache()
    for x in cached:  # a pass left early keeps nothing
        break
    assert values(cached) == [0, 1, 4, 9]
    assert values(cached) == [0, 1, 4, 9]
    assert len(calls) == 2
    assert int(tf.data.Dataset.range(5).cache().cardinality()) == 5


def test_enumerate_from_tf_s_docstring():
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3]).enumerate(start=5)
    assert values(ds) == [(5, 1), (6, 2), (7, 3)]
    nested = tf.data.Dataset.from_tensor_slices([(7, 8), (9, 10)]).enumerate()
    assert values(nested) == [(0, [7, 8]), (1, [9, 10])]
    assert nested.element_spec[0] == tf.TensorSpec([], tf.int64)
    assert int(nested.cardinality()) == 2
    assert int(tf.data.Dataset.range(3).repeat().enumerate().cardinality()) == tf.data.INFINITE_CARDINALITY


def test_concatenate_and_its_type_check():
    a, b = tf.data.Dataset.range(1, 4), tf.data.Dataset.range(4, 8)
    ab = a.concatenate(b)
    assert values(ab) == [1, 2, 3, 4, 5, 6, 7]
    assert int(ab.cardinality()) == 7
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        a.concatenate(tf.data.Dataset.zip((a, b)))
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        a.concatenate(tf.data.Dataset.from_tensor_slices(["a", "b", "c"]))
    # Shapes that differ become unknown dims.
    mixed = tf.data.Dataset.from_tensors([1, 2]).concatenate(tf.data.Dataset.from_tensors([3, 4, 5]))
    assert mixed.element_spec == tf.TensorSpec([None], tf.int32)
    assert int(a.concatenate(b.repeat()).cardinality()) == tf.data.INFINITE_CARDINALITY


def test_scan_from_tf_s_docstring_traces_once(capfd):
    def running(state, i):
        print("tracing scan")
        return state + i, state + i

    ds = tf.data.Dataset.range(10).scan(initial_state=tf.constant(0, dtype=tf.int64), scan_func=running)
    assert values(ds) == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]
    assert values(ds) == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]
    assert capfd.readouterr().out.count("tracing scan") == 1
    with pytest.raises(TypeError, match="must match the initial state"):
        list(tf.data.Dataset.range(3).scan(tf.constant(0, tf.int64), lambda s, x: ((s, s), x)))


def test_unique_and_its_types():
    ds = tf.data.Dataset.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()
    assert sorted(values(ds)) == [1, 2, 37]
    assert values(tf.data.Dataset.from_tensor_slices(["b", "a", "b"]).unique()) == [b"b", b"a"]
    with pytest.raises(TypeError, match="does not support type"):
        tf.data.Dataset.from_tensor_slices([1.0]).unique()


def test_counter_from_tf_s_docstring():
    c = tf.data.experimental.Counter
    assert values(c().take(5)) == [0, 1, 2, 3, 4]
    assert c(dtype=tf.int32).element_spec == tf.TensorSpec([], tf.int32)
    assert values(c(start=2).take(5)) == [2, 3, 4, 5, 6]
    assert values(c(start=2, step=5).take(5)) == [2, 7, 12, 17, 22]
    assert values(c(start=10, step=-1).take(5)) == [10, 9, 8, 7, 6]
    assert int(tf.data.Dataset.counter().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(tf.data.Dataset.counter().take(7).cardinality()) == 7


# ---- cardinality, options, errors ----------------------------------------------------------------

def test_cardinality_from_tf_s_docstring_through_python_made_datasets():
    ds = tf.data.Dataset.range(42)
    assert int(ds.cardinality()) == 42
    assert int(ds.repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert int(ds.repeat().filter(lambda x: True).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    # Counts that only Python knows go on through the engine's transformations.
    padded = fills().padded_batch(3)
    assert int(padded.cardinality()) == 2
    assert int(padded.repeat(3).skip(1).take(4).cardinality()) == 4
    assert int(padded.shard(2, 1).cardinality()) == 1
    assert len(padded.map(lambda x: x).prefetch(1)) == 2
    assert int(tf.data.experimental.cardinality(padded.repeat())) == tf.data.INFINITE_CARDINALITY


def test_options_merge_as_tf_s():
    options = tf.data.Options()
    options.deterministic = False
    ds = tf.data.Dataset.range(2).with_options(options)
    assert ds.options().deterministic is False
    assert tf.data.Dataset.range(2).options().deterministic is None
    other = tf.data.Options()
    other.experimental_optimization.map_parallelization = True
    other.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    both = ds.map(lambda x: x).with_options(other).padded_batch(2)
    assert both.options().deterministic is False
    assert both.options().experimental_optimization.map_parallelization is True
    assert both.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.DATA
    with pytest.raises(AttributeError, match="Cannot set the property"):
        options.no_such_option = 1
    assert values(both) == [[0, 1]]


def test_ignore_errors_skips_the_elements_that_fail():
    # TF's docstring fails on 1 / 0 with check_numerics; here a gather out of range fails the same way.
    ds = tf.data.Dataset.from_tensor_slices([0, 1, 7, 2]).map(lambda i: tf.gather([1.0, 0.5, 0.25], i))
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(ds)
    assert values(ds.ignore_errors()) == [1.0, 0.5, 0.25]
    # Not a map's own elements: the engine's iterator goes on after the failed one.
    assert values(ds.take(4).ignore_errors()) == [1.0, 0.5, 0.25]
    first_fails = tf.data.Dataset.from_tensor_slices([9, 0]).map(lambda i: tf.gather([1.0], i))
    assert values(first_fails.ignore_errors()) == [1.0]
    assert int(ds.ignore_errors().cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_assert_cardinality():
    ds = tf.data.Dataset.range(5).filter(lambda x: True)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert int(ds.assert_cardinality(5).cardinality()) == 5
    assert values(ds.assert_cardinality(5)) == [0, 1, 2, 3, 4]
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 6 elements but contained only 5 elements"):
        list(ds.assert_cardinality(6))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="expected to contain 3 elements but contained at least 4 elements"):
        list(ds.apply(tf.data.experimental.assert_cardinality(3)))


# ---- grouping, sampling, choosing ----------------------------------------------------------------

def test_group_by_window_from_tf_s_docstring():
    ds = tf.data.Dataset.range(10).group_by_window(key_func=lambda x: x % 2,
                                                   reduce_func=lambda key, d: d.batch(5), window_size=5)
    assert values(ds) == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
    # Windows of each key's own size; the groups left at the end come out by key.
    sized = tf.data.Dataset.range(10).group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda key, d: d.batch(10), window_size_func=lambda key: key + 1)
    assert values(sized) == [[0], [3], [1, 4], [6], [2, 5, 8], [9], [7]]
    with pytest.raises(ValueError, match="must be specified"):
        tf.data.Dataset.range(3).group_by_window(lambda x: x, lambda k, d: d)
    with pytest.raises(ValueError, match="single `tf.int64` scalar"):
        list(tf.data.Dataset.range(3).group_by_window(lambda x: tf.cast(x, tf.int32), lambda k, d: d, 2))


def test_bucket_by_sequence_length_from_tf_s_docstring():
    elements = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]
    ds = tf.data.Dataset.from_generator(lambda: elements, tf.int64, output_shapes=[None])
    ds = ds.bucket_by_sequence_length(element_length_func=lambda elem: tf.shape(elem)[0],
                                      bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 2, 2])
    assert values(ds) == [[[1, 2, 3, 4], [5, 6, 7, 0]], [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]],
                          [[0, 0], [21, 22]]]
    padded = tf.data.Dataset.from_generator(lambda: elements, tf.int64, output_shapes=[None]).apply(
        tf.data.experimental.bucket_by_sequence_length(lambda elem: tf.shape(elem)[0], [3, 5, 7], [2, 2, 2, 2],
                                                       padding_values=np.int64(-1), pad_to_bucket_boundary=True))
    assert values(padded)[0] == [[1, 2, 3, 4], [5, 6, 7, -1]]
    with pytest.raises(ValueError, match="must equal"):
        ds.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3], [1, 2, 3])


def test_choose_from_datasets_from_tf_s_docstring():
    datasets = [tf.data.Dataset.from_tensors("foo").repeat(), tf.data.Dataset.from_tensors("bar").repeat(),
                tf.data.Dataset.from_tensors("baz").repeat()]
    choice = tf.data.Dataset.range(3).repeat(3)
    assert values(tf.data.Dataset.choose_from_datasets(datasets, choice)) == [b"foo", b"bar", b"baz"] * 3
    short = [tf.data.Dataset.range(2), tf.data.Dataset.range(10, 13)]
    sel = tf.data.Dataset.from_tensor_slices(np.array([0, 0, 0, 1, 1], np.int64))
    assert values(tf.data.experimental.choose_from_datasets(short, sel)) == [0, 1]
    assert values(tf.data.Dataset.choose_from_datasets(short, sel, stop_on_empty_dataset=False)) == [0, 1, 10, 11]
    with pytest.raises(TypeError, match="scalar of type `tf.int64`"):
        tf.data.Dataset.choose_from_datasets(short, tf.data.Dataset.range(2, output_type=tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Selector index out of range"):
        list(tf.data.Dataset.choose_from_datasets(short, tf.data.Dataset.range(3, 4)))


def test_sample_from_datasets_draws_by_weight_and_drains_every_input():
    a, b = tf.data.Dataset.from_tensors(np.int64(0)).repeat(), tf.data.Dataset.from_tensors(np.int64(1)).repeat()
    drawn = values(tf.data.Dataset.sample_from_datasets([a, b], weights=[0.2, 0.8], seed=3).take(2000))
    assert abs(np.mean(drawn) - 0.8) < 0.04  # 5 standard deviations of the binomial
    seeded = tf.data.Dataset.sample_from_datasets([a, b], seed=11).take(50)
    assert values(seeded) == values(seeded)
    finite = tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(5), tf.data.Dataset.range(10, 20)], seed=1)
    out = values(finite)
    assert sorted(out) == list(range(5)) + list(range(10, 20))
    assert [x for x in out if x < 5] == list(range(5))  # each input in its own order
    stopped = values(tf.data.Dataset.sample_from_datasets(
        [tf.data.Dataset.range(1), tf.data.Dataset.range(10, 1000)], seed=2, stop_on_empty_dataset=True))
    assert len(stopped) < 990
    assert int(tf.data.Dataset.sample_from_datasets([a, b]).cardinality()) == tf.data.INFINITE_CARDINALITY


# ---- inside tf.function ----------------------------------------------------------------------------

def test_python_made_datasets_in_a_function_loop():
    padded = fills().padded_batch(2, padded_shapes=5)

    @tf.function
    def total(ds):
        s = tf.constant(0)
        for batch in ds:
            s += tf.reduce_sum(batch) + tf.shape(batch)[1]
        return s

    assert int(total(padded)) == (1 + 4 + 5) + (9 + 16 + 5)
    assert int(total(padded)) == 40  # every call is a new pass

    @tf.function
    def built_inside():
        ds = tf.data.Dataset.range(10).window(3, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(3)).unbatch()
        return ds.scan(np.int64(0), lambda s, x: (s + x, s + x)).reduce(
            tf.constant(0, tf.int64), lambda acc, x: tf.maximum(acc, x))

    # The windows' elements summed: the scan's last running total.
    assert int(built_inside()) == sum(sum(range(s, s + 3)) for s in range(8))


def test_a_python_transformation_of_a_dataset_argument_is_refused_clearly():
    @tf.function
    def f(ds):
        return ds.padded_batch(2).reduce(tf.constant(0, tf.int64), lambda s, b: s + tf.reduce_sum(b))

    with pytest.raises(tf.errors.UnimplementedError, match="apply it outside the function"):
        f(tf.data.Dataset.range(4).map(repeated))
