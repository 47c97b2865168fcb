"""`model.add_loss(t)` and `model.add_metric(t, name)` with `t` computed from a functional model's KerasTensors
(keras.io: `model.add_loss(tf.reduce_sum(x1) * 0.1)`): as Keras 2, an AddLoss / AddMetric layer is called on `t`
and joins the model's graph with the op layers that compute `t`, so the loss or metric is recomputed on every
call of the model, and saved with it."""
from ._layer import KerasTensor, Layer, _flatten, InputLayer


class AddLoss(Layer):
    """Adds its input to the losses of the call (Keras 2's keras.engine.base_layer.AddLoss)."""

    def __init__(self, unconditional=False, **kwargs):
        super().__init__(**kwargs)
        self.unconditional = unconditional
        self._call_accepts_training = self._call_accepts_mask = False
        self._autocast_inputs = False

    def call(self, inputs):
        self.add_loss(inputs)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return dict(super().get_config(), unconditional=self.unconditional)


class AddMetric(Layer):
    """Tracks the mean of its input as metric `metric_name` (Keras 2's keras.engine.base_layer.AddMetric)."""

    def __init__(self, aggregation=None, metric_name=None, **kwargs):
        super().__init__(**kwargs)
        self.aggregation = aggregation
        self.metric_name = metric_name
        self._call_accepts_training = self._call_accepts_mask = False
        self._autocast_inputs = False

    def call(self, inputs):
        self.add_metric(inputs, name=self.metric_name, aggregation=self.aggregation)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return dict(super().get_config(), aggregation=self.aggregation, metric_name=self.metric_name)


def add_symbolic(model, value, layer):
    """Calls `layer` (an AddLoss or AddMetric) on the KerasTensor `value` and inserts the call, with the nodes
    between the model's graph and `value`, at the end of the model's layer calls."""
    if not getattr(model, "_is_graph_network", False):
        raise ValueError(f"Expected a symbolic tensor only from a functional model's layers; {model.name!r} is not "
                         "a functional model. Add the value inside a layer's call() instead.")
    insert(model, layer(value))


def insert(model, output):
    """Appends the layer calls that compute the KerasTensor `output` and are not yet in the model's graph."""
    known = {id(n) for n in model._fn_nodes}
    inputs = {id(t._node) for t in _flatten(model._fn_inputs)}
    new, seen = [], set()

    def visit(node):
        if id(node) in known or id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node.layer, InputLayer):
            if id(node) not in inputs:
                raise ValueError(f"Graph disconnected: the tensor added to model {model.name!r} needs the input "
                                 f"{node.layer.name!r}, which is not one of the model's inputs")
            return
        for t in _flatten([node.inputs, list(node.args), node.kwargs]):
            if isinstance(t, KerasTensor):
                visit(t._node)
        new.append(node)

    visit(output._node)
    model._fn_nodes.extend(new)
    for node in new:
        if all(node.layer is not other for other in model._fn_layers):
            model._fn_layers.append(node.layer)
