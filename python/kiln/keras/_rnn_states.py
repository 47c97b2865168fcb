"""Stateful recurrent layers (`stateful=True`), Keras 2.15's rules: the layer keeps its final states in
variables of its fixed batch size, starts each call from them and stores the new ones (eagerly at once, traced
as part of the function, in training and inference alike); `reset_states()` zeros them or sets given values.
The variables are no weights of the layer (Keras does not track them): not in `weights`, checkpoints or
saved files."""
import numpy as np

from .. import _C
from ..tensor_shape import TensorShape

_NEEDS_BATCH = ("If a RNN is stateful, it needs to know its batch size. Specify the batch size of your input "
                "tensors: \n- If using a Sequential model, specify the batch size by passing a `batch_input_shape` "
                "argument to your first layer.\n- If using the functional API, specify the batch size by passing a "
                "`batch_shape` argument to your Input layer.")


def state_sizes(cell):
    from ._rnn_cells import _flat_sizes
    return _flat_sizes(cell.state_size)


def _dims(size):
    return [int(size)] if isinstance(size, int) else TensorShape(size).as_list()


def spec_batch_size(layer):
    """The batch size the layer's input spec fixes (stateful layers keep it when built), else None."""
    spec = layer.input_spec
    if isinstance(spec, (list, tuple)):
        spec = spec[0] if spec else None
    shape = getattr(spec, "shape", None)
    if shape is None or shape.rank is None:
        return None
    return shape[1] if layer.time_major else shape[0]


def reset_states(layer, states=None):
    """Keras' RNN.reset_states: creates the state variables (zeros) the first time, then zeros them, or assigns
    `states` (one array per state, each of the variable's shape)."""
    if not layer._stateful:
        raise AttributeError("Layer must be stateful.")
    batch_size = spec_batch_size(layer)
    if not batch_size:
        raise ValueError(_NEEDS_BATCH)
    sizes = state_sizes(layer.cell)
    dtype = layer._dtype
    if layer._states is None:
        with _C.init_scope():
            layer._states = [_C.Variable(_C.zeros([batch_size] + _dims(size), dtype._enum), False,
                                         "Variable", None) for size in sizes]
        if states is None:
            return
    if states is None:
        for variable in layer._states:
            variable.assign(np.zeros(variable.shape.as_list(), dtype.as_numpy_dtype))
        return
    values = list(states) if isinstance(states, (list, tuple)) else [states]
    if len(values) != len(layer._states):
        raise ValueError(f"Layer {layer.name} expects {len(layer._states)} states, but it received {len(values)} "
                         f"state values. States received: {states}")
    values = [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in values]
    for i, (value, variable) in enumerate(zip(values, layer._states)):
        if TensorShape(value.shape) != variable.shape:
            raise ValueError(f"State {i} is incompatible with layer {layer.name}: expected shape="
                             f"{(batch_size, variable)} but found shape={value.shape}")
    for value, variable in zip(values, layer._states):
        variable.assign(value.astype(dtype.as_numpy_dtype))


def initial_states(layer, initial_state):
    """The states a stateful call starts from: the stored ones; with an `initial_state` given, that one while
    every stored state is zero (fresh or reset) and the stored ones after (Keras' rule)."""
    stored = [v.read_value() for v in layer._states]
    if initial_state is None:
        return stored
    given = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
    if len(given) != len(stored):
        raise ValueError(f"Layer has {len(stored)} states but was passed {len(given)} initial states. Received: "
                         f"initial_state={initial_state}")
    def nonzero(s):
        return _C.reduce_any(_C.not_equal(s, _C.zeros_like(s, None)), list(range(s.shape.rank)), False)
    any_set = _C.reduce_any(_C.stack([nonzero(s) for s in stored], 0), [0], False)
    return [_C.where(any_set, s, _C.cast(g, s.dtype._enum) if g.dtype != s.dtype else g)
            for s, g in zip(stored, given)]


def store_states(layer, states):
    for variable, value in zip(layer._states, states):
        variable.assign(value)
