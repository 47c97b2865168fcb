"""Keras' layer wrappers: TimeDistributed (a layer applied to every step of [batch, time, ...]) and
Bidirectional (a recurrent layer run forwards and, as a copy with go_backwards flipped, backwards)."""
import numpy as np

from .. import _C
from ..tensor_shape import TensorShape
from ._layer import Layer


class Wrapper(Layer):
    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a `tf.keras.layers.Layer` "
                             f"instance. Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer

    def get_config(self):
        from ._serialization import serialize_keras_object
        config = super().get_config()
        config["layer"] = serialize_keras_object(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .layers import deserialize
        config = dict(config)
        config["layer"] = deserialize(config["layer"], custom_objects=custom_objects)
        return cls(**config)


class TimeDistributed(Wrapper):
    """Applies `layer` to each step: [batch, time, *inner] -> [batch, time, *layer's output]; the steps are folded
    into the batch for one call of the layer."""

    def _inner_shape(self, input_shape):
        s = TensorShape(input_shape)
        if s.rank is None or s.rank < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with at least 3 dimensions, "
                             f"received: {s}")
        return s, TensorShape([None] + s.as_list()[2:])

    def build(self, input_shape):
        _, inner = self._inner_shape(input_shape)
        if not self.layer.built:
            self.layer._maybe_build(inner)
        self.built = True

    def compute_output_shape(self, input_shape):
        s, inner = self._inner_shape(input_shape)
        out = TensorShape(self.layer.compute_output_shape(inner))
        return TensorShape([s[0], s[1]] + out.as_list()[1:])

    def call(self, inputs, training=None, mask=None):
        s = TensorShape(inputs.shape).as_list()
        if any(d is None for d in s[2:]):
            raise ValueError("kiln.keras.layers.TimeDistributed: the dims after time must be known")
        if s[1] is None and s[0] is None:
            raise ValueError("kiln.keras.layers.TimeDistributed: the batch or the time dim must be known")
        folded = _C.reshape(inputs, [-1] + s[2:])
        kwargs = {"training": training} if self.layer._call_accepts_training and training is not None else {}
        y = self.layer(folded, **kwargs)
        out = TensorShape(y.shape).as_list()[1:]
        if s[1] is not None:
            return _C.reshape(y, [-1, s[1]] + out)
        return _C.reshape(y, [s[0], -1] + out)

    def compute_mask(self, inputs, mask=None):
        return mask


def _reverse_time(x):
    """x [batch, time, ...] with the time steps in reverse order."""
    steps = TensorShape(x.shape)[1]
    if steps is not None:
        return _C.gather(x, _C.constant(np.arange(steps - 1, -1, -1, dtype=np.int32), None), 1)
    from .. import _ops
    length = _C.reshape(_C.slice(_C.shape(x), [1], [1]), [])
    return _C.gather(x, _ops.range(_C.subtract(length, 1), -1, -1), 1)


class Bidirectional(Wrapper):
    """The forward layer's and the backward layer's outputs merged: merge_mode "concat" (default), "sum", "mul",
    "ave", or None (a list of the two). The backward copy is built from the layer's config with go_backwards
    flipped, unless backward_layer is given; with return_sequences its outputs are put back in time order."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        super().__init__(layer, **kwargs)
        if getattr(layer, "return_state", False):
            raise NotImplementedError("kiln.keras.layers.Bidirectional: return_state=True is not supported")
        self.forward_layer = layer
        if backward_layer is None:
            config = layer.get_config()
            config["go_backwards"] = not config.get("go_backwards", False)
            config["name"] = "backward_" + layer.name
            backward_layer = type(layer).from_config(config)
        elif backward_layer.go_backwards == layer.go_backwards:
            raise ValueError("Forward layer and backward layer should have different `go_backwards` value. "
                             f"forward_layer.go_backwards = {layer.go_backwards}, backward_layer.go_backwards = "
                             f"{backward_layer.go_backwards}")
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = getattr(layer, "return_sequences", False)
        self._initial_weights = weights
        self.supports_masking = True

    @property
    def layer(self):
        return self.forward_layer

    @layer.setter
    def layer(self, value):
        pass  # the forward layer is kept as `forward_layer` (so it is listed once among the weights)

    def reset_states(self, states=None):
        """A stateful wrapped layer's states: both directions zeroed, or `states` (the forward layer's, then
        the backward layer's)."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        if states is None:
            self.forward_layer.reset_states()
            self.backward_layer.reset_states()
            return
        if not isinstance(states, (list, tuple)):
            raise ValueError(f"Unrecognized value for `states`. Expected `states` to be list or tuple. Received: "
                             f"{states}")
        half = len(states) // 2
        self.forward_layer.reset_states(states[:half])
        self.backward_layer.reset_states(states[half:])

    def build(self, input_shape):
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                layer._maybe_build(input_shape)
        self.built = True

    def compute_output_shape(self, input_shape):
        out = TensorShape(self.forward_layer.compute_output_shape(input_shape))
        if self.merge_mode == "concat":
            return TensorShape(out.as_list()[:-1] + [None if out[-1] is None else 2 * out[-1]])
        if self.merge_mode is None:
            return [out, out]
        return out

    def call(self, inputs, training=None, mask=None):
        kwargs = {}
        if training is not None:
            kwargs["training"] = training
        if mask is not None:
            kwargs["mask"] = mask
        y = self.forward_layer(inputs, **kwargs)
        y_rev = self.backward_layer(inputs, **kwargs)
        if self.return_sequences:
            y_rev = _reverse_time(y_rev)
        if self.merge_mode == "concat":
            return _C.concat([y, y_rev], -1)
        if self.merge_mode == "sum":
            return _C.add(y, y_rev)
        if self.merge_mode == "ave":
            return _C.multiply(_C.add(y, y_rev), 0.5)
        if self.merge_mode == "mul":
            return _C.multiply(y, y_rev)
        return [y, y_rev]

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        out = mask if self.return_sequences else None
        return [out, out] if self.merge_mode is None else out

    def get_config(self):
        from ._serialization import serialize_keras_object
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        config["backward_layer"] = serialize_keras_object(self.backward_layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .layers import deserialize
        config = dict(config)
        config.pop("num_constants", None)
        # Older Keras wrote no backward_layer (the forward layer's config serves for both, as in Keras).
        backward = config.pop("backward_layer", None)
        if backward is not None:
            config["backward_layer"] = deserialize(backward, custom_objects=custom_objects)
        return super().from_config(config, custom_objects)
