"""tf.distribute over Kiln's data-parallel training (kiln.distributed, MPI): the strategies, their contexts,
distributed input and values. One replica per process; MultiWorkerMirroredStrategy spans the MPI ranks.
What differs from TF and why: docs/design-notes.md, "tf.distribute over kiln.distributed"."""
import types as _types

from ._context import (ReduceOp, experimental_set_strategy, get_replica_context, get_strategy,  # noqa: F401
                       has_strategy, in_cross_replica_context)
from ._input import DistributedDataset, DistributedIterator, InputContext, ValueContext  # noqa: F401
from ._options import (CollectiveCommunication, CollectiveHints, CommunicationImplementation,  # noqa: F401
                       CommunicationOptions, CrossDeviceOps, HierarchicalCopyAllReduce, InputOptions,
                       InputReplicationMode, NcclAllReduce, ReductionToOneDevice, RunOptions)
from ._strategy import (CentralStorageStrategy, MirroredStrategy, MultiWorkerMirroredStrategy, OneDeviceStrategy,  # noqa: F401
                        ReplicaContext, Strategy, StrategyExtended,
                        _ExperimentalMultiWorkerMirroredStrategy)
from ._values import DistributedValues  # noqa: F401

experimental = _types.SimpleNamespace(
    CommunicationImplementation=CommunicationImplementation, CommunicationOptions=CommunicationOptions,
    CollectiveCommunication=CollectiveCommunication, CollectiveHints=CollectiveHints, ValueContext=ValueContext,
    MultiWorkerMirroredStrategy=_ExperimentalMultiWorkerMirroredStrategy,
    CentralStorageStrategy=CentralStorageStrategy)

__all__ = ["Strategy", "StrategyExtended", "ReplicaContext", "OneDeviceStrategy", "MirroredStrategy",
           "MultiWorkerMirroredStrategy", "ReduceOp", "InputContext", "InputOptions", "InputReplicationMode",
           "RunOptions", "DistributedDataset", "DistributedIterator", "DistributedValues", "CrossDeviceOps",
           "NcclAllReduce", "HierarchicalCopyAllReduce", "ReductionToOneDevice", "get_strategy", "has_strategy",
           "in_cross_replica_context", "get_replica_context", "experimental_set_strategy", "experimental"]
