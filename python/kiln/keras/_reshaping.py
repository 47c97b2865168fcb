"""Keras' reshaping layers: RepeatVector, Permute, UpSampling1D/2D (nearest), ZeroPadding1D/2D and
Cropping1D/2D, channels_last as everywhere in kiln.keras."""
from .. import _C
from ..tensor_shape import TensorShape
from ._layer import InputSpec, Layer


def _pair(value, name):
    """An int, or a pair of ints, -> a pair (Keras' normalize_tuple)."""
    if isinstance(value, int):
        return (value, value)
    out = tuple(int(v) for v in value)
    if len(out) != 2:
        raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
    return out


def _pairs2(value, name):
    """2-D padding or cropping: an int, two ints (symmetric per axis) or two pairs."""
    if isinstance(value, int):
        return ((value, value), (value, value))
    value = tuple(value)
    if len(value) != 2:
        raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
    return tuple(_pair(v, name) for v in value)


def _reshape(x, shape):
    """reshape with the batch dim (and at most one other unknown) as -1."""
    dims = list(shape)
    if sum(d is None for d in dims) <= 1:
        return _C.reshape(x, [-1 if d is None else d for d in dims])
    raise ValueError(f"kiln.keras: cannot reshape a tensor of shape {x.shape} to {shape}: more than one unknown dim")


class RepeatVector(Layer):
    """[batch, features] -> [batch, n, features]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return _C.tile(_C.expand_dims(inputs, 1), [1, self.n, 1])

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape)
        return TensorShape([s[0], self.n, s[1]])

    def get_config(self):
        config = super().get_config()
        config["n"] = self.n
        return config


class Permute(Layer):
    """Permutes the non-batch dims: dims=(2, 1) swaps the two dims of [batch, a, b] (1-based, as Keras')."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={dims}")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return _C.transpose(inputs, [0] + list(self.dims))

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0]] + [s[d] for d in self.dims])

    def get_config(self):
        config = super().get_config()
        config["dims"] = self.dims
        return config


def _repeat_axis(x, axis, times, shape):
    """Each entry along `axis` repeated `times` times in place (nearest upsampling along one axis)."""
    if times == 1:
        return x
    expanded = _C.expand_dims(x, axis + 1)
    multiples = [1] * (len(shape) + 1)
    multiples[axis + 1] = times
    tiled = _C.tile(expanded, multiples)
    out = list(shape)
    out[axis] = None if out[axis] is None else out[axis] * times
    return _reshape(tiled, out)


class UpSampling1D(Layer):
    """Each step repeated `size` times: [batch, steps, features] -> [batch, steps * size, features]."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _repeat_axis(inputs, 1, self.size, TensorShape(inputs.shape).as_list())

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], None if s[1] is None else s[1] * self.size, s[2]])

    def get_config(self):
        config = super().get_config()
        config["size"] = self.size
        return config


class UpSampling2D(Layer):
    """Rows and columns repeated size[0] and size[1] times (interpolation="nearest")."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "UpSampling2D")
        self.size = _pair(size, "size")
        if interpolation != "nearest":
            raise NotImplementedError(f"kiln.keras.layers.UpSampling2D: interpolation={interpolation!r} is not "
                                      "supported (only 'nearest')")
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        shape = TensorShape(inputs.shape).as_list()
        x = _repeat_axis(inputs, 1, self.size[0], shape)
        shape[1] = None if shape[1] is None else shape[1] * self.size[0]
        return _repeat_axis(x, 2, self.size[1], shape)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], None if s[1] is None else s[1] * self.size[0],
                            None if s[2] is None else s[2] * self.size[1], s[3]])

    def get_config(self):
        config = super().get_config()
        config.update(size=self.size, data_format=self.data_format, interpolation=self.interpolation)
        return config


class ZeroPadding1D(Layer):
    """Zeros before and after the steps: padding=1, or (before, after)."""

    def __init__(self, padding=1, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pair(padding, "padding")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _C.pad(inputs, [(0, 0), self.padding, (0, 0)], 0)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], None if s[1] is None else s[1] + sum(self.padding), s[2]])

    def get_config(self):
        config = super().get_config()
        config["padding"] = self.padding
        return config


class ZeroPadding2D(Layer):
    """Zeros around the rows and columns: padding=1, (rows, cols), or ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "ZeroPadding2D")
        self.padding = _pairs2(padding, "padding")
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        return _C.pad(inputs, [(0, 0), self.padding[0], self.padding[1], (0, 0)], 0)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], None if s[1] is None else s[1] + sum(self.padding[0]),
                            None if s[2] is None else s[2] + sum(self.padding[1]), s[3]])

    def get_config(self):
        config = super().get_config()
        config.update(padding=self.padding, data_format=self.data_format)
        return config


def _crop(x, axis, begin, end, shape):
    if begin == 0 and end == 0:
        return x
    if shape[axis] is None:
        raise ValueError("kiln.keras: cropping needs the cropped dim to be known")
    starts = [0] * len(shape)
    sizes = [-1] * len(shape)
    starts[axis] = begin
    sizes[axis] = shape[axis] - begin - end
    return _C.slice(x, starts, sizes)


class Cropping1D(Layer):
    """Drops steps at the start and end: cropping=(before, after) or one int for both."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _pair(cropping, "cropping")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _crop(inputs, 1, *self.cropping, TensorShape(inputs.shape).as_list())

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        if s[1] is not None and s[1] - sum(self.cropping) <= 0:
            raise ValueError(f"`cropping` parameter of `Cropping1D` layer must be smaller than the input length. "
                             f"Received: inputs.shape={tuple(s)}, and cropping={self.cropping}")
        return TensorShape([s[0], None if s[1] is None else s[1] - sum(self.cropping), s[2]])

    def get_config(self):
        config = super().get_config()
        config["cropping"] = self.cropping
        return config


class Cropping2D(Layer):
    """Drops rows and columns at the borders: cropping=((top, bottom), (left, right)), (rows, cols) or an int."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        from .layers import _data_format
        self.data_format = _data_format(data_format, "Cropping2D")
        self.cropping = _pairs2(cropping, "cropping")
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        shape = TensorShape(inputs.shape).as_list()
        x = _crop(inputs, 1, *self.cropping[0], shape)
        shape = TensorShape(x.shape).as_list()
        return _crop(x, 2, *self.cropping[1], shape)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        h = None if s[1] is None else s[1] - sum(self.cropping[0])
        w = None if s[2] is None else s[2] - sum(self.cropping[1])
        if (h is not None and h <= 0) or (w is not None and w <= 0):
            raise ValueError("`cropping` parameter of `Cropping2D` layer must be smaller than the input size. "
                             f"Received: inputs.shape={tuple(s)}, and cropping={self.cropping}")
        return TensorShape([s[0], h, w, s[3]])

    def get_config(self):
        config = super().get_config()
        config.update(cropping=self.cropping, data_format=self.data_format)
        return config
