"""tf.data with RaggedTensor and SparseTensor elements: TF 2.15's element specs (printed as TF prints them),
values against hand references, map/filter functions on composites (traced = eager), batching into one more
ragged dimension, unbatching, ragged_batch, sparse_batch, save/load, and Keras fit on ragged features."""
import numpy as np
import pytest

import kiln as tf

ROWS = [[1, 2], [3], [4, 5, 6], []]
DENSE = np.array([[1, 0, 2], [0, 0, 3], [0, 0, 0], [4, 0, 0]], np.int32)


def sparse_rows(ds):
    return [tf.sparse.to_dense(e).numpy().tolist() for e in ds]


def test_from_tensor_slices_of_a_ragged_tensor():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    # A row of a ragged_rank-1 tensor is a dense tensor, its spec a RaggedTensorSpec of ragged_rank 0 (TF's).
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    rows = list(ds)
    assert all(type(r) is type(tf.constant(0)) for r in rows) and [r.numpy().tolist() for r in rows] == ROWS
    assert ds.cardinality().numpy() == 4
    rank2 = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[[1], [2, 3]], [], [[4]]]))
    assert repr(rank2.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [r.to_list() for r in rank2] == [[[1], [2, 3]], [], [[4]]]


def test_from_tensors_and_nested_structures():
    rt = tf.ragged.constant(ROWS)
    ds = tf.data.Dataset.from_tensors(rt)
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([4, None]), tf.int32, 1, tf.int64)"
    assert next(iter(ds)).to_list() == ROWS
    st = tf.sparse.from_dense(DENSE)
    nested = tf.data.Dataset.from_tensor_slices({"r": rt, "s": st, "d": tf.range(4)})
    spec = nested.element_spec
    assert repr(spec["s"]) == "SparseTensorSpec(TensorShape([3]), tf.int32)"
    assert repr(spec["d"]) == "TensorSpec(shape=(), dtype=tf.int32, name=None)"
    for i, e in enumerate(nested):
        assert e["r"].numpy().tolist() == ROWS[i] and e["d"].numpy() == i
        assert tf.sparse.to_dense(e["s"]).numpy().tolist() == DENSE[i].tolist()
    with pytest.raises(ValueError, match="Dimensions 4 and 3 are not compatible"):
        tf.data.Dataset.from_tensor_slices((rt, tf.range(3)))


def test_batch_adds_a_ragged_dimension():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    b = ds.batch(3)
    assert repr(b.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [e.to_list() for e in b] == [ROWS[:3], ROWS[3:]]
    fixed = ds.batch(2, drop_remainder=True)
    assert repr(fixed.element_spec) == "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)"
    twice = tf.data.Dataset.from_tensors(tf.ragged.constant(ROWS)).repeat(3).batch(2)
    assert repr(twice.element_spec) == "RaggedTensorSpec(TensorShape([None, 4, None]), tf.int32, 2, tf.int64)"
    assert [e.to_list() for e in twice] == [[ROWS, ROWS], [ROWS]]
    # Uniform inner dims ride along in the flat values.
    inner = tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(12.0), [6, 2]), [2, 0, 3, 1])
    batched = next(iter(tf.data.Dataset.from_tensor_slices(inner).batch(4)))
    assert batched.to_list() == inner.to_list() and batched.flat_values.shape.as_list() == [6, 2]


def test_batch_of_sparse_elements_takes_the_largest_dense_shape():
    st = tf.sparse.from_dense(DENSE)
    ds = tf.data.Dataset.from_tensor_slices(st)
    assert sparse_rows(ds) == DENSE.tolist()
    b = ds.batch(3)
    assert repr(b.element_spec) == "SparseTensorSpec(TensorShape([None, 3]), tf.int32)"
    assert sparse_rows(b) == [DENSE[:3].tolist(), DENSE[3:].tolist()]
    varying = tf.data.Dataset.range(1, 4).map(lambda n: tf.sparse.from_dense(tf.ones([n], tf.int64) * n)).batch(3)
    only = next(iter(varying))
    assert only.dense_shape.numpy().tolist() == [3, 3]
    assert tf.sparse.to_dense(only).numpy().tolist() == [[1, 0, 0], [2, 2, 0], [3, 3, 3]]


def test_unbatch_inverts_batch():
    rt = tf.ragged.constant([[[1], [2, 3]], [], [[4]], [[5, 6], []]])
    ds = tf.data.Dataset.from_tensor_slices(rt).batch(3).unbatch()
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [e.to_list() for e in ds] == rt.to_list()
    st = tf.data.Dataset.from_tensor_slices(tf.sparse.from_dense(DENSE)).batch(3).unbatch()
    assert sparse_rows(st) == DENSE.tolist()


def test_padded_batch_refuses_composites_as_tf():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    with pytest.raises(TypeError, match=r"`padded_batch` is only supported for datasets that produce tensor "
                                        r"elements but the input dataset spec contains: `RaggedTensorSpec\("):
        ds.padded_batch(2)


def test_ragged_batch_and_dense_to_ragged_batch():
    ds = tf.data.Dataset.from_tensor_slices([1, 5, 3, 2, 8]).map(tf.range)
    for batched in (ds.ragged_batch(2), ds.apply(tf.data.experimental.dense_to_ragged_batch(2))):
        assert repr(batched.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
        assert [e.to_list() for e in batched] == [[[0], [0, 1, 2, 3, 4]], [[0, 1, 2], [0, 1]], [list(range(8))]]
    # Fully known shapes stay dense.
    dense = tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).ragged_batch(2)
    assert repr(dense.element_spec) == "TensorSpec(shape=(None, 2), dtype=tf.int64, name=None)"


def test_sparse_batch():
    ds = tf.data.Dataset.from_tensor_slices([1, 3, 2]).map(lambda n: tf.fill([n], n))
    b = ds.sparse_batch(2, [4])
    assert repr(b.element_spec) == "SparseTensorSpec(TensorShape([None, 4]), tf.int32)"
    assert sparse_rows(b) == [[[1, 0, 0, 0], [3, 3, 3, 0]], [[2, 2, 0, 0]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible with the row shape"):
        list(ds.sparse_batch(2, [2]))


def test_map_and_filter_take_and_return_composites():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1, 2, 3], [4], [5, 6]])).batch(2)
    fn = lambda rt: (tf.reduce_sum(rt, axis=1), rt * 10)  # noqa: E731
    mapped = list(ds.map(fn))
    eager = [fn(e) for e in ds]
    assert [s.numpy().tolist() for s, _ in mapped] == [[6, 4], [11]] == [s.numpy().tolist() for s, _ in eager]
    assert [r.to_list() for _, r in mapped] == [[[10, 20, 30], [40]], [[50, 60]]]
    made = tf.data.Dataset.from_tensor_slices([2, 0, 3]).map(lambda n: tf.ragged.range(tf.range(n)))
    assert repr(made.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [r.to_list() for r in made] == [[[], [0]], [], [[], [0], [0, 1]]]
    kept = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS)).filter(lambda r: tf.size(r) > 1)
    assert [r.numpy().tolist() for r in kept] == [[1, 2], [4, 5, 6]]
    st = tf.data.Dataset.from_tensor_slices(tf.sparse.from_dense(DENSE)).map(lambda s: s * 2)
    assert sparse_rows(st) == (DENSE * 2).tolist()


def test_engine_transformations_carry_components():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    assert [r.numpy().tolist() for r in ds.take(2)] == ROWS[:2]
    assert [r.numpy().tolist() for r in ds.skip(3).repeat(2)] == [[], []]
    shuffled = [r.numpy().tolist() for r in ds.shuffle(4, seed=3).prefetch(2)]
    assert sorted(shuffled) == sorted(ROWS)
    cached = ds.map(lambda r: r + 1).cache()
    assert [r.numpy().tolist() for r in cached] == [r.numpy().tolist() for r in cached] == [
        [v + 1 for v in row] for row in ROWS]
    zipped = tf.data.Dataset.zip((ds, tf.data.Dataset.range(4)))
    assert repr(zipped.element_spec) == ("(RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64), "
                                         "TensorSpec(shape=(), dtype=tf.int64, name=None))")
    assert [(r.numpy().tolist(), int(i)) for r, i in zipped] == [(row, i) for i, row in enumerate(ROWS)]
    npy = list(tf.data.Dataset.from_tensor_slices(tf.sparse.from_dense(DENSE)).batch(4).as_numpy_iterator())[0]
    assert type(npy).__name__ == "SparseTensorValue" and npy.dense_shape.tolist() == [4, 3]


def test_iterating_inside_a_function_equals_eager():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0], []])).batch(2)

    @tf.function
    def total(d):
        s = tf.constant(0.0)
        for x in d:
            s += tf.reduce_sum(x) + tf.cast(x.nrows(), tf.float32)
        return s

    eager = sum(float(tf.reduce_sum(x)) + float(x.nrows()) for x in ds)
    assert total(ds).numpy() == eager == 25.0
    assert ds.reduce(0.0, lambda s, x: s + tf.reduce_sum(x)).numpy() == 21.0


def test_gradients_through_mapped_composites():
    w = tf.Variable(0.5)
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]])).batch(3)
    ds = ds.map(lambda rt: rt * 2.0)
    rt = next(iter(ds))

    def loss(v):
        return tf.reduce_sum(tf.reduce_mean(rt * v, axis=1) ** 2)

    with tf.GradientTape() as tape:
        value = loss(w)
    grad = tape.gradient(value, w).numpy()
    h = 1e-3
    numeric = (loss(tf.constant(0.5 + h)).numpy() - loss(tf.constant(0.5 - h)).numpy()) / (2 * h)
    means = np.array([3.0, 6.0, 10.0])  # the rows' means after the map's * 2
    assert grad == pytest.approx(2 * 0.5 * (means ** 2).sum(), rel=1e-5)
    assert grad == pytest.approx(numeric, rel=1e-3)


def test_save_and_load_keep_the_composite_spec(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices({"r": tf.ragged.constant(ROWS), "s": tf.sparse.from_dense(DENSE)})
    ds.batch(2).save(str(tmp_path))
    back = tf.data.Dataset.load(str(tmp_path))
    assert repr(back.element_spec["r"]) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert repr(back.element_spec["s"]) == "SparseTensorSpec(TensorShape([None, 3]), tf.int32)"
    elements = list(back)
    assert [e["r"].to_list() for e in elements] == [ROWS[:2], ROWS[2:]]
    assert [tf.sparse.to_dense(e["s"]).numpy().tolist() for e in elements] == [DENSE[:2].tolist(), DENSE[2:].tolist()]


def test_keras_fit_on_a_dataset_of_ragged_features():
    tf.keras.utils.set_random_seed(0)
    inp = tf.keras.Input(shape=(None,), ragged=True, dtype=tf.int32)
    x = tf.keras.layers.Embedding(10, 4)(inp)
    x = tf.keras.layers.LSTM(3)(x)
    model = tf.keras.Model(inp, tf.keras.layers.Dense(1)(x))
    model.compile(tf.keras.optimizers.Adam(0.05), "mse")
    feats = tf.ragged.constant([[1, 2], [3], [4, 5, 6], [7]])
    labels = tf.constant([[1.0], [0.0], [1.0], [0.0]])
    ds = tf.data.Dataset.from_tensor_slices((feats, labels)).batch(2)
    assert repr(ds.element_spec) == ("(RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64), "
                                     "TensorSpec(shape=(None, 1), dtype=tf.float32, name=None))")
    losses = model.fit(ds, epochs=15, verbose=0).history["loss"]
    assert len(losses) == 15 and losses[-1] < losses[0]
    assert model.predict(ds, verbose=0).shape == (4, 1)


def test_parallel_map_concatenate_flat_map_and_generators():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    doubled = ds.batch(2).map(lambda r: r * 2, num_parallel_calls=tf.data.AUTOTUNE)
    assert [r.to_list() for r in doubled] == [[[2, 4], [6]], [[8, 10, 12], []]]
    both = ds.concatenate(ds)
    assert repr(both.element_spec) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    assert [r.numpy().tolist() for r in both] == ROWS + ROWS
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        ds.concatenate(tf.data.Dataset.from_tensor_slices(tf.sparse.from_dense(DENSE)))
    assert [r.numpy().tolist() for r in ds.batch(3).flat_map(tf.data.Dataset.from_tensor_slices)] == ROWS
    gen = tf.data.Dataset.from_generator(lambda: iter(ROWS[:3]),
                                         output_signature=tf.RaggedTensorSpec([None], tf.int32, 0))
    assert [r.to_list() for r in gen.batch(2)] == [ROWS[:2], ROWS[2:3]]
    nested = tf.data.Dataset.from_generator(lambda: iter([[[1], [2, 3]], [[4]]]),
                                            output_signature=tf.RaggedTensorSpec([None, None], tf.int32))
    assert [r.to_list() for r in nested] == [[[1], [2, 3]], [[4]]]
    with pytest.raises(TypeError, match="where a SparseTensorSpec"):
        list(tf.data.Dataset.from_generator(lambda: iter([[1]]),
                                            output_signature=tf.SparseTensorSpec([None], tf.int32)))


def test_keras_fit_on_a_dataset_of_sparse_features():
    tf.keras.utils.set_random_seed(0)
    x = tf.keras.Input(shape=(4,), sparse=True)
    model = tf.keras.Model(x, tf.keras.layers.Dense(1)(x))
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    ds = tf.data.Dataset.from_tensor_slices((tf.sparse.from_dense(np.eye(4, dtype=np.float32)),
                                             tf.ones([4, 1]))).batch(2)
    first = next(iter(ds))[0]
    assert first.shape.as_list() == [2, 4]  # the batch's static shape, from its dense_shape
    losses = model.fit(ds, epochs=10, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


def test_rebatch_and_the_traced_slicing_refusal():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(ROWS))
    assert [r.to_list() for r in ds.batch(3).rebatch(2)] == [ROWS[:2], ROWS[2:]]

    @tf.function
    def make(rt):
        return tf.data.Dataset.from_tensor_slices(rt)

    with pytest.raises(tf.errors.UnimplementedError, match="outside the traced function"):
        make(tf.ragged.constant([[1], [2, 3]]))


def test_parsed_examples_give_composites_to_the_pipeline(tmp_path):
    path = str(tmp_path / "ex.tfrecord")
    rows = [[7], [], [1, 3]]
    with tf.io.TFRecordWriter(path) as w:
        for r in rows:
            ex = tf.train.Example()
            ex.features.feature["v"].int64_list.value.extend(r)
            w.write(ex.SerializeToString())
    ragged = {"v": tf.io.RaggedFeature(tf.int64)}
    sparse = {"v": tf.io.VarLenFeature(tf.int64)}
    batched = tf.data.TFRecordDataset(path).batch(3).map(lambda s: tf.io.parse_example(s, ragged)["v"])
    assert repr(batched.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int32)"
    assert [r.to_list() for r in batched] == [rows]
    single = tf.data.TFRecordDataset(path).map(lambda s: tf.io.parse_single_example(s, sparse)["v"])
    assert isinstance(next(iter(single)), tf.SparseTensor)
    assert [tf.sparse.to_dense(s).numpy().tolist() for s in single] == rows
    assert tf.sparse.to_dense(next(iter(single.batch(3)))).numpy().tolist() == [[7, 0], [0, 0], [1, 3]]


def test_ragged_feature_partitions():
    def example(values, lengths, ids):
        ex = tf.train.Example()
        ex.features.feature["v"].int64_list.value.extend(values)
        ex.features.feature["len"].int64_list.value.extend(lengths)
        ex.features.feature["ids"].int64_list.value.extend(ids)
        return ex.SerializeToString()

    batch = [example([1, 2, 3, 4, 5], [2, 0, 3], [0, 0, 2, 2, 2]), example([6], [1], [0])]
    R = tf.io.RaggedFeature
    spec = {"lengths": R(tf.int64, value_key="v", partitions=[R.RowLengths("len")]),
            "ids": R(tf.int64, value_key="v", partitions=[R.ValueRowIds("ids")]),
            "uniform": R(tf.int64, value_key="v", partitions=[R.RowLengths("len"), R.UniformRowLength(1)])}
    want = [[[1, 2], [], [3, 4, 5]], [[6]]]
    eager = tf.io.parse_example(batch, spec)
    traced = next(iter(tf.data.Dataset.from_tensor_slices(batch).batch(2).map(lambda s: tf.io.parse_example(s, spec))))
    for out in (eager, traced):
        assert out["lengths"].to_list() == out["ids"].to_list() == want
        assert out["uniform"].to_list() == [[[[v] for v in row] for row in ex] for ex in want]
        assert out["lengths"].row_splits.dtype == tf.int32  # TF's default row_splits_dtype for RaggedFeature
    assert tf.io.parse_single_example(batch[0], spec)["lengths"].to_list() == want[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not cut 5 values into rows"):
        tf.io.parse_example([example([1, 2, 3, 4, 5], [2, 2], [0])], spec)
