"""TF's own initializers at the top level (tf.zeros_initializer, tf.ones_initializer, tf.constant_initializer,
tf.random_normal_initializer, tf.random_uniform_initializer): TF 2's init_ops_v2, which differ from Keras'
in their defaults (dtype float32, or the value's for constant_initializer) and dtype checks."""
from . import dtypes as _dtypes


class Initializer:
    """tf.keras-free base of TF's initializers: `__call__(shape, dtype)`, `get_config`, `from_config`."""

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError("Initializer subclasses must implement the `__call__()` method.")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


def _shape(shape):
    from ._ops import convert_to_tensor
    return shape if isinstance(shape, (list, tuple)) else convert_to_tensor(shape)


class zeros_initializer(Initializer):  # noqa: N801 - TF's name
    """Tensors of zeros (float32 unless `dtype` says)."""

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from ._ops import zeros
        return zeros(_shape(shape), _dtypes.as_dtype(dtype))


class ones_initializer(Initializer):  # noqa: N801
    """Tensors of ones (float32 unless `dtype` says)."""

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from ._ops import ones
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_numpy_compatible or dtype == _dtypes.string:
            raise ValueError(f"Argument `dtype` expected to be numeric or boolean. Received {dtype}.")
        return ones(_shape(shape), dtype)


class constant_initializer(Initializer):  # noqa: N801
    """Tensors filled from `value`: a scalar broadcast, or a list/array of exactly the shape's size, in the
    value's dtype unless `dtype` says."""

    def __init__(self, value=0, support_partition=False):
        import numpy as np
        from ._C import Tensor
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray, Tensor))):
            raise TypeError(f"Invalid type for initial value={value} of type: {type(value).__name__}. Expected "
                            "Python scalar, list or tuple of values, or numpy.ndarray.")
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        from ._ops import constant
        return constant(self.value, dtype=None if dtype is None else _dtypes.as_dtype(dtype), shape=shape)

    def get_config(self):
        return {"value": self.value}


def _floating(dtype):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dtype}.")
    return dtype


class random_normal_initializer(Initializer):  # noqa: N801
    """Normal draws of `mean` and `stddev`; with a seed, the same values on every call (TF's stateless
    draw keyed by [seed, 0])."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from . import random
        dtype = _floating(dtype)
        if self.seed is None:
            return random.normal(_shape(shape), self.mean, self.stddev, dtype)
        return random.stateless_normal(_shape(shape), [self.seed, 0], self.mean, self.stddev, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(Initializer):  # noqa: N801
    """Uniform draws in [minval, maxval), floating or integer; seeded as random_normal_initializer."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        from . import random
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating and not dtype.is_integer:
            raise ValueError(f"Argument `dtype` is expected to be floating point or integer. Received: {dtype}.")
        if self.seed is None:
            return random.uniform(_shape(shape), self.minval, self.maxval, dtype)
        return random.stateless_uniform(_shape(shape), [self.seed, 0], self.minval, self.maxval, dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}
