"""tf.VariableSynchronization, tf.VariableAggregation (what tf.Variable's `synchronization` and `aggregation`
say to a distribution strategy) and tf.AggregationMethod (how tf.gradients adds gradients up).

Kiln runs on one device (data parallelism is kiln.distributed's, outside the variable), so both settings are
recorded and read back, and change nothing else, as in TF without a strategy."""
import enum as _enum

from . import _C


class VariableSynchronization(_enum.Enum):
    """When a distributed variable is aggregated (TF's values)."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(_enum.Enum):
    """How a distributed variable's replica updates are aggregated (TF's values)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class AggregationMethod:
    """Ways of adding gradients up (tf.gradients' `aggregation_method`); TF's numbers."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _validated(value, enum_type, default, what, name):
    if value is None:
        return default
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except ValueError:
        raise ValueError(f"Invalid variable {what} mode: {value} for variable: {name}") from None


# The non-default settings, by the variable's state id (the variable is held with them, as Keras holds a
# weight with its constraint): most variables have none, so most reads find nothing.
_SETTINGS = {}
_plain_init = _C.Variable.__init__


def _init(self, *args, synchronization=None, aggregation=None, **kwargs):
    name = kwargs.get("name", args[2] if len(args) > 2 else None)
    sync = _validated(synchronization, VariableSynchronization, VariableSynchronization.AUTO, "synchronization", name)
    agg = _validated(aggregation, VariableAggregation, VariableAggregation.NONE, "aggregation", name)
    args = list(args)
    given = args[1] if len(args) > 1 else kwargs.pop("trainable", None)
    if sync is VariableSynchronization.ON_READ and given:
        raise ValueError("Synchronization value can be set to VariableSynchronization.ON_READ only for "
                         "non-trainable variables. You have specified trainable=True and "
                         "synchronization=VariableSynchronization.ON_READ.")
    # TF's trainable=None: trainable, but for an ON_READ variable
    trainable = given if given is not None else sync is not VariableSynchronization.ON_READ
    if len(args) > 1:
        args[1] = trainable
    else:
        kwargs["trainable"] = trainable
    _plain_init(self, *args, **kwargs)
    if sync is not VariableSynchronization.AUTO or agg is not VariableAggregation.NONE:
        _SETTINGS[self._state_id()] = (self, sync, agg)


def _setting(index, default):
    def read(self):
        entry = _SETTINGS.get(self._state_id())
        return default if entry is None else entry[index]
    return property(read)


_C.Variable.__init__ = _init
_C.Variable.synchronization = _setting(1, VariableSynchronization.AUTO)
_C.Variable.aggregation = _setting(2, VariableAggregation.NONE)
