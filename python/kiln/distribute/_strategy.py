"""tf.distribute's strategies over what Kiln has: one replica per process, and processes joined by MPI
(kiln.distributed). The default strategy, OneDeviceStrategy and MirroredStrategy run one replica in this
process; MultiWorkerMirroredStrategy is one replica per MPI rank, its cross-replica sums kiln.distributed's
collectives. Decisions: docs/design-notes.md, "tf.distribute over kiln.distributed"."""
import contextlib
import logging
import os

from .. import distributed as _kd
from .. import nest as _nest
from . import _context
from ._context import ReduceOp, as_reduce_op
from ._input import DistributedDataset, InputContext, ValueContext, slice_for_worker
from ._options import CommunicationOptions, CrossDeviceOps, InputOptions
from ._values import DistributedValues, local_values, unwrap

_log = logging.getLogger("kiln")
_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def _k():
    import kiln
    return kiln


def _tracing():
    return _k()._C.is_tracing()


class ReplicaContext:
    """tf.distribute.ReplicaContext: where `strategy.run`'s function runs; its collectives span every replica in
    sync (every MPI rank under MultiWorkerMirroredStrategy)."""

    def __init__(self, strategy, replica_id_in_sync_group):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self):
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        return _k().constant(self._replica_id, _k().int32)

    @property
    def devices(self):
        return self._strategy.extended.worker_devices

    def all_reduce(self, reduce_op, value, options=None):
        """The SUM or MEAN over the replicas of each tensor in `value` (a nest)."""
        op = as_reduce_op(reduce_op)
        return _nest.map_structure(lambda v: self._strategy._cross_replica(op, _k().convert_to_tensor(unwrap(v))),
                                   value)

    def all_gather(self, value, axis, options=None):
        """Each tensor of `value` concatenated along `axis` over the replicas, in replica order."""
        return _nest.map_structure(lambda v: self._strategy._gather_one(unwrap(v), axis), value)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """merge_fn(strategy, *args, **kwargs) in the cross-replica context (the values are this replica's)."""
        _context.push(self._strategy, None)
        try:
            return merge_fn(self._strategy, *args, **(kwargs or {}))
        finally:
            _context.pop()

    def __repr__(self):
        return f"<ReplicaContext of {type(self._strategy).__name__}, replica {self._replica_id}>"


class _DefaultReplicaContext(ReplicaContext):
    @property
    def replica_id_in_sync_group(self):
        return 0


class StrategyExtended:
    """tf.distribute.StrategyExtended: the strategy's devices and its lower-level reductions."""

    def __init__(self, strategy, devices):
        self._strategy = strategy
        self._devices = tuple(devices)

    @property
    def worker_devices(self):
        return self._devices

    @property
    def parameter_devices(self):
        return self._devices

    @property
    def experimental_require_static_shapes(self):
        return False

    @property
    def should_checkpoint(self):
        return self._strategy._rank == 0

    should_save_summary = should_checkpoint

    @property
    def should_init(self):
        return True

    def _in_multi_worker_mode(self):
        return self._strategy._size > 1

    def variable_created_in_scope(self, v):
        return True  # a variable is a plain kiln.Variable wherever it was made

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        yield

    def reduce_to(self, reduce_op, value, destinations, options=None):
        return self._strategy.reduce(reduce_op, value, axis=None)

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce_to(reduce_op, v, d) for v, d in value_destination_pairs]

    def update(self, var, fn, args=(), kwargs=None, group=True):
        return fn(var, *args, **(kwargs or {}))

    def value_container(self, value):
        return value


class Strategy:
    """tf.distribute.Strategy: variables made under `scope()`, steps run with `run`, values combined with
    `reduce`; subclasses say how many processes (workers) take part. Kiln runs one replica per process."""

    def __init__(self, devices=(_CPU,), rank=0, size=1):
        self._rank, self._size = rank, size
        self._extended = StrategyExtended(self, devices)
        self._bucket_bytes = 25 << 20
        self._default_replica_context = None
        self._refusal = None  # why this strategy cannot run here, if it cannot

    def _check_usable(self):
        if self._refusal:
            raise NotImplementedError(self._refusal)

    # ---- the strategy's shape --------------------------------------------------------------

    @property
    def extended(self):
        return self._extended

    @property
    def num_replicas_in_sync(self):
        return self._size

    @property
    def cluster_resolver(self):
        return None

    # ---- contexts --------------------------------------------------------------------------

    @contextlib.contextmanager
    def scope(self):
        """Makes this the current strategy (TF: variables made here are distributed; in Kiln they are plain
        variables, and under MultiWorkerMirroredStrategy Keras layers start from rank 0's values)."""
        self._check_usable()
        current = _context.get_strategy()
        if _context.has_strategy() and current is not self:
            raise ValueError(f"Mixing different tf.distribute.Strategy objects: {self} is not {current}")
        replica = _context.get_replica_context() if current is self else None
        _context.push(self, replica)
        try:
            yield self
        finally:
            _context.pop()

    def _require_cross_replica(self, what):
        replica = _context.get_replica_context()
        if replica is not None and replica.strategy is self and not isinstance(replica, _DefaultReplicaContext):
            raise RuntimeError(f"Method `{what}` requires being in cross-replica context, use "
                               "get_replica_context().merge_call()")

    def run(self, fn, args=(), kwargs=None, options=None):
        """fn(*args, **kwargs) on each replica (here: this process's one), in a replica context of this strategy;
        inside a tf.function fn is converted by AutoGraph, as TF does."""
        self._check_usable()
        args = _nest.map_structure(unwrap, tuple(args))
        kwargs = _nest.map_structure(unwrap, dict(kwargs or {}))
        if _tracing():
            from ..autograph import conversion
            fn = conversion.call_target(fn)
        _context.push(self, ReplicaContext(self, self._rank))
        try:
            return fn(*args, **kwargs)
        finally:
            _context.pop()

    # ---- combining values ------------------------------------------------------------------

    def _cross_replica(self, op, tensor):
        """The SUM or MEAN of one local tensor over the replicas (the MPI ranks)."""
        if self._size == 1:
            return tensor
        return _kd.allreduce(tensor, _kd.Sum if op == ReduceOp.SUM else _kd.Mean)

    def reduce(self, reduce_op, value, axis):
        """value (per-replica, or a nest of them) summed or averaged over the replicas, and over `axis` too when
        it is not None (a mean over axis counts every replica's elements along it)."""
        op = as_reduce_op(reduce_op)
        self._check_usable()
        self._require_cross_replica("reduce")
        tf = _k()

        def one(v):
            v = tf.convert_to_tensor(unwrap(v))
            if axis is None:
                return self._cross_replica(op, v)
            total = self._cross_replica(ReduceOp.SUM, tf.reduce_sum(v, axis=axis))
            if op == ReduceOp.SUM:
                return total
            count = self._cross_replica(ReduceOp.SUM, tf.cast(tf.shape(v)[axis], total.dtype))
            return total / count
        return _nest.map_structure(one, value)

    def _gather_one(self, v, axis):
        tf = _k()
        v = tf.convert_to_tensor(v)
        if self._size == 1:
            return v
        if v.shape.rank == 0:
            raise ValueError("gather/all_gather need tensors of rank 1 or more; got a scalar")
        axis = axis % v.shape.rank
        if axis == 0:
            return _kd.allgather(v)
        perm = [axis] + [i for i in range(v.shape.rank) if i != axis]
        back = [perm.index(i) for i in range(v.shape.rank)]
        return tf.transpose(_kd.allgather(tf.transpose(v, perm)), back)

    def gather(self, value, axis):
        """Each tensor of `value` concatenated along `axis` over every replica, in replica order."""
        self._check_usable()
        self._require_cross_replica("gather")
        return _nest.map_structure(lambda v: self._gather_one(unwrap(v), axis), value)

    def experimental_local_results(self, value):
        """The values on this process's replicas, as a tuple (one here)."""
        return local_values(value)

    # ---- input -----------------------------------------------------------------------------

    def experimental_distribute_dataset(self, dataset, options=None):
        """A dataset of global batches as per-replica batches: this worker's slice of each batch (the whole batch
        with one worker)."""
        self._check_options(options)
        tf = _k()
        if not isinstance(dataset, tf.data.Dataset):
            raise ValueError(f"`dataset` must be a `tf.data.Dataset`, got {type(dataset).__name__}")
        local = dataset
        if self._size > 1:
            rank, size = self._rank, self._size
            for spec in _nest.flatten(dataset.element_spec):
                if getattr(spec, "shape", None) is not None and spec.shape.rank == 0:
                    raise ValueError("experimental_distribute_dataset splits each batch among the workers: batch the "
                                     f"dataset first (its elements include a scalar, {spec})")

            def take_slice(*parts):
                out = _nest.map_structure(lambda t: slice_for_worker(t, rank, size), parts)
                return out if len(parts) > 1 else out[0]
            local = dataset.map(take_slice)
        return DistributedDataset(local, self)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """dataset_fn(InputContext) on this worker: one input pipeline per worker, which batches per replica."""
        self._check_options(options)
        tf = _k()
        context = InputContext(num_input_pipelines=self._size, input_pipeline_id=self._rank,
                               num_replicas_in_sync=self.num_replicas_in_sync)
        dataset = dataset_fn(context)
        if not isinstance(dataset, tf.data.Dataset):
            raise ValueError(f"`dataset_fn` must return a `tf.data.Dataset`, got {type(dataset).__name__}")
        return DistributedDataset(dataset, self)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def experimental_distribute_values_from_function(self, value_fn):
        """value_fn(ValueContext) for this process's replica."""
        self._check_usable()
        return value_fn(ValueContext(self._rank, self.num_replicas_in_sync))

    def _check_options(self, options):
        self._check_usable()
        if options is not None and not isinstance(options, InputOptions):
            raise ValueError(f"`options` must be a `tf.distribute.InputOptions`, got {options!r}")

    # ---- what Keras and the optimizers call ----------------------------------------------------

    def _aggregate_gradients(self, gradients):
        """The SUM over replicas of each gradient (None stays None): Keras' optimizers aggregate so, the loss
        having been divided by the number of replicas (or the global batch size)."""
        if self._size == 1:
            return list(gradients)
        return _kd.average_gradients(gradients, self._bucket_bytes, _kd.Sum)

    def _initial_value(self, value):
        """A new variable's initial value: rank 0's under several workers, as TF's MultiWorkerMirroredStrategy
        broadcasts it."""
        return value if self._size == 1 else _kd.broadcast(value, 0)

    def _sum_over_workers(self, tensor):
        return self._cross_replica(ReduceOp.SUM, tensor)


class _DefaultDistributionStrategy(Strategy):
    """What tf.distribute.get_strategy() returns outside every scope: one replica, no distribution."""

    def __init__(self):
        super().__init__()
        self._default_replica_context = _DefaultReplicaContext(self, 0)


def _device_list(devices):
    from .._device import _device_type
    names = []
    for d in devices:
        d = d if isinstance(d, str) else getattr(d, "name", str(d))
        kind = _device_type(d)
        if kind not in (None, "CPU"):
            _log.warning("%s: Kiln runs on the CPU only; the replica for %r runs there.", "tf.distribute", d)
        names.append(d)
    if len(set(names)) != len(names):
        raise ValueError(f"No duplicates allowed in `devices` argument: {devices}")
    return names


class OneDeviceStrategy(Strategy):
    """tf.distribute.OneDeviceStrategy: one replica on `device` (the CPU: a GPU name runs there, with a warning)."""

    def __init__(self, device):
        (name,) = _device_list([device])
        super().__init__(devices=(name,))


class MirroredStrategy(Strategy):
    """tf.distribute.MirroredStrategy: synchronous replicas on this machine's devices. Kiln's one device, the CPU,
    gives one replica. A strategy over several devices (logical CPUs included) can be made, as in TF, but using it
    raises NotImplementedError: Kiln runs one replica per process (MultiWorkerMirroredStrategy under mpirun gives
    several)."""

    def __init__(self, devices=None, cross_device_ops=None):
        if cross_device_ops is not None and not isinstance(cross_device_ops, CrossDeviceOps):
            raise ValueError(f"`cross_device_ops` must be a tf.distribute.CrossDeviceOps, got {cross_device_ops!r}")
        if devices is None:
            names = [_CPU]
        else:
            names = _device_list(list(devices))
            if not names:
                raise ValueError("Got an empty `devices` list and unable to recognize any local devices.")
        super().__init__(devices=names)
        if len(names) > 1:
            self._size = len(names)  # TF's count; the strategy refuses to run
            self._refusal = (f"MirroredStrategy over {len(names)} devices: Kiln runs one replica per process (all "
                             "logical devices share the one CPU); use tf.distribute.MultiWorkerMirroredStrategy under "
                             "mpirun for several replicas")
        _log.info("Using MirroredStrategy with devices %s", tuple(names))


class CentralStorageStrategy(Strategy):
    """tf.distribute.experimental.CentralStorageStrategy: variables on one device, compute replicated on the
    others; Kiln's one device is both, so it is one replica, as TF's on a machine without GPUs."""

    def __init__(self, compute_devices=None, parameter_device=None):
        names = _device_list(list(compute_devices)) if compute_devices else [_CPU]
        if parameter_device is not None:
            _device_list([parameter_device])
        super().__init__(devices=names)
        if len(names) > 1:
            self._size = len(names)
            self._refusal = (f"CentralStorageStrategy over {len(names)} compute devices: Kiln runs one replica per "
                             "process")


def _under_mpirun():
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))


class _ClusterSpec:
    """What strategy.cluster_resolver.cluster_spec() gives (tf.train.ClusterSpec's reading side): the jobs and
    their tasks, here the one "worker" job of the MPI ranks."""

    def __init__(self, jobs):
        self._jobs = {name: list(tasks) for name, tasks in jobs.items()}

    def as_dict(self):
        return {name: list(tasks) for name, tasks in self._jobs.items()}

    @property
    def jobs(self):
        return list(self._jobs)

    def num_tasks(self, job_name):
        return len(self._jobs[job_name])

    def task_indices(self, job_name):
        return list(range(len(self._jobs[job_name])))

    def __bool__(self):
        return bool(self._jobs)


class _MpiClusterResolver:
    """strategy.cluster_resolver under MultiWorkerMirroredStrategy: the task is this MPI rank ("worker" i; rank 0
    is the chief's work, as in TF's multi-worker Keras tutorial)."""

    def __init__(self, rank, size):
        self.task_type, self.task_id = "worker", rank
        self.rpc_layer, self.environment = None, ""
        self._size = size

    def cluster_spec(self):
        return _ClusterSpec({"worker": [f"mpi-rank-{i}" for i in range(self._size)]})

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {}


class MultiWorkerMirroredStrategy(Strategy):
    """tf.distribute.MultiWorkerMirroredStrategy over kiln.distributed: each MPI rank (`mpirun -np N python3 ...`)
    is a worker with one replica; gradients, reductions and gathers go through MPI. The workers come from mpirun,
    not from TF_CONFIG or a cluster resolver (Kiln has no gRPC cluster runtime). Outside mpirun it is one worker."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        if cluster_resolver is not None:
            raise NotImplementedError("Kiln's workers are MPI ranks: launch the program under mpirun and pass no "
                                      "cluster_resolver")
        options = communication_options or CommunicationOptions()
        if not isinstance(options, CommunicationOptions):
            raise ValueError(f"`communication_options` must be a tf.distribute.experimental.CommunicationOptions, "
                             f"got {options!r}")
        if "TF_CONFIG" in os.environ:
            _log.warning("MultiWorkerMirroredStrategy: TF_CONFIG is ignored; Kiln's workers are the MPI ranks.")
        if _under_mpirun() and _kd.built_with_mpi() and not _kd.initialized():
            _kd.init(options.timeout_seconds)
        rank, size = _kd.rank(), _kd.size()
        super().__init__(devices=(f"/job:worker/replica:0/task:{rank}/device:CPU:0",), rank=rank, size=size)
        if options.bytes_per_pack:
            self._bucket_bytes = int(options.bytes_per_pack)
        self._communication_options = options
        self._cluster_resolver = _MpiClusterResolver(rank, size)

    @property
    def cluster_resolver(self):
        return self._cluster_resolver


class _ExperimentalMultiWorkerMirroredStrategy(MultiWorkerMirroredStrategy):
    """tf.distribute.experimental.MultiWorkerMirroredStrategy (deprecated): takes `communication`."""

    def __init__(self, communication=None, cluster_resolver=None):
        from ._options import CommunicationImplementation
        options = CommunicationOptions(implementation=communication or CommunicationImplementation.AUTO)
        super().__init__(cluster_resolver=cluster_resolver, communication_options=options)


__all__ = ["Strategy", "StrategyExtended", "ReplicaContext", "OneDeviceStrategy", "MirroredStrategy",
           "MultiWorkerMirroredStrategy", "DistributedValues"]
