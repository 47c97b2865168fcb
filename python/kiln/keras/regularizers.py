"""kiln.keras.regularizers (tf.keras.regularizers): penalties on weights (kernel_regularizer=, bias_regularizer=)
and on outputs (activity_regularizer=), added to the loss fit minimizes through layer.losses. The factors are
stored as float32, as Keras' (so L2(0.01).get_config() gives {"l2": 0.009999999776482582})."""
import math

import numpy as np

from .. import _C
from ._serialization import deserialize_keras_object, serialize_keras_object


def _factor(value, name):
    value = 0.0 if value is None else value
    if not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(float(value)) or value < 0:
        raise ValueError(f"Value for argument `{name}` must be a non-negative, finite number. Received: "
                         f"{name}={value}")
    return float(np.float32(value))


class Regularizer:
    """Base class: `__call__(x)` is the penalty (a scalar); subclasses give get_config for saving."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_config()")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _l1(factor, x):
    return _C.multiply(_C.constant(factor, x.dtype._enum), _C.reduce_sum(_C.abs(x), None, False))


def _l2(factor, x):
    return _C.multiply(_C.constant(factor, x.dtype._enum), _C.reduce_sum(_C.square(x), None, False))


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x^2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(l1, "l1")
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        if not self.l1 and not self.l2:
            return _C.constant(0.0, x.dtype._enum)
        if not self.l2:
            return _l1(self.l1, x)
        if not self.l1:
            return _l2(self.l2, x)
        return _C.add(_l1(self.l1, x), _l2(self.l2, x))

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """l1 * sum(|x|)."""

    def __init__(self, l1=0.01, **kwargs):
        l1 = kwargs.pop("l", l1)  # the old name of the argument
        if kwargs:
            raise TypeError(f"Argument(s) not recognized: {kwargs}")
        self.l1 = _factor(l1, "l1")

    def __call__(self, x):
        return _l1(self.l1, x)

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """l2 * sum(x^2)."""

    def __init__(self, l2=0.01, **kwargs):
        l2 = kwargs.pop("l", l2)
        if kwargs:
            raise TypeError(f"Argument(s) not recognized: {kwargs}")
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        return _l2(self.l2, x)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """factor * mean |cos| between distinct rows (mode="rows") or columns ("columns") of a 2-D weight: half the
    sum of the off-diagonal |products| of the L2-normalized rows, over the number of pairs."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _factor(factor, "factor")
        if mode not in ("rows", "columns"):
            raise ValueError(f"Invalid value for argument `mode`. Expected one of {{'rows', 'columns'}}. Received: "
                             f"mode={mode}")
        self.mode = mode

    def __call__(self, x):
        if x.ndim != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        if self.mode == "rows":
            unit = _C.l2_normalize(x, [1], 1e-12)
            product = _C.matmul(unit, unit, False, True)
            size = x.shape[0]
        else:
            unit = _C.l2_normalize(x, [0], 1e-12)
            product = _C.matmul(unit, unit, True, False)
            size = x.shape[1]
        off_diagonal = _C.multiply(product, _C.constant((1.0 - np.eye(size)).astype(x.dtype.as_numpy_dtype), None))
        pairs = size * (size - 1.0) / 2.0
        return _C.multiply(_C.reduce_sum(_C.abs(off_diagonal), None, False), self.factor * 0.5 / pairs)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


def l1_l2(l1=0.01, l2=0.01):
    return L1L2(l1=l1, l2=l2)


l1 = L1
l2 = L2
orthogonal_regularizer = OrthogonalRegularizer

_BY_NAME = {"L1L2": L1L2, "L1": L1, "L2": L2, "l1": L1, "l2": L2, "l1_l2": l1_l2,
            "OrthogonalRegularizer": OrthogonalRegularizer, "orthogonal_regularizer": OrthogonalRegularizer}


def serialize(regularizer):
    return serialize_keras_object(regularizer)


def deserialize(config, custom_objects=None):
    if config == "l1_l2":
        return L1L2(l1=0.01, l2=0.01)
    return deserialize_keras_object(config, module_objects=_BY_NAME, custom_objects=custom_objects,
                                    printable_module_name="regularizer")


def get(identifier):
    """None, a name ("l1", "l2", "l1_l2"), a config dict, or a callable (returned as it is)."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        obj = deserialize(identifier)
        return obj() if isinstance(obj, type) or obj is l1_l2 else obj
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
