"""tf.random's stateless draws: the same (seed, shape, arguments) give the same values, eagerly or traced; the
seed is an int32/int64 tensor of shape [2] (tf.random.experimental.index_shuffle's of shape [3])."""
import numpy as np

from . import _random_draws as _draws
from . import dtypes as _dtypes
from . import errors as _errors

_ALGS = ("auto_select", "philox", "threefry")


def _check_alg(alg):
    from .random_generator import Algorithm
    if isinstance(alg, Algorithm) or alg in (1, 2, 3) or (isinstance(alg, str) and alg.lower() in _ALGS):
        return
    raise ValueError(f"Unsupported algorithm id: {alg}")


def _draw(fn, shape, seed, params, dtype):
    """fn(generator, shape tuple, *param arrays) over a checked seed; shape static or a run-time tensor."""
    seed = _draws.check_seed(seed)
    shape = _draws.shape_arg(shape)
    if isinstance(shape, tuple):
        return _draws.host(lambda s, *p: fn(_draws.seed_generator(s), shape, *p), [seed] + params, dtype, shape)
    return _draws.host(lambda s, dims, *p: fn(_draws.seed_generator(s), _draws.output_shape(dims), *p),
                       [seed, shape] + params, dtype, None)


def _float_dtype(dtype, allowed=(_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64)):
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in allowed:
        raise ValueError(f"Invalid dtype {dtype!r}")
    return dtype


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"):
    _check_alg(alg)
    dtype = _float_dtype(dtype)
    params = [_draws.as_tensor(mean, dtype), _draws.as_tensor(stddev, dtype)]
    return _draw(lambda g, s, m, sd: _draws.normal(g, s, m, sd), shape, seed, params, dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None,
                               alg="auto_select"):
    _check_alg(alg)
    dtype = _float_dtype(dtype)
    params = [_draws.as_tensor(mean, dtype), _draws.as_tensor(stddev, dtype)]
    return _draw(lambda g, s, m, sd: _draws.truncated_standard_normal(g, s) * sd + m, shape, seed, params, dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32, name=None, alg="auto_select"):
    _check_alg(alg)
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64, _dtypes.int32,
                     _dtypes.int64, _dtypes.uint32, _dtypes.uint64):
        raise ValueError(f"Invalid dtype {dtype!r}")
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {dtype}, minval and maxval must be both `None` or both "
                             "non-`None`.")
        if minval is not None and dtype in (_dtypes.uint32, _dtypes.uint64):
            raise ValueError(f"Invalid dtype for bounded uniform integers: {dtype!r}")
        if minval is None:
            return _draw(lambda g, s: _draws.full_int(g, s, dtype), shape, seed, [], dtype)
        params = [_draws.as_tensor(minval, dtype), _draws.as_tensor(maxval, dtype)]
        return _draw(lambda g, s, lo, hi: _draws.uniform_int(g, s, dtype, lo, hi), shape, seed, params, dtype)
    params = [_draws.as_tensor(minval, dtype), _draws.as_tensor(1 if maxval is None else maxval, dtype)]
    return _draw(lambda g, s, lo, hi: _draws.uniform_float(g, s, dtype, lo, hi), shape, seed, params, dtype)


def binomial_params(counts, probs):
    """TF's conversions: probs float32 unless typed, counts of probs' dtype unless typed."""
    probs = _draws.as_tensor(probs if hasattr(probs, "dtype") else np.asarray(probs, np.float32))
    counts = _draws.as_tensor(counts, None if hasattr(counts, "dtype") else probs.dtype)
    return counts, probs


def stateless_binomial(shape, seed, counts, probs, output_dtype=_dtypes.int32, name=None):
    output_dtype = _dtypes.as_dtype(output_dtype)
    return _draw(lambda g, s, n, p: _draws.binomial(g, s, n, p), shape, seed, list(binomial_params(counts, probs)),
                 output_dtype)


def stateless_poisson(shape, seed, lam, dtype=_dtypes.int32, name=None):
    dtype = _dtypes.as_dtype(dtype)
    return _draw(lambda g, s, l: _draws.poisson(g, s, l), shape, seed, [_draws.as_tensor(lam)], dtype)


def stateless_gamma(shape, seed, alpha, beta=None, dtype=_dtypes.float32, name=None):
    dtype = _float_dtype(dtype, (_dtypes.float16, _dtypes.float32, _dtypes.float64))
    alpha = _draws.as_tensor(alpha, dtype)
    beta = _draws.as_tensor(1.0 if beta is None else beta, dtype)
    return _draw(lambda g, s, a, b: _draws.gamma(g, s, a, b, dtype), shape, seed, [alpha, beta], dtype)


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0, maxvals=2.0,
                                             name=None):
    dtype = next((v.dtype for v in (means, stddevs, minvals, maxvals) if hasattr(v, "dtype") and
                  _dtypes.as_dtype(v.dtype).is_floating), _dtypes.float32)
    dtype = _dtypes.as_dtype(dtype)
    params = [_draws.as_tensor(v, dtype) for v in (means, stddevs, minvals, maxvals)]
    return _draw(lambda g, s, m, sd, lo, hi: _draws.parameterized_truncated_normal(g, s, m, sd, lo, hi),
                 shape, seed, params, dtype)


def stateless_categorical(logits, num_samples, seed, dtype=_dtypes.int64, name=None):
    """[batch, num_samples] indices drawn from each row of logits [batch, num_classes]."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed "
                        "values: int32, int64")
    logits = _draws.as_tensor(logits)
    _check_logits(logits)
    seed = _draws.check_seed(seed)
    num = int(num_samples)
    batch = logits.shape.as_list()[0]
    return _draws.host(lambda s, lg: _draws.categorical(_draws.seed_generator(s), lg, num), [seed, logits], dtype,
                       (batch, num) if batch is not None else None)


def _check_logits(logits):
    if logits.shape.rank is not None and logits.shape.rank != 2:
        raise ValueError(f"logits should be a matrix, got shape {logits.shape}")
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be floating point, got {logits.dtype.name}")


def stateless_split(seed, num=2, alg="auto_select"):
    """`num` new seeds, [num, 2] of the seed's dtype, determined by `seed` alone."""
    seed = _draws.as_tensor(seed) if not isinstance(seed, (tuple, list)) else _draws.check_seed(seed)
    return stateless_uniform([int(num), 2], seed, minval=None, maxval=None, dtype=seed.dtype, alg=alg)


def stateless_fold_in(seed, data, alg="auto_select"):
    """A new seed [draw from seed, data], of data's dtype (TF's construction)."""
    data = _draws.as_tensor(data)
    if data.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"data must be an int32 or int64 scalar, got {data.dtype.name}")
    first = stateless_uniform([], seed, minval=None, maxval=None, dtype=data.dtype, alg=alg)
    from ._ops import stack
    return stack([first, data])


def index_shuffle(index, seed, max_index):
    """Position `index` of a random permutation of [0, max_index] fixed by `seed` (shape [3]); index may be
    a tensor of indices. Builds the permutation, so its cost grows with max_index."""
    seed = _draws.check_seed(seed, size=3)
    index = _draws.as_tensor(index)
    if not index.dtype.is_integer:
        raise TypeError(f"index must be an integer tensor, got {index.dtype.name}")
    top = _draws.as_tensor(max_index, index.dtype)

    def shuffle(s, i, m):
        s = np.asarray(s).astype(np.int64)
        perm = _draws.bit_generator(int(s[0]), int(s[1]), int(s[2])).permutation(int(m) + 1)
        if np.any(i < 0) or np.any(i > m):
            raise _errors.InvalidArgumentError(f"index must be in [0, max_index], got {i} for max_index {int(m)}")
        return perm[i]

    static = tuple(index.shape.as_list()) if index.shape.is_fully_defined() else None
    return _draws.host(shuffle, [seed, index, top], index.dtype, static)


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """value's rows (dim 0) in an order fixed by `seed`: a host-drawn permutation, then a gather."""
    _check_alg(alg)
    seed = _draws.check_seed(seed)
    from ._ops import convert_to_tensor, gather, shape as shape_of
    value = convert_to_tensor(value)
    if value.shape.rank == 0:
        raise ValueError("stateless_shuffle needs a value of rank at least 1, got a scalar")
    rows = value.shape.as_list()[0]
    count = _draws.as_tensor(rows if rows is not None else shape_of(value, out_type=_dtypes.int64)[0],
                             _dtypes.int64)
    perm = _draws.host(lambda s, n: _draws.seed_generator(s).permutation(int(n)), [seed, count], _dtypes.int64,
                       (rows,) if rows is not None else None)
    return gather(value, perm)
