"""model.summary(): Keras 2.15's table (keras/utils/layer_utils.py print_summary), text for text.

A chain of layers (a Sequential, a subclassed model, a functional model whose nodes form one path)
gets three columns in 65 characters; any other functional model a fourth, "Connected to", in 98.
Every layer row is followed by a blank row; the totals give the parameter counts and their memory
("Total params: 3 (12.00 Byte)"). A field too long for its column continues on the next line, broken
after "),", "},", "]," or "'," where it can."""
import re

import numpy as np

_BREAKS = ("),", "},", "],", "',")


def readable_memory_size(size):
    """12.00 Byte, 1.53 KB, 97.66 MB: Keras' units of 1024."""
    for unit in ("Byte", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _unique(weights):
    return list({id(w): w for w in weights}.values())


def _count(weights):
    return int(sum(np.prod(w.shape.as_list()) for w in _unique(weights)))


def _memory(weights):
    total = 0
    for w in _unique(weights):
        dims = w.shape.as_list()
        if None not in dims:
            total += int(np.prod(dims)) * w.dtype.size
    return total


def _layer_range(model, layer_range):
    layers = model.layers
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2:
        raise ValueError("layer_range must be a list or tuple of length 2. Received: "
                         f"layer_range = {layer_range} of length {len(layer_range)}")
    if not all(isinstance(name, str) for name in layer_range):
        raise ValueError(f"layer_range should contain string type only. Received: {layer_range}")
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1


def _print_row(print_fn, fields, positions, nested_level=0):
    """One row, as several lines while a field still has text left."""
    left = [str(f) for f in fields]
    last = len(positions) - 1
    while any(left):
        line = ""
        for col, text in enumerate(left):
            start = positions[col - 1] if col else 0
            space = 0 if col == last else 2
            cutoff = positions[col] - start - space - (0 if col == last else 1) - (nested_level if col == 0 else 0)
            piece = text[:cutoff]
            ends = [piece.find(b) + len(b) for b in _BREAKS if piece.find(b) >= 0]
            if ends:
                cutoff = min(ends)
                piece = piece[:cutoff]
            if col == 0:
                line += "|" * nested_level + " "
            line += piece + " " * space
            left[col] = text[cutoff:]
            pad_to = positions[col] - (nested_level if nested_level and col == last else 0)
            line += " " * (pad_to - len(line))
        print_fn(line + "|" * nested_level)


def _output_shape(layer, model):
    """The layer's output shape as Keras prints it: a tuple, a list of them, or "multiple"."""
    if hasattr(model, "_summary_output_shape"):
        return model._summary_output_shape(layer)
    if getattr(model, "_is_graph_network", False):
        nodes = [n for n in getattr(layer, "_inbound_nodes", []) if _in_model(n, model)]
    else:
        nodes = list(getattr(layer, "_inbound_nodes", []))
    from ._layer import InputLayer, _flatten
    if isinstance(layer, InputLayer) and nodes:
        return [tuple(t.shape.as_list()) for t in _flatten(nodes[0].outputs)]
    shapes = []
    for node in nodes:
        out = [tuple(t.shape.as_list()) for t in _flatten(node.outputs)]
        shapes.append(out[0] if len(out) == 1 else out)
    if not shapes or any(s != shapes[0] for s in shapes):
        return "multiple"
    return shapes[0]


def _in_model(node, model):
    return any(node is n for n in _model_nodes(model))


def _model_nodes(model):
    """A functional model's nodes, its Input layers' included."""
    nodes = list(model._fn_nodes)
    from ._layer import _flatten
    for t in _flatten(model._fn_inputs):
        if t._node is not None and all(t._node is not n for n in nodes):
            nodes.append(t._node)
    return nodes


def _node_inputs(node):
    from ._layer import KerasTensor, _flatten
    if node.inputs is None:
        return []
    return [t for t in _flatten([node.inputs, list(node.args), node.kwargs]) if isinstance(t, KerasTensor)]


def _is_chain(model):
    """Keras' test: each depth of the graph holds one node of at most one input, and no layer is shared."""
    if type(model).__name__ == "Sequential" or not getattr(model, "_is_graph_network", False):
        return True
    nodes = _model_nodes(model)
    depth = {}
    from ._layer import _flatten
    # The model's nodes are in call order: walking them backwards visits consumers before producers.
    for t in _flatten(model._fn_outputs):
        depth.setdefault(id(t._node), 0)
    for node in reversed(nodes):
        d = depth.setdefault(id(node), 0)
        for t in _node_inputs(node):
            depth[id(t._node)] = max(depth.get(id(t._node), 0), d + 1)
    by_depth = {}
    for node in nodes:
        by_depth.setdefault(depth[id(node)], []).append(node)
    for group in by_depth.values():
        if len(group) > 1 or (len(group) == 1 and len(_node_inputs(group[0])) > 1):
            return False
    layers = [n.layer for n in nodes]
    return all(sum(other is layer for other in layers) == 1 for layer in layers)


def _connections(layer, model):
    out = []
    for node in layer._inbound_nodes:
        if not _in_model(node, model):
            continue
        for t in _node_inputs(node):
            source = t._node.layer
            out.append(f"{source.name}[{source._inbound_nodes.index(t._node)}][{t._index}]")
    return out


def print_summary(model, line_length=None, positions=None, print_fn=None, expand_nested=False,
                  show_trainable=False, layer_range=None):
    print_fn = print_fn or (lambda line: print(line, flush=True))
    chain = _is_chain(model)
    if chain:
        line_length = line_length or 65
        positions = list(positions or [0.45, 0.85, 1.0])
        header = ["Layer (type)", "Output Shape", "Param #"]
    else:
        line_length = line_length or 98
        positions = list(positions or [0.3, 0.6, 0.70, 1.0])
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    if show_trainable:
        line_length += 11
        positions.append(line_length)
        header.append("Trainable")
    first, stop = _layer_range(model, layer_range)

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    _print_row(print_fn, header, positions)
    print_fn("=" * line_length)

    def print_layer(layer, parent, level=0, nested_last=False):
        from ._model import Model
        if not layer.built and not getattr(layer, "_is_graph_network", False):
            params = "0 (unused)"  # a subclassed model's layer its call never used
        else:
            params = layer.count_params()
        kind = "Functional" if type(layer) is Model and layer._is_graph_network else type(layer).__name__
        fields = [f"{layer.name} ({kind})", _output_shape(layer, parent), params]
        if not chain:
            fields.append(_connections(layer, parent) if level == 0 else [])
        if show_trainable:
            fields.append("Y" if layer.trainable else "N")
        _print_row(print_fn, fields, positions, level)
        inner = getattr(layer, "layers", None) if isinstance(layer, Model) else None
        if expand_nested and inner:
            print_fn("|" * (level + 1) + "\u00af" * (line_length - 2 * level - 2) + "|" * (level + 1))
            for i, sub in enumerate(inner):
                print_layer(sub, layer, level + 1, i == len(inner) - 1)
            print_fn("|" * level + "\u00af" * (line_length - 2 * level) + "|" * level)
        if not nested_last:
            print_fn("|" * level + " " * (line_length - 2 * level) + "|" * level)

    for layer in model.layers[first:stop]:
        print_layer(layer, model)
    print_fn("=" * line_length)

    trainable, frozen = model.trainable_weights, model.non_trainable_weights
    n_trainable, n_frozen = _count(trainable), _count(frozen)
    m_trainable, m_frozen = _memory(trainable), _memory(frozen)
    print_fn(f"Total params: {n_trainable + n_frozen} ({readable_memory_size(m_trainable + m_frozen)})")
    print_fn(f"Trainable params: {n_trainable} ({readable_memory_size(m_trainable)})")
    print_fn(f"Non-trainable params: {n_frozen} ({readable_memory_size(m_frozen)})")
    print_fn("_" * line_length)
