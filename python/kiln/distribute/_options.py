"""The options objects of tf.distribute: InputOptions, InputReplicationMode, RunOptions, CommunicationOptions and
the cross-device-ops classes. Kiln keeps their fields; what each changes here is in docs/design-notes.md
("tf.distribute over kiln.distributed"): CommunicationOptions' timeout and pack size reach the MPI collectives,
the rest is accepted and has no effect (one replica per process, no devices to place data on, no NCCL)."""
import collections
import enum


class InputReplicationMode(enum.Enum):
    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class InputOptions(collections.namedtuple("InputOptions", [
        "experimental_fetch_to_device", "experimental_replication_mode", "experimental_place_dataset_on_device",
        "experimental_per_replica_buffer_size"])):
    """tf.distribute.InputOptions (accepted; Kiln has no device to prefetch to)."""

    def __new__(cls, experimental_fetch_to_device=None, experimental_replication_mode=InputReplicationMode.PER_WORKER,
                experimental_place_dataset_on_device=False, experimental_per_replica_buffer_size=1):
        if experimental_fetch_to_device is None:
            experimental_fetch_to_device = True
        return super().__new__(cls, experimental_fetch_to_device, experimental_replication_mode,
                               experimental_place_dataset_on_device, experimental_per_replica_buffer_size)


class RunOptions(collections.namedtuple("RunOptions", [
        "experimental_enable_dynamic_batch_size", "experimental_bucketizing_dynamic_shape",
        "experimental_xla_options"])):
    """tf.distribute.RunOptions (TPU options: accepted, no effect)."""

    def __new__(cls, experimental_enable_dynamic_batch_size=True, experimental_bucketizing_dynamic_shape=False,
                experimental_xla_options=None):
        return super().__new__(cls, experimental_enable_dynamic_batch_size, experimental_bucketizing_dynamic_shape,
                               experimental_xla_options)


class CommunicationImplementation(enum.Enum):
    """tf.distribute.experimental.CommunicationImplementation: Kiln's collectives are MPI's whatever is chosen."""
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CollectiveCommunication = CommunicationImplementation


class CommunicationOptions:
    """tf.distribute.experimental.CommunicationOptions. `timeout_seconds` becomes kiln.distributed's collective
    timeout and `bytes_per_pack` the gradient bucket size; `implementation` is accepted (MPI does the work)."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None, implementation=CommunicationImplementation.AUTO):
        if bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {bytes_per_pack}.")
        if isinstance(implementation, str):
            implementation = CommunicationImplementation(implementation.upper())
        if not isinstance(implementation, CommunicationImplementation):
            raise ValueError("implementation should be a tf.distribute.experimental.CommunicationImplementation, got "
                             f"{implementation!r}")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation

    def merge(self, options):
        merged = CommunicationOptions(self.bytes_per_pack, self.timeout_seconds, self.implementation)
        for field in ("bytes_per_pack", "timeout_seconds"):
            if getattr(options, field):
                setattr(merged, field, getattr(options, field))
        if options.implementation != CommunicationImplementation.AUTO:
            merged.implementation = options.implementation
        return merged


class CollectiveHints(CommunicationOptions):
    """tf.distribute.experimental.CollectiveHints (deprecated: CommunicationOptions)."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None):
        super().__init__(bytes_per_pack, timeout_seconds)


class CrossDeviceOps:
    """The base of MirroredStrategy's `cross_device_ops`; with one replica per process there is nothing to
    combine across devices, so every kind is accepted and none is used."""

    def __init__(self, *args, **kwargs):
        self._args, self._kwargs = args, kwargs


class NcclAllReduce(CrossDeviceOps):
    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is specified")
        super().__init__(num_packs=num_packs)


class HierarchicalCopyAllReduce(CrossDeviceOps):
    def __init__(self, num_packs=1):
        super().__init__(num_packs=num_packs)


class ReductionToOneDevice(CrossDeviceOps):
    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        super().__init__(reduce_to_device=reduce_to_device, accumulation_fn=accumulation_fn)
