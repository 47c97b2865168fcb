"""tf.shape of a RaggedTensor: TF 2.15's DynamicRaggedShape (printing, rank, uniform dims by index, slices) and
the ops that take one (reshape, zeros, ones, fill); eager and traced agree."""
import pytest

import kiln as tf


def test_printing_rank_and_indexing():
    rt = tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]])
    shape = tf.shape(rt)
    assert repr(shape) == "<DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>"
    assert shape.rank == 2 and shape.num_row_partitions == 1 and shape.dtype == tf.int32
    assert repr(shape[0]) == "<kiln.Tensor: shape=(), dtype=int32, numpy=4>"
    with pytest.raises(ValueError, match="Index 1 is not uniform"):
        shape[1]
    assert repr(shape[:1]) == "<DynamicRaggedShape lengths=[4] num_row_partitions=0>"
    assert tf.shape(rt, out_type=tf.int64)[0].dtype == tf.int64
    inner = tf.shape(tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1))
    assert repr(inner) == "<DynamicRaggedShape lengths=[2, (1, 2), 2] num_row_partitions=1>"
    assert int(inner[2]) == int(inner[-1]) == 2 and inner.rank == 3
    assert repr(inner[2:]) == "<DynamicRaggedShape lengths=[2] num_row_partitions=0>"
    with pytest.raises(ValueError, match="slice begins at 0"):
        inner[1:]


def test_construction():
    built = tf.experimental.DynamicRaggedShape(
        row_partitions=[tf.experimental.RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[10, 8])
    assert repr(built) == "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>"
    lengths = tf.experimental.DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])
    assert repr(lengths) == "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>"
    uniform = tf.experimental.DynamicRaggedShape.from_lengths([2, 3, (1, 0, 2, 1, 1, 1)])
    assert repr(uniform) == "<DynamicRaggedShape lengths=[2, 3, (1, 0, 2, 1, 1, 1)] num_row_partitions=2>"
    assert int(uniform[1]) == 3 and uniform.is_uniform(1) and not uniform.is_uniform(2)


def test_shaped_creation_ops():
    shape = tf.shape(tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]]))
    x = tf.constant([["a", "b"], ["c", "d"], ["e", "f"]])
    assert tf.reshape(x, shape).to_list() == [[b"a"], [b"b", b"c", b"d"], [], [b"e", b"f"]]
    assert tf.zeros(shape).to_list() == [[0.0], [0.0] * 3, [], [0.0] * 2]
    assert tf.ones(shape, tf.int32).to_list() == [[1], [1] * 3, [], [1] * 2]
    assert tf.fill(shape, 7).to_list() == [[7], [7] * 3, [], [7] * 2]
    assert tf.fill(dims=shape, value=1.5).to_list() == [[1.5], [1.5] * 3, [], [1.5] * 2]  # TF's keywords
    assert tf.zeros(shape=shape, dtype=tf.int64).dtype == tf.int64
    assert tf.fill(dims=[2], value=3.0).numpy().tolist() == [3.0, 3.0]  # dense shapes as before


def test_traced_shape_equals_eager():
    rt = tf.ragged.constant([[1.0], [2.0, 3.0], []])
    f = tf.function(lambda r: tf.shape(r)[0] * 10)
    assert int(f(rt)) == int(tf.shape(rt)[0] * 10) == 30
    g = tf.function(lambda r: tf.zeros(tf.shape(r)) + r)
    assert g(rt).to_list() == rt.to_list()
