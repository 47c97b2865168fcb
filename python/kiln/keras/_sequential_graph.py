"""The functional graph of a built Sequential model, as Keras 2.15 makes it: an Input of the model's input shape
called through every layer, so `model.inputs`, `model.outputs` and each layer's `input` / `output` are
KerasTensors (feature extractors: keras.Model(model.inputs, [l.output for l in model.layers])).

Sequential (_sequential.py) calls `connect` when it is built or loses a layer, and `extend` when a layer is added
to a built model (Keras' Sequential.add calls the new layer on the graph's output)."""
from ._layer import Input, _flatten


def connect(model):
    """Calls the layers of the built Sequential `model` on a symbolic Input (after dropping the graph it had);
    leaves the model without a graph when a layer cannot run symbolically, as Keras does."""
    drop(model)
    shape = getattr(model, "_build_input_shape", None)
    layers = model.layers
    if shape is None or not layers or not model.built:
        return
    first = layers[0]
    name = getattr(model, "_input_name", None) or f"{first.name}_input"
    inputs = Input(batch_shape=tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape),
                   dtype=first.dtype if first.dtype != "string" else "string", name=name)
    model._graph_inputs, model._graph_outputs, model._graph_nodes = [inputs], [inputs], []
    for layer in layers:
        if not extend(model, layer):
            return


def extend(model, layer):
    """Calls `layer` on the graph's output; whether the graph is still whole."""
    outputs = getattr(model, "_graph_outputs", None)
    if not outputs:
        return False
    try:
        x = layer(outputs[0])
    except Exception:  # noqa: BLE001 - e.g. a layer whose call needs real values: no graph, as Keras
        drop(model)
        return False
    model._graph_nodes.append((layer, layer._inbound_nodes[-1]))
    model._graph_outputs = _flatten(x)
    return True


def drop(model):
    """Forgets the model's graph, and the layer calls it made."""
    for layer, node in getattr(model, "_graph_nodes", None) or ():
        if node in layer._inbound_nodes:
            layer._inbound_nodes.remove(node)
    model._graph_inputs = model._graph_outputs = model._graph_nodes = None
