"""A nested input_signature entry (tuples, lists, dicts, namedtuples of TensorSpecs and composite specs): one
argument of the Python function whose leaves' components are one engine parameter each, as TF's tf.function
flattens a nested signature. It speaks the composite spec protocol (`_component_specs`, `_to_components`,
`_from_components`, `_conform`), so kiln.function lays it out as it lays out a RaggedTensorSpec."""
from . import nest


def conform_to_tensor_spec(value, spec):
    """`value` as a tensor of `spec`'s dtype (Python values and NumPy arrays are converted, as TF converts them
    before matching a signature); ValueError naming what does not fit."""
    from . import _C
    from ._ops import convert_to_tensor
    if not isinstance(value, (_C.Tensor, _C.Variable)):
        try:
            value = convert_to_tensor(value, dtype=spec.dtype)
        except (TypeError, ValueError, _C.InvalidArgumentError) as e:
            raise ValueError(f"{value!r} is not a {spec!r}: {e}") from None
        if not spec.shape.is_compatible_with(value.shape):
            raise ValueError(f"{value!r} has shape {value.shape}, not {spec!r}")
    return value


class NestedSpec:
    def __init__(self, structure):
        self.structure = structure
        self._leaves = nest.flatten(structure)

    def _component_specs(self):
        return nest.flatten(self.structure, expand_composites=True)

    def _to_components(self, value):
        """The leaves' components; Python values become tensors of their spec (a ConcreteFunction's call)."""
        return [c for spec, v in zip(self._leaves, nest.flatten_up_to(self.structure, value))
                for c in (spec._to_components(v) if hasattr(spec, "_component_specs")
                          else [conform_to_tensor_spec(v, spec)])]

    def _from_components(self, components):
        return nest.pack_sequence_as(self.structure, list(components), expand_composites=True)

    def _conform(self, value):
        """The call's value for this argument: the same structure down to the specs (a list may stand for one
        tensor, as in TF; ValueError otherwise), each leaf conformed to its spec."""
        leaves = [spec._conform(v) if hasattr(spec, "_component_specs") else conform_to_tensor_spec(v, spec)
                  for spec, v in zip(self._leaves, nest.flatten_up_to(self.structure, value))]
        return nest.pack_sequence_as(self.structure, leaves)

    def __repr__(self):
        return repr(self.structure)
