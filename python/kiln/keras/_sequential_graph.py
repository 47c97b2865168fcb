"""The functional graph of a built Sequential model, as Keras 2.15 makes it: an Input of the model's input shape
called through every layer, so `model.inputs`, `model.outputs` and each layer's `input` / `output` are
KerasTensors (feature extractors: keras.Model(model.inputs, [l.output for l in model.layers])).

Sequential lives in _model.py; its build calls `connect(self)` once the input shape is known."""
from ._layer import Input, _flatten


def connect(model):
    """Calls the layers of the built Sequential `model` on a symbolic Input; returns (inputs, outputs), or None
    when a layer cannot run symbolically (Keras then leaves the model without a graph too)."""
    shape = getattr(model, "_build_input_shape", None)
    layers = model.layers
    if shape is None or not layers:
        return None
    first = layers[0]
    name = getattr(model, "_input_name", None) or f"{first.name}_input"
    inputs = Input(batch_shape=tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape),
                   dtype=first.dtype if first.dtype != "string" else "string", name=name)
    x = inputs
    called = []
    try:
        for layer in layers:
            x = layer(x)
            called.append(layer)
    except Exception:  # noqa: BLE001 - e.g. a layer whose call needs real values: no graph, as Keras
        for layer in called:
            layer._inbound_nodes.pop()
        return None
    model._graph_inputs, model._graph_outputs = [inputs], _flatten(x)
    return model._graph_inputs, model._graph_outputs
