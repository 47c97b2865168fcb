"""`KerasTensor._keras_mask`: the mask a functional value will carry, as Keras 2 shows it while a model is
built (`print("Mask found:", x._keras_mask)` in keras.io's masking guide). Kiln's layers compute masks on
real tensors only, so the symbolic mask is found by tracing the layer calls from the Input tensors up to
this value on placeholders and reading the mask the traced value carries: its shape and dtype, and the
layer that made it (the nearest upstream layer that does not only pass its input's mask on)."""
from ._functional_network import FunctionalNetwork
from ._layer import InputLayer, KerasTensor, Layer, _flatten
from ._masking import get_mask


class _Probe(FunctionalNetwork):
    """The layer calls from the Input tensors to one value, without a Model (no name taken, nothing built)."""
    name = "mask_probe"


def _upstream_inputs(tensor):
    found, seen, stack = [], set(), [tensor._node]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node.layer, InputLayer):
            found.append(node.outputs)
            continue
        stack.extend(t._node for t in _flatten([node.inputs, list(node.args), node.kwargs])
                     if isinstance(t, KerasTensor))
    return sorted(found, key=lambda t: t._node.layer.name)


def _mask_maker(tensor):
    """The layer whose compute_mask made the mask (a layer that keeps its input's mask passes the question on)."""
    node = tensor._node
    while node is not None and not isinstance(node.layer, InputLayer):
        layer = node.layer
        passes_on = layer.supports_masking and type(layer).compute_mask is Layer.compute_mask
        inputs = [t for t in _flatten(node.inputs) if isinstance(t, KerasTensor)]
        if not passes_on or not inputs:
            return layer
        node = inputs[0]._node
    return None


def symbolic_mask(tensor):
    """The KerasTensor of `tensor`'s mask (bool), or None when it carries none."""
    if tensor._node is None or isinstance(tensor._node.layer, InputLayer):
        return None
    from ..function import TensorSpec, function
    inputs = _upstream_inputs(tensor)
    probe = _Probe()
    probe._init_functional(list(inputs), [tensor])
    spec = {}

    def run(*values):
        out = probe._run_graph(list(values))
        mask = get_mask(_flatten(out)[0])
        spec["mask"] = None if mask is None else (mask.shape, mask.dtype)
        return out

    function(run, autograph=False).get_concrete_function(*[TensorSpec(t.shape, t.dtype) for t in inputs])
    if spec.get("mask") is None:
        return None
    shape, dtype = spec["mask"]
    mask = KerasTensor(shape, dtype)
    mask._made_by = _mask_maker(tensor)
    return mask


def _cached_symbolic_mask(tensor):
    """symbolic_mask, traced once per KerasTensor (a functional value never changes once made)."""
    if "_kiln_symbolic_mask" not in tensor.__dict__:
        tensor.__dict__["_kiln_symbolic_mask"] = symbolic_mask(tensor)
    return tensor.__dict__["_kiln_symbolic_mask"]


KerasTensor._keras_mask = property(_cached_symbolic_mask)
