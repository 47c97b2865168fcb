"""Where a thread stands: which strategy is current and whether it is in a replica context (inside
`strategy.run`, or the default one) or in a strategy's cross-replica context (inside `strategy.scope()`).
TF's distribution_strategy_context, one stack per thread."""
import enum
import threading


class ReduceOp(enum.Enum):
    """tf.distribute.ReduceOp: how values from the replicas combine."""
    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        name = getattr(aggregation, "name", str(aggregation)).upper()
        if name in ("SUM", "MEAN"):
            return ReduceOp[name]
        raise ValueError(f"Could not convert from `tf.VariableAggregation` {aggregation} to `tf.distribute.ReduceOp` "
                         "type")


def as_reduce_op(reduce_op):
    """A ReduceOp from a ReduceOp or its name ("SUM", "mean"), as TF accepts both."""
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    if isinstance(reduce_op, str) and reduce_op.upper() in ("SUM", "MEAN"):
        return ReduceOp[reduce_op.upper()]
    raise ValueError(f"`reduce_op` must be a tf.distribute.ReduceOp (SUM or MEAN), got {reduce_op!r}")


class _Entry:
    __slots__ = ("strategy", "replica")

    def __init__(self, strategy, replica):
        self.strategy, self.replica = strategy, replica


class _State(threading.local):
    def __init__(self):
        self.stack = []


_state = _State()
_global = [None]     # experimental_set_strategy's strategy
_default = [None]    # the default strategy and its replica context, made on first use


def default_strategy():
    if _default[0] is None:
        from ._strategy import _DefaultDistributionStrategy
        _default[0] = _DefaultDistributionStrategy()
    return _default[0]


def push(strategy, replica):
    _state.stack.append(_Entry(strategy, replica))


def pop():
    _state.stack.pop()


def _top():
    if _state.stack:
        return _state.stack[-1]
    if _global[0] is not None:
        return _Entry(_global[0], None)
    return None


def get_strategy():
    """The current tf.distribute.Strategy: the one whose scope (or run) we are in, else the default strategy."""
    top = _top()
    return default_strategy() if top is None else top.strategy


def has_strategy():
    """Whether a strategy other than the default one is current."""
    return get_strategy() is not default_strategy()


def in_cross_replica_context():
    """True inside `strategy.scope()` (outside `strategy.run`); the default context is a replica context."""
    top = _top()
    return top is not None and top.replica is None


def get_replica_context():
    """The ReplicaContext inside `strategy.run` (or the default strategy's outside every scope); None in a
    cross-replica context."""
    top = _top()
    if top is None:
        return default_strategy()._default_replica_context
    return top.replica


def experimental_set_strategy(strategy):
    """Makes `strategy` current outside every scope (None: back to the default strategy), as entering its scope
    for the rest of the program."""
    if _state.stack:
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    _global[0] = None if strategy is None or strategy is default_strategy() else strategy
