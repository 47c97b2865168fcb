"""kiln.keras.constraints (tf.keras.constraints): projections applied to a weight after each optimizer update
(kernel_constraint=, bias_constraint=). Norms are over `axis` (0: each column of a Dense kernel, each filter of
a conv kernel's [h, w, in] when axis=[0, 1, 2])."""
from .. import _C
from . import backend
from ._serialization import deserialize_keras_object, serialize_keras_object


class Constraint:
    """Base class: `__call__(w)` returns the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _axes(axis):
    return list(axis) if isinstance(axis, (list, tuple)) else [int(axis)]


def _norms(w, axis):
    return _C.sqrt(_C.reduce_sum(_C.square(w), _axes(axis), True))


def _eps(w):
    return _C.constant(backend.epsilon(), w.dtype._enum)


class MaxNorm(Constraint):
    """Scales down each slice whose L2 norm exceeds max_value to norm max_value: w * clip(n, 0, m) / (eps + n)."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = _C.clip(norms, _C.constant(0.0, w.dtype._enum), _C.constant(float(self.max_value), w.dtype._enum))
        return _C.multiply(w, _C.divide(desired, _C.add(_eps(w), norms)))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Negative entries become 0."""

    def __call__(self, w):
        return _C.multiply(w, _C.cast(_C.greater_equal(w, _C.constant(0.0, w.dtype._enum)), w.dtype._enum))


class UnitNorm(Constraint):
    """Each slice divided by (eps + its L2 norm)."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return _C.divide(w, _C.add(_eps(w), _norms(w, self.axis)))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Norms pulled into [min_value, max_value] at `rate`: desired = rate * clip(n) + (1 - rate) * n."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        dt = w.dtype._enum
        norms = _norms(w, self.axis)
        clipped = _C.clip(norms, _C.constant(float(self.min_value), dt), _C.constant(float(self.max_value), dt))
        desired = _C.add(_C.multiply(_C.constant(float(self.rate), dt), clipped),
                         _C.multiply(_C.constant(1.0 - float(self.rate), dt), norms))
        return _C.multiply(w, _C.divide(desired, _C.add(_eps(w), norms)))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


def _radial_sources(size):
    """For each (row, col) of a size x size kernel, the diagonal entry Keras' RadialConstraint copies there: the
    centre (one entry when size is odd, a 2 x 2 block when even) takes kernel[s - 1, s - 1] (s = size // 2), and
    the j-th ring around it kernel[s + j - 1, s + j - 1] (odd) or kernel[s + j, s + j] (even)."""
    import numpy as np
    s = size // 2
    grid = np.arange(size)
    if size % 2:
        ring = np.maximum(np.abs(grid[:, None] - s), np.abs(grid[None, :] - s))
        source = np.where(ring == 0, s - 1, s + ring - 1)
    else:
        dist = np.maximum(grid - s, s - 1 - grid)  # 0 for the two middle rows/cols
        ring = np.maximum(dist[:, None], dist[None, :])
        source = np.where(ring == 0, s - 1, s + ring)
    return source.astype(np.int32)


class RadialConstraint(Constraint):
    """Makes each [h, w] kernel of a Conv2D weight [h, w, in, out] (h == w) the same along each ring, as Keras'."""

    def __call__(self, w):
        import numpy as np
        if w.ndim != 4:
            raise ValueError(f"The weight tensor must have rank 4. Received weight tensor with shape: {w.shape}")
        size = w.shape[0]
        if size < 2 or w.shape[1] != size:
            raise ValueError(f"RadialConstraint needs square kernels of size >= 2, got shape {w.shape}")
        source = _radial_sources(size)
        index = np.stack([source, source], axis=-1)
        return _C.gather_nd(w, _C.constant(index, None))


max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm

radial_constraint = RadialConstraint

_BY_NAME = {"MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm,
            "RadialConstraint": RadialConstraint, "radial_constraint": RadialConstraint,
            "max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}


def serialize(constraint):
    return serialize_keras_object(constraint)


def deserialize(config, custom_objects=None):
    return deserialize_keras_object(config, module_objects=_BY_NAME, custom_objects=custom_objects,
                                    printable_module_name="constraint")


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize(identifier)()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
