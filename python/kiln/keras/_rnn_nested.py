"""keras.layers.RNN over nested structures: a cell whose inputs are a tuple of sequences, or whose
state_size / output_size are lists of shapes of any rank (keras.io's "Working with RNNs", NestedCell).
Each flat input is read from its own TensorArray, each flat output written to its own; the cell sees
the structures Keras gives it: the inputs nested as passed, the states as a list, one per state_size
entry. Masks, stateful layers and ragged inputs are refused here."""
from .. import _C
from .. import nest as _nest
from ..control_flow import TensorArray, while_loop
from ..tensor_shape import TensorShape
from ._rnn_cells import _flat_sizes


def is_nested_shape(input_shape):
    """Whether a build() shape is a structure of shapes (a tuple of inputs) rather than one shape."""
    return isinstance(input_shape, (list, tuple)) and not isinstance(input_shape, TensorShape) and \
        len(input_shape) > 0 and all(isinstance(s, (TensorShape, list, tuple)) or s is None for s in input_shape)


def step_shapes(input_shape, time_major):
    """Each sequence's shape without its time dimension, in the structure given."""
    def one(shape):
        dims = TensorShape(shape).as_list()
        return TensorShape(dims[1:2] + dims[2:] if time_major else dims[:1] + dims[2:])
    return type(input_shape)(one(s) for s in input_shape)


def output_shapes(layer, input_shape):
    """compute_output_shape for nested inputs or sizes: one shape per output_size entry (a tuple when the
    cell names several), then the states' shapes with return_state."""
    first = TensorShape(input_shape[0] if is_nested_shape(input_shape) else input_shape).as_list()
    steps, batch = (first[0], first[1]) if layer.time_major else (first[1], first[0])
    lead = ([steps, batch] if layer.time_major else [batch, steps]) if layer.return_sequences else [batch]
    outputs = [TensorShape(lead + _dims(size)) for size in _flat_sizes(layer.cell.output_size)]
    output = tuple(outputs) if len(outputs) > 1 else outputs[0]
    if not layer.return_state:
        return output
    return [output] + [TensorShape([batch] + _dims(size)) for size in _flat_sizes(layer.cell.state_size)]


def _dims(size):
    return [int(size)] if isinstance(size, int) else TensorShape(size).as_list()


def _zeros(batch, size, dtype):
    from .. import _ops
    return _ops.zeros(_ops.concat([_ops.reshape(batch, [1]), _ops.constant(_dims(size), batch.dtype)], 0), dtype)


def nested_call(layer, inputs, initial_state):
    """The RNN layer's call for nested inputs or sizes: (output structure, flat final states)."""
    from .. import _ops
    if layer.stateful:
        raise NotImplementedError(f"kiln.keras.layers.RNN ({layer.name}): stateful=True with nested inputs or "
                                  "states is not supported")
    cell = layer.cell
    flat_inputs = _nest.flatten(inputs)
    sequences = [x if layer.time_major else _C.transpose(x, [1, 0] + list(range(2, x.shape.rank)))
                 for x in flat_inputs]
    first = sequences[0]
    steps = first.shape[0]
    length = _C.constant(steps) if steps is not None else _C.shape(first)[0]
    batch = _ops.shape(first, out_type="int32")[1]
    state_sizes = _flat_sizes(cell.state_size)
    if initial_state is None:
        states = [_zeros(batch, size, first.dtype) for size in state_sizes]
    else:
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        if len(states) != len(state_sizes):
            raise ValueError(f"Layer {layer.name} expects {len(state_sizes)} initial state(s), but it received "
                             f"{len(states)} initial state(s).")
    static_batch = first.shape[1]
    input_tas = [TensorArray(x.dtype, size=length, element_shape=[static_batch] + x.shape.as_list()[2:]).unstack(x)
                 for x in sequences]
    output_sizes = _flat_sizes(cell.output_size)
    output_tas = [TensorArray(first.dtype, size=length, element_shape=[static_batch] + _dims(size))
                  for size in output_sizes]

    returned = []  # the structure the cell returns its output in, as Keras packs the layer's output

    def body(i, states, output_tas):
        t = _C.subtract(_C.subtract(length, 1), i) if layer.go_backwards else i
        x_t = _nest.pack_sequence_as(inputs, [ta.read(t) for ta in input_tas])
        out, new_states = cell.call(x_t, list(states))
        flat_out = _nest.flatten(out)
        returned[:] = [out]
        if len(flat_out) != len(output_tas):
            raise ValueError(f"The cell of {layer.name} returned {len(flat_out)} outputs; its output_size names "
                             f"{len(output_tas)}")
        return _C.add(i, 1), _nest.flatten(new_states), [ta.write(i, o) for ta, o in zip(output_tas, flat_out)]

    _, states, output_tas = while_loop(lambda i, *_: _C.less(i, length), body,
                                       (_C.constant(0), list(states), output_tas))
    if layer.return_sequences:
        flat = [ta.stack() for ta in output_tas]
        if not layer.time_major:
            flat = [_C.transpose(o, [1, 0] + list(range(2, o.shape.rank))) for o in flat]
    else:
        last = _C.subtract(length, 1)
        flat = [ta.read(last) for ta in output_tas]
    output = _nest.pack_sequence_as(returned[0], flat) if len(flat) > 1 else flat[0]
    return output, list(states)
