"""keras.utils.model_to_dot / plot_model (Keras 2.15, through pydot and graphviz): one record node per layer of a
functional or Sequential model (its Input too), labelled as Keras labels it (name|class, activations, dtype,
input and output shapes, trainable), an edge per layer call from the layers that made its inputs. A subclassed
model is one node. Nested models are not expanded (expand_nested=True on a model holding one is refused)."""
import os
import re
import sys

try:
    import pydot
except ImportError:  # Keras' own message says what to install
    pydot = None


def _check_graphviz():
    if pydot is None:
        return False
    try:
        pydot.Dot.create(pydot.Dot())
        return True
    except (OSError, pydot.InvocationException):
        return False


def _graph(model):
    """(layers in Keras' order, [(source layer, target layer)]) of a functional or Sequential model; None for a
    subclassed one."""
    from ._layer import KerasTensor, _flatten
    from ._sequential import Sequential
    if isinstance(model, Sequential):
        if not model._graph_inputs:
            return None
        layers = [model._graph_inputs[0]._node.layer] + model.layers
        return layers, list(zip(layers, layers[1:]))
    if not getattr(model, "_is_graph_network", False):
        return None
    edges = []
    for node in model._fn_nodes:
        for t in _flatten([node.inputs, list(node.args), node.kwargs]):
            if isinstance(t, KerasTensor) and t._node is not None:
                edges.append((t._node.layer, node.layer))
    return model.layers, edges


def _layer_bounds(layers, layer_range):
    if len(layer_range) != 2:
        raise ValueError(f"layer_range must be of shape (2,). Received: layer_range = {layer_range} of length "
                         f"{len(layer_range)}")
    if not isinstance(layer_range[0], str) or not isinstance(layer_range[1], str):
        raise ValueError(f"layer_range should contain string type only. Received: {layer_range}")
    firsts = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    lasts = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not firsts or not lasts:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    return firsts[0], lasts[-1] + 1


def _shape_text(get):
    try:
        shape = get()
    except (AttributeError, RuntimeError, ValueError):
        return "?"
    return str(shape).replace("{", r"\{").replace("}", r"\}")


def _label(layer, show_shapes, show_dtype, show_layer_names, show_layer_activations, show_trainable):
    """Keras' record label: [T|NT|] {name|class[|activation]}[|dtype][ |{input:|output:}|{{in}|{out}}]."""
    name, label = layer.name, type(layer).__name__
    inner = getattr(layer, "layer", None)
    if inner is not None and hasattr(inner, "name"):  # a wrapper names what it wraps
        name, label = f"{name}({inner.name})", f"{label}({type(inner).__name__})"
    activation = getattr(layer, "activation", None)
    if show_layer_activations and activation is not None:
        activation_name = getattr(activation, "name", None) or getattr(activation, "__name__", None) or \
            str(activation)
        label = "{%s|%s}" % (label, activation_name)
    if show_layer_names:
        label = f"{name}|{label}"
    if show_dtype:
        label = f"{label}|{layer.dtype if layer.dtype is not None else '?'}"
    if show_shapes:
        label = "{%s}|{input:|output:}|{{%s}|{%s}}" % (label, _shape_text(lambda: layer.input_shape),
                                                       _shape_text(lambda: layer.output_shape))
    if show_trainable:
        label = f"{'T' if layer.trainable else 'NT'}|{label}"
    return label


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=96, subgraph=False, layer_range=None, show_layer_activations=False,
                 show_trainable=False):
    """The model's graph as a pydot.Dot (a dashed pydot.Cluster with subgraph=True)."""
    from ._model import Model
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data.")
    if pydot is None:
        raise ImportError("You must install pydot (`pip install pydot`) for model_to_dot to work.")
    if subgraph:
        dot = pydot.Cluster(style="dashed", graph_name=model.name)
        dot.set("label", model.name)
        dot.set("labeljust", "l")
    else:
        dot = pydot.Dot()
        dot.set("rankdir", rankdir)
        dot.set("concentrate", True)
        dot.set("dpi", dpi)
        dot.set_node_defaults(shape="record")
    graph = _graph(model)
    if graph is None:
        dot.add_node(pydot.Node(str(id(model)), label=model.name))
        return dot
    layers, edges = graph
    if expand_nested and any(isinstance(layer, Model) or isinstance(getattr(layer, "layer", None), Model)
                             for layer in layers):
        raise NotImplementedError("kiln.keras.utils.model_to_dot: expand_nested=True with nested models is not "
                                  "supported")
    lower, upper = (0, len(layers)) if layer_range is None else _layer_bounds(layers, layer_range)
    shown = {id(layer) for layer in layers[lower:upper]}
    for layer in layers[lower:upper]:
        dot.add_node(pydot.Node(str(id(layer)), label=_label(layer, show_shapes, show_dtype, show_layer_names,
                                                              show_layer_activations, show_trainable)))
    for source, target in edges:
        if id(source) in shown and id(target) in shown and \
                not dot.get_edge(str(id(source)), str(id(target))):
            dot.add_edge(pydot.Edge(str(id(source)), str(id(target))))
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96, layer_range=None, show_layer_activations=False,
               show_trainable=False):
    """Draws the model's graph into to_file (graphviz; the format from its extension, png without one); in
    IPython returns the image to display."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data.")
    if not _check_graphviz():
        message = ("You must install pydot (`pip install pydot`) and install graphviz (see instructions at "
                   "https://graphviz.gitlab.io/download/) for plot_model to work.")
        if "IPython.core.magics.namespace" in sys.modules:
            print(message)
            return None
        raise ImportError(message)
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                       rankdir=rankdir, expand_nested=expand_nested, dpi=dpi, layer_range=layer_range,
                       show_layer_activations=show_layer_activations, show_trainable=show_trainable)
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    if extension != "pdf":
        try:
            from IPython import display
            return display.Image(filename=to_file)
        except ImportError:
            pass
    return None
