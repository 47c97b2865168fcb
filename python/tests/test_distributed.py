"""kiln.distributed in a world of one (pytest never starts MPI; the several-rank
checks are python/mpi_tests, run by ctest under mpirun)."""
import numpy as np
import pytest

import kiln as tf
import kiln.distributed as kd


def test_world_of_one():
    assert not kd.initialized()
    assert (kd.rank(), kd.size(), kd.local_rank(), kd.local_size()) == (0, 1, 0, 1)
    kd.barrier()


def test_collectives_return_their_input():
    x = tf.constant([[1.0, 2.0], [3.0, -4.0]])
    for op in (kd.Sum, kd.Mean, kd.Max, kd.Min):
        np.testing.assert_array_equal(kd.allreduce(x, op).numpy(), x.numpy())
    np.testing.assert_array_equal(kd.broadcast(x, 0).numpy(), x.numpy())
    np.testing.assert_array_equal(kd.reduce_to_root(np.array([1, 2], np.int64)).numpy(), [1, 2])
    np.testing.assert_array_equal(kd.allgather([1.5, 2.5]).numpy(), [1.5, 2.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="root 1 is not a rank"):
        kd.broadcast(x, 1)
    with pytest.raises(ValueError, match="unknown reduction 'prod'"):
        kd.allreduce(x, "prod")


def test_average_gradients_keeps_none_and_traces():
    g = tf.constant([1.0, 2.0])
    out = kd.average_gradients([g, None, g * 2.0])
    assert out[1] is None
    np.testing.assert_array_equal(out[2].numpy(), [2.0, 4.0])

    @tf.function
    def f(x):
        return kd.allreduce(x * 2.0, kd.Mean) + 1.0

    np.testing.assert_array_equal(f(tf.constant([1.0, 3.0])).numpy(), [3.0, 7.0])


def test_gradient_through_allreduce():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(kd.allreduce(x, kd.Sum) * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 3.0])


def test_broadcast_variables_and_shard():
    v = tf.Variable([1.0, 2.0])
    kd.broadcast_variables([v])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    ds = kd.shard(tf.data.Dataset.range(10), 3, 1)
    assert [int(e) for e in ds] == [1, 4, 7]
    assert int(ds.cardinality()) == 3
