"""Keras' rule for the tensors given to a functional model (Functional._conform_to_reference_input): a tensor of
rank one less than its Input whose Input's last dim is 1 gains that dim, and one of rank one more whose last dim is
1 loses it, so a model built on Input(shape=(1,)) takes a batch of shape (batch,)."""
from .. import _C
from ._layer import KerasTensor, _flatten, _is_tensor


def conform(model, inputs):
    """`inputs` with each tensor's rank fitted to its reference Input, where Keras' rule allows."""
    references = _flatten(model._fn_inputs)
    flat = _flatten(inputs)
    if len(flat) != len(references) or any(isinstance(t, KerasTensor) for t in flat):
        return inputs
    changed = False
    fitted = []
    for tensor, reference in zip(flat, references):
        if _is_tensor(tensor) and reference.shape.rank is not None and tensor.shape.rank is not None:
            rank, wanted = tensor.shape.rank, reference.shape.rank
            if rank == wanted - 1 and reference.shape[-1] == 1:
                tensor, changed = _C.expand_dims(tensor, -1), True
            elif rank == wanted + 1 and tensor.shape[-1] == 1:
                tensor, changed = _C.squeeze(tensor, [-1]), True
        fitted.append(tensor)
    if not changed:
        return inputs
    return _rebuild(inputs, iter(fitted))


def _rebuild(structure, flat):
    """structure with its leaves taken from flat, in _flatten's order (a dict's keys sorted)."""
    if isinstance(structure, (list, tuple)):
        items = [_rebuild(s, flat) for s in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else type(structure)(items)
    if isinstance(structure, dict):
        return {k: _rebuild(structure[k], flat) for k in sorted(structure, key=repr)}
    return next(flat)
