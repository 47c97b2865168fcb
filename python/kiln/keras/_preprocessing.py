"""Keras' preprocessing layers that compute on tensors: Rescaling, Normalization (with adapt) and CenterCrop."""
import numpy as np

from .. import _C
from ..tensor_shape import TensorShape
from . import backend
from ._layer import Layer, _is_tensor


class Rescaling(Layer):
    """inputs * scale + offset (in the layer's dtype): Rescaling(1. / 255) maps bytes to [0, 1]."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        x = _C.cast(inputs, self._dtype._enum) if inputs.dtype != self._dtype else inputs
        return _C.add(_C.multiply(x, _C.constant(self.scale, self._dtype._enum)),
                      _C.constant(self.offset, self._dtype._enum))

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(scale=self.scale, offset=self.offset)
        return config


def _batches(data, batch_size=None, steps=None):
    """NumPy arrays (the data, or its batches) for adapt: an array or tensor, or an iterable of batches."""
    if isinstance(data, np.ndarray) or _is_tensor(data) or isinstance(data, (list, tuple)) and data and \
            not hasattr(data[0], "shape"):
        yield np.asarray(data.numpy() if _is_tensor(data) else data, dtype=np.float64)
        return
    for i, batch in enumerate(data):
        if steps is not None and i >= steps:
            break
        if isinstance(batch, (tuple, list)):
            batch = batch[0]
        yield np.asarray(batch.numpy() if _is_tensor(batch) else batch, dtype=np.float64)


class Normalization(Layer):
    """(inputs - mean) / max(sqrt(variance), epsilon), per index along `axis` (the last by default). The mean and
    variance are given, or learned by adapt(data) (the population variance); invert=True undoes it."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        self.axis = tuple(axis)
        if 0 in self.axis:
            raise ValueError("The argument 'axis' may not be 0.")
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must be set. Got mean: {mean} "
                             f"and variance: {variance}")
        self.input_mean = mean
        self.input_variance = variance
        self.invert = invert
        self.adapt_mean = self.adapt_variance = self.count = None
        self._broadcast_shape = None

    def _kept(self, rank):
        return sorted(a % rank for a in self.axis)

    def build(self, input_shape):
        s = TensorShape(input_shape)
        rank = s.rank
        kept = self._kept(rank)
        for a in kept:
            if s[a] is None:
                raise ValueError(f"All `axis` values to be kept must have known shape. Got axis: {self.axis}, input "
                                 f"shape: {s}, with unknown axis at index: {a}")
        self._broadcast_shape = [s[a] if a in kept else 1 for a in range(rank)]
        stats_shape = [s[a] for a in kept]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", stats_shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight("variance", stats_shape, initializer="ones", trainable=False)
            self.count = self.add_weight("count", [], dtype="int64", initializer="zeros", trainable=False)
        self.built = True

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the mean and variance of `data` over every axis but `axis`."""
        total, mean, m2 = 0, None, None
        for batch in _batches(data, batch_size, steps):
            if not self.built:
                self._maybe_build(TensorShape((None,) + batch.shape[1:]))
            kept = self._kept(batch.ndim)
            reduce_axes = tuple(a for a in range(batch.ndim) if a not in kept)
            n = int(np.prod([batch.shape[a] for a in reduce_axes])) if reduce_axes else 1
            b_mean = batch.mean(axis=reduce_axes) if reduce_axes else batch
            b_m2 = ((batch - batch.mean(axis=reduce_axes, keepdims=True)) ** 2).sum(axis=reduce_axes) \
                if reduce_axes else np.zeros_like(batch)
            if mean is None:
                total, mean, m2 = n, b_mean, b_m2
            else:  # Chan et al.'s pairwise combination of means and sums of squares
                delta = b_mean - mean
                new_total = total + n
                mean = mean + delta * n / new_total
                m2 = m2 + b_m2 + delta ** 2 * total * n / new_total
                total = new_total
        if mean is None:
            raise ValueError("Normalization.adapt: the data has no samples")
        if self.adapt_mean is None:
            raise ValueError("Normalization.adapt: the layer was given its mean and variance")
        self.adapt_mean.assign(np.asarray(mean, dtype=self._dtype.as_numpy_dtype))
        self.adapt_variance.assign(np.asarray(m2 / total, dtype=self._dtype.as_numpy_dtype))
        self.count.assign(np.asarray(total, dtype=np.int64))

    def _stats(self):
        if self.input_mean is not None:
            dt = self._dtype.as_numpy_dtype
            mean = np.broadcast_to(np.asarray(self.input_mean, dtype=dt), self._broadcast_shape)
            var = np.broadcast_to(np.asarray(self.input_variance, dtype=dt), self._broadcast_shape)
            return _C.constant(np.ascontiguousarray(mean), None), _C.constant(np.ascontiguousarray(var), None)
        return (_C.reshape(self.adapt_mean.read_value(), self._broadcast_shape),
                _C.reshape(self.adapt_variance.read_value(), self._broadcast_shape))

    @property
    def mean(self):
        """Keras' `mean` once built: the given or adapted mean in the inputs' broadcast shape."""
        if not self.built:
            raise AttributeError("'Normalization' object has no attribute 'mean'")
        return self._stats()[0]

    @property
    def variance(self):
        if not self.built:
            raise AttributeError("'Normalization' object has no attribute 'variance'")
        return self._stats()[1]

    def call(self, inputs):
        x = _C.cast(inputs, self._dtype._enum) if inputs.dtype != self._dtype else inputs
        mean, variance = self._stats()
        scale = _C.maximum(_C.sqrt(variance), _C.constant(backend.epsilon(), self._dtype._enum))
        if self.invert:
            return _C.add(mean, _C.multiply(x, scale))
        return _C.divide(_C.subtract(x, mean), scale)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        as_list = (lambda v: None if v is None else np.asarray(v).tolist())
        config.update(axis=self.axis, mean=as_list(self.input_mean), variance=as_list(self.input_variance),
                      invert=self.invert)
        return config


def with_image_size(shape, height, width):
    """[..., h, w, channels] shape -> [..., height, width, channels]."""
    s = TensorShape(shape).as_list()
    s[-3], s[-2] = height, width
    return TensorShape(s)


def crop_window(images, top, left, height, width):
    """The height x width window of [..., h, w, channels] images starting at (top, left)."""
    rank = len(images.shape)
    begin, size = [0] * rank, [-1] * rank
    begin[-3], begin[-2], size[-3], size[-2] = top, left, height, width
    return _C.slice(images, begin, size)


class CenterCrop(Layer):
    """The central height x width window of [..., h, w, channels] images (start at (h - height) // 2)."""

    def __init__(self, height, width, **kwargs):
        super().__init__(**kwargs)
        self.height = int(height)
        self.width = int(width)

    def call(self, inputs):
        s = TensorShape(inputs.shape).as_list()
        h, w = s[-3], s[-2]
        if h is None or w is None:
            raise ValueError("kiln.keras.layers.CenterCrop: the image height and width must be known")
        if h < self.height or w < self.width:
            raise NotImplementedError("kiln.keras.layers.CenterCrop: images smaller than the crop (Keras resizes them) "
                                      "are not supported")
        out = crop_window(inputs, (h - self.height) // 2, (w - self.width) // 2, self.height, self.width)
        return _C.cast(out, self._dtype._enum) if out.dtype != self._dtype else out

    def compute_output_shape(self, input_shape):
        return with_image_size(input_shape, self.height, self.width)

    def get_config(self):
        config = super().get_config()
        config.update(height=self.height, width=self.width)
        return config
