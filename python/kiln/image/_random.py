"""tf.image's random augmentations: random_* draw from kiln.random's generator (op seeds as tf.random's);
stateless_random_* take a seed of shape [2] and give the same result for the same seed. Kiln's engine has no
counter-based (Philox) random ops, so the stateless draws come from NumPy's Philox generator keyed by the seed,
eagerly or as a host function inside traces: deterministic per seed, but not TF's numbers (docs/design-notes.md,
"tf.image")."""
import numpy as np

import kiln as tf

from .. import _C
from ..tensor_shape import TensorShape
from . import _color, _common, _geometry


# ---- stateless draws ----------------------------------------------------------------------------------------------

def _seed_tensor(seed):
    if isinstance(seed, (tuple, list)) and any(tf.is_tensor(s) for s in seed):
        seed = tf.stack([tf.cast(s, tf.int64) for s in seed])
    seed = tf.convert_to_tensor(seed)
    if not seed.dtype.is_integer:
        raise TypeError(f"seed must be an int32 or int64 tensor, got {seed.dtype.name}")
    if seed.shape.rank is not None and seed.shape.as_list() != [2]:
        raise ValueError(f"seed must have shape [2], got {seed.shape}")
    return seed


def _generator(seed_values):
    s = np.asarray(seed_values).astype(np.int64).reshape(2)
    key = (int(s[0]) & 0xFFFFFFFF) | ((int(s[1]) & 0xFFFFFFFF) << 32)
    return np.random.Generator(np.random.Philox(key=key))


def _host(fn, seed, dtype, shape):
    """fn(generator) as a tensor: eager when the seed is, else a host call in the trace."""
    if not seed._is_symbolic and not _C.is_tracing():
        return tf.constant(np.asarray(fn(_generator(seed.numpy()))), dtype)
    out = tf.py_function(lambda s: np.asarray(fn(_generator(s.numpy())), dtype.as_numpy_dtype), [seed], dtype)
    return tf.reshape(out, list(shape))


def stateless_uniform(shape, seed, minval=0.0, maxval=1.0, dtype=tf.float32):
    """Floats in [minval, maxval) or integers in [minval, maxval), determined by `seed` alone."""
    seed = _seed_tensor(seed)
    shape = [int(d) for d in shape]
    if dtype.is_integer:
        return _host(lambda g: g.integers(int(minval), int(maxval), size=shape).astype(dtype.as_numpy_dtype),
                     seed, dtype, shape)
    return _host(lambda g: g.uniform(float(minval), float(maxval), size=shape).astype(dtype.as_numpy_dtype),
                 seed, dtype, shape)


def stateless_split(seed, num=2, alg="auto_select"):
    """tf.random.split: `num` new seeds, [num, 2] of the seed's dtype, determined by `seed` alone."""
    seed = _seed_tensor(seed)
    return _host(lambda g: g.integers(0, 2 ** 31, size=(int(num), 2)).astype(seed.dtype.as_numpy_dtype), seed,
                 seed.dtype, [int(num), 2])


# ---- the checks TF makes of the ranges --------------------------------------------------------------------------

def _check_lower_upper(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def _check_max_delta(max_delta, hue=False):
    if hue and max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")


# ---- flips ---------------------------------------------------------------------------------------------------

def _random_flip(image, draw, flip):
    """flip(image) where draw(shape) < 0.5: one draw for a 3-D image, one per image of a 4-D batch."""
    image = _common.as_image(image)
    if image.shape.rank == 3:
        return tf.cond(tf.less(draw([]), 0.5), lambda: flip(image), lambda: image)
    batch = TensorShape(image.shape).as_list()[0]
    if batch is None:
        raise ValueError("random flips of a batch need its size when the graph is built")
    mask = tf.reshape(tf.less(draw([batch]), 0.5), [batch, 1, 1, 1])
    return tf.where(mask, flip(image), image)


def random_flip_left_right(image, seed=None):
    return _random_flip(image, lambda s: tf.random.uniform(s, 0.0, 1.0, seed=seed), _geometry.flip_left_right)


def random_flip_up_down(image, seed=None):
    return _random_flip(image, lambda s: tf.random.uniform(s, 0.0, 1.0, seed=seed), _geometry.flip_up_down)


def stateless_random_flip_left_right(image, seed):
    return _random_flip(image, lambda s: stateless_uniform(s, seed), _geometry.flip_left_right)


def stateless_random_flip_up_down(image, seed):
    return _random_flip(image, lambda s: stateless_uniform(s, seed), _geometry.flip_up_down)


# ---- value adjustments by a random factor -------------------------------------------------------------------------

def _stateful_draw(seed):
    return lambda lo, hi: tf.random.uniform([], lo, hi, seed=seed)


def _stateless_draw(seed):
    return lambda lo, hi: stateless_uniform([], seed, lo, hi)


def _by_delta(adjust, image, max_delta, draw, hue=False):
    """adjust(image, d), d drawn from [-max_delta, max_delta)."""
    _check_max_delta(max_delta, hue)
    return adjust(image, draw(-max_delta, max_delta))


def _by_factor(adjust, image, lower, upper, draw):
    """adjust(image, f), f drawn from [lower, upper)."""
    _check_lower_upper(lower, upper)
    return adjust(image, draw(lower, upper))


def random_brightness(image, max_delta, seed=None):
    return _by_delta(_color.adjust_brightness, image, max_delta, _stateful_draw(seed))


def stateless_random_brightness(image, max_delta, seed):
    return _by_delta(_color.adjust_brightness, image, max_delta, _stateless_draw(seed))


def random_hue(image, max_delta, seed=None):
    return _by_delta(_color.adjust_hue, image, max_delta, _stateful_draw(seed), hue=True)


def stateless_random_hue(image, max_delta, seed):
    return _by_delta(_color.adjust_hue, image, max_delta, _stateless_draw(seed), hue=True)


def random_contrast(image, lower, upper, seed=None):
    return _by_factor(_color.adjust_contrast, image, lower, upper, _stateful_draw(seed))


def stateless_random_contrast(image, lower, upper, seed):
    return _by_factor(_color.adjust_contrast, image, lower, upper, _stateless_draw(seed))


def random_saturation(image, lower, upper, seed=None):
    return _by_factor(_color.adjust_saturation, image, lower, upper, _stateful_draw(seed))


def stateless_random_saturation(image, lower, upper, seed):
    return _by_factor(_color.adjust_saturation, image, lower, upper, _stateless_draw(seed))


# ---- crops -----------------------------------------------------------------------------------------------------

def _crop_limits(value, size):
    value = tf.convert_to_tensor(value)
    dims = TensorShape(value.shape).as_list()
    size = [int(s) for s in (size.numpy() if tf.is_tensor(size) else size)]
    if len(size) != len(dims):
        raise ValueError(f"size must have as many entries as value has dimensions: {size} for shape {value.shape}")
    if None in dims:
        raise ValueError("random_crop: the shape of `value` must be known when the graph is built")
    if any(s > d for s, d in zip(size, dims)):
        raise tf.errors.InvalidArgumentError(f"Need value.shape >= size, got value.shape = {dims} and size = {size}")
    return value, size, [d - s + 1 for s, d in zip(size, dims)]


def _window_at(value, offset, size):
    """value[offset[0]:offset[0] + size[0], ...] with a run-time offset: one gather per axis (slice takes
    Python ints only); gathers differentiate."""
    for axis, n in enumerate(size):
        if n == value.shape.as_list()[axis]:
            continue
        value = tf.gather(value, tf.add(tf.range(n, dtype=tf.int32), offset[axis]), axis=axis)
    return value


def random_crop(value, size, seed=None, name=None):
    """A window of `size` at a random offset (any rank)."""
    value, size, limits = _crop_limits(value, size)
    u = tf.random.uniform([len(limits)], 0.0, 1.0, dtype=tf.float64, seed=seed)
    offset = tf.cast(tf.floor(tf.multiply(u, tf.constant(limits, tf.float64))), tf.int32)
    return _window_at(value, offset, size)


def stateless_random_crop(value, size, seed, name=None):
    value, size, limits = _crop_limits(value, size)
    seed = _seed_tensor(seed)
    offset = _host(lambda g: np.array([g.integers(0, n) for n in limits], np.int32), seed, tf.int32, [len(limits)])
    if not offset._is_symbolic:
        return tf.slice(value, [int(o) for o in offset.numpy()], size)
    return _window_at(value, offset, size)


# ---- JPEG quality ---------------------------------------------------------------------------------------------

def _jpeg_round_trip(image, quality):
    from . import _codecs
    return _codecs.adjust_jpeg_quality(image, quality)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    _check_jpeg_range(min_jpeg_quality, max_jpeg_quality)
    q = tf.random.uniform([], min_jpeg_quality, max_jpeg_quality, dtype=tf.int32, seed=seed)
    return _jpeg_round_trip(image, q)


def stateless_random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed):
    _check_jpeg_range(min_jpeg_quality, max_jpeg_quality)
    q = stateless_uniform([], seed, min_jpeg_quality, max_jpeg_quality, tf.int32)
    return _jpeg_round_trip(image, q)


def _check_jpeg_range(lo, hi):
    if lo < 0 or hi < 0 or lo > 100 or hi > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if lo >= hi:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
