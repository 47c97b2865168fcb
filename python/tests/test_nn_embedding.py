"""tf.nn.embedding_lookup (sharded "div" params, ragged ids, max_norm), embedding_lookup_sparse and
safe_embedding_lookup_sparse against NumPy references and TF's documented examples, gradients, errors, and
eager = traced."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients

RNG = np.random.default_rng(3)


def div_shards(table, n):
    """TF's "div" split of a table's rows into n shards: the first rows % n shards one row longer."""
    rows = table.shape[0]
    sizes = [rows // n + (1 if p < rows % n else 0) for p in range(n)]
    return np.split(table, np.cumsum(sizes)[:-1])


def test_lookup_dense_ids_of_any_rank():
    table = RNG.normal(size=(7, 3))
    ids = np.array([[0, 6, 2], [2, 2, 5]])
    np.testing.assert_array_equal(tf.nn.embedding_lookup(tf.constant(table), tf.constant(ids)).numpy(), table[ids])
    assert tf.nn.embedding_lookup(tf.constant(table), tf.constant(4)).shape == (3,)


@pytest.mark.parametrize("rows, shards", [(13, 5), (12, 3), (7, 7), (10, 4)])
def test_sharded_params_are_div_strategy(rows, shards):
    table = RNG.normal(size=(rows, 2))
    ids = np.arange(rows)[::-1].reshape(1, -1)
    parts = [tf.constant(s) for s in div_shards(table, shards)]
    np.testing.assert_array_equal(tf.nn.embedding_lookup(parts, tf.constant(ids)).numpy(), table[ids])


def test_thirteen_ids_over_five_shards_as_tf_docs():
    # TF's docs: 13 ids over 5 shards are [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10], [11, 12]]
    parts = [tf.constant(np.array(p, np.float64)[:, None]) for p in
             ([0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10], [11, 12])]
    got = tf.nn.embedding_lookup(parts, tf.constant(np.arange(13))).numpy()
    np.testing.assert_array_equal(got[:, 0], np.arange(13))


def test_ragged_ids_give_ragged_embeddings():
    table = RNG.normal(size=(5, 2))
    ids = tf.ragged.constant([[0, 4], [], [3, 3, 1]])
    got = tf.nn.embedding_lookup(tf.constant(table), ids)
    assert isinstance(got, tf.RaggedTensor)
    assert got.row_splits.numpy().tolist() == [0, 2, 2, 5]
    np.testing.assert_array_equal(got.flat_values.numpy(), table[[0, 4, 3, 3, 1]])


def test_max_norm_clips_each_row():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [6.0, 8.0]])
    got = tf.nn.embedding_lookup(tf.constant(table), tf.constant([[0, 1], [2, 3]]), max_norm=1.0).numpy()
    np.testing.assert_allclose(got, [[[0.6, 0.8], [0.3, 0.4]], [[0.0, 0.0], [0.6, 0.8]]], rtol=1e-12)
    # the norm is per embedding even for multi-dimensional embeddings
    cube = RNG.normal(size=(3, 2, 2))
    got = tf.nn.embedding_lookup(tf.constant(cube), tf.constant([1, 2]), max_norm=0.5).numpy()
    for row, idx in zip(got, [1, 2]):
        norm = np.linalg.norm(cube[idx])
        np.testing.assert_allclose(row, cube[idx] * min(1.0, 0.5 / norm), rtol=1e-12)


def test_lookup_gradient_and_variable_params():
    table = tf.constant(RNG.normal(size=(4, 3)))
    ids = tf.constant([3, 0, 3])
    check_gradients(lambda t: tf.reduce_sum(tf.nn.embedding_lookup(t, ids, max_norm=0.7) ** 2), [table])
    var = tf.Variable(table)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(var, ids))
    grad = tape.gradient(loss, var)
    np.testing.assert_array_equal(tf.convert_to_tensor(grad).numpy()[:, 0], [1, 0, 0, 2])


def test_lookup_errors():
    with pytest.raises(ValueError, match="Need at least one param"):
        tf.nn.embedding_lookup([], tf.constant([0]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.embedding_lookup(tf.zeros([3, 2]), tf.constant([3]))


PARAMS = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)


def sparse(indices, values, shape, dtype=None):
    return tf.SparseTensor(indices=indices, values=tf.constant(values, dtype), dense_shape=shape)


def test_lookup_sparse_tf_doc_examples():
    sp_ids = sparse([[0, 0], [0, 1], [1, 0], [2, 0]], [0, 1, 3, 2], (3, 2), tf.int64)
    got = tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), sp_ids, sp_weights=None, combiner="sum")
    np.testing.assert_array_equal(got.numpy(), [[4, 6], [7, 8], [5, 6]])
    weights = sparse([[0, 0], [0, 1], [1, 0], [2, 0]], [0.1, 1.0, 0.5, 2.0], (3, 2))
    got = tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), sp_ids, sp_weights=weights, combiner="sum")
    np.testing.assert_allclose(got.numpy(), [[3.1, 4.2], [3.5, 4.0], [10.0, 12.0]], rtol=1e-6)


def ref_combine(table, rows, ids, weights, n_rows, combiner):
    out = np.zeros((n_rows, table.shape[1]))
    for r in range(n_rows):
        sel = [k for k in range(len(ids)) if rows[k] == r]
        if not sel:
            continue
        w = np.array([weights[k] for k in sel])
        total = (table[[ids[k] for k in sel]] * w[:, None]).sum(0)
        denom = {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w ** 2).sum())}[combiner]
        out[r] = total / denom if denom else 0.0
    return out


@pytest.mark.parametrize("combiner", ["mean", "sqrtn", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_lookup_sparse_combiners(combiner, weighted):
    table = RNG.normal(size=(6, 3))
    indices = [[0, 0], [0, 2], [1, 1], [3, 0], [3, 1], [3, 2]]  # row 2 empty: a zero row
    ids = [5, 1, 0, 2, 2, 4]
    weights = RNG.uniform(0.5, 2.0, size=6) if weighted else np.ones(6)
    sp_w = sparse(indices, weights, (4, 3)) if weighted else None
    got = tf.nn.embedding_lookup_sparse(tf.constant(table), sparse(indices, ids, (4, 3), tf.int64), sp_w,
                                        combiner=combiner).numpy()
    np.testing.assert_allclose(got, ref_combine(table, [i[0] for i in indices], ids, weights, 4, combiner),
                               rtol=1e-12)
    # a RaggedTensor of ids is the same lookup
    ragged = tf.RaggedTensor.from_value_rowids(tf.constant(ids, tf.int64), tf.constant([0, 0, 1, 3, 3, 3], tf.int64),
                                               nrows=4)
    rw = None if not weighted else tf.RaggedTensor.from_value_rowids(
        tf.constant(weights), tf.constant([0, 0, 1, 3, 3, 3], tf.int64), nrows=4)
    np.testing.assert_allclose(tf.nn.embedding_lookup_sparse(tf.constant(table), ragged, rw, combiner=combiner).numpy(),
                               got, rtol=1e-12)


def test_lookup_sparse_rows_counted_as_tf_segment_sum():
    # TF's segment_sum stops at the last row that holds an id: a trailing empty row is not in the output
    sp_ids = sparse([[0, 0], [1, 0]], [1, 2], (4, 2), tf.int64)
    assert tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), sp_ids, None).shape == (2, 2)


def test_lookup_sparse_gradient_and_errors():
    sp_ids = sparse([[0, 0], [0, 1], [1, 0]], [0, 3, 3], (2, 2), tf.int64)
    weights = tf.constant([0.5, 2.0, 1.5])
    check_gradients(lambda t, w: tf.reduce_sum(tf.nn.embedding_lookup_sparse(
        t, sp_ids, tf.SparseTensor(sp_ids.indices, w, sp_ids.dense_shape), combiner="sqrtn") ** 2),
        [tf.constant(RNG.normal(size=(4, 2))), tf.cast(weights, tf.float64)])
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), sp_ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), tf.constant([[0]]), None)
    with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
        tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), sp_ids, tf.constant([1.0]))


def test_safe_lookup_tf_doc_example():
    # TF's docs: an id -1 is left out, leaving its row empty: zeros without default_id, params[0] with 0
    indices = [[0, 0], [0, 1], [1, 0], [2, 3]]
    ids = sparse(indices, [1, 3, -1, 1], (3, 4), tf.int64)
    weights = sparse(indices, [2.0, 0.5, 1.0, 3.0], (3, 4))
    table = RNG.normal(size=(10, 4)).astype(np.float32)
    got = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), ids, weights, default_id=0).numpy()
    np.testing.assert_allclose(got, [(table[1] * 2 + table[3] * 0.5) / 2.5, table[0], table[1]], rtol=1e-6)
    got = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), ids, weights).numpy()
    np.testing.assert_allclose(got, [(table[1] * 2 + table[3] * 0.5) / 2.5, np.zeros(4), table[1]], rtol=1e-6)


def test_safe_lookup_prunes_weights_unless_sum():
    indices = [[0, 0], [0, 1], [1, 0]]
    ids = sparse(indices, [1, 2, 3], (3, 2), tf.int64)
    weights = sparse(indices, [1.0, -1.0, 0.0], (3, 2))
    table = RNG.normal(size=(4, 2))
    mean = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), ids, weights, default_id=2).numpy()
    np.testing.assert_allclose(mean, [table[1], table[2], table[2]], rtol=1e-12)  # rows 1, 2 empty -> default
    total = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), ids, weights, combiner="sum").numpy()
    np.testing.assert_allclose(total, [table[1] - table[2], np.zeros(2), np.zeros(2)], rtol=1e-12)


def test_safe_lookup_higher_rank_ids_and_shards():
    table = RNG.normal(size=(7, 3))
    indices = [[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 2]]
    ids = sparse(indices, [6, 0, 3, 5], (2, 2, 3), tf.int64)
    got = tf.nn.safe_embedding_lookup_sparse([tf.constant(s) for s in div_shards(table, 3)], ids,
                                             combiner="sqrtn", max_norm=1.0)
    assert got.shape == (2, 2, 3)
    clipped = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1.0)
    ref = np.zeros((2, 2, 3))
    ref[0, 0] = (clipped[6] + clipped[0]) / np.sqrt(2)
    ref[1, 1] = (clipped[3] + clipped[5]) / np.sqrt(2)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tf.nn.safe_embedding_lookup_sparse([], ids)


def test_eager_equals_traced():
    table = tf.constant(RNG.normal(size=(6, 3)).astype(np.float32))
    ids = tf.constant([[1, 5], [0, 0]])

    @tf.function
    def traced(t, i):
        return tf.nn.embedding_lookup([t[:3], t[3:]], i, max_norm=0.5)

    eager = tf.nn.embedding_lookup([table[:3], table[3:]], ids, max_norm=0.5)
    np.testing.assert_allclose(traced(table, ids).numpy(), eager.numpy(), rtol=1e-6)
    sp_ids = sparse([[0, 0], [0, 1], [2, 0]], [1, -1, 4], (3, 2), tf.int64)

    @tf.function
    def traced_sparse(t):
        return (tf.nn.safe_embedding_lookup_sparse(t, sp_ids, default_id=5),
                tf.nn.embedding_lookup_sparse(t, valid_ids, None, combiner="sqrtn"))

    valid_ids = sparse([[0, 0], [0, 1], [2, 0]], [1, 3, 4], (3, 2), tf.int64)
    eager = (tf.nn.safe_embedding_lookup_sparse(table, sp_ids, default_id=5),
             tf.nn.embedding_lookup_sparse(table, valid_ids, None, combiner="sqrtn"))
    for e, g in zip(eager, traced_sparse(table)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)
