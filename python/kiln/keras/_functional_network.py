"""The functional side of a Model (keras/engine/functional.py): `Model(inputs, outputs)` records the
layer calls between its Input tensors and its outputs in call order, and runs them on real values."""
from .. import _C
from ._layer import InputLayer, InputSpec, KerasTensor, Layer, _flatten, _is_tensor, _map, conform_rank
from ._masking import set_mask


class FunctionalNetwork:
    """Model's functional API, mixed into Model (`_is_graph_network` tells which kind a model is)."""

    def _init_functional(self, inputs, outputs):
        flat_in = _flatten(inputs)
        for t in flat_in:
            if not isinstance(t, KerasTensor) or t._node is None or not isinstance(t._node.layer, InputLayer):
                raise ValueError(f"Input tensors to a functional Model must come from `kiln.keras.Input`. Received: "
                                 f"{t!r}")
        flat_out = _flatten(outputs)
        for t in flat_out:
            if not isinstance(t, KerasTensor):
                raise ValueError(f"Output tensors of a functional Model must be the outputs of kiln.keras layers "
                                 f"called on kiln.keras.Input tensors. Received: {t!r}")
        input_ids = {id(t._node) for t in flat_in}
        order, state = [], {}
        first_seen = {}  # id(layer) -> the order the walk from the outputs first meets it

        def visit(node, path):
            mark = state.get(id(node))
            if mark == 2:
                return
            if mark == 1:
                raise ValueError("The functional graph has a cycle")
            state[id(node)] = 1
            first_seen.setdefault(id(node.layer), len(first_seen))
            if isinstance(node.layer, InputLayer):
                if id(node) not in input_ids:
                    raise ValueError(f"Graph disconnected: cannot obtain value for tensor {node.outputs!r} at layer "
                                     f"\"{node.layer.name}\". The following previous layers were accessed without "
                                     f"issue: {[n.layer.name for n in order]}")
            else:
                # A layer of several inputs (MultiHeadAttention's value) takes the later ones as arguments.
                for t in _flatten([node.inputs, list(node.args), node.kwargs]):
                    if isinstance(t, KerasTensor):
                        visit(t._node, path)
            state[id(node)] = 2
            order.append(node)

        for t in flat_out:
            visit(t._node, [])
        # Keras: a list of one input or output stands for that tensor (model(x) returns a tensor, not a list).
        self._fn_inputs = inputs[0] if isinstance(inputs, list) and len(inputs) == 1 else inputs
        self._fn_outputs = outputs[0] if isinstance(outputs, list) and len(outputs) == 1 else outputs
        self._fn_nodes = [n for n in order if not isinstance(n.layer, InputLayer)]
        self._fn_layers = _layers_by_depth(order, flat_in, first_seen)
        self._is_graph_network = True
        self._autocast_inputs = False  # Keras: a graph network's layers cast their own inputs
        shapes = [t.shape for t in flat_in]
        self._build_input_shape = shapes[0] if len(shapes) == 1 else shapes
        self.input_spec = [InputSpec(shape=s, allow_last_axis_squeeze=True) for s in shapes]
        self.built = True

    @property
    def inputs(self):
        return _flatten(self._fn_inputs) if self._is_graph_network else None

    @property
    def outputs(self):
        return _flatten(self._fn_outputs) if self._is_graph_network else None

    def __call__(self, inputs, *args, **kwargs):
        if self._is_graph_network and isinstance(inputs, dict) and not isinstance(self._fn_inputs, dict):
            # Keras feeds a dict to the inputs of those names (the Input layers' names).
            names = [t._node.layer.name for t in _flatten(self._fn_inputs)]
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(f"Missing data for input(s) {missing}. You passed a data dictionary with keys "
                                 f"{list(inputs)}. Expected the following keys: {names}")
            inputs = [inputs[n] for n in names]
            if not isinstance(self._fn_inputs, (list, tuple)):
                inputs = inputs[0]
        return Layer.__call__(self, inputs, *args, **kwargs)

    def _run_graph(self, inputs, training=None, mask=None):
        flat_kt = _flatten(self._fn_inputs)
        flat_in = _flatten(inputs)
        if len(flat_in) != len(flat_kt):
            raise ValueError(f'Layer "{self.name}" expects {len(flat_kt)} input(s), but it received {len(flat_in)} '
                             "input tensors.")
        if mask is not None:
            # The inputs carry the masks given, and the layers pass them on (Keras' _run_internal_graph).
            for value, m in zip(flat_in, _flatten(mask)):
                if _is_tensor(value):
                    set_mask(value, m)
        # Keras' _conform_to_reference_input: a tensor takes its Input's dtype (uint8 images feed a float32 model)
        # and rank ((N,) data feeds an Input of shape (1,)).
        values = {id(kt): _conform(v, kt) for kt, v in zip(flat_kt, flat_in)}

        def value_of(t):
            return values[id(t)] if isinstance(t, KerasTensor) else t

        for node in self._fn_nodes:
            # A training= given where the layer was called (base(x, training=False), transfer learning's idiom)
            # wins over the model's, as in Keras.
            kwargs = _map(value_of, node.kwargs)
            kwargs.setdefault("training", training)
            out = node.layer(_map(value_of, node.inputs), *_map(value_of, list(node.args)), **kwargs)
            for kt, value in zip(_flatten(node.outputs), _flatten(out)):
                values[id(kt)] = value
        return _map(lambda kt: values[id(kt)], self._fn_outputs)


def _layers_by_depth(order, flat_in, first_seen):
    """model.layers in Keras' order (its _map_graph_network): deepest first, a node's depth being its longest
    distance to an output; layers of one depth in the order the walk from the outputs first met them. Weights
    files list layers in this order, and legacy .h5 weights load by it."""
    node_depth, layer_depth, layers = {}, {}, {}
    for node in reversed(order):  # from the outputs back
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        layers[id(node.layer)] = node.layer
        if node.inputs is not None:
            for t in _flatten([node.inputs, list(node.args), node.kwargs]):
                if isinstance(t, KerasTensor):
                    node_depth[id(t._node)] = max(depth + 1, node_depth.get(id(t._node), 0))
    for t in flat_in:  # an Input no output depends on
        layer = t._node.layer
        if id(layer) not in layers:
            layers[id(layer)] = layer
            layer_depth[id(layer)] = 0
            first_seen[id(layer)] = -1
    return sorted(layers.values(), key=lambda layer: (-layer_depth[id(layer)], first_seen[id(layer)]))


def _conform(value, keras_tensor):
    if not _is_tensor(value):
        return value
    if value.dtype != keras_tensor.dtype:
        value = _C.cast(value, keras_tensor.dtype._enum)
    return conform_rank(value, keras_tensor.shape)
