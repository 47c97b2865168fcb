"""tf.distribute.DistributedValues and PerReplica: one value per replica. Kiln runs one replica per process, so
`strategy.run` returns plain tensors (as TF does for one replica); these hold what
`experimental_distribute_values_from_function` and the strategies' unwrapping see."""


class DistributedValues:
    """Values, one per local replica (`values`); `experimental_local_results` gives them as a tuple."""

    def __init__(self, values):
        self._values = tuple(values)
        if not self._values:
            raise ValueError("DistributedValues needs at least one value")

    @property
    def values(self):
        return self._values

    def _get_on_device_or_primary(self):
        return self._values[0]

    def __repr__(self):
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{type(self).__name__}:{{\n{body}\n}}"

    __str__ = __repr__


class PerReplica(DistributedValues):
    """A value that may differ from replica to replica (a step's inputs and outputs)."""


class Mirrored(DistributedValues):
    """A value that is the same on every replica."""


def local_values(value):
    """The local replicas' values of `value` (a DistributedValues, or one plain value) as a tuple."""
    if isinstance(value, DistributedValues):
        return value.values
    return (value,)


def unwrap(value):
    """The one local replica's value (Kiln has one replica per process)."""
    if isinstance(value, DistributedValues):
        if len(value.values) != 1:
            raise ValueError(f"Kiln runs one replica per process; got {len(value.values)} per-replica values")
        return value.values[0]
    return value
