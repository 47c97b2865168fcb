"""kiln.keras.initializers: the initial values of layer weights (Keras' names and arguments). A seeded
initializer gives the same values on every call (a stateless draw, as Keras'); without a seed they come
from kiln.random's global generator (kiln.random.set_seed makes runs reproducible). Glorot-uniform values
are the C++ kiln::nn layers' (the same draws for the same seed)."""
import math

import numpy as np

from .. import _C
from .. import dtypes as _dtypes


def _compute_fans(shape):
    shape = [int(d) for d in shape]
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for d in shape[:-2]:
        receptive *= d
    return shape[-2] * receptive, shape[-1] * receptive


def _float_dtype(dtype):
    d = _dtypes.as_dtype(dtype or "float32")
    if d.name not in ("float32", "float64"):
        raise ValueError(f"Expected floating point type, got {d.name}")
    return d


class Initializer:
    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        # A subclass with fixed settings (GlorotUniform: seed only) takes the keys its constructor names.
        import inspect
        params = inspect.signature(cls.__init__).parameters
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return cls(**config)
        return cls(**{k: v for k, v in config.items() if k in params})


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return _C.zeros(list(shape), _dtypes.as_dtype(dtype or "float32")._enum)


class Ones(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return _C.ones(list(shape), _dtypes.as_dtype(dtype or "float32")._enum)


class Constant(Initializer):
    def __init__(self, value=0):
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = _dtypes.as_dtype(dtype or "float32")
        value = np.asarray(self.value)
        if value.size == 1:
            return _C.fill(list(shape), value.item(), dtype._enum)
        # tf.constant(value, shape=shape), as Keras' Constant: an array of the shape's size, reshaped.
        if value.size != int(np.prod(shape)):
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor {value} (converted from "
                            f"{self.value}) has {value.size} elements, but got `shape` {tuple(shape)} with "
                            f"{int(np.prod(shape))} elements).")
        return _C.constant(np.ascontiguousarray(value.reshape(shape), dtype.as_numpy_dtype), None)

    def get_config(self):
        return {"value": self.value}


class RandomUniform(Initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return _C.random_uniform(list(shape), float(self.minval), float(self.maxval), _float_dtype(dtype)._enum,
                                 self.seed, True)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return _C.random_normal(list(shape), float(self.mean), float(self.stddev), _float_dtype(dtype)._enum,
                                self.seed, True)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


def _truncated_normal(shape, mean, stddev, dtype, seed):
    """Normal values redrawn until within two standard deviations (TF's truncated normal), drawn on the host:
    seeded draws use seed, seed + 1, ... so the same seed gives the same values."""
    import numpy as np
    shape = [int(d) for d in shape]
    n = math.prod(shape)
    kept, k = np.empty(0), 0
    while kept.size < n:
        draw = _C.random_normal([max(2 * n, 16)], 0.0, 1.0, _dtypes.float64._enum,
                                None if seed is None else seed + k, seed is not None).numpy()
        kept = np.concatenate([kept, draw[np.abs(draw) <= 2.0]])
        k += 1
    values = mean + stddev * kept[:n].reshape(shape)
    return _C.constant(np.ascontiguousarray(values.astype(dtype.as_numpy_dtype)), dtype._enum)


class TruncatedNormal(Initializer):
    """N(mean, stddev) with values beyond two standard deviations redrawn."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return _truncated_normal(shape, float(self.mean), float(self.stddev), _float_dtype(dtype), self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class Identity(Initializer):
    """gain times the identity matrix (2-D shapes only; rectangular ones get ones on the main diagonal)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        import numpy as np
        if len(shape) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices. Received: shape={shape} "
                             f"of rank {len(shape)}.")
        dtype = _float_dtype(dtype)
        return _C.constant(np.ascontiguousarray(self.gain * np.eye(*[int(d) for d in shape]),
                                                dtype=dtype.as_numpy_dtype), dtype._enum)

    def get_config(self):
        return {"gain": self.gain}


class VarianceScaling(Initializer):
    """Values of variance scale / n (n: fan_in, fan_out or their mean): uniform in +-sqrt(3 scale / n), normal, or
    (Keras' default) truncated normal with stddev sqrt(scale / n) / 0.8796 (the truncation's correction)."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0:
            raise ValueError(f"`scale` must be positive float. Received: scale={scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}")
        if distribution not in ("uniform", "untruncated_normal", "truncated_normal", "normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, **kwargs):
        dtype = _float_dtype(dtype)
        fan_in, fan_out = _compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return _C.random_uniform(list(shape), -limit, limit, dtype._enum, self.seed, True)
        if self.distribution == "untruncated_normal":
            return _C.random_normal(list(shape), 0.0, math.sqrt(scale), dtype._enum, self.seed, True)
        return _truncated_normal(shape, 0.0, math.sqrt(scale) / 0.87962566103423978, dtype, self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


class GlorotUniform(VarianceScaling):
    """U(-l, l) with l = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010), computed as the C++ layers do."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def __call__(self, shape, dtype=None, **kwargs):
        fan_in, fan_out = _compute_fans(shape)
        limit = math.sqrt(6.0 / float(fan_in + fan_out))
        return _C.random_uniform(list(shape), -limit, limit, _float_dtype(dtype)._enum, self.seed, True)

    def get_config(self):
        return {"seed": self.seed}


class HeUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (before the truncation's correction)."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class Orthogonal(Initializer):
    """Keras' orthogonal initializer (Saxe et al., 2014): for a shape [..., cols] flattened to [rows, cols], a
    matrix with orthonormal rows or columns (whichever are fewer) times `gain`: the Q of the QR decomposition
    of a normal draw, signs fixed so R's diagonal is positive (the C++ kiln::nn::orthogonal)."""

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, **kwargs):
        import numpy as np
        dtype = _float_dtype(dtype)
        shape = [int(d) for d in shape]
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: "
                             f"shape={shape} of rank {len(shape)}.")
        cols = shape[-1]
        rows = math.prod(shape[:-1])
        draw = _C.random_normal([max(rows, cols), min(rows, cols)], 0.0, 1.0, _dtypes.float64._enum, self.seed,
                                True).numpy()
        q, r = np.linalg.qr(draw)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _C.constant(np.ascontiguousarray(self.gain * q.reshape(shape)), dtype._enum)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


zeros = Zeros
ones = Ones
constant = Constant
random_uniform = RandomUniform
random_normal = RandomNormal
glorot_uniform = GlorotUniform
he_uniform = HeUniform
lecun_uniform = LecunUniform
orthogonal = Orthogonal
glorot_normal = GlorotNormal
he_normal = HeNormal
lecun_normal = LecunNormal
truncated_normal = TruncatedNormal
identity = Identity
variance_scaling = VarianceScaling

_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_uniform": RandomUniform,
            "uniform": RandomUniform, "normal": RandomNormal,
            "random_normal": RandomNormal, "glorot_uniform": GlorotUniform, "he_uniform": HeUniform,
            "lecun_uniform": LecunUniform, "variance_scaling": VarianceScaling, "orthogonal": Orthogonal,
            "glorot_normal": GlorotNormal, "he_normal": HeNormal, "lecun_normal": LecunNormal,
            "truncated_normal": TruncatedNormal, "identity": Identity}
for _cls in list(_BY_NAME.values()):
    _BY_NAME[_cls.__name__] = _cls


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        from ._serialization import deserialize_keras_object
        return deserialize_keras_object(identifier, module_objects=_BY_NAME, printable_module_name="initializer")
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown initializer: '{identifier}'. Known: "
                             f"{', '.join(sorted(k for k in _BY_NAME if k.islower()))}")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")


def serialize(initializer):
    from ._serialization import serialize_keras_object
    return serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    from ._serialization import deserialize_keras_object
    return deserialize_keras_object(config, module_objects=_BY_NAME, custom_objects=custom_objects,
                                    printable_module_name="initializer")
