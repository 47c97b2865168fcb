"""tf.data.Options: what a pipeline asks of the runtime. Kiln keeps and merges them as
TF does (dataset.options() merges the inputs' options, then its own; a value set
later wins, an unset one is None); the engine runs its pipelines one way whatever
they say (deterministic, one thread per prefetch)."""
import enum as _enum


class AutoShardPolicy(_enum.IntEnum):
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(_enum.Enum):
    WARN = 0
    IGNORE = 1
    FAIL = 2


class _OptionsBase:
    """Attributes fixed at creation (setting another is an AttributeError, as TF's)."""
    _FIELDS = {}

    def __init__(self):
        for name, default in self._FIELDS.items():
            object.__setattr__(self, name, default() if callable(default) else None)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"{type(self).__name__}({fields})"

    def merge(self, other):
        """A copy of self with other's set values on top (TF's merge_options)."""
        out = type(self)()
        for name in self._FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if isinstance(mine, _OptionsBase):
                object.__setattr__(out, name, mine.merge(theirs))
            else:
                object.__setattr__(out, name, theirs if theirs is not None else mine)
        return out


class AutotuneOptions(_OptionsBase):
    _FIELDS = {"enabled": None, "cpu_budget": None, "ram_budget": None, "autotune_algorithm": None}


class DistributeOptions(_OptionsBase):
    _FIELDS = {"auto_shard_policy": None, "num_devices": None}


class OptimizationOptions(_OptionsBase):
    _FIELDS = {"apply_default_optimizations": None, "filter_fusion": None, "filter_parallelization": None,
               "inject_prefetch": None, "map_and_batch_fusion": None, "map_and_filter_fusion": None,
               "map_fusion": None, "map_parallelization": None, "noop_elimination": None,
               "parallel_batch": None, "shuffle_and_repeat_fusion": None}


class ThreadingOptions(_OptionsBase):
    _FIELDS = {"max_intra_op_parallelism": None, "private_threadpool_size": None}


class Options(_OptionsBase):
    _FIELDS = {"autotune": AutotuneOptions, "deterministic": None, "experimental_deterministic": None,
               "experimental_distribute": DistributeOptions, "experimental_external_state_policy": None,
               "experimental_optimization": OptimizationOptions, "experimental_slack": None,
               "experimental_symbolic_checkpoint": None, "experimental_warm_start": None,
               "threading": ThreadingOptions}
