"""kiln.distributed on several ranks, from Python: run by ctest as
`mpirun -np 2 python3 python/mpi_tests/check_distributed.py` (PYTHONPATH=build/python).
Every rank checks the same things and exits non-zero on a failure."""
import numpy as np

import kiln as tf
import kiln.distributed as kd

kd.init()
rank, size = kd.rank(), kd.size()
assert kd.initialized() and size >= 2, (rank, size)

x = tf.constant([float(rank), -float(rank), 1.0])
np.testing.assert_array_equal(kd.allreduce(x, kd.Sum).numpy(), [size * (size - 1) / 2, -size * (size - 1) / 2, size])
np.testing.assert_array_equal(kd.allreduce(x, kd.Max).numpy(), [size - 1, 0, 1])
np.testing.assert_array_equal(kd.broadcast(x, 1).numpy(), [1, -1, 1])
np.testing.assert_array_equal(kd.allgather(np.array([[rank]], np.int32)).numpy(), [[r] for r in range(size)])

# Gradients through a traced step: every rank ends with the same variable.
v = tf.Variable([float(rank + 1), 2.0])
kd.broadcast_variables([v], root=0)
np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


@tf.function
def step(data):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * data)
    (g,) = kd.average_gradients(tape.gradient(loss, [v]))
    v.assign_sub(0.1 * g)
    return g


for _ in range(3):
    g = step(tf.constant([float(rank), 1.0]))
np.testing.assert_allclose(g.numpy(), [(size - 1) / 2, 1.0])
mine = kd.allgather(tf.reshape(v, [1, 2])).numpy()
assert (mine == mine[0]).all(), mine

# A mismatch is refused with an error on every rank.
try:
    kd.average_gradients([tf.ones([2 + (rank > 0)])])
    raise AssertionError("a mismatch was not refused")
except tf.errors.FailedPreconditionError as e:
    assert "gradient 0 float32 (2,)" in str(e), str(e)

ds = kd.shard(tf.data.Dataset.range(10), size, rank)
assert [int(e) for e in ds] == list(range(rank, 10, size))
print(f"rank {rank}/{size}: kiln.distributed ok")
kd.finalize()
