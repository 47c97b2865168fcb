"""ConvLSTM1D / 2D / 3D (Keras 2.15): LSTMs whose products are convolutions, over [batch, time, *spatial,
channels] sequences. Gates i, f, c, o as Keras orders them:
x_g = conv(x, kernel_g) + bias_g (the layer's strides, padding, dilation), h_g = conv(h_prev, recurrent_kernel_g)
("same", stride 1); c = f * c_prev + i * activation(x_c + h_c), h = o * activation(c). The RNN layer runs the
steps (its while loop takes steps of any rank)."""
import kiln as _tf

from .. import _C

from . import activations as _activations
from . import initializers as _initializers
from ._backend_ops import conv2d as _conv2d
from ._layer import InputSpec, Layer
from ._recurrent import RNN
from ._serialization import serialize_keras_object


def _tuple(value, rank):
    return tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else (int(value),) * rank


def _conv1d(x, kernel, strides, padding, dilation_rate=(1,)):
    from ._backend_ops import conv1d
    return conv1d(x, kernel, strides[0], padding, dilation_rate=dilation_rate[0])


def _conv3d(x, kernel, strides, padding, dilation_rate=(1, 1, 1)):
    from ._conv3d import conv3d
    return conv3d(x, kernel, strides, padding, dilation_rate)


def _four_gates(z, filters):
    """z [..., 4 * filters] cut into the gates: one Split, or slices while the batch is unknown in a trace (the
    engine loses a Split's rank in the while loop's gradient then, as _recurrent._gates says)."""
    if z.shape[0] is None and _C.is_tracing():
        return [z[..., g * filters:(g + 1) * filters] for g in range(4)]
    return _tf.split(z, 4, axis=-1)


def _conv_length(size, kernel, padding, stride, dilation):
    if size is None:
        return None
    span = (kernel - 1) * dilation + 1
    length = size if padding == "same" else size - span + 1
    return (length + stride - 1) // stride


class ConvLSTM2DCell(Layer):
    _rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", dilation_rate=1,
                 activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        rank = self._rank
        self.kernel_size, self.strides = _tuple(kernel_size, rank), _tuple(strides, rank)
        self.dilation_rate = _tuple(dilation_rate, rank)
        for name, value in (("kernel_size", self.kernel_size), ("strides", self.strides),
                            ("dilation_rate", self.dilation_rate)):
            if len(value) != rank:
                raise ValueError(f"The `{name}` argument must be a tuple of {rank} integers. Received: {value}")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"The `padding` argument must be a list/tuple or one of \"valid\", \"same\". Received: "
                             f"{padding}")
        self.activation = _activations.get(activation)
        self.recurrent_activation = _activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = bool(use_bias), bool(unit_forget_bias)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.recurrent_initializer = _initializers.get(recurrent_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.state_size = (self.filters, self.filters)
        self.output_size = None

    def build(self, input_shape):
        shape = _tf.TensorShape(input_shape).as_list()  # one step: [batch, (rows, cols | steps), channels]
        if shape[-1] is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found None.")
        spatial = [_conv_length(n, k, self.padding, s, d) for n, k, s, d in
                   zip(shape[1:-1], self.kernel_size, self.strides, self.dilation_rate)]
        self.output_size = _tf.TensorShape(spatial + [self.filters])
        f = self.filters
        self.kernel = self.add_weight("kernel", self.kernel_size + (shape[-1], 4 * f),
                                      initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", self.kernel_size + (f, 4 * f),
                                                initializer=self.recurrent_initializer)
        self.bias = None
        if self.use_bias:
            base = self.bias_initializer
            if self.unit_forget_bias:
                def forget_ones(shape, dtype=None, **kwargs):
                    return _tf.concat([base([f], dtype), _tf.ones([f], dtype), base([2 * f], dtype)], 0)
                initializer = forget_ones
            else:
                initializer = base
            self.bias = self.add_weight("bias", (4 * f,), initializer=initializer)
        self.built = True

    def get_initial_state(self, first_step):
        """Zeros of [batch, (spatial dims out), filters] for h and c, the batch taken from the first step."""
        corner = _tf.zeros_like(first_step[(slice(None),) + (slice(0, 1),) * (self._rank + 1)])  # [batch, 1, .., 1]
        zeros = _tf.tile(corner, [1] + self.output_size.as_list())
        return [zeros, zeros]

    def call(self, inputs, states, training=None):
        h_prev, c_prev = states[0], states[1]
        conv = {1: _conv1d, 2: _conv2d, 3: _conv3d}[self._rank]
        x = conv(inputs, self.kernel, self.strides, self.padding, dilation_rate=self.dilation_rate)
        if self.use_bias:
            x = _tf.nn.bias_add(x, self.bias)
        h = conv(h_prev, self.recurrent_kernel, (1,) * self._rank, "same")
        x_i, x_f, x_c, x_o = _four_gates(x + h, self.filters)
        i = self.recurrent_activation(x_i)
        f = self.recurrent_activation(x_f)
        c = f * c_prev + i * self.activation(x_c)
        o = self.recurrent_activation(x_o)
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides, padding=self.padding,
                      dilation_rate=self.dilation_rate, activation=_activations.serialize(self.activation),
                      recurrent_activation=_activations.serialize(self.recurrent_activation), use_bias=self.use_bias,
                      kernel_initializer=serialize_keras_object(self.kernel_initializer),
                      recurrent_initializer=serialize_keras_object(self.recurrent_initializer),
                      bias_initializer=serialize_keras_object(self.bias_initializer),
                      unit_forget_bias=self.unit_forget_bias)
        return config


class ConvLSTM2D(RNN):
    """The ConvLSTM2DCell over the steps of [batch, time, rows, cols, channels] (channels_last)."""

    _cell_class = ConvLSTM2DCell
    _ndim = 5

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs):
        unsupported = {"data_format": (data_format, (None, "channels_last")), "dropout": (dropout, (0, 0.0)),
                       "recurrent_dropout": (recurrent_dropout, (0, 0.0)), "stateful": (stateful, (False,)),
                       "kernel_regularizer": (kernel_regularizer, (None,)),
                       "recurrent_regularizer": (recurrent_regularizer, (None,)),
                       "bias_regularizer": (bias_regularizer, (None,)),
                       "kernel_constraint": (kernel_constraint, (None,)),
                       "recurrent_constraint": (recurrent_constraint, (None,)),
                       "bias_constraint": (bias_constraint, (None,))}
        for name, (value, allowed) in unsupported.items():
            if value not in allowed:
                raise NotImplementedError(f"kiln.keras.layers.{type(self).__name__}: {name}={value!r} is not "
                                          "supported")
        from . import backend
        if kwargs.pop("unroll", False):
            raise TypeError("Unrolling is not possible with convolutional RNNs.")
        for name in ("time_major", "zero_output_for_mask"):
            if kwargs.pop(name, False):
                raise NotImplementedError(f"kiln.keras.layers.{type(self).__name__}: {name}=True is not supported")
        layer_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in ("input_shape", "batch_input_shape",
                                                                       "batch_size", "dtype", "trainable")}
        # The cell takes the layer's name, so the weights are "<layer>/kernel:0" as the other RNN layers'.
        layer_kwargs["name"] = kwargs.pop("name", None) or \
            backend.unique_object_name({4: "conv_lstm1d", 5: "conv_lstm2d", 6: "conv_lstm3d"}[self._ndim])
        cell = self._cell_class(filters, kernel_size, strides=strides, padding=padding, dilation_rate=dilation_rate,
                              activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias,
                              kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                              bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
                              dtype=layer_kwargs.get("dtype"), name=layer_kwargs["name"], **kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, activity_regularizer=activity_regularizer, **layer_kwargs)
        self.input_spec = InputSpec(ndim=self._ndim)

    def build(self, input_shape):
        super().build(input_shape)
        self.input_spec = InputSpec(ndim=self._ndim, axes={-1: _tf.TensorShape(input_shape)[-1]})

    def compute_output_shape(self, input_shape):
        shape = _tf.TensorShape(input_shape).as_list()
        if not self.cell.built:
            self.cell.build([shape[0]] + shape[2:])
        step = [shape[0]] + self.cell.output_size.as_list()
        out = _tf.TensorShape(step[:1] + [shape[1]] + step[1:] if self.return_sequences else step)
        return [out, _tf.TensorShape(step), _tf.TensorShape(step)] if self.return_state else out

    def __getattr__(self, name):
        cell = self.__dict__.get("cell")
        if cell is not None and name in ("filters", "kernel_size", "strides", "padding", "dilation_rate", "activation",
                                         "recurrent_activation", "use_bias", "kernel", "recurrent_kernel", "bias",
                                         "unit_forget_bias"):
            return getattr(cell, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def get_config(self):
        cell = {k: v for k, v in self.cell.get_config().items() if k not in ("name", "trainable", "dtype")}
        config = dict(super().get_config(), data_format="channels_last", dropout=0.0, recurrent_dropout=0.0, **cell)
        del config["cell"]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


class ConvLSTM1DCell(ConvLSTM2DCell):
    _rank = 1


class ConvLSTM1D(ConvLSTM2D):
    """The ConvLSTM1DCell over the steps of [batch, time, steps, channels] (channels_last)."""

    _cell_class = ConvLSTM1DCell
    _ndim = 4


class ConvLSTM3DCell(ConvLSTM2DCell):
    _rank = 3


class ConvLSTM3D(ConvLSTM2D):
    """The ConvLSTM3DCell over the steps of [batch, time, depth, rows, cols, channels] (channels_last)."""

    _cell_class = ConvLSTM3DCell
    _ndim = 6
