"""What Keras does under a tf.distribute strategy (Keras 2.15's distributed fit), in one place: the model keeps the
strategy it was made under; its steps run in that strategy's replica context; compiled losses are divided by the
number of replicas and optimizers sum the replicas' gradients; metrics are read summed over the replicas; new
weights start from rank 0's values; and fit/evaluate give each worker its slice of every global batch. With one
replica (the default strategy, MirroredStrategy, one worker) all of it is the identity."""
import functools

from .. import _C
from .. import nest as _nest
from ..distribute import _context
from ..distribute._input import DistributedDataset, slice_for_worker
from ..distribute._strategy import ReplicaContext
from ._data_adapter import _DataWrapper


def creation_strategy():
    """The strategy a model made now belongs to (None: the default one)."""
    return _context.get_strategy() if _context.has_strategy() else None


def _distributed(strategy):
    return strategy is not None and strategy.num_replicas_in_sync > 1


def in_replica_context(strategy, step):
    """`step` run as strategy.run would run it (Keras runs each step in strategy.run); under the default strategy
    `step` itself, so a step adds no per-batch work without a strategy."""
    if strategy is None or strategy is _context.default_strategy():
        return step
    replica = ReplicaContext(strategy, strategy._rank)  # one per step function, not one per batch

    def step_in_replica(*args):
        _context.push(strategy, replica)
        try:
            return step(*args)
        finally:
            _context.pop()
    return step_in_replica


def _replica_strategy():
    """The strategy of the replica context we are in, when it has several replicas."""
    replica = _context.get_replica_context()
    strategy = replica.strategy if replica is not None else None
    return strategy if _distributed(strategy) else None


def scale_loss(loss):
    """Keras' scale_loss_for_distribution: the replicas' gradients are summed, so each replica's loss is divided
    by their number."""
    strategy = _replica_strategy()
    if strategy is None:
        return loss
    return _C.multiply(loss, _C.constant(1.0 / strategy.num_replicas_in_sync, loss.dtype._enum))


def aggregate_gradients(gradients):
    """The gradients summed over the replicas (Keras' optimizers aggregate in the replica context)."""
    strategy = _replica_strategy()
    return list(gradients) if strategy is None else strategy._aggregate_gradients(gradients)


def initial_value(value):
    """A new weight's value: rank 0's under a strategy of several workers (TF broadcasts initial values)."""
    strategy = _context.get_strategy()
    return strategy._initial_value(value) if _distributed(strategy) else value


def summed_over_replicas(result):
    """A Metric subclass's `result`, read from its variables summed over the replicas when its strategy (the one
    it was made under, else the current one) has several: Keras' metric variables are SUM-aggregated sync-on-read
    variables and its result() reads them aggregated, in a replica context too. The replica's own counts are put
    back after, for its next updates. Every replica must then call result() (a collective), as in TF."""
    @functools.wraps(result)
    def wrapper(metric, *args, **kwargs):
        strategy = metric.__dict__.get("_distribution_strategy") or _context.get_strategy()
        if not _distributed(strategy) or metric.__dict__.get("_reading_summed"):
            return result(metric, *args, **kwargs)  # one replica, or a subclass's result calling its base's
        variables = list(metric.variables)
        local = [v.read_value() for v in variables]
        for v, value in zip(variables, local):
            v.assign(strategy._sum_over_workers(value))
        metric.__dict__["_reading_summed"] = True
        try:
            out = result(metric, *args, **kwargs)
        finally:
            metric.__dict__["_reading_summed"] = False
        for v, value in zip(variables, local):
            v.assign(value)
        return out
    return wrapper


class _WorkerSlices(_DataWrapper):
    """A Keras data object whose batches are this worker's rows of each global batch."""

    def __init__(self, data, rank, size):
        self.data, self._rank, self._size = data, rank, size

    def batches(self, *args):
        for batch in self.data.batches(*args):
            yield _nest.map_structure(lambda t: None if t is None else slice_for_worker(t, self._rank, self._size),
                                      batch)


def input_for(model, x, steps, steps_name):
    """(x as Keras' data adapters take it, a function that gives a data object this worker's share): a
    DatasetCreator is called through the strategy, a DistributedDataset is already this worker's."""
    from ._dataset_creator import DatasetCreator
    strategy = model.distribute_strategy
    if isinstance(x, DatasetCreator):
        if steps is None:
            raise ValueError("When using a `tf.keras.utils.experimental.DatasetCreator`, `steps_per_epoch`, "
                             "`validation_steps`, `steps`, or `pss_evaluation_shards` argument must be provided in "
                             f"`Model.fit`, `Model.evaluate`, or `Model.predict` (missing: `{steps_name}`).")
        return strategy.distribute_datasets_from_function(x, x.input_options)._kiln_dataset, _unchanged
    if isinstance(x, DistributedDataset):
        return x._kiln_dataset, _unchanged
    if not _distributed(strategy):
        return x, _unchanged
    return x, lambda data: None if data is None else _WorkerSlices(data, strategy._rank, strategy._size)


def _unchanged(data):
    return data
