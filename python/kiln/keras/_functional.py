"""A functional Model's config (keras/engine/functional.py): its layer calls as Keras 2's "inbound_nodes",
and the model rebuilt from them."""
from ._layer import InputLayer, KerasTensor, _flatten


def _functional_config(model):
    """Keras 2's functional config: layers with their inbound nodes, input_layers and output_layers."""
    from ._serialization import serialize_keras_object
    nodes_of = {}
    for layer in model._fn_layers:
        nodes_of[id(layer)] = [layer._output_tensor._node] if isinstance(layer, InputLayer) else []
    for node in model._fn_nodes:
        nodes_of[id(node.layer)].append(node)

    def ref(kt):
        node = kt._node
        return [node.layer.name, nodes_of[id(node.layer)].index(node), kt._index]

    layers = []
    for layer in model._fn_layers:
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        inbound = []
        if not isinstance(layer, InputLayer):
            for node in nodes_of[id(layer)]:
                kwargs = {}
                for k, v in node.kwargs.items():
                    kwargs[k] = ["__keras_tensor__", *ref(v)] if isinstance(v, KerasTensor) else _json_arg(v)
                if node.args:
                    kwargs["__args__"] = [["__keras_tensor__", *ref(v)] if isinstance(v, KerasTensor) else
                                          _json_arg(v) for v in node.args]
                flat = _flatten(node.inputs)
                if isinstance(node.inputs, (list, tuple)) and len(flat) == 1:
                    kwargs["__list_input__"] = True  # a list of one tensor, not the tensor
                inbound.append([ref(t) + [kwargs] for t in flat])
        entry["inbound_nodes"] = inbound
        layers.append(entry)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": [ref(t) for t in _flatten(model._fn_inputs)],
            "output_layers": [ref(t) for t in _flatten(model._fn_outputs)]}


def _json_arg(v):
    """A call argument as JSON: dtypes by name, shapes, arrays and constant tensors as lists (the op layers'
    arguments: tf.cast(x, tf.int32), tf.reshape(x, (-1, 4)), x * np.array(...))."""
    from ..dtypes import DType
    from ..tensor_shape import TensorShape
    import numpy as np
    if isinstance(v, (list, tuple)):
        return [_json_arg(x) for x in v]
    if isinstance(v, dict):
        return {k: _json_arg(x) for k, x in v.items()}
    if isinstance(v, DType):
        return v.name
    if isinstance(v, TensorShape):
        return v.as_list() if v.rank is not None else None
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray) or hasattr(v, "numpy"):
        return np.asarray(v).tolist()
    return v


def _functional_from_config(config, custom_objects=None):
    """Rebuilds the layer calls of a functional config: (inputs, outputs, name)."""
    from . import layers as _layers
    created, pending = {}, []
    outputs_of = {}  # (layer name, node index) -> the call's outputs
    for entry in config["layers"]:
        layer = _layers.deserialize(entry, custom_objects=custom_objects)
        name = entry.get("name", layer.name)
        created[name] = layer
        if isinstance(layer, InputLayer):
            outputs_of[(name, 0)] = layer._output_tensor
        else:
            pending.append((name, list(entry.get("inbound_nodes", []))))

    def value(ref):
        out = outputs_of[(ref[0], ref[1])]
        return _flatten(out)[ref[2]]

    def ready(ref):
        return (ref[0], ref[1]) in outputs_of

    progress = True
    while pending and progress:
        progress = False
        still = []
        for name, nodes in pending:
            done = sum(1 for key in outputs_of if key[0] == name)
            while nodes:
                node = nodes[0]
                kwargs = dict(node[0][3]) if node and len(node[0]) > 3 else {}
                refs = [r for r in node]
                extra = [v for v in kwargs.get("__args__", []) if _is_tensor_ref(v)] + \
                    [v for v in kwargs.values() if _is_tensor_ref(v)]
                if not all(ready(r) for r in refs) or not all(ready(v[1:]) for v in extra):
                    break
                args = [value(v[1:]) if _is_tensor_ref(v) else v for v in kwargs.pop("__args__", [])]
                as_list = kwargs.pop("__list_input__", False)
                kwargs = {k: value(v[1:]) if _is_tensor_ref(v) else v for k, v in kwargs.items()}
                inputs = [value(r) for r in refs]
                out = created[name](inputs[0] if len(inputs) == 1 and not as_list else inputs, *args, **kwargs)
                outputs_of[(name, done)] = out
                done += 1
                nodes.pop(0)
                progress = True
            if nodes:
                still.append((name, nodes))
        pending = still
    if pending:
        raise ValueError(f"Cannot rebuild the functional model: the inputs of layers {[n for n, _ in pending]} are "
                         "never produced")
    inputs = [value(r) for r in config["input_layers"]]
    outputs = [value(r) for r in config["output_layers"]]
    from ._functional_side import AddLoss, AddMetric
    side = [out for (name, _), out in outputs_of.items() if isinstance(created[name], (AddLoss, AddMetric))]
    return (inputs[0] if len(inputs) == 1 else inputs), (outputs[0] if len(outputs) == 1 else outputs), \
        config.get("name"), side


def _is_tensor_ref(v):
    return isinstance(v, list) and len(v) == 4 and v[0] == "__keras_tensor__"
