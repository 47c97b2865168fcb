"""gather_nd, scatter_nd, tensor_scatter_nd_update/add and the segment reductions (issue #18): values
against NumPy, gradients against central differences, traced equal to eager, TF's index errors."""
import numpy as np
import pytest

import kiln as tf
from test_matmul_einsum import check_gradients

RNG = np.random.default_rng(1818)
P = RNG.standard_normal((3, 4, 2))


def numpy_gather_nd(params, indices):
    indices = np.asarray(indices)
    return params[tuple(np.moveaxis(indices, -1, 0))]


def numpy_scatter_add(tensor, indices, updates):
    out = tensor.copy()
    np.add.at(out, tuple(np.moveaxis(np.asarray(indices), -1, 0)), updates)
    return out


@pytest.mark.parametrize("indices", [[[0, 1], [2, 3], [0, 1]], [[1], [0]], [[[0, 1, 1]], [[2, 0, 0]]], [[2, 3, 1]]])
def test_gather_nd_against_numpy(indices):
    np.testing.assert_array_equal(tf.gather_nd(P, indices).numpy(), numpy_gather_nd(P, indices))
    # Slices gathered twice get both gradients back.
    check_gradients(lambda p: tf.gather_nd(p, indices), lambda p: numpy_gather_nd(p, indices), P)
    traced = tf.function(lambda p, i: tf.gather_nd(p, i))
    np.testing.assert_array_equal(traced(tf.constant(P), tf.constant(indices, tf.int64)).numpy(),
                                  numpy_gather_nd(P, indices))


def numpy_batch_gather_nd(params, indices, batch_dims):
    if batch_dims == 0:
        return numpy_gather_nd(params, indices)
    return np.stack([numpy_batch_gather_nd(p, i, batch_dims - 1) for p, i in zip(params, indices)])


def test_gather_nd_with_batch_dims_as_tfs_doc():
    params = [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]
    np.testing.assert_array_equal(tf.gather_nd(params, [[1], [0]], batch_dims=1).numpy(), [[3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(tf.gather_nd(params, [[[1]], [[0]]], batch_dims=-2).numpy(),
                                  [[[3.0, 4.0]], [[5.0, 6.0]]])


@pytest.mark.parametrize("batch_dims, indices", [
    (1, [[[0, 1], [2, 1]], [[1, 0], [0, 0]], [[3, 1], [3, 0]]]),  # P is [3, 4, 2]: one batch dim, pairs
    (1, [[[2]], [[0]], [[3]]]),  # single indices: rows of the batch's [4, 2]
    (2, [[[1], [0], [1], [1]], [[0], [0], [1], [0]], [[1], [1], [1], [0]]]),  # two batch dims
])
def test_gather_nd_with_batch_dims_against_numpy(batch_dims, indices):
    expected = numpy_batch_gather_nd(P, np.asarray(indices), batch_dims)
    np.testing.assert_array_equal(tf.gather_nd(P, indices, batch_dims=batch_dims).numpy(), expected)
    check_gradients(lambda p: tf.gather_nd(p, indices, batch_dims=batch_dims),
                    lambda p: numpy_batch_gather_nd(p, np.asarray(indices), batch_dims), P)
    traced = tf.function(lambda p, i: tf.gather_nd(p, i, batch_dims=batch_dims),
                         input_signature=[tf.TensorSpec([None, 4, 2], tf.float64),
                                          tf.TensorSpec([None] + list(np.shape(indices))[1:], tf.int32)])
    np.testing.assert_array_equal(traced(P, tf.constant(indices)).numpy(), expected)


def test_gather_nd_batch_dims_out_of_range_is_refused():
    with pytest.raises(ValueError, match="less than rank"):
        tf.gather_nd(P, [[0], [1], [2]], batch_dims=2)
    with pytest.raises(ValueError, match="less than rank"):
        tf.gather_nd(np.ones(3), np.zeros((3, 1, 1), np.int32), batch_dims=1)


def test_scatter_nd_and_tensor_scatter():
    indices = [[1, 0], [2, 3], [1, 0]]
    updates = RNG.standard_normal((3, 2))
    shape = P.shape
    np.testing.assert_allclose(tf.scatter_nd(indices, updates, shape).numpy(),
                               numpy_scatter_add(np.zeros(shape), indices, updates), rtol=1e-15)  # duplicates add
    np.testing.assert_allclose(tf.tensor_scatter_nd_add(P, indices, updates).numpy(),
                               numpy_scatter_add(P, indices, updates), rtol=1e-15)
    updated = P.copy()
    updated[1, 0], updated[2, 3] = updates[2], updates[1]  # the last update of a slice wins
    np.testing.assert_array_equal(tf.tensor_scatter_nd_update(P, indices, updates).numpy(), updated)
    np.testing.assert_array_equal(tf.tensor_scatter_nd_update([1, 2, 3, 4], [[3], [1]], [9, 8]).numpy(), [1, 8, 3, 9])
    check_gradients(lambda t, u: tf.tensor_scatter_nd_add(t, indices, u),
                    lambda t, u: numpy_scatter_add(t, indices, u), P, updates)
    distinct = [[1, 0], [2, 3]]

    def numpy_update(t, u):
        out = t.copy()
        out[1, 0], out[2, 3] = u[0], u[1]
        return out
    check_gradients(lambda t, u: tf.tensor_scatter_nd_update(t, distinct, u), numpy_update, P, updates[:2])
    traced = tf.function(lambda t, i, u: tf.tensor_scatter_nd_update(t, i, u))
    np.testing.assert_array_equal(traced(tf.constant(P), tf.constant(indices), tf.constant(updates)).numpy(), updated)


def test_nd_index_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[3, 0\] does not index into shape"):
        tf.gather_nd(P, [[0, 0], [3, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0, 1\] = \[-1\] does not index"):
        tf.tensor_scatter_nd_add(P, [[[0], [-1]]], np.zeros((1, 2, 4, 2)))
    traced = tf.function(lambda p, i: tf.gather_nd(p, i))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"GatherNd: indices\[0\] = \[0, 9\]"):
        traced(tf.constant(P), tf.constant([[0, 9]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices.shape\[-1\] must be <= params.rank"):
        tf.gather_nd(P, [[0, 0, 0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"updates must have shape .*\(2, 4, 2\), got \(2, 4\)"):
        tf.tensor_scatter_nd_update(P, [[0], [1]], np.zeros((2, 4)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="indices must be int32 or int64"):
        tf.gather_nd(P, tf.constant([[0.0]]))


DATA = RNG.standard_normal((5, 3))


def numpy_segments(data, ids, n, reduce):
    out = np.full((n,) + data.shape[np.ndim(ids):], np.nan)
    flat_ids = np.reshape(ids, -1)
    rows = np.reshape(data, (flat_ids.size,) + data.shape[np.ndim(ids):])
    for s in range(n):
        picked = rows[flat_ids == s]
        out[s] = reduce(picked, axis=0) if len(picked) else (0 if reduce is not np.max else np.finfo(data.dtype).min)
    return out


def test_unsorted_segments_against_numpy():
    ids = [2, 0, -1, 2, 2]
    np.testing.assert_allclose(tf.math.unsorted_segment_sum(DATA, ids, 4).numpy(),
                               numpy_segments(DATA, ids, 4, np.sum), rtol=1e-14)
    np.testing.assert_array_equal(tf.math.unsorted_segment_max(DATA, ids, 4).numpy(),
                                  numpy_segments(DATA, ids, 4, np.max))
    np.testing.assert_allclose(tf.math.unsorted_segment_mean(DATA, tf.constant(ids), tf.constant(4)).numpy(),
                               numpy_segments(DATA, ids, 4, np.mean), rtol=1e-14)
    ids2 = [[1, 0, 1], [2, 2, 0]]
    data2 = RNG.standard_normal((2, 3, 2))
    np.testing.assert_allclose(tf.math.unsorted_segment_sum(data2, ids2, 3).numpy(),
                               numpy_segments(data2, ids2, 3, np.sum), rtol=1e-14)
    # Max's empty segments hold the dtype's lowest value, which drowns finite differences: its
    # gradient is checked with every segment filled.
    full = [2, 0, -1, 2, 1]
    for f, reduce, seg_ids, n in [(tf.math.unsorted_segment_sum, np.sum, ids, 4),
                                  (tf.math.unsorted_segment_max, np.max, full, 3),
                                  (tf.math.unsorted_segment_mean, np.mean, ids, 4)]:
        # Empty segments give no gradient: the reference's constant rows have none either.
        check_gradients(lambda d: f(d, seg_ids, n), lambda d: numpy_segments(d, seg_ids, n, reduce), DATA)
        traced = tf.function(lambda d, i: f(d, i, n))
        np.testing.assert_array_equal(traced(tf.constant(DATA), tf.constant(seg_ids)).numpy(),
                                      f(DATA, seg_ids, n).numpy())
    # A tie for a segment's max shares its gradient.
    with tf.GradientTape() as tape:
        x = tf.constant([1.0, 3.0, 3.0, 2.0])
        tape.watch(x)
        y = tf.reduce_sum(tf.math.unsorted_segment_max(x, [0, 0, 0, 1], 2))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 0.5, 0.5, 1.0])


def test_sorted_segments_against_numpy():
    ids = [0, 0, 1, 3, 3]
    np.testing.assert_allclose(tf.math.segment_sum(DATA, ids).numpy(), numpy_segments(DATA, ids, 4, np.sum),
                               rtol=1e-14)
    np.testing.assert_allclose(tf.math.segment_mean(DATA, ids).numpy(), numpy_segments(DATA, ids, 4, np.mean),
                               rtol=1e-14)
    for f, reduce in [(tf.math.segment_sum, np.sum), (tf.math.segment_mean, np.mean)]:
        check_gradients(lambda d: f(d, ids), lambda d: numpy_segments(d, ids, 4, reduce), DATA)
    # Traced, the number of segments comes from the ids when the graph runs.
    traced = tf.function(lambda d, i: tf.math.segment_sum(d, i))
    np.testing.assert_array_equal(traced(tf.constant(DATA), tf.constant(ids)).numpy(),
                                  tf.math.segment_sum(DATA, ids).numpy())
    assert traced(tf.constant(DATA), tf.constant([0, 0, 0, 0, 1])).shape == (2, 3)
    np.testing.assert_array_equal(tf.math.segment_sum([1, 2, 3], [0, 0, 0]).numpy(), [6])


def test_segment_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 4 is out of range \[0, 4\)"):
        tf.math.unsorted_segment_sum(DATA, [0, 4, 0, 0, 0], 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not start with segment_ids.shape"):
        tf.math.unsorted_segment_sum(DATA, [0, 1], 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        tf.math.segment_sum(DATA, [0, 1, 0, 2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids must be >= 0"):
        tf.math.segment_sum(DATA, [-1, 0, 0, 0, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be the same size as dimension 0"):
        tf.math.segment_sum(DATA, [0, 1])
    traced = tf.function(lambda d, i: tf.math.segment_sum(d, i))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        traced(tf.constant(DATA), tf.constant([1, 0, 0, 0, 0]))


def test_tensor_scatter_nd_sub_min_max_against_numpy():
    rng = np.random.default_rng(3)
    base = rng.integers(-5, 5, size=(4, 3)).astype(np.float32)
    indices = np.array([[0, 1], [2, 2], [0, 1], [3, 0]])  # a duplicate
    updates = np.array([4.0, -7.0, 9.0, -0.0], np.float32)
    expect_sub, expect_min, expect_max = base.copy(), base.copy(), base.copy()
    for (i, j), u in zip(indices, updates):
        expect_sub[i, j] -= u
        expect_min[i, j] = min(expect_min[i, j], u)
        expect_max[i, j] = max(expect_max[i, j], u)
    for fn in (lambda f, *a: f(*a), lambda f, *a: tf.function(f)(*a)):  # eager and traced
        np.testing.assert_array_equal(fn(tf.tensor_scatter_nd_sub, base, indices, updates).numpy(), expect_sub)
        np.testing.assert_array_equal(fn(tf.tensor_scatter_nd_min, base, indices, updates).numpy(), expect_min)
        np.testing.assert_array_equal(fn(tf.tensor_scatter_nd_max, base, indices, updates).numpy(), expect_max)
    rows = tf.tensor_scatter_nd_max(tf.zeros([3, 2]), [[1]], [[5.0, -1.0]])  # whole slices
    assert rows.numpy().tolist() == [[0, 0], [5, 0], [0, 0]]
    ints = tf.constant([np.iinfo(np.int32).min, 0, np.iinfo(np.int32).max], tf.int32)
    assert tf.tensor_scatter_nd_min(ints, [[2], [0]], [1, 7]).numpy().tolist() == [ints.numpy()[0], 0, 1]


def test_unsorted_segment_min_extremes_and_empty_segments():
    i32 = np.iinfo(np.int32)
    data = tf.constant([i32.min, 5, i32.max, -3], tf.int32)
    assert tf.math.unsorted_segment_min(data, [0, 0, 1, 1], 3).numpy().tolist() == [i32.min, -3, i32.max]
    floats = tf.math.unsorted_segment_min(tf.constant([3.0, -np.inf, 2.0]), [1, 1, 0], 3).numpy()
    assert floats.tolist() == [2.0, -np.inf, np.finfo(np.float32).max]  # empty: the dtype's highest, as TF
    assert tf.math.unsorted_segment_min(tf.constant([7, 2], tf.uint8), [0, 0], 2).numpy().tolist() == [2, 255]
