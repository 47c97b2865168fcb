"""tf.data's iterator objects: what `iter(dataset)` returns (OwnedIterator) and the
Optional that `get_next_as_optional` gives.

The iterator says what it yields (`element_spec`), so kiln.function treats it as
TF treats an iterator argument: the graph pulls the next element each time it
runs, instead of baking the first element in as a constant."""
import json

from .. import errors as _errors
from .. import nest as _nest

__all__ = ["OwnedIterator", "Optional"]


class OwnedIterator:
    """tf.data.Iterator over one pass of `dataset` (started when the iterator is made)."""

    def __init__(self, dataset, elements):
        self._dataset = dataset
        self._elements = elements
        self._consumed = 0  # elements taken: the state a checkpoint keeps

    @property
    def element_spec(self):
        # An empty dataset whose function never ran cannot tell; say so as "no spec".
        try:
            return self._dataset.element_spec
        except ValueError:
            return None

    def __iter__(self):
        return self

    def __next__(self):
        value = next(self._elements)
        self._consumed += 1
        return value

    def get_next(self, name=None):
        """The next element; OutOfRangeError at the end, as TF's op raises."""
        try:
            return next(self)
        except StopIteration:
            raise _errors.OutOfRangeError("End of sequence") from None

    def get_next_as_optional(self):
        """The next element in an Optional: empty at the end instead of an error."""
        try:
            return Optional.from_value(next(self))
        except StopIteration:
            return Optional.empty(self.element_spec)

    # tf.train.Checkpoint(iterator=it) saves where the iterator is ("<path>/.ATTRIBUTES/ITERATOR_STATE"). Kiln's
    # state is the count of elements taken: restoring starts the dataset again and skips as many, which gives the
    # same position for a deterministic pipeline (a seeded or unshuffled one), not TF's buffered state.
    _STATE_FORMAT = "kiln.data.iterator/1"

    def _kiln_checkpoint_state(self):
        return json.dumps({"format": self._STATE_FORMAT, "consumed": self._consumed}).encode()

    def _kiln_restore_state(self, state):
        try:
            saved = json.loads(state)
            consumed = int(saved["consumed"])
            if saved.get("format") != self._STATE_FORMAT or consumed < 0:
                raise ValueError(saved.get("format"))
        except (ValueError, KeyError, TypeError):
            raise _errors.InvalidArgumentError("The checkpoint's iterator state was not written by Kiln (TF's "
                                               "serialized iterator state cannot be read)") from None
        fresh = iter(self._dataset)
        for _ in range(consumed):
            try:
                next(fresh._elements)
            except StopIteration:
                break
        self._elements, self._consumed = fresh._elements, consumed

    def __repr__(self):
        return f"<kiln.data.OwnedIterator object at {id(self):#x}>"


class Optional:
    """tf.experimental.Optional: a value or nothing, with the value's element_spec."""

    def __init__(self, value, element_spec, has_value):
        self._value = value
        self._spec = element_spec
        self._has_value = has_value

    @staticmethod
    def from_value(value):
        from ._dataset import _spec_of
        return Optional(value, _nest.map_structure(_spec_of, value), True)

    @staticmethod
    def empty(element_spec):
        return Optional(None, element_spec, False)

    @property
    def element_spec(self):
        return self._spec

    def has_value(self, name=None):
        from .._ops import convert_to_tensor
        return convert_to_tensor(self._has_value)

    def get_value(self, name=None):
        if self._has_value is False:  # a traced Optional's flag is a tensor: the graph holds zeros then
            raise _errors.InvalidArgumentError("The optional does not have a value")
        return self._value
