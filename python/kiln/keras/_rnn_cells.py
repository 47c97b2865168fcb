"""Cells for keras.layers.RNN besides the built-in three: AbstractRNNCell (the base of custom cells) and
StackedRNNCells (a list of cells run as one: each cell's output is the next one's input, the states are all the
cells' states in order). RNN(cell=[...]) stacks a list of cells as Keras does."""
from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from ._layer import Layer


def _flat_sizes(size):
    """A state_size (an int, a shape, or a nested list / tuple of them) as the flat list of each state's size."""
    if isinstance(size, (list, tuple)) and not isinstance(size, TensorShape):
        return [s for part in size for s in _flat_sizes(part)]
    return [size]


def num_states(cell):
    return len(_flat_sizes(cell.state_size))


def zero_states(cell, first_step):
    """Zeros of [batch, size] per state of a cell without get_initial_state, the batch taken from the [batch, ...]
    input of the first step."""
    column = _C.zeros_like(_C.slice(first_step, [0, 0], [-1, 1]), None)
    return [_C.tile(column, [1, int(size)]) for size in _flat_sizes(cell.state_size)]


def initial_states(cell, first_step):
    make = getattr(cell, "get_initial_state", None)
    return list(make(first_step)) if make is not None else zero_states(cell, first_step)


class AbstractRNNCell(Layer):
    """The base of an RNN cell: subclasses define state_size, output_size and call(inputs, states) ->
    (output, new_states); get_initial_state gives zeros."""

    @property
    def state_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    def call(self, inputs, states):
        raise NotImplementedError

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is None:
            dtype = self._dtype if dtype is None else _dtypes.as_dtype(dtype)
            return [_C.zeros([int(batch_size), int(size)], dtype._enum) for size in _flat_sizes(self.state_size)]
        return zero_states(self, inputs)


class StackedRNNCells(Layer):
    """Cells run one after the other within each step."""

    def __init__(self, cells, **kwargs):
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError(f"All cells must have a `call` method. Received cell without a `call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell without a "
                                 f"`state_size`: {cell}")
        self.cells = list(cells)
        if kwargs.pop("reverse_state_order", False):
            raise NotImplementedError("kiln.keras.layers.StackedRNNCells: reverse_state_order=True (deprecated in "
                                      "Keras) is not supported")
        super().__init__(**kwargs)

    @property
    def state_size(self):
        return tuple(cell.state_size for cell in self.cells)

    @property
    def output_size(self):
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return _flat_sizes(last.state_size)[0]

    def build(self, input_shape):
        shape = TensorShape(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(shape)
                cell.built = True
            size = getattr(cell, "output_size", None) or _flat_sizes(cell.state_size)[0]
            shape = TensorShape([shape[0], int(size)])
        self.built = True

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Every cell's initial states, flat, in the cells' order."""
        return [s for cell in self.cells for s in initial_states(cell, inputs)]

    def call(self, inputs, states, training=None, **kwargs):
        """One step: the flat states cut per cell, each cell fed the previous one's output."""
        states = list(states)
        new_states = []
        for cell in self.cells:
            count = num_states(cell)
            own, states = states[:count], states[count:]
            kwargs_for_cell = {"training": training} if getattr(cell, "_call_accepts_training", False) else {}
            inputs, own = cell(inputs, own, **kwargs_for_cell)
            new_states.extend(own if isinstance(own, (list, tuple)) else [own])
        return inputs, new_states

    def get_config(self):
        from ._serialization import serialize_keras_object
        return dict(super().get_config(), cells=[serialize_keras_object(cell) for cell in self.cells])

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from . import layers as _layers
        config = dict(config)
        cells = [_layers.deserialize(c, custom_objects=custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)
