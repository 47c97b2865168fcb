"""kiln.random (tf.random): an op seed with the global seed makes the sequence of draws reproducible."""
import math as _math
import types as _types

from . import _C
from . import _dynamic_shape
from . import dtypes as _dtypes
from ._ops import _dims, _is_dynamic


def set_seed(seed):
    _C.random_set_seed(int(seed))


def _uniform01(dims, dtype, seed):
    """Draws in [0, 1) of dtype: dims a list of ints, or DynamicDims (shaped at run time)."""
    if _is_dynamic(dims):
        return _C.random_uniform_like(_dynamic_shape.zeros(dims, dtype), 0.0, 1.0, seed)
    return _C.random_uniform(dims, 0.0, 1.0, dtype._enum, seed)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    dims = _dims(shape)
    dtype = _dtypes.as_dtype(dtype)
    if _is_dynamic(dims):
        # Box-Muller on two run-time-shaped uniform draws (1 - u keeps the log finite).
        u1 = _C.subtract(1.0, _uniform01(dims, dtype, seed))
        u2 = _uniform01(dims, dtype, seed)
        z = _C.multiply(_C.sqrt(_C.multiply(_C.log(u1), -2.0)), _C.cos(_C.multiply(u2, 2 * _math.pi)))
        return _C.add(_C.multiply(z, float(stddev)), float(mean))
    return _C.random_normal(dims, float(mean), float(stddev), dtype._enum, seed)


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    dtype = _dtypes.as_dtype(dtype)
    if dtype.is_integer:
        return _uniform_int(shape, minval, maxval, dtype, seed)
    dims = _dims(shape)
    lo, hi = float(minval), 1.0 if maxval is None else float(maxval)
    if _is_dynamic(dims):
        return _C.add(_C.multiply(_uniform01(dims, dtype, seed), hi - lo), lo)
    return _C.random_uniform(dims, lo, hi, dtype._enum, seed)


def _uniform_int(shape, minval, maxval, dtype, seed):
    """Integers drawn evenly from [minval, maxval), as TF's integer tf.random.uniform: the floor
    of a float64 draw scaled to the range (float64 keeps every int32 value apart)."""
    if maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
    lo, hi = int(minval), int(maxval)
    if hi <= lo:
        raise ValueError(f"Need minval < maxval, got {lo} >= {hi}")
    u = _uniform01(_dims(shape), _dtypes.float64, seed)
    drawn = _C.floor(_C.add(_C.multiply(u, float(hi - lo)), float(lo)))
    # u < 1 keeps the floor below maxval, except where rounding reaches it.
    return _C.cast(_C.minimum(drawn, float(hi - 1)), dtype._enum)


def shuffle(value, seed=None, name=None):
    """value's rows (dim 0) in a random order; seeds as the other random ops'."""
    return _C.random_shuffle(value, seed)


def split(seed, num=2, alg="auto_select"):
    """tf.random.split (tf.random.experimental.stateless_split): `num` new seeds [num, 2] from a seed of
    shape [2] (kiln._random_stateless: deterministic, not TF's numbers)."""
    return _stateless.stateless_split(seed, num, alg)


def fold_in(seed, data, alg="auto_select"):
    return _stateless.stateless_fold_in(seed, data, alg)


# The rest of tf.random (docs/design-notes.md, "tf.random: Generator and stateless draws").
from . import _random_stateless as _stateless  # noqa: E402
from ._random_stateless import (  # noqa: E402,F401
    stateless_normal, stateless_truncated_normal, stateless_uniform, stateless_binomial, stateless_poisson,
    stateless_gamma, stateless_parameterized_truncated_normal, stateless_categorical)
from ._random_stateful import truncated_normal, categorical, gamma, poisson  # noqa: E402,F401
from ._random_candidates import (  # noqa: E402,F401
    uniform_candidate_sampler, log_uniform_candidate_sampler, learned_unigram_candidate_sampler,
    fixed_unigram_candidate_sampler, all_candidate_sampler)
from .random_generator import (  # noqa: E402,F401
    Algorithm, Generator, create_rng_state, get_global_generator, set_global_generator)


experimental = _types.SimpleNamespace(
    Algorithm=Algorithm, Generator=Generator, create_rng_state=create_rng_state,
    get_global_generator=get_global_generator, set_global_generator=set_global_generator,
    stateless_split=_stateless.stateless_split, stateless_fold_in=_stateless.stateless_fold_in,
    index_shuffle=_stateless.index_shuffle, stateless_shuffle=_stateless.stateless_shuffle)
