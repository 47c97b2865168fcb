"""tf.keras.Sequential (keras/engine/sequential.py): a Model whose layers run one after the other."""
from .. import _C
from ..tensor_shape import TensorShape
from . import _sequential_graph
from ._layer import InputLayer, InputSpec, KerasTensor, Layer, _is_tensor, conform_rank
from ._model import Model


class Sequential(Model):
    """tf.keras.Sequential: layers called one after the other. When the model knows its input shape (the first
    layer has an `input_shape`, or an Input comes first), each layer is built as it is added, so summary() works
    before any data has flowed."""

    def __init__(self, layers=None, name=None):
        Model.__init__(self, name=name)
        self._autocast_inputs = False  # Keras: its layers cast their own inputs (autocast=False)
        self._seq_layers = []
        self._declared_input_shape = None
        self._input_name = None  # the Input layer's name, when one was added
        self._input_dtype = None  # the dtype of Keras' Input, when the input shape is declared: inputs take it
        self._keep_batch = False  # whether the declared input shape fixes the batch size (Keras keeps it)
        self._input_composite = {"sparse": False, "ragged": False}  # an Input(sparse= / ragged=) added first
        if layers is not None:
            if isinstance(layers, Layer):
                layers = [layers]
            for layer in layers:
                self.add(layer)

    @property
    def layers(self):
        return list(self._seq_layers)

    def add(self, layer):
        if isinstance(layer, KerasTensor) and layer._node is not None and isinstance(layer._node.layer, InputLayer):
            layer = layer._node.layer
        if isinstance(layer, InputLayer):
            if self._seq_layers or self._declared_input_shape is not None:
                raise ValueError("An InputLayer (kiln.keras.Input) can only come first in a Sequential model")
            self._declared_input_shape = layer._build_input_shape
            self._keep_batch = bool(layer._build_input_shape.rank) and layer._build_input_shape[0] is not None
            self._input_composite = {"sparse": layer.sparse, "ragged": layer.ragged}
            self._input_name = layer.name
            self._input_dtype = layer._dtype
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Received: layer={layer!r} of type "
                            f"{type(layer)}.")
        if layer is self:
            raise ValueError("Cannot add a model to itself")
        self._seq_layers.append(layer)
        if len(self._seq_layers) == 1 and not self.built:
            shape = self._declared_input_shape
            # The layer's declared input_shape comes first, as Keras' Input(batch_shape=...): a layer adapted on
            # data was built for the data's shape, which may differ ((N,) data for input_shape=[1]).
            if shape is None and layer._batch_input_shape is not None:
                shape = layer._batch_input_shape
                self._input_dtype = layer._dtype  # Keras' Input(batch_shape, dtype=layer.dtype)
                # A declared batch size stays (stateful RNNs need it), as Keras' Input(batch_shape=...).
                self._keep_batch = shape[0] is not None
            if shape is None and layer.built and layer._build_input_shape is not None:
                shape = layer._build_input_shape
            if shape is not None:
                self.build(shape)
        elif self.built and not layer.built:
            shape = self._build_input_shape
            for previous in self._seq_layers[:-1]:
                shape = previous.compute_output_shape(shape)
            layer._maybe_build(shape)
        if self.built and len(self._seq_layers) > 1:
            _sequential_graph.extend(self, layer)
        self.train_function = self.test_function = self.predict_function = None

    def pop(self):
        if not self._seq_layers:
            raise TypeError("There are no layers in the model.")
        self._seq_layers.pop()
        _sequential_graph.connect(self)
        self.train_function = self.test_function = self.predict_function = None

    def _maybe_build(self, input_shapes):
        if not self.built:
            self.build(input_shapes)

    def build(self, input_shape=None):
        if input_shape is None:
            input_shape = self._declared_input_shape
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        shape = TensorShape(input_shape)
        if shape.rank is None:
            raise ValueError(f'Layer "{self.name}": cannot build for inputs of unknown rank')
        if shape.rank and not self._keep_batch:
            shape = TensorShape([None] + shape.as_list()[1:])
        if not self._seq_layers:
            self._declared_input_shape = shape
            return
        s = shape
        for layer in self._seq_layers:
            if not layer.built:
                layer._maybe_build(s)
            s = layer.compute_output_shape(s)
        self._build_input_shape = shape
        self.input_spec = InputSpec(shape=shape, allow_last_axis_squeeze=True)
        self.built = True
        _sequential_graph.connect(self)

    @property
    def inputs(self):
        """The Input KerasTensor of the model's graph (Keras makes one once the input shape is known)."""
        return list(self._graph_inputs) if getattr(self, "_graph_inputs", None) else None

    @property
    def outputs(self):
        return list(self._graph_outputs) if getattr(self, "_graph_outputs", None) else None

    @property
    def output_shape(self):
        """The output shape of the model's graph (Keras' Sequential is one once its input shape is known)."""
        outputs = getattr(self, "_graph_outputs", None)
        if outputs and not self._inbound_nodes:
            shapes = [tuple(t.shape.as_list()) for t in outputs]
            return shapes[0] if len(shapes) == 1 else shapes
        return Model.output_shape.fget(self)

    def call(self, inputs, training=None, mask=None):
        # Keras' Sequential.call: a mask given reaches the first layer when its call takes one; after that each
        # layer's output carries its mask to the next.
        if self._input_dtype is not None and _is_tensor(inputs) and inputs.dtype != self._input_dtype:
            inputs = _C.cast(inputs, self._input_dtype._enum)  # as a functional model conforms its inputs
        if self._build_input_shape is not None and _is_tensor(inputs):
            inputs = conform_rank(inputs, self._build_input_shape)
        for layer in self._seq_layers:
            kwargs = {"mask": mask} if mask is not None and layer._call_accepts_mask else {}
            inputs = layer(inputs, training=training, **kwargs)
            mask = None
        return inputs

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        for layer in self._seq_layers:
            s = layer.compute_output_shape(s)
        return s

    def get_config(self):
        """{"name", "layers"}: an InputLayer first when the input shape is known, then each layer serialized."""
        from ._serialization import serialize_keras_object
        layers = []
        shape = self._declared_input_shape if self._declared_input_shape is not None else self._build_input_shape
        if shape is not None and self._seq_layers:
            first = self._seq_layers[0]
            layers.append({"module": "keras.layers", "class_name": "InputLayer", "config": {
                "batch_input_shape": TensorShape(shape).as_list(), "dtype": first.dtype,
                **self._input_composite, "name": self._input_name or f"{first.name}_input"}, "registered_name": None})
        layers += [serialize_keras_object(layer) for layer in self._seq_layers]
        return {"name": self.name, "layers": layers}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from . import layers as _layers
        model = cls(name=config.get("name"))
        for entry in config.get("layers", []):
            layer = _layers.deserialize(entry, custom_objects=custom_objects)
            model.add(layer)
        return model

    def get_build_config(self):
        shape = self._build_input_shape
        return None if shape is None else {"input_shape": TensorShape(shape).as_list()}

    def _serialized_module(self):
        return "keras.src.engine.sequential" if type(self) is Sequential else Model._serialized_module(self)

    def _summary_output_shape(self, layer):
        """A layer's output shape for summary(): the input shape carried through the layers before it."""
        shape = self._build_input_shape
        for previous in self._seq_layers:
            shape = previous.compute_output_shape(shape)
            if previous is layer:
                return tuple(TensorShape(shape).as_list())
        return "multiple"
