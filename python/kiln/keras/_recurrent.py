"""Recurrent layers (kiln.keras.layers): the cells SimpleRNNCell, LSTMCell and GRUCell, the RNN layer that
loops a cell over time, and SimpleRNN, LSTM and GRU. Keras' weights, gate orders, equations and defaults; the
same computation as the C++ kiln::nn layers (src/nn/recurrent.cpp). The time loop is kiln.while_loop over
TensorArrays: eagerly a Python loop over the steps, traced one While op whatever the sequence length
(which may be unknown); `unroll=True` repeats the step in the graph instead."""
from .. import _C
from .. import nn as _nn
from ..control_flow import TensorArray, while_loop
from ..tensor_shape import TensorShape
from . import activations as _activations
from . import initializers as _initializers
from ._layer import InputSpec, Layer, _to_tensor
from ._masking import as_bool
from . import _rnn_cells, _rnn_nested, _rnn_states


def _unsupported(layer, **options):
    for name, (value, default) in options.items():
        if value != default:
            raise NotImplementedError(f"kiln.keras.layers.{layer}: {name}={value!r} is not supported")


def _num_states(cell):
    return _rnn_cells.num_states(cell)


def _first(states):
    """The one state of SimpleRNN's and GRU's step, passed alone or as a list of one."""
    return states[0] if isinstance(states, (list, tuple)) else states


def _nested_sizes(cell):
    """Whether a custom cell names several outputs, or states of more than one dimension it does not make itself
    (no get_initial_state): cells for _rnn_nested's loop."""
    output_size = getattr(cell, "output_size", None)
    if isinstance(output_size, (list, tuple)) and not isinstance(output_size, TensorShape):
        return True
    return getattr(cell, "get_initial_state", None) is None and \
        any(not isinstance(s, int) and TensorShape(s).rank != 1 for s in _rnn_cells._flat_sizes(cell.state_size))


def _swap_time_and_batch(rank):
    return [1, 0] + list(range(2, rank))


def _dims(size):
    """An output size (units, or a step's shape) as a list of dims."""
    return [int(size)] if isinstance(size, int) else TensorShape(size).as_list()


def _gates(z, count):
    """A [batch, count * units] tensor cut into its count gates: one Split, whose gradient is one Concat
    (a slice per gate would fill a [batch, count * units] zero tensor each in the backward pass)."""
    return _C.split(z, count, 1)


class _Cell(Layer):
    """What the three cells share: kernel [input, gates * units] (glorot_uniform), recurrent_kernel
    [units, gates * units] (orthogonal), bias (zeros), and the step's input projection."""

    _gates = 1

    def __init__(self, units, activation, recurrent_activation, use_bias, kernel_initializer,
                 recurrent_initializer, bias_initializer, dropout=0.0, recurrent_dropout=0.0, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        _unsupported(type(self).__name__, kernel_regularizer=(kernel_regularizer, None),
                     recurrent_regularizer=(recurrent_regularizer, None), bias_regularizer=(bias_regularizer, None),
                     kernel_constraint=(kernel_constraint, None), recurrent_constraint=(recurrent_constraint, None),
                     bias_constraint=(bias_constraint, None))
        units = int(units)
        if units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, got "
                             f"{units}.")
        for name, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not 0 <= rate < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be in [0, 1), got {rate}")
        self.units = units
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.activation = _activations.get(activation)
        self.recurrent_activation = None if recurrent_activation is None else _activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.recurrent_initializer = _initializers.get(recurrent_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel = self.recurrent_kernel = self.bias = None

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return [self._gates * self.units]

    def _bias_initializer(self):
        return self.bias_initializer

    def _input_bias(self, bias):
        return bias

    def build(self, input_shape):
        if _rnn_nested.is_nested_shape(input_shape):  # a tuple of sequences for the cell
            if not self.cell.built:
                self.cell.build(_rnn_nested.step_shapes(input_shape, self.time_major))
                self.cell.built = True
            self.input_spec = None
            self.built = True
            return
        input_shape = TensorShape(input_shape)
        features = input_shape[-1] if input_shape.rank else None
        if features is None:
            raise ValueError(f"The last dimension of the inputs to {type(self).__name__} should be defined. Found "
                             f"None. Full input shape received: {input_shape}")
        cols = self._gates * self.units
        self.kernel = self.add_weight("kernel", [features, cols], initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [self.units, cols],
                                                initializer=self.recurrent_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._bias_initializer())
        self.built = True

    def _weights(self):
        """The weights' values: kernel, recurrent kernel, bias (None without one). The RNN layer reads them once,
        before its loop over time, so the loop's body reads no variable: a stateless loop, which the graph
        passes may merge with its gradient's re-run of it."""
        return [None if w is None else w.read_value() for w in (self.kernel, self.recurrent_kernel, self.bias)]

    def call(self, inputs, states, training=None):
        return self._step(inputs, states, self._weights(), self._dropout_masks(inputs, _first(states), training))

    def _dropout_masks(self, inputs, h, training):
        """Keras' dropout masks, (inputs', state's), drawn once per call for every step: kept entries are
        1 / (1 - rate), the others 0; None when not training or without that dropout. Without
        recurrent_dropout (Keras' implementation 2) one input mask serves every gate; with it (Keras switches
        to implementation 1) each gate has its own input and state masks, lists of one per gate."""
        def draw(like, rate, count):
            if not training or rate == 0:
                return None
            masks = [_nn.dropout(_C.ones_like(like, None), rate) for _ in range(count or 1)]
            return masks[0] if count is None else masks

        if self.recurrent_dropout == 0:
            return draw(inputs, self.dropout, None), None
        return draw(inputs, self.dropout, self._gates), draw(h, self.recurrent_dropout, self._gates)

    def _times(self, x, w, masks, first, count):
        """x @ the gate columns [first, first + count) of w: x times its dropout mask first (one mask), or each
        gate's block from x times that gate's mask (a list)."""
        u = self.units
        if isinstance(masks, list):
            return _C.concat([_C.matmul(_C.multiply(x, masks[g]), _C.slice(w, [0, g * u], [-1, u]), False, False)
                              for g in range(first, first + count)], 1)
        if masks is not None:
            x = _C.multiply(x, masks)
        columns = w if (first, count) == (0, self._gates) else _C.slice(w, [0, first * u], [-1, count * u])
        return _C.matmul(x, columns, False, False)

    def _project(self, inputs, kernel, bias, masks):
        z = self._times(inputs, kernel, masks, 0, self._gates)
        return _C.bias_add(z, self._input_bias(bias)) if self.use_bias else z

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zeros of [batch, units] per state, the batch taken from `inputs` [batch, ...] when it is known only
        when the graph runs."""
        if inputs is not None:
            zeros = _C.tile(_C.zeros_like(_C.slice(inputs, [0, 0], [-1, 1]), None), [1, self.units])
        else:
            zeros = _C.zeros([int(batch_size), self.units], (dtype or self._dtype)._enum)
        return [zeros] * _num_states(self)

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, activation=_activations.serialize(self.activation),
                      use_bias=self.use_bias, dropout=self.dropout, recurrent_dropout=self.recurrent_dropout)
        if self.recurrent_activation is not None:
            config["recurrent_activation"] = _activations.serialize(self.recurrent_activation)
        return config


class SimpleRNNCell(_Cell):
    """h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)."""

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", **kwargs):
        super().__init__(units, activation, None, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, **kwargs)

    def _step(self, inputs, states, weights, masks=(None, None)):
        kernel, recurrent_kernel, bias = weights
        h = _first(states)
        out = self.activation(_C.add(self._project(inputs, kernel, bias, masks[0]),
                                     self._times(h, recurrent_kernel, masks[1], 0, 1)))
        return out, [out]


class LSTMCell(_Cell):
    """Keras' LSTM step, gates in the order i, f, c, o: z = x @ kernel + bias + h @ recurrent_kernel;
    c = f * c_prev + i * activation(z_c); h = o * activation(c)."""

    _gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kwargs):
        kwargs.pop("implementation", None)
        super().__init__(units, activation, recurrent_activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        units, base = self.units, self.bias_initializer

        def forget_ones(shape, dtype=None, **kwargs):
            return _C.concat([base([units], dtype), _initializers.Ones()([units], dtype),
                              base([2 * units], dtype)], 0)
        return forget_ones

    def _step(self, inputs, states, weights, masks=(None, None)):
        kernel, recurrent_kernel, bias = weights
        h, c = states
        z = _C.add(self._project(inputs, kernel, bias, masks[0]), self._times(h, recurrent_kernel, masks[1], 0, 4))
        gate_act, act = self.recurrent_activation, self.activation
        z_i, z_f, z_c, z_o = _gates(z, 4)
        i = gate_act(z_i)
        f = gate_act(z_f)
        c = _C.add(_C.multiply(f, c), _C.multiply(i, act(z_c)))
        o = gate_act(z_o)
        h = _C.multiply(o, act(c))
        return h, [h, c]

    def get_config(self):
        return dict(super().get_config(), unit_forget_bias=self.unit_forget_bias)


class GRUCell(_Cell):
    """Keras' GRU step, gates in the order z, r, h: z, r = recurrent_activation(x_z + h_prev @ U_z, x_r +
    h_prev @ U_r); hh = activation(x_h + r * (h_prev @ U_h + b_h)) with reset_after (TF2's default; the bias
    is [2, 3 * units], input and recurrent), else activation(x_h + (r * h_prev) @ U_h);
    h = z * h_prev + (1 - z) * hh."""

    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 reset_after=True, **kwargs):
        kwargs.pop("implementation", None)
        super().__init__(units, activation, recurrent_activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return [2, 3 * self.units] if self.reset_after else [3 * self.units]

    def _input_bias(self, bias):
        return _C.gather(bias, _C.constant(0), 0) if self.reset_after else bias

    def _step(self, inputs, states, weights, masks=(None, None)):
        kernel, recurrent_kernel, bias = weights
        h = _first(states)
        x = self._project(inputs, kernel, bias, masks[0])
        u, gate_act, act = self.units, self.recurrent_activation, self.activation
        state_masks = masks[1]
        if self.reset_after:
            inner = self._times(h, recurrent_kernel, state_masks, 0, 3)
            if self.use_bias:
                inner = _C.bias_add(inner, _C.gather(bias, _C.constant(1), 0))
            x_z, x_r, x_h = _gates(x, 3)
            inner_z, inner_r, inner_h = _gates(inner, 3)
            z = gate_act(_C.add(x_z, inner_z))
            r = gate_act(_C.add(x_r, inner_r))
            hh = act(_C.add(x_h, _C.multiply(r, inner_h)))
        else:
            inner = self._times(h, recurrent_kernel, state_masks, 0, 2)
            x_z, x_r, x_h = _gates(x, 3)
            inner_z, inner_r = _gates(inner, 2)
            z = gate_act(_C.add(x_z, inner_z))
            r = gate_act(_C.add(x_r, inner_r))
            h_for_candidate = h if state_masks is None else _C.multiply(h, state_masks[2])
            recurrent_h = _C.matmul(_C.multiply(r, h_for_candidate), _C.slice(recurrent_kernel, [0, 2 * u], [-1, u]),
                                    False, False)
            hh = act(_C.add(x_h, recurrent_h))
        h = _C.add(_C.multiply(z, h), _C.multiply(_C.subtract(1.0, z), hh))
        return h, [h]

    def get_config(self):
        return dict(super().get_config(), reset_after=self.reset_after)


class RNN(Layer):
    """tf.keras.layers.RNN: `cell` over the time steps of [batch, time, features] inputs. Returns the last
    output ([batch, units]) or, with return_sequences, every step's ([batch, time, units]); with return_state,
    a list of that and the final states. With stateful, each call starts from the previous call's final
    states (_rnn_states.py)."""

    _TF_MODULE_IGNORED_PROPERTIES = frozenset({"_states"})  # the stateful layer's states are no weights

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, time_major=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = _rnn_cells.StackedRNNCells(cell)
            if return_state:
                raise NotImplementedError("kiln.keras.layers.RNN: return_state=True with a list of cells (Keras "
                                          "returns the states nested per cell) is not supported")
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise ValueError(f"Argument `cell` should have a `call` method and a `state_size` attribute. "
                             f"Received: cell={cell!r}")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.unroll = bool(unroll)
        self.stateful = bool(stateful)
        self._states = None
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.time_major = bool(time_major)  # inputs [time, batch, features], sequences out [time, batch, units]
        # Keras' LSTM/GRU/SimpleRNN want [batch, time, features]; a custom cell may take nested or other ranks.
        self.input_spec = InputSpec(ndim=3) if isinstance(cell, _Cell) else None
        self.supports_masking = True

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, list) and not args and kwargs.get("initial_state") is None:
            # Keras' standardize_args: layer([x, state, ...]) is layer(x, initial_state=[state, ...]); Keras 2's
            # functional configs record RNN calls with initial states that way. A tuple is nested inputs.
            if len(inputs) > 1:
                kwargs["initial_state"] = list(inputs[1:])
            inputs = inputs[0]
        return Layer.__call__(self, inputs, *args, **kwargs)

    @property
    def units(self):
        return self.cell.units

    @property
    def states(self):
        """The stateful layer's state variables; [None] per state otherwise (or before it is built)."""
        if self._states is None:
            return [None] * _num_states(self.cell)
        return self._states

    @states.setter
    def states(self, states):
        self._states = states

    def reset_states(self, states=None):
        _rnn_states.reset_states(self, states)

    def build(self, input_shape):
        if _rnn_nested.is_nested_shape(input_shape):  # a tuple of sequences for the cell
            if not self.cell.built:
                self.cell.build(_rnn_nested.step_shapes(input_shape, self.time_major))
                self.cell.built = True
            self.input_spec = None
            self.built = True
            return
        input_shape = TensorShape(input_shape)
        batch = input_shape[1] if self.time_major else input_shape[0]
        step_dims = input_shape.as_list()[2:]
        if not self.cell.built:
            self.cell.build(TensorShape([batch] + step_dims))  # one step: [batch, features] (or [batch, h, w, c])
            self.cell.built = True
        if self._stateful:
            # Keras: a stateful layer's spec keeps the batch size its states have.
            shape = [None, batch] + step_dims if self.time_major else [batch, None] + step_dims
            self.input_spec = InputSpec(shape=shape)
            self.reset_states()
        else:
            self.input_spec = InputSpec(ndim=input_shape.rank, axes={-1: input_shape[-1]})
        self.built = True

    def compute_mask(self, inputs, mask=None):
        """The mask of the sequences returned (None for the last output alone); states have none."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        return [output_mask] + [None] * _num_states(self.cell) if self.return_state else output_mask

    def compute_output_shape(self, input_shape):
        if _rnn_nested.is_nested_shape(input_shape) or _nested_sizes(self.cell):
            return _rnn_nested.output_shapes(self, input_shape)
        input_shape = TensorShape(input_shape)
        steps, batch = (input_shape[0], input_shape[1]) if self.time_major else (input_shape[1], input_shape[0])
        sequences = [steps, batch] if self.time_major else [batch, steps]
        out = TensorShape(sequences + _dims(self.cell.output_size) if self.return_sequences else
                          [batch] + _dims(self.cell.output_size))
        if not self.return_state:
            return out
        return [out] + [TensorShape([batch, int(size)]) for size in _rnn_cells._flat_sizes(self.cell.state_size)]

    def call(self, inputs, initial_state=None, mask=None, training=None):
        from ..ragged_tensor import RaggedTensor
        if isinstance(inputs, RaggedTensor):
            return self._ragged_call(inputs, initial_state, mask, training)
        if isinstance(inputs, (list, tuple)) or _nested_sizes(self.cell):
            output, states = _rnn_nested.nested_call(self, inputs, initial_state)
            return [output] + states if self.return_state else output
        perm = _swap_time_and_batch(inputs.shape.rank)
        x = inputs if self.time_major else _C.transpose(inputs, perm)  # time major
        steps = x.shape[0]
        if steps == 0:
            raise ValueError(f"Layer {self.name}: the inputs have no time steps (shape {inputs.shape})")
        n = _num_states(self.cell)
        if self._stateful:
            states = _rnn_states.initial_states(self, initial_state)
        elif initial_state is None:
            states = _rnn_cells.initial_states(self.cell, _C.gather(x, _C.constant(0), 0))
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            if len(states) != n:
                raise ValueError(f"Layer {self.name} expects {n} initial state(s), but it received "
                                 f"{len(states)} initial state(s).")
        if isinstance(self.cell, _Cell):
            weights = self.cell._weights()
            masks = self.cell._dropout_masks(_C.gather(x, _C.constant(0), 0), states[0], training)

            def step(x_t, states):
                return self.cell._step(x_t, states, weights, masks)
        else:
            step = self.cell.call
        steps_mask = self._time_major_mask(inputs, mask)
        if steps_mask is None:
            unmasked = step
            def step(x_t, states, keep):
                return unmasked(x_t, states)
        else:
            if x.shape.rank != 3:
                raise NotImplementedError(f"kiln.keras.layers.{type(self).__name__}: masks over steps of rank "
                                          f"{x.shape.rank - 1} are not supported")
            first = _C.gather(x, _C.constant(0), 0)
            zero_output = _C.tile(_C.zeros_like(_C.slice(first, [0, 0], [-1, 1]), None), [1, self.cell.output_size])
            step = self._masked(step, zero_output)
            states = list(states) + [zero_output]
        if self.unroll and _C.control_flow_intercepted():
            if steps is None:
                raise ValueError("Cannot unroll a RNN if the time dimension is undefined.")
            inputs_by_step = _C.unstack(x, 0)
            keep_by_step = [None] * steps if steps_mask is None else _C.unstack(steps_mask, 0)
            outputs = []
            for t in (range(steps - 1, -1, -1) if self.go_backwards else range(steps)):
                out, states = step(inputs_by_step[t], states, keep_by_step[t])
                outputs.append(out)
            output = _C.stack(outputs, 0 if self.time_major else 1) if self.return_sequences else outputs[-1]
        else:
            length = _C.constant(steps) if steps is not None else _C.shape(x)[0]
            batch = x.shape[1]
            inputs_ta = TensorArray(self.dtype, size=length, element_shape=[batch] + x.shape.as_list()[2:]).unstack(x)
            keep_ta = None if steps_mask is None else \
                TensorArray("bool", size=length, element_shape=[batch, 1]).unstack(steps_mask)
            # The built-in cells' output is their first state; a custom cell's last output is read back.
            own_output = not self.return_sequences and steps_mask is None and not isinstance(self.cell, _Cell)
            outputs_ta = [TensorArray(self.dtype, size=length, element_shape=[batch] + _dims(self.cell.output_size))] \
                if self.return_sequences or own_output else []

            def body(i, states, outputs_ta):
                t = _C.subtract(_C.subtract(length, 1), i) if self.go_backwards else i
                keep = None if keep_ta is None else keep_ta.read(t)
                out, new_states = step(inputs_ta.read(t), list(states), keep)
                return _C.add(i, 1), list(new_states), [ta.write(i, out) for ta in outputs_ta]

            _, states, outputs_ta = while_loop(lambda i, *_: _C.less(i, length), body,
                                               (_C.constant(0), list(states), outputs_ta))
            states = list(states)
            # Masked, the last output is the last state (the output of the last kept step).
            if self.return_sequences:
                output = outputs_ta[0].stack()
                rest = output.shape.as_list()[1:] if output.shape.rank is not None else [None, None]
                if steps is not None and output.shape.rank is not None and output.shape[0] is None and \
                        rest.count(None) <= 1:
                    output = _C.reshape(output, [steps] + [-1 if d is None else d for d in rest])  # a known length
                output = output if self.time_major else _C.transpose(output, perm)
            elif own_output:
                output = outputs_ta[0].read(_C.subtract(length, 1))
            else:
                output = states[-1] if steps_mask is not None else states[0]
        if steps_mask is not None:
            states = states[:-1]  # without the previous output
        if self._stateful:
            _rnn_states.store_states(self, states)
        if self.return_state:
            return [output] + list(states)
        return output

    def _ragged_call(self, inputs, initial_state, mask, training):
        """Keras' rule for ragged sequences: the padded batch, masked past each row's length; the sequences
        returned ragged again."""
        if mask is not None:
            raise ValueError(f"The mask that was passed in was {mask}, which cannot be applied to RaggedTensor inputs. "
                             "Please make sure that there is no mask injected by upstream layers.")
        if self.unroll:
            raise ValueError("The input received contains RaggedTensors and does not support unrolling. Disable "
                             "unrolling by passing `unroll=False` in the RNN Layer constructor.")
        if self.time_major or (self.go_backwards and self.return_sequences):
            raise NotImplementedError(f"kiln.keras.layers.{type(self).__name__}: ragged inputs with time_major, or "
                                      "with go_backwards and return_sequences, are not supported")
        lengths = inputs.row_lengths()
        padded = inputs.to_tensor()
        import kiln as tf
        steps = tf.range(tf.cast(tf.shape(padded)[1], lengths.dtype))
        keep = _C.less(_C.expand_dims(steps, 0), _C.expand_dims(lengths, 1))
        result = self.call(padded, initial_state=initial_state, mask=keep, training=training)
        if not self.return_sequences:
            return result
        from ..ragged_tensor import RaggedTensor
        if self.return_state:
            return [RaggedTensor.from_tensor(result[0], lengths=lengths)] + list(result[1:])
        return RaggedTensor.from_tensor(result, lengths=lengths)

    def _time_major_mask(self, inputs, mask):
        """The [batch, time] mask ([time, batch] with time_major) as [time, batch, 1] bools (None without one)."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if mask is None:
            return None
        mask = as_bool(_to_tensor(mask))
        if mask.shape.rank != 2:
            expected = "[time, batch]" if self.time_major else "[batch, time]"
            raise ValueError(f"Layer {self.name}: the mask must be {expected}, got shape {mask.shape} for inputs of "
                             f"shape {inputs.shape}")
        return _C.expand_dims(mask if self.time_major else _C.transpose(mask, [1, 0]), -1)

    def _masked(self, step, zero_output):
        """Keras' masked step (backend.rnn's): where `keep` [batch, 1] is false the states stay and the output
        is the previous step's (zeros before the first kept step, or always with zero_output_for_mask). The
        previous output rides as one more state, the last."""
        def masked_step(x_t, states, keep):
            *states, previous = states
            out, new_states = step(x_t, states)
            kept_states = [_C.where(keep, new, old) for new, old in zip(new_states, states)]
            out = _C.where(keep, out, zero_output if self.zero_output_for_mask else previous)
            return out, kept_states + [out]
        return masked_step

    def get_config(self):
        config = super().get_config()
        config.update(return_sequences=self.return_sequences, return_state=self.return_state,
                      go_backwards=self.go_backwards, stateful=self._stateful, unroll=self.unroll,
                      time_major=self.time_major)
        if self.zero_output_for_mask:
            config["zero_output_for_mask"] = True
        from ._serialization import serialize_keras_object
        config["cell"] = serialize_keras_object(self.cell)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from . import layers as _layers
        config = dict(config)
        cell = _layers.deserialize(config.pop("cell"), custom_objects=custom_objects)
        config.pop("num_constants", None)
        return cls(cell, **config)


class _Recurrent(RNN):
    """SimpleRNN, LSTM and GRU: an RNN over their own cell, named as the layer so the weights are
    "<layer>/kernel:0" (the C++ layers' names)."""

    _cell_class = None

    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, time_major=False, zero_output_for_mask=False, name=None, **kwargs):
        from . import backend
        layer_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in ("input_shape", "batch_input_shape",
                                                                       "batch_size", "input_dim", "dtype",
                                                                       "trainable")}
        if name is None:
            name = backend.unique_object_name(backend.to_snake_case(type(self).__name__))
        cell = self._cell_class(units, name=name, dtype=layer_kwargs.get("dtype"), **kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll, time_major=time_major,
                         zero_output_for_mask=zero_output_for_mask, name=name, **layer_kwargs)

    def get_config(self):
        """The layer's settings and its cell's (units, activation, dropout, ...), as Keras' LSTM.get_config."""
        cell = {k: v for k, v in self.cell.get_config().items() if k not in ("name", "trainable", "dtype")}
        config = dict(super().get_config(), **cell)
        del config["cell"]  # the layer's own settings are the cell's, as Keras' LSTM.get_config
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)

    def __getattr__(self, name):
        # The cell's settings and weights (units, activation, kernel, ...) read through the layer, as Keras'.
        cell = self.__dict__.get("cell")
        if cell is not None and name in ("activation", "recurrent_activation", "use_bias", "kernel",
                                         "recurrent_kernel", "bias", "unit_forget_bias", "reset_after", "dropout", "recurrent_dropout"):
            return getattr(cell, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class SimpleRNN(_Recurrent):
    _cell_class = SimpleRNNCell


class LSTM(_Recurrent):
    _cell_class = LSTMCell


class GRU(_Recurrent):
    _cell_class = GRUCell
