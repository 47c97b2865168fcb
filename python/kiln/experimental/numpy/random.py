"""tf.experimental.numpy.random: NumPy's legacy sampling functions over Kiln's global-seeded random
ops (tnp.random.seed is tf.random.set_seed), in the default float type."""
import numbers

import numpy as np

from ... import _ops
from ... import dtypes as _kdtypes
from ... import random as _krandom
from . import _dtypes
from ._convert import asarray

__all__ = ["poisson", "rand", "randint", "randn", "random", "seed", "standard_normal", "uniform"]


def seed(s):
    try:
        s = int(s)
    except TypeError:
        raise ValueError(f"Argument `s` got an invalid value {s}. Only integers are supported.") from None
    _krandom.set_seed(s)


def _size(size):
    if size is None:
        return []
    if isinstance(size, numbers.Integral):
        return [int(size)]
    return [int(d) for d in size]


def standard_normal(size=None):
    return _krandom.normal(_size(size), dtype=_dtypes.default_float_type())


def randn(*args):
    return standard_normal(size=args)


def uniform(low=0.0, high=1.0, size=None):
    dtype = _dtypes.default_float_type()
    low, high = asarray(low, dtype), asarray(high, dtype)
    if size is None:
        size = np.broadcast_shapes(tuple(low.shape.as_list()), tuple(high.shape.as_list()))
    return _krandom.uniform(_size(size), dtype=dtype) * (high - low) + low


def random(size=None):
    return uniform(0.0, 1.0, size)


def rand(*size):
    return uniform(0.0, 1.0, size)


def randint(low, high=None, size=None, dtype=np.int64):
    """Integers in [low, high) (or [0, low)); int32 or int64 only, as TF."""
    dtype = _dtypes.as_kiln_dtype(dtype)
    if dtype not in (_kdtypes.int32, _kdtypes.int64):
        raise ValueError(f"Only np.int32 or np.int64 types are supported, got {dtype.name}")
    if high is None:
        low, high = 0, low
    return _krandom.uniform(_size(size), minval=low, maxval=high, dtype=dtype)


def poisson(lam=1.0, size=None):
    if size is None:
        size = ()
    return _ops.cast(_krandom.poisson(_size(size), lam, dtype=_kdtypes.float64), _kdtypes.int64)
