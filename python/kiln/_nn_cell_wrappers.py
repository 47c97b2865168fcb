"""tf.nn.RNNCellDropoutWrapper, RNNCellResidualWrapper and RNNCellDeviceWrapper: RNN cells around a cell, for
keras.layers.RNN (TF 2 keeps them for code ported from TF 1's rnn_cell wrappers). As TF's, the dropout wrapper
drops whenever a keep probability is below 1, in inference too (it knows no `training`).

They subclass keras' AbstractRNNCell, so this module imports kiln.keras: tf.nn loads it on the first use of one
of the three names (nn.py's module __getattr__), after kiln has finished importing."""
from . import _ops, dtypes as _dtypes
from . import random as _random
from ._device import device as _device_scope
from ._nn_dropout import dropout as _dropout
from .keras.layers import AbstractRNNCell


def _flat(states):
    return list(states) if isinstance(states, (list, tuple)) else [states]


def _flat_sizes(size):
    """A state_size (an int or a nested list / tuple of ints) as a flat list of ints."""
    if isinstance(size, (list, tuple)):
        return [s for part in size for s in _flat_sizes(part)]
    return [int(size)]


class _CellWrapper(AbstractRNNCell):
    """What every wrapper delegates to its cell: sizes, building, initial states."""

    def __init__(self, cell, **kwargs):
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise TypeError(f"The parameter cell is not RNNCell: {cell}")
        super().__init__(**kwargs)
        self.cell = cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def build(self, input_shape):
        if not self.cell.built:
            self.cell.build(input_shape)
            self.cell.built = True
        self.built = True

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return self.cell.get_initial_state(inputs=inputs, batch_size=batch_size, dtype=dtype)

    def _cell_step(self, inputs, states):
        output, new_states = self.cell(inputs, _flat(states))
        return output, _flat(new_states)


class RNNCellDropoutWrapper(_CellWrapper):
    """Dropout with keep probabilities on a cell's inputs, states and outputs (x / keep * mask). With
    variational_recurrent, one mask per input, state and output drawn at construction and used for every step
    and call, as TF's (input_size is needed for the inputs' mask)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, **kwargs)
        for what, keep in (("input", input_keep_prob), ("state", state_keep_prob), ("output", output_keep_prob)):
            if not 0.0 < float(keep) <= 1.0:
                raise ValueError(f"Parameter {what}_keep_prob must be between 0 and 1: {keep}")
        self._keep = {"input": float(input_keep_prob), "state": float(state_keep_prob),
                      "output": float(output_keep_prob)}
        self._seed = seed
        self._keep_state = dropout_state_filter_visitor or (lambda state: True)
        self._noise = None
        if variational_recurrent:
            if input_keep_prob < 1.0 and input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                 "input_size must be provided")
            sizes = {"output": int(cell.output_size)}
            sizes.update({("state", i): size for i, size in enumerate(_flat_sizes(cell.state_size))})
            if input_size is not None:
                sizes["input"] = int(input_size)
            self._noise = {key: _random.uniform([1, size], dtype=dtype or _dtypes.float32, seed=seed)
                           for key, size in sizes.items()}

    def _drop(self, value, kind, key=None):
        keep = self._keep[kind]
        if keep >= 1.0:
            return value
        if self._noise is None:
            return _dropout(value, 1.0 - keep, seed=self._seed)
        mask = _ops.floor(_ops.add(_ops.cast(self._noise[key or kind], value.dtype), keep))
        return _ops.multiply(_ops.divide(value, keep), mask)

    def call(self, inputs, states, training=None):
        inputs = self._drop(inputs, "input")
        states = [self._drop(s, "state", ("state", i)) if self._keep_state(s) else s
                  for i, s in enumerate(_flat(states))]
        output, new_states = self._cell_step(inputs, states)
        return self._drop(output, "output"), new_states


class RNNCellResidualWrapper(_CellWrapper):
    """The cell's output plus its input (or residual_fn(inputs, output))."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def call(self, inputs, states, training=None):
        output, new_states = self._cell_step(inputs, states)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_states
        return _ops.add(inputs, output), new_states


class RNNCellDeviceWrapper(_CellWrapper):
    """The cell run under tf.device(device)."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def call(self, inputs, states, training=None):
        with _device_scope(self._device):
            return self._cell_step(inputs, states)
