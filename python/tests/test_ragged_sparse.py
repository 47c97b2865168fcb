"""tf.RaggedTensor and tf.sparse against NumPy references, eagerly and inside kiln.function, with gradients."""
import numpy as np
import pytest

import kiln as tf

ROWS = [[3, 1, 4, 1], [], [5, 9, 2], [6], []]


def both(fn, *args):
    """fn's result eagerly and traced (once each)."""
    return fn(*args), tf.function(fn, autograph=False)(*args)


def test_factories_agree():
    values = [3, 1, 4, 1, 5, 9, 2]
    want = [[3, 1, 4, 1], [], [5, 9], [2]]
    R = tf.RaggedTensor
    for rt in (R.from_row_splits(values, [0, 4, 4, 6, 7]), R.from_row_lengths(values, [4, 0, 2, 1]),
               R.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 3]), R.from_row_starts(values, [0, 4, 4, 6]),
               R.from_row_limits(values, [4, 4, 6, 7]),
               R.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 3], nrows=4)):
        assert rt.to_list() == want and rt.row_splits.dtype == tf.int64 and rt.shape.as_list() == [4, None]
    nested = R.from_nested_row_splits([10, 11, 12, 13, 14, 15, 16, 17, 18, 19], ([0, 1, 1, 5], [0, 3, 3, 5, 9, 10]))
    assert nested.to_list() == [[[10, 11, 12]], [], [[], [13, 14], [15, 16, 17, 18], [19]]]
    assert nested.ragged_rank == 2 and [s.numpy().tolist() for s in nested.nested_row_splits] == [[0, 1, 1, 5],
                                                                                                 [0, 3, 3, 5, 9, 10]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        R.from_row_splits(values, [0, 4, 3, 7])
    with pytest.raises(ValueError, match="private"):
        R(values, None)


def test_printing_and_properties():
    rt = tf.ragged.constant(ROWS)
    assert str(rt) == repr(rt) == "<kiln.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], []]>"
    assert repr(rt.shape) == "TensorShape([5, None])" and rt.dtype == tf.int32
    assert rt.nrows().numpy() == 5 and rt.row_lengths().numpy().tolist() == [4, 0, 3, 1, 0]
    assert rt.bounding_shape().numpy().tolist() == [5, 4]
    assert rt.value_rowids().numpy().tolist() == [0, 0, 0, 0, 2, 2, 2, 3]
    assert repr(tf.RaggedTensorSpec([None, None], tf.int32)) == \
        "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    dense = rt.to_tensor(default_value=-1)
    ref = np.full((5, 4), -1)
    for i, r in enumerate(ROWS):
        ref[i, :len(r)] = r
    np.testing.assert_array_equal(dense.numpy(), ref)
    np.testing.assert_array_equal(rt.to_tensor(shape=[3, 2]).numpy(), [[3, 1], [0, 0], [5, 9]])
    back = tf.RaggedTensor.from_tensor(dense, padding=-1)
    assert back.to_list() == ROWS
    assert tf.RaggedTensor.from_tensor(dense, lengths=[1, 0, 2, 1, 0]).to_list() == [[3], [], [5, 9], [6], []]


def test_elementwise_and_broadcasting_match_numpy():
    rt = tf.ragged.constant([[1.5, -2.0], [3.0], [4.0, 5.0, -6.0]])
    rows = rt.to_list()
    for got in both(lambda x: tf.abs(x) * 2.0 + x, rt):
        assert got.to_list() == [[abs(v) * 2 + v for v in r] for r in rows]
    col = tf.constant([[10.0], [20.0], [30.0]])
    for got in both(lambda x, y: x - y, rt, col):
        assert got.to_list() == [[v - c for v in r] for r, c in zip(rows, [10, 20, 30])]
    with pytest.raises(tf.errors.InvalidArgumentError):
        rt + tf.ragged.constant([[1.0], [2.0, 3.0], [4.0, 5.0, 6.0]])
    assert (3 - rt).to_list() == [[3 - v for v in r] for r in rows]
    assert tf.cast(rt, tf.int32).dtype == tf.int32
    assert tf.strings.upper(tf.ragged.constant([["a", "b"], ["c"]])).to_list() == [[b"A", b"B"], [b"C"]]


INT32 = np.iinfo(np.int32)


@pytest.mark.parametrize("kind,ref,empty", [("reduce_sum", np.sum, 0), ("reduce_max", np.max, INT32.min),
                                            ("reduce_min", np.min, INT32.max), ("reduce_prod", np.prod, 1)])
def test_reductions_over_ragged_axes(kind, ref, empty):
    rt = tf.ragged.constant(ROWS)
    fn = getattr(tf.math, kind)
    want1 = [ref(r) if r else empty for r in ROWS]
    cols = [[r[j] for r in ROWS if len(r) > j] for j in range(4)]
    for got in both(lambda x: fn(x, axis=1), rt):
        assert got.numpy().tolist() == want1
    assert fn(rt, axis=0).numpy().tolist() == [ref(c) for c in cols]
    assert fn(rt).numpy() == ref(sum(ROWS, []))


def test_mean_of_ints_is_float64_with_nan_for_empty_rows():
    got = tf.reduce_mean(tf.ragged.constant(ROWS), axis=1)
    assert got.dtype == tf.float64
    np.testing.assert_allclose(got.numpy(), [2.25, np.nan, 16 / 3, 6.0, np.nan])


def test_indexing():
    rt = tf.ragged.constant(ROWS)
    assert rt[2].numpy().tolist() == [5, 9, 2] and rt[-2].numpy().tolist() == [6]
    assert rt[1:4].to_list() == ROWS[1:4] and rt[::-2].to_list() == ROWS[::-2]
    assert rt[:, :2].to_list() == [r[:2] for r in ROWS] and rt[:, -2:].to_list() == [r[-2:] for r in ROWS]
    assert rt[:, 1:-1].to_list() == [r[1:-1] for r in ROWS]
    with pytest.raises(ValueError, match="inner ragged"):
        rt[:, 1]
    nested = tf.ragged.constant([[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]])
    assert nested[3, 0].numpy().tolist() == [8, 9]
    assert nested[:, 1:3].to_list() == [[[4]], [[], [6]], [], [[10]]]
    assert nested[:, :, :1].to_list() == [[[1], [4]], [[5], [], [6]], [[7]], [[8], [10]]]


def test_concat_stack_tile_reverse():
    a, b = tf.ragged.constant([[1, 2], [3]]), tf.ragged.constant([[4], [5, 6]])
    assert tf.concat([a, b], axis=0).to_list() == [[1, 2], [3], [4], [5, 6]]
    assert tf.concat([a, b], axis=1).to_list() == [[1, 2, 4], [3, 5, 6]]
    assert tf.concat([a, tf.constant([[7], [8]])], axis=1).to_list() == [[1, 2, 7], [3, 8]]
    assert tf.stack([a, b]).to_list() == [[[1, 2], [3]], [[4], [5, 6]]]
    assert tf.tile(a, [2, 2]).to_list() == [[1, 2, 1, 2], [3, 3], [1, 2, 1, 2], [3, 3]]
    assert tf.reverse(a, [1]).to_list() == [[2, 1], [3]] and tf.reverse(a, [0]).to_list() == [[3], [1, 2]]


def test_ragged_namespace():
    assert tf.ragged.range([3, 0, 5], deltas=2).to_list() == [[0, 2], [], [0, 2, 4]]
    assert tf.ragged.range([1, 2], [4, 3]).to_list() == [[1, 2, 3], [2]]
    masked = tf.ragged.boolean_mask(tf.constant([[1, 2, 3], [4, 5, 6]]), [[True, False, True], [False, False, True]])
    assert masked.to_list() == [[1, 3], [6]]
    assert tf.ragged.map_flat_values(tf.square, tf.ragged.constant(ROWS)).to_list() == [[v * v for v in r]
                                                                                      for r in ROWS]
    assert tf.strings.split(tf.constant(["a b  c", "d"])).to_list() == [[b"a", b"b", b"c"], [b"d"]]
    assert tf.strings.split(tf.constant(["a,b", ""]), ",").to_list() == [[b"a", b"b"], [b""]]
    with pytest.raises(ValueError, match="nesting depth"):
        tf.ragged.constant(["A", ["B", "C"]])


def test_ragged_function_arguments_trace_once_per_spec():
    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
    def row_sums(rt):
        return tf.reduce_sum(rt * 2.0, axis=1), rt + 1.0

    for rows in ([[1.0, 2.0], [3.0]], [[1.0], [], [2.0, 3.0, 4.0]], [[5.0]]):
        sums, plus = row_sums(tf.ragged.constant(rows))
        assert sums.numpy().tolist() == [2 * sum(r) for r in rows]
        assert isinstance(plus, tf.RaggedTensor) and plus.to_list() == [[v + 1 for v in r] for r in rows]
    assert row_sums.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError):
        row_sums(tf.ragged.constant([[1, 2]]))


def test_ragged_gradients_reach_flat_values():
    values = tf.constant([1.0, 2.0, 3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(values)
        rt = tf.RaggedTensor.from_row_lengths(values, [2, 0, 2])
        loss = tf.reduce_sum(tf.reduce_max(rt, axis=1) * tf.constant([1.0, 0.0, 3.0])) + tf.reduce_sum(
            rt.to_tensor() ** 2)
    np.testing.assert_allclose(tape.gradient(loss, values).numpy(), [2.0, 5.0, 6.0, 11.0])


# ---- sparse ----------------------------------------------------------------------------------------------

def _random_sparse(shape, nnz, seed):
    rng = np.random.default_rng(seed)
    flat = np.sort(rng.choice(int(np.prod(shape)), nnz, replace=False))
    idx = np.stack(np.unravel_index(flat, shape), axis=1)
    vals = rng.standard_normal(nnz)
    dense = np.zeros(shape)
    dense[tuple(idx.T)] = vals
    return tf.sparse.SparseTensor(idx, tf.constant(vals), shape), dense


def test_sparse_printing_and_dense_round_trip():
    st = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    assert str(st) == ("SparseTensor(indices=kiln.Tensor(\n[[0 3]\n [2 4]], shape=(2, 2), dtype=int64), "
                       "values=kiln.Tensor([10 20], shape=(2,), dtype=int32), "
                       "dense_shape=kiln.Tensor([ 3 10], shape=(2,), dtype=int64))")
    assert repr(st.shape) == "TensorShape([3, 10])" and repr(st._type_spec) == \
        "SparseTensorSpec(TensorShape([3, 10]), tf.int32)"
    st2, dense = _random_sparse((4, 5), 7, 0)
    np.testing.assert_array_equal(tf.sparse.to_dense(st2).numpy(), dense)
    back = tf.sparse.from_dense(dense)
    np.testing.assert_array_equal(back.indices.numpy(), st2.indices.numpy())
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of order"):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 2]))


@pytest.mark.parametrize("adjoint_a,adjoint_b", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_dense_matmul_and_gradients(adjoint_a, adjoint_b):
    st, a = _random_sparse((4, 3) if not adjoint_a else (3, 4), 6, 1)
    b = np.random.default_rng(2).standard_normal((3, 2) if not adjoint_b else (2, 3))
    ref = (a.T if adjoint_a else a) @ (b.T if adjoint_b else b)
    for got in both(lambda s, m: tf.sparse.sparse_dense_matmul(s, m, adjoint_a=adjoint_a, adjoint_b=adjoint_b),
                    st, tf.constant(b)):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    values = st.values
    with tf.GradientTape() as tape:
        tape.watch(values)
        out = tf.sparse.sparse_dense_matmul(st.with_values(values), tf.constant(b), adjoint_a, adjoint_b)
        loss = tf.reduce_sum(out ** 2)
    grad = tape.gradient(loss, values).numpy()
    eps, numeric = 1e-6, []
    for k in range(len(grad)):
        bumped = [st.values.numpy().copy() for _ in range(2)]
        bumped[0][k] += eps
        bumped[1][k] -= eps
        f = [np.sum(((lambda m: m.T if adjoint_a else m)(tf.sparse.to_dense(st.with_values(tf.constant(v))).numpy())
                     @ (b.T if adjoint_b else b)) ** 2) for v in bumped]
        numeric.append((f[0] - f[1]) / (2 * eps))
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_sparse_ops_match_numpy():
    st, dense = _random_sparse((4, 6), 9, 3)
    other, dense2 = _random_sparse((4, 6), 5, 4)
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.add(st, other)).numpy(), dense + dense2)
    np.testing.assert_allclose(tf.sparse.add(st, tf.constant(dense2)).numpy(), dense + dense2)
    for axis in (None, 0, 1):
        np.testing.assert_allclose(tf.sparse.reduce_sum(st, axis=axis).numpy(), dense.sum(axis=axis))
    present = np.where(dense != 0, dense, -np.inf)
    np.testing.assert_allclose(tf.sparse.reduce_max(st, axis=1).numpy(), present.max(axis=1))
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.reduce_sum(st, axis=1, output_is_sparse=True)).numpy(),
                               dense.sum(axis=1))
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.transpose(st)).numpy(), dense.T)
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.reshape(st, [3, -1])).numpy(), dense.reshape(3, -1))
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.slice(st, [1, 2], [2, 10])).numpy(), dense[1:3, 2:])
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.concat(1, [st, other])).numpy(),
                               np.concatenate([dense, dense2], 1))
    keep = np.arange(9) % 2 == 0
    kept = tf.sparse.retain(st, keep)
    assert kept.values.numpy().tolist() == st.values.numpy()[keep].tolist()
    shuffled = tf.sparse.SparseTensor(st.indices.numpy()[::-1], st.values.numpy()[::-1], [4, 6])
    np.testing.assert_array_equal(tf.sparse.reorder(shuffled).indices.numpy(), st.indices.numpy())
    with pytest.raises(tf.errors.InvalidArgumentError, match="right-ragged"):
        tf.RaggedTensor.from_sparse(tf.sparse.SparseTensor([[0, 0], [1, 2]], [1, 2], [2, 3]))
    filled, empty = tf.sparse.fill_empty_rows(tf.sparse.SparseTensor([[1, 2]], [5.0], [3, 4]), -1.0)
    np.testing.assert_array_equal(tf.sparse.to_dense(filled).numpy(),
                                  [[-1, 0, 0, 0], [0, 0, 5, 0], [-1, 0, 0, 0]])
    assert empty.numpy().tolist() == [True, False, True]
    np.testing.assert_allclose(tf.sparse.to_dense(tf.abs(st)).numpy(), np.abs(dense))
    np.testing.assert_allclose(tf.sparse.to_dense(st * tf.constant(dense2 + 1.0)).numpy(), dense * (dense2 + 1.0))
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.map_values(tf.multiply, st, st)).numpy(), dense ** 2)


def test_sparse_function_arguments():
    @tf.function(input_signature=[tf.SparseTensorSpec([None, 3], tf.float64), tf.TensorSpec([3, 2], tf.float64)])
    def f(st, m):
        return tf.sparse.sparse_dense_matmul(st, m), tf.sparse.map_values(tf.negative, st)

    m = np.arange(6.0).reshape(3, 2)
    for rows in (2, 5):
        st, dense = _random_sparse((rows, 3), 3, rows)
        out, neg = f(st, tf.constant(m))
        np.testing.assert_allclose(out.numpy(), dense @ m)
        assert isinstance(neg, tf.sparse.SparseTensor)
        np.testing.assert_allclose(tf.sparse.to_dense(neg).numpy(), -dense)
    assert f.experimental_get_tracing_count() == 1


def test_gradients_through_a_function_with_a_sparse_argument():
    st, a = _random_sparse((3, 4), 5, 7)
    m = np.random.default_rng(8).standard_normal((4, 2))
    f = tf.function(lambda s, x: tf.reduce_sum(tf.sparse.sparse_dense_matmul(s, x) ** 2))
    values = st.values
    with tf.GradientTape() as tape:
        tape.watch(values)
        y = f(st.with_values(values), tf.constant(m))
    idx = st.indices.numpy()
    out = a @ m
    want = [2 * out[i] @ m[j] for i, j in idx]  # d sum(out^2) / d a[i, j]
    np.testing.assert_allclose(tape.gradient(y, values).numpy(), want, rtol=1e-12)


def test_to_dense_gradient_reaches_values_eager_and_traced():
    st, _ = _random_sparse((3, 4), 5, 9)
    weights = np.arange(12.0).reshape(3, 4)
    fn = lambda v: tf.reduce_sum(tf.sparse.to_dense(st.with_values(v)) * weights)  # noqa: E731
    for f in (fn, tf.function(fn, autograph=False)):
        v = st.values
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = f(v)
        want = [weights[i, j] for i, j in st.indices.numpy()]
        np.testing.assert_allclose(tape.gradient(y, v).numpy(), want)


def test_nest_expands_composites():
    rt = tf.ragged.constant([[1, 2], [3]])
    st = tf.sparse.from_dense([[0, 1], [2, 0]])
    structure = {"a": rt, "b": [st, 5]}
    flat = tf.nest.flatten(structure, expand_composites=True)
    assert len(flat) == 6 and flat[-1] == 5 and flat[0].numpy().tolist() == [1, 2, 3]
    assert tf.nest.flatten(structure)[0] is rt
    back = tf.nest.pack_sequence_as(structure, flat, expand_composites=True)
    assert back["a"].to_list() == [[1, 2], [3]]
    assert tf.sparse.to_dense(back["b"][0]).numpy().tolist() == [[0, 1], [2, 0]]
    assert len(tf.nest.flatten(tf.RaggedTensorSpec([None, None, None], tf.int32), expand_composites=True)) == 3


def _value(x):
    if isinstance(x, tf.RaggedTensor):
        return x.to_list()
    if isinstance(x, tf.sparse.SparseTensor):
        return [x.indices.numpy().tolist(), x.values.numpy().tolist(), x.dense_shape.numpy().tolist()]
    return np.nan_to_num(x.numpy(), nan=-7.0).tolist()


RAGGED_CASES = {
    "mean": lambda x: tf.reduce_mean(x, axis=1), "concat0": lambda x: tf.concat([x, [[5, 3]]], axis=0),
    "tile": lambda x: tf.tile(x, [2, 3]), "row": lambda x: x[2], "cut": lambda x: x[:, 1:-1], "rows": lambda x: x[::2],
    "to_tensor": lambda x: x.to_tensor(default_value=-1, shape=[None, 3]), "bounding": lambda x: x.bounding_shape(),
    "sum0": lambda x: tf.reduce_sum(x, axis=0), "concat1": lambda x: tf.concat([x, x], axis=1),
    "stack": lambda x: tf.stack([x, x]), "reverse": lambda x: tf.reverse(x, [0, 1]),
    "to_sparse": lambda x: x.to_sparse(), "mask": lambda x: tf.ragged.boolean_mask(x, x > 2),
    "from_tensor": lambda x: tf.RaggedTensor.from_tensor(x.to_tensor(default_value=-1), padding=-1),
    "range": lambda x: tf.ragged.range(x.row_lengths()), "max": lambda x: tf.reduce_max(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(RAGGED_CASES))
def test_ragged_ops_traced_equal_eager(name):
    fn = RAGGED_CASES[name]
    rt = tf.ragged.constant(ROWS)
    eager, traced = both(fn, rt)
    assert type(eager) is type(traced) and _value(eager) == _value(traced)


SPARSE_CASES = {
    "add": lambda s: tf.sparse.add(s, s), "reduce_sum": lambda s: tf.sparse.reduce_sum(s, axis=1),
    "reduce_max": lambda s: tf.sparse.reduce_max(s, axis=0, output_is_sparse=True),
    "slice": lambda s: tf.sparse.slice(s, [0, 1], [2, 2]), "reshape": lambda s: tf.sparse.reshape(s, [3, -1]),
    "transpose": lambda s: tf.sparse.transpose(s), "concat": lambda s: tf.sparse.concat(0, [s, s]),
    "fill_empty_rows": lambda s: tf.sparse.fill_empty_rows(tf.sparse.retain(s, [True, True, False]), 9.0)[0],
    "from_dense": lambda s: tf.sparse.from_dense(tf.sparse.to_dense(s)), "times_dense": lambda s: s * tf.constant(
        [1.0, 2.0, 3.0]), "to_ragged": lambda s: tf.RaggedTensor.from_sparse(tf.sparse.retain(s, [True, False, False])),
}


@pytest.mark.parametrize("name", sorted(SPARSE_CASES))
def test_sparse_ops_traced_equal_eager(name):
    st = tf.sparse.from_dense([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    eager, traced = both(SPARSE_CASES[name], st)
    assert type(eager) is type(traced) and _value(eager) == _value(traced)


def test_map_fn():
    digits = tf.ragged.constant(ROWS)
    assert tf.map_fn(tf.math.square, digits).to_list() == [[v * v for v in r] for r in ROWS]
    assert tf.map_fn(tf.reduce_sum, digits, fn_output_signature=tf.int32).numpy().tolist() == [sum(r) for r in ROWS]
    m = np.arange(6).reshape(3, 2)
    eager, traced = both(lambda x: tf.map_fn(lambda r: r * 2 + 1, x), tf.constant(m))
    assert eager.numpy().tolist() == traced.numpy().tolist() == (m * 2 + 1).tolist()
    dynamic = tf.function(lambda x: tf.map_fn(tf.reduce_sum, x), input_signature=[tf.TensorSpec([None, 2], tf.int64)])
    assert dynamic(tf.constant(m)).numpy().tolist() == m.sum(axis=1).tolist()
    pairs = tf.map_fn(lambda t: (t[0] + t[1], t[0] * t[1]), (tf.constant([1, 2]), tf.constant([10, 20])))
    assert [p.numpy().tolist() for p in pairs] == [[11, 22], [10, 40]]
    ranges = tf.map_fn(tf.range, tf.constant([1, 3, 2]), fn_output_signature=tf.RaggedTensorSpec([None], tf.int32))
    assert ranges.to_list() == [[0], [0, 1, 2], [0, 1]]


def test_concrete_functions_of_composite_specs_take_compatible_values():
    reduce_rows = tf.function(lambda st: tf.sparse.reduce_sum(st, axis=0))
    concrete = reduce_rows.get_concrete_function(tf.SparseTensorSpec([None, 3], tf.float32))
    assert concrete(tf.sparse.from_dense([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])).numpy().tolist() == [1.0, 3.0, 2.0]
    assert concrete(tf.sparse.from_dense([[1.0, 0.0, 2.0]])).numpy().tolist() == [1.0, 0.0, 2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="traced as"):
        concrete(tf.sparse.from_dense([[1.0, 0.0]]))

    @tf.function
    def increment(x):
        return x + 1

    cf = increment.get_concrete_function(tf.RaggedTensorSpec([None, None], tf.int32))
    assert cf(tf.ragged.constant([[1, 2], [3]])).to_list() == [[2, 3], [4]]
    assert cf(x=tf.ragged.constant([[1], [], [3, 4, 5]])).to_list() == [[2], [], [4, 5, 6]]
    assert increment.experimental_get_tracing_count() == 1

    @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
    def grow(x):
        return x * 2.0

    assert grow.get_concrete_function()(tf.ragged.constant([[1.0, 4.0], [2.0]])).to_list() == [[2.0, 8.0], [4.0]]
