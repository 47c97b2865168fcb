"""kiln.random (tf.random): an op seed with the global seed makes the sequence of draws reproducible."""
from . import _C
from . import dtypes as _dtypes
from ._ops import _dims


def set_seed(seed):
    _C.random_set_seed(int(seed))


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    return _C.random_normal(_dims(shape), float(mean), float(stddev), _dtypes.as_dtype(dtype)._enum, seed)


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    return _C.random_uniform(_dims(shape), float(minval), 1.0 if maxval is None else float(maxval),
                             _dtypes.as_dtype(dtype)._enum, seed)


def shuffle(value, seed=None, name=None):
    """value's rows (dim 0) in a random order; seeds as the other random ops'."""
    return _C.random_shuffle(value, seed)
