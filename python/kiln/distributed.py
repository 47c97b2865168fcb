"""kiln.distributed: data-parallel training over MPI, the Python face of C++'s
kiln::distributed (the same functions, names and defaults), in Horovod's style.

    import kiln as tf
    import kiln.distributed as kd

    kd.init()                                        # under mpirun -np N python3 train.py
    ds = kd.shard(ds, kd.size(), kd.rank()).shuffle(1000).batch(50)
    kd.broadcast_variables(model.variables, root=0)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = kd.average_gradients(tape.gradient(loss, model.trainable_variables))
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

The collectives are ops with gradients, eager or inside kiln.function; in a
traced step each bucket of gradients is sent while the rest of the backward
pass computes. Every rank must run the same collectives in the same order.
Without init() the world is one process (rank 0 of 1) and the collectives
return their input, so the same script runs alone.
"""
from . import _C

__all__ = ["init", "finalize", "initialized", "built_with_mpi", "rank", "size", "local_rank", "local_size",
           "barrier", "allreduce", "broadcast", "reduce_to_root", "allgather", "average_gradients",
           "broadcast_variables", "shard", "stats", "Sum", "Mean", "Max", "Min"]

_d = _C.distributed

# Reductions, as strings (kiln::distributed::Reduction).
Sum, Mean, Max, Min = "sum", "mean", "max", "min"


def init(timeout_seconds=None):
    """Initializes MPI (once; later calls do nothing). `timeout_seconds`: how long a
    collective may wait for the other ranks before the job is aborted naming it
    (default: $KILN_DISTRIBUTED_TIMEOUT, else 300)."""
    _d.init(float(timeout_seconds or 0.0))


def finalize():
    """Waits for every rank, then shuts MPI down (also done at exit)."""
    _d.finalize()


def initialized():
    return _d.initialized()


def built_with_mpi():
    return _d.built_with_mpi()


def rank():
    return _d.rank()


def size():
    return _d.size()


def local_rank():
    return _d.local_rank()


def local_size():
    return _d.local_size()


def barrier():
    _d.barrier()


def allreduce(tensor, op=Sum):
    """The elementwise reduction of `tensor` over all ranks ("sum", "mean", "max", "min")."""
    return _d.allreduce(tensor, op)


def broadcast(tensor, root=0):
    """Root's `tensor` on every rank."""
    return _d.broadcast(tensor, int(root))


def reduce_to_root(tensor, root=0):
    """The sum over ranks on root, zeros elsewhere."""
    return _d.reduce_to_root(tensor, int(root))


def allgather(tensor):
    """Every rank's `tensor` (same shape everywhere) concatenated along dim 0."""
    return _d.allgather(tensor)


def average_gradients(gradients, bucket_bytes=25 << 20, op=Mean):
    """The mean over ranks of each gradient (None stays None), sent in buckets of at most
    `bucket_bytes`, last gradients first."""
    return _d.average_gradients(list(gradients), int(bucket_bytes), op)


def broadcast_variables(variables, root=0):
    """Sets every variable to root's value (call once, eagerly, after building the model)."""
    _d.broadcast_variables(list(variables), int(root))


def shard(dataset, num_shards, index):
    """Every `num_shards`-th element of a kiln.data.Dataset from `index` (tf.data's shard)."""
    return dataset.shard(num_shards, index)


def stats():
    """{'collectives', 'bytes', 'wait_seconds'}: what this process's collectives cost so far."""
    return _d.stats()
