"""tf.IndexedSlices with tf.sparse.mask, and tf.sparse.reduce_sum / reduce_max over axes as segment reductions:
values against NumPy, traced = eager, gradients to the values."""
import itertools

import numpy as np
import pytest

import kiln as tf

DENSE = np.array([[[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]], [[0.0, -3.0, 0.0], [4.0, 0.0, -5.0]]], np.float32)


def test_mask_drops_the_masked_slices():
    a = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]), tf.constant([12, 26, 37, 45]),
                         tf.constant([50, 2]))
    b = tf.sparse.mask(a, [12, 45])
    assert b.indices.numpy().tolist() == [26, 37] and b.values.numpy().tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert b.dense_shape.numpy().tolist() == [50, 2]
    assert str(b).startswith("IndexedSlices(indices=kiln.Tensor([26 37], shape=(2,), dtype=int32), values=")
    with pytest.raises(TypeError, match="IndexedSlices"):
        tf.sparse.mask(tf.constant([1.0]), [0])


def _masked_max(axis, keepdims):
    """NumPy: the max over the values present (missing entries take no part; none present gives -inf)."""
    present = np.where(DENSE != 0, DENSE, -np.inf)
    return np.max(present, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("axis,keepdims", list(itertools.product([0, 1, 2, -1, (0, 2), [1, 2], None], [False, True])))
def test_reductions_over_axes_match_numpy(axis, keepdims):
    st = tf.sparse.from_dense(DENSE)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    got_sum = tf.sparse.reduce_sum(st, axis=axis, keepdims=keepdims).numpy()
    got_max = tf.sparse.reduce_max(st, axis=axis, keepdims=keepdims).numpy()
    np.testing.assert_allclose(got_sum, DENSE.sum(axis=np_axis, keepdims=keepdims))
    np.testing.assert_allclose(got_max, _masked_max(np_axis, keepdims))
    traced = tf.function(lambda s: tf.sparse.reduce_sum(s, axis=axis, keepdims=keepdims))(st).numpy()
    np.testing.assert_allclose(traced, got_sum)


def test_reduce_sum_gradient_reaches_the_values():
    st = tf.sparse.from_dense(DENSE)
    values = tf.Variable(st.values)
    weights = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape() as tape:
        summed = tf.sparse.reduce_sum(tf.SparseTensor(st.indices, values, st.dense_shape), axis=0)
        loss = tf.reduce_sum(summed * weights)
    grad = tape.gradient(loss, values).numpy()
    # d loss / d value = the weight at the value's (row, col) position.
    want = [weights.numpy()[i[1], i[2]] for i in st.indices.numpy()]
    assert grad.tolist() == want
