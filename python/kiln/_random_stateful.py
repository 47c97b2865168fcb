"""tf.random's op-seeded draws beyond normal and uniform. truncated_normal and categorical are built from the
engine's RandomNormal/RandomUniform (so TF2's seed rules hold and they trace as graph ops); gamma and poisson
draw a stateless seed pair from the engine's generator under the same rules, then the stateless draw."""
from . import _ops as _o
from ._array_ops import searchsorted as _searchsorted
from ._math_ops import is_finite as _is_finite
from . import _random_draws as _draws
from . import _random_stateless as _stateless
from . import dtypes as _dtypes


def _engine(name):
    from . import random
    return getattr(random, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normals beyond two standard deviations redrawn: 12 rounds of redraws leave one chance in ~1e16 of a
    value still outside, which is then clipped to the bound."""
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Invalid dtype {dtype!r}: truncated_normal needs a floating dtype")
    normal = _engine("normal")
    x = normal(shape, dtype=dtype, seed=seed)
    for _ in range(12):
        outside = _o.greater(_o.abs(x), 2.0)
        x = _o.where(outside, normal(shape, dtype=dtype, seed=seed), x)
    x = _o.clip_by_value(x, -2.0, 2.0)
    return _o.add(_o.multiply(x, _draws.as_tensor(stddev, dtype)), _draws.as_tensor(mean, dtype))


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """[batch, num_samples] class indices from each row of logits [batch, num_classes], by inverting each
    row's CDF at uniform draws (a searchsorted: memory grows with batch * (num_samples + num_classes))."""
    dtype = _dtypes.int64 if dtype is None else _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"Value passed to parameter 'output_dtype' has DataType {dtype.name} not in list of "
                        "allowed values: int32, int64")
    logits = _draws.as_tensor(logits)
    _stateless._check_logits(logits)
    x = _o.cast(logits, _dtypes.float64)
    top = _o.reduce_max(x, axis=1, keepdims=True)
    weights = _o.exp(_o.subtract(x, _o.where(_is_finite(top), top, _o.zeros_like(top))))
    cdf = _o.cumsum(weights, axis=1)
    batch, classes = logits.shape.as_list()
    rows = batch if batch is not None else _o.shape(logits)[0]
    u = _engine("uniform")([rows, int(num_samples)], dtype=_dtypes.float64, seed=seed)
    picked = _searchsorted(cdf, _o.multiply(u, cdf[:, -1:]), side="right", out_type=dtype)
    last = (classes if classes is not None else _o.shape(logits, out_type=dtype)[1]) - 1
    return _o.minimum(picked, _o.cast(last, dtype))


def _seed_pair(seed):
    """A stateless seed drawn from the engine's generator, as op-seeded draws are (reproducible under
    tf.random.set_seed, new on every call)."""
    return _engine("uniform")([2], 0, 2 ** 31 - 1, dtype=_dtypes.int64, seed=seed)


def _params_shape(shape, *params):
    """shape + broadcast(params' shapes), TF's shape of gamma and poisson draws."""
    import numpy as np
    shape = _draws.shape_arg(shape)
    if not isinstance(shape, tuple):
        raise ValueError("gamma/poisson need a shape known when the graph is built")
    dims = np.broadcast_shapes(*[tuple(p.shape.as_list()) for p in params])
    return list(shape) + list(dims)


def gamma(shape, alpha, beta=None, dtype=_dtypes.float32, seed=None, name=None):
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        raise ValueError(f"Invalid dtype {dtype!r}")
    alpha = _draws.as_tensor(alpha, dtype)
    beta = _draws.as_tensor(1.0 if beta is None else beta, dtype)
    return _stateless.stateless_gamma(_params_shape(shape, alpha, beta), _seed_pair(seed), alpha, beta, dtype)


def poisson(shape, lam, dtype=_dtypes.float32, seed=None, name=None):
    dtype = _dtypes.as_dtype(dtype)
    lam = _draws.as_tensor(lam)
    if not lam.dtype.is_floating and not lam.dtype.is_integer:
        raise TypeError(f"lam must be a real tensor, got {lam.dtype.name}")
    return _stateless.stateless_poisson(_params_shape(shape, lam), _seed_pair(seed), lam, dtype)
