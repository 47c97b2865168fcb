"""tf.random.Generator: a counter-based generator whose state is a tf.Variable (int64, [3] for Philox:
counter low, counter high, key; [2] for ThreeFry: counter, key), laid out and advanced as TF's: a draw of n
values advances the counter by 256 * n, `skip(n)` as a draw of n. Each draw takes its values from the state
before it (kiln._random_draws: NumPy's Philox keyed by the state), so the numbers are not TF's, but the stream
semantics are: reset reproduces, split and make_seeds give independent streams, and inside a tf.function the
state is read and advanced (atomically, on the host) whenever the graph runs. A kiln.Module, so
tf.train.Checkpoint tracks its state ("_state_var", TF's name)."""
import enum as _enum
import os as _os
import threading as _threading

import numpy as np

from . import _C
from . import _random_draws as _draws
from . import dtypes as _dtypes
from .module import Module

_DELTA_PER_VALUE = 256  # the counter's advance per value drawn, TF's
_MASK64 = (1 << 64) - 1
_STATE_LOCK = _threading.Lock()


class Algorithm(_enum.Enum):
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _alg_to_int(alg):
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, (int, np.integer)) and not isinstance(alg, bool):
        return int(alg)
    if isinstance(alg, _C.Tensor):
        return int(alg.numpy())
    if isinstance(alg, str):
        names = {"philox": 1, "threefry": 2, "auto_select": 3}
        if alg.lower() in names:
            return names[alg.lower()]
        raise ValueError(f"Unknown algorithm name: {alg}")
    raise TypeError(f"Can't convert algorithm {alg} of type {type(alg)} to int")


def _state_size(alg):
    if alg in (Algorithm.PHILOX.value, Algorithm.AUTO_SELECT.value):
        return 3
    if alg == Algorithm.THREEFRY.value:
        return 2
    raise ValueError(f"Unsupported algorithm id: {alg}")


def _signed(v):
    v = int(v) & _MASK64
    return v - (1 << 64) if v >= 1 << 63 else v


def _state_array(values, alg):
    """values (ints, an array or a tensor) as the int64 state of alg, its size checked."""
    if isinstance(values, (_C.Tensor, _C.Variable)):
        values = values.numpy()
    arr = np.asarray([_signed(v) for v in np.asarray(values, dtype=object).reshape(-1)], np.int64)
    size = _state_size(alg)
    if arr.shape != (size,):
        raise ValueError(f"Shapes ({arr.size},) and ({size},) are incompatible")
    return arr


def create_rng_state(seed, alg):
    """The state of `alg` from an integer (cut into 64-bit words, lowest first) or a 1-D array of words,
    padded with zeros on the left (the counter) to the state's size."""
    alg = _alg_to_int(alg)
    size = _state_size(alg)
    if isinstance(seed, (_C.Tensor, _C.Variable)):
        seed = seed.numpy()
    if isinstance(seed, (int, np.integer)):
        seed, words = int(seed), []
        for _ in range(size):
            words.append(seed & _MASK64)
            seed >>= 64
    else:
        words = list(np.asarray(seed, dtype=object).reshape(-1))[:size]
    words = [0] * (size - len(words)) + [_signed(w) for w in words]
    # A value even while tracing: a Generator made on a first trace takes it as its variable's initial value.
    from ._ops import convert_to_tensor
    return convert_to_tensor(np.asarray(words, np.int64), _dtypes.int64)


def _advanced(state, delta):
    """state with its counter (the words before the key) advanced by delta, carrying between words."""
    state = np.asarray(state, np.int64)
    words = [int(v) & _MASK64 for v in state[:-1]]
    counter = sum(w << (64 * i) for i, w in enumerate(words)) + int(delta)
    counter &= (1 << (64 * len(words))) - 1
    new = [_signed(counter >> (64 * i)) for i in range(len(words))] + [int(state[-1])]
    return np.asarray(new, np.int64)


def _generator_of(state):
    """The NumPy generator of a draw at `state` (counter words then key)."""
    state = np.asarray(state, np.int64)
    counter_hi = int(state[1]) if state.size == 3 else 0
    return _draws.bit_generator(int(state[-1]), int(state[0]), counter_hi)


class Generator(Module):
    """See the module's docstring. Constructors: from_seed, from_non_deterministic_state, from_state,
    from_key_counter; Generator(copy_from=g) copies another's state into a new variable."""

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed, alg=None):
        alg = Algorithm.PHILOX.value if alg is None else _alg_to_int(alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        alg = Algorithm.PHILOX.value if alg is None else _alg_to_int(alg)
        words = np.frombuffer(_os.urandom(8 * _state_size(alg)), np.int64)
        return cls(state=words, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        alg = _alg_to_int(alg)
        return cls(state=_key_counter_state(key, counter, alg), alg=alg)

    def __init__(self, copy_from=None, state=None, alg=None):
        super().__init__(name="generator")
        Variable = _C.Variable
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Generator: `copy_from` excludes `state` and `alg`")
            self._alg = copy_from.algorithm
            self._state_var = Variable(copy_from.state.numpy(), trainable=False)
            return
        if state is None or alg is None:
            raise ValueError("Generator needs `copy_from`, or `state` and `alg` together")
        self._alg = _alg_to_int(alg)
        if isinstance(state, _C.Variable):
            _state_array(state, self._alg)  # checks its shape
            self._state_var = state
        else:
            self._state_var = Variable(_state_array(state, self._alg), trainable=False, dtype=_dtypes.int64)

    # ---- state -------------------------------------------------------------------------------------------------

    @property
    def state(self):
        return self._state_var

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        """The key: the last word of the state."""
        return self._state_var[-1]

    def reset(self, state):
        self._state_var.assign(_state_array(state, self._alg))

    def reset_from_seed(self, seed):
        self._state_var.assign(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        self._state_var.assign(_key_counter_state(key, counter, self._alg))

    def skip(self, delta):
        """Advances the counter as a draw of `delta` values would; returns the state before."""
        delta = _draws.as_tensor(delta, _dtypes.int64)
        if _draws.is_eager(delta):
            return self._take(int(delta.numpy()))
        from .function import py_function
        return py_function(lambda d: self._take(int(d.numpy())), [delta], _dtypes.int64)

    def _take(self, values):
        """The state, advanced at once by `values` values: one atomic step, so that concurrent draws (a
        parallel dataset map) never share a state. Runs on the host, eagerly or inside a traced graph."""
        with _STATE_LOCK:
            state = self._state_var.numpy()
            self._state_var.assign(_advanced(state, _DELTA_PER_VALUE * int(values)))
        return state

    # ---- drawing -----------------------------------------------------------------------------------------------

    def _draw(self, fn, shape, params, dtype):
        """fn(numpy generator, shape tuple, *param arrays), its values drawn at the current state, which then
        advances by 256 per value: now when eager, else whenever the traced graph runs."""
        shape = _draws.shape_arg(shape)

        def run(dims, *ps):
            state = self._take(int(np.prod(dims, dtype=np.int64)))
            return np.asarray(fn(_generator_of(state), dims, *ps)).astype(dtype.as_numpy_dtype)

        if isinstance(shape, tuple) and _draws.is_eager(*params):
            from ._ops import constant
            return constant(run(shape, *[p.numpy() for p in params]), dtype)
        from .function import py_function
        dims = shape if isinstance(shape, _C.Tensor) else _draws.as_tensor(np.asarray(shape, np.int64))
        out = py_function(lambda d, *ps: run(_draws.output_shape(d.numpy()), *[p.numpy() for p in ps]),
                          [dims] + list(params), dtype)
        if isinstance(shape, tuple):
            from ._ops import reshape
            out = reshape(out, list(shape))
        return out

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        dtype = _dtypes.as_dtype(dtype)
        params = [_draws.as_tensor(mean, dtype), _draws.as_tensor(stddev, dtype)]
        return self._draw(lambda g, s, m, sd: _draws.normal(g, s, m, sd), shape, params, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        dtype = _dtypes.as_dtype(dtype)
        params = [_draws.as_tensor(mean, dtype), _draws.as_tensor(stddev, dtype)]
        return self._draw(lambda g, s, m, sd: _draws.truncated_standard_normal(g, s) * sd + m, shape, params,
                          dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        dtype = _dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError(f"For integer dtype {dtype}, minval and maxval must be both `None` or both "
                                 f"non-`None`; got minval={minval} and maxval={maxval}")
            if minval is None:
                return self.uniform_full_int(shape, dtype)
            params = [_draws.as_tensor(minval, dtype), _draws.as_tensor(maxval, dtype)]
            return self._draw(lambda g, s, lo, hi: _draws.uniform_int(g, s, dtype, lo, hi), shape, params, dtype)
        params = [_draws.as_tensor(minval, dtype), _draws.as_tensor(1 if maxval is None else maxval, dtype)]
        return self._draw(lambda g, s, lo, hi: _draws.uniform_float(g, s, dtype, lo, hi), shape, params, dtype)

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_integer:
            raise TypeError(f"uniform_full_int needs an integer dtype, got {dtype.name}")
        return self._draw(lambda g, s: _draws.full_int(g, s, dtype), shape, [], dtype)

    def binomial(self, shape, counts, probs, dtype=_dtypes.int32, name=None):
        dtype = _dtypes.as_dtype(dtype)
        from ._random_stateless import binomial_params
        return self._draw(lambda g, s, n, p: _draws.binomial(g, s, n, p), shape, list(binomial_params(counts, probs)),
                          dtype)

    def make_seeds(self, count=1):
        """[2, count] int64 seeds for the stateless functions: new keys, then zeros (TF's layout)."""
        keys = self.uniform_full_int([int(count)], _dtypes.int64)
        from ._ops import stack, zeros_like
        return stack([keys, zeros_like(keys)])

    def split(self, count=1):
        """`count` new generators, each keyed by a fresh draw of this one (which advances)."""
        if _C.is_tracing():
            raise ValueError("Generator.split makes new generators (variables): call it outside tf.function")
        keys = self.uniform_full_int([int(count)], _dtypes.int64)
        size = _state_size(self._alg)
        return [Generator(state=[0] * (size - 1) + [int(k)], alg=self._alg) for k in np.asarray(keys.numpy())]


def _key_counter_state(key, counter, alg):
    counter = np.asarray(counter.numpy() if isinstance(counter, (_C.Tensor, _C.Variable)) else counter,
                         dtype=object).reshape(-1)
    key = key.numpy() if isinstance(key, (_C.Tensor, _C.Variable)) else key
    if np.ndim(key) != 0:
        raise ValueError(f"Shapes {tuple(np.shape(key))} and () are incompatible")
    if counter.size != _state_size(alg) - 1:
        raise ValueError(f"Shapes ({counter.size},) and ({_state_size(alg) - 1},) are incompatible")
    return _state_array(list(counter) + [int(key)], alg)


_global = [None]


def get_global_generator():
    """The global generator, made from a non-deterministic state on first use (refused, as TF does, while op
    determinism is enabled: set one first)."""
    if _global[0] is None:
        from . import config
        if config.experimental.is_op_determinism_enabled():
            raise RuntimeError('"get_global_generator" cannot be called if determinism is enabled, unless '
                               '"set_global_generator" has already been called. Please call '
                               '"set_global_generator" first.')
        with _C.init_scope():
            _global[0] = Generator.from_non_deterministic_state()
    return _global[0]


def set_global_generator(generator):
    _global[0] = generator
