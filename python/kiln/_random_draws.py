"""The draws behind tf.random's stateless functions and tf.random.Generator: NumPy's Philox generator keyed by
a counter-based state (key, counter), run eagerly or as a host function inside a trace, so that a draw is a pure
function of its state and arguments, and eager and traced calls agree. Deterministic, but not TF's numbers
(docs/design-notes.md, "tf.random: Generator and stateless draws")."""
import numpy as np

from . import _C
from . import dtypes as _dtypes
from . import errors as _errors

_MASK64 = (1 << 64) - 1


def bit_generator(key, counter_lo, counter_hi=0):
    """A NumPy generator for the state (key, counter): distinct states give distinct Philox keys/counters,
    so every draw (each at its own state) is an independent stream."""
    key, lo, hi = (int(v) & _MASK64 for v in (key, counter_lo, counter_hi))
    return np.random.Generator(np.random.Philox(key=key | (lo << 64), counter=hi << 192))


def seed_generator(seed_values):
    """The generator of a stateless seed [s0, s1] (int32 or int64 alike): key s0, counter s1."""
    s = np.asarray(seed_values).astype(np.int64).reshape(-1)
    return bit_generator(int(s[0]), int(s[1]))


# ---- arguments ---------------------------------------------------------------------------------------------------

def is_eager(*tensors):
    return not _C.is_tracing() and not any(isinstance(t, _C.Tensor) and t._is_symbolic for t in tensors)


def as_tensor(value, dtype=None):
    from ._ops import convert_to_tensor
    if isinstance(value, _C.Variable):
        value = value.read_value()
    if isinstance(value, _C.Tensor):
        return value if dtype is None or value.dtype == dtype else _C.cast(value, dtype._enum)
    return convert_to_tensor(value, dtype=dtype)


def shape_arg(shape):
    """A shape as a tuple of ints, or a 1-D int tensor whose values are known only when the graph runs."""
    from .tensor_shape import TensorShape
    if isinstance(shape, TensorShape):
        dims = shape.as_list()
    elif isinstance(shape, (_C.Tensor, _C.Variable)):
        t = as_tensor(shape)
        if t._is_symbolic:
            return t
        dims = np.asarray(t.numpy()).reshape(-1).tolist()
    elif isinstance(shape, (int, np.integer)):
        dims = [int(shape)]
    else:
        if any(isinstance(d, (_C.Tensor, _C.Variable)) for d in shape):
            from ._ops import stack
            return stack([as_tensor(d, _dtypes.int64) for d in shape])
        dims = list(shape)
    if any(d is None or int(d) < 0 for d in dims):
        raise ValueError(f"Shape must be fully defined and non-negative, got {dims}")
    return tuple(int(d) for d in dims)


def check_seed(seed, size=2):
    """TF's checks of a stateless seed: an int32 or int64 tensor of shape [size]."""
    if isinstance(seed, (tuple, list)) and any(isinstance(s, (_C.Tensor, _C.Variable)) for s in seed):
        from ._ops import stack
        seed = stack([as_tensor(s, _dtypes.int64) for s in seed])
    seed = as_tensor(seed)
    if seed.dtype not in (_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64) or \
            (size == 2 and seed.dtype not in (_dtypes.int32, _dtypes.int64)):
        raise TypeError(f"Value passed to parameter 'seed' has DataType {seed.dtype.name} not in list of allowed "
                        "values: int32, int64")
    dims = seed.shape.as_list() if seed.shape.rank is not None else None
    if dims is not None and dims != [size]:
        if seed._is_symbolic:
            raise ValueError(f"Shape must be [{size}] for the seed, got {dims}")
        raise _errors.InvalidArgumentError(f"seed must have shape [{size}], not {dims}")
    return seed


# ---- running a draw ----------------------------------------------------------------------------------------------

def host(fn, inputs, dtype, static_shape):
    """fn(*input arrays) -> ndarray as a tensor of dtype: computed now when every input is eager, else a host
    call in the trace (run whenever the graph runs), its static shape set where known."""
    np_dtype = dtype.as_numpy_dtype
    if is_eager(*inputs):
        from ._ops import constant
        return constant(np.asarray(fn(*[t.numpy() for t in inputs])).astype(np_dtype), dtype)
    from .function import py_function
    out = py_function(lambda *ts: np.asarray(fn(*[t.numpy() for t in ts])).astype(np_dtype), list(inputs), dtype)
    if isinstance(static_shape, tuple):
        from ._ops import reshape
        out = reshape(out, list(static_shape))
    return out


def output_shape(shape_value):
    """The shape of a draw as a tuple of ints from shape_arg's result (a constant or the graph's tensor value)."""
    return tuple(int(d) for d in np.asarray(shape_value).reshape(-1))


# ---- distributions: (generator, shape, parameters...) -> ndarray -----------------------------------------------

def unit_uniform(g, shape, dtype):
    """[0, 1) in dtype's precision (rounding of a float64 draw could reach 1.0)."""
    np_dtype = np.dtype(dtype.as_numpy_dtype) if dtype != _dtypes.bfloat16 else np.dtype(np.float32)
    u = g.random(shape, dtype=np.float32 if np_dtype.itemsize <= 4 else np.float64)
    below_one = np.nextafter(np_dtype.type(1), np_dtype.type(0))
    return np.minimum(u.astype(np_dtype), below_one)


def uniform_float(g, shape, dtype, minval, maxval):
    u = unit_uniform(g, shape, dtype).astype(np.float64)
    return u * (np.float64(maxval) - np.float64(minval)) + np.float64(minval)


def uniform_int(g, shape, dtype, minval, maxval):
    lo, hi = np.int64(minval), np.int64(maxval)
    if np.any(lo >= hi):
        raise _errors.InvalidArgumentError(f"Need minval < maxval, got {int(lo)} >= {int(hi)}")
    return g.integers(lo, hi, size=shape, dtype=np.int64)


def full_int(g, shape, dtype):
    info = np.iinfo(dtype.as_numpy_dtype)
    return g.integers(info.min, info.max, size=shape, dtype=dtype.as_numpy_dtype, endpoint=True)


def normal(g, shape, mean=0.0, stddev=1.0):
    return g.standard_normal(shape) * np.float64(stddev) + np.float64(mean)


def truncated_standard_normal(g, shape):
    """Normals redrawn until within two standard deviations (TF's truncation)."""
    x = g.standard_normal(shape)
    outside = np.abs(x) > 2.0
    while outside.any():
        x[outside] = g.standard_normal(int(outside.sum()))
        outside = np.abs(x) > 2.0
    return x


def parameterized_truncated_normal(g, shape, means, stddevs, minvals, maxvals):
    """Normals of (means, stddevs) within [minvals, maxvals], each broadcast to shape: redraws while they are
    likely to land inside, then (far tails, narrow windows) a uniform proposal over the window accepted by
    the density's ratio."""
    mu, sd, lo, hi = (np.broadcast_to(np.asarray(v, np.float64), shape) for v in (means, stddevs, minvals, maxvals))
    if np.any(lo >= hi):
        raise _errors.InvalidArgumentError("Invalid parameters: minvals must be less than maxvals")
    a, b = (lo - mu) / sd, (hi - mu) / sd
    z = np.full(shape, np.nan)
    todo = np.ones(shape, bool)
    for _ in range(32):
        draw = g.standard_normal(shape)
        hit = todo & (draw >= a) & (draw <= b)
        z[hit], todo = draw[hit], todo & ~hit
        if not todo.any():
            break
    while todo.any():
        lo_w, hi_w = np.maximum(a, -40.0), np.minimum(b, 40.0)
        lo_w = np.where(np.isfinite(a), lo_w, np.minimum(hi_w - 10.0, -10.0))
        hi_w = np.where(np.isfinite(b), hi_w, np.maximum(lo_w + 10.0, 10.0))
        x = lo_w + (hi_w - lo_w) * g.random(shape)
        peak = np.where(lo_w > 0, lo_w, np.where(hi_w < 0, hi_w, 0.0))
        hit = todo & (g.random(shape) <= np.exp((peak * peak - x * x) / 2))
        z[hit], todo = x[hit], todo & ~hit
    return mu + sd * z


def binomial(g, shape, counts, probs):
    n = np.broadcast_to(np.asarray(counts, np.float64), shape).astype(np.int64)
    p = np.broadcast_to(np.asarray(probs, np.float64), shape)
    return g.binomial(n, np.clip(p, 0.0, 1.0))


def poisson(g, shape, lam):
    return g.poisson(np.broadcast_to(np.asarray(lam, np.float64), shape))


def gamma(g, shape, alpha, beta, dtype):
    """Gamma(alpha, rate beta); zeros (from rounding) become dtype's smallest positive value, as TF's."""
    a = np.broadcast_to(np.asarray(alpha, np.float64), shape)
    x = g.standard_gamma(a) / np.broadcast_to(np.asarray(beta, np.float64), shape)
    tiny = np.finfo(dtype.as_numpy_dtype).tiny if dtype != _dtypes.bfloat16 else np.finfo(np.float32).tiny
    return np.maximum(x.astype(dtype.as_numpy_dtype if dtype != _dtypes.bfloat16 else np.float32), tiny)


def categorical(g, logits, num_samples):
    """[batch, num_samples] class indices drawn from each row's softmax(logits) (inverse CDF)."""
    logits = np.asarray(logits, np.float64)
    top = np.max(logits, axis=1, keepdims=True)
    weights = np.exp(logits - np.where(np.isfinite(top), top, 0.0))
    cdf = np.cumsum(weights, axis=1)
    u = g.random((logits.shape[0], int(num_samples))) * cdf[:, -1:]
    return np.minimum((cdf[:, None, :] <= u[:, :, None]).sum(axis=2), logits.shape[1] - 1)
