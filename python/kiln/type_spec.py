"""tf.TypeSpec, the base that every spec class is an instance of (TensorSpec, RaggedTensorSpec,
SparseTensorSpec, tf.data's DatasetSpec: registered as its subclasses, so `isinstance(spec, tf.TypeSpec)`
holds as in TF), and tf.type_spec_from_value.

A class of the user's that subclasses tf.TypeSpec gets TF's abstract interface to fill in; Kiln's
tf.function takes the composites it knows (docs/design-notes.md, "The tf.* catalogue")."""
import abc as _abc


class TypeSpec(metaclass=_abc.ABCMeta):
    """Specifies a TensorFlow value type (TF's abstract methods and the common checks)."""

    __slots__ = ()

    @property
    @_abc.abstractmethod
    def value_type(self):
        """The Python type of values this spec describes."""

    @property
    @_abc.abstractmethod
    def _component_specs(self):
        """The specs of the value's components."""

    @_abc.abstractmethod
    def _to_components(self, value):
        """The value's components."""

    @_abc.abstractmethod
    def _from_components(self, components):
        """A value rebuilt from its components."""

    @_abc.abstractmethod
    def _serialize(self):
        """This spec's constructor arguments, as a tuple."""

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else type_spec_from_value(spec_or_value)
        return type(self) is type(other) and self._serialize() == other._serialize()


def _register():
    from .function import TensorSpec
    from .ragged_tensor import RaggedTensorSpec
    from .sparse_tensor import SparseTensorSpec
    from .data._transforms import DatasetSpec
    for cls in (TensorSpec, RaggedTensorSpec, SparseTensorSpec, DatasetSpec):
        TypeSpec.register(cls)


_register()


def type_spec_from_value(value):
    """The spec of a Tensor (or Variable, or what converts to a Tensor), RaggedTensor, SparseTensor or
    Dataset; TypeError for any other value, as TF raises."""
    from . import _C
    from .function import TensorSpec
    from .ragged_tensor import RaggedTensor
    from .sparse_tensor import SparseTensor
    from .data import Dataset
    if isinstance(value, (_C.Tensor, _C.Variable)):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, (RaggedTensor, SparseTensor)):
        return value._type_spec
    if isinstance(value, Dataset):
        from .data._transforms import DatasetSpec
        return DatasetSpec(value.element_spec)
    try:
        from ._ops import convert_to_tensor
        tensor = convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.") from None
    return TensorSpec(tensor.shape, tensor.dtype)
