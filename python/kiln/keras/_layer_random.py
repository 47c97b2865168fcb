"""The random draws of Keras' augmentation layers (RandomFlip, RandomRotation, RandomCrop, ...).

Keras 2.15 gives each of them its own generator (BaseRandomLayer with force_generator=True): with `seed`,
`tf.random.Generator.from_seed(seed)`, so two fresh layers of one seed draw the same sequence whatever the global
seed, and every call draws anew (traced calls too). Kiln's engine has no generator with a state variable, so a
seeded layer draws from its own NumPy Philox generator keyed by the seed: eagerly at once, in a trace through a
host function that runs on every call of the graph. The numbers are not TF's (another Philox variant), the rules
are. Without a seed the draws come from kiln.random's global generator (engine ops; tf.random.set_seed repeats
them), as Keras' unseeded generators are reproducible only after a global seeding."""
import random

import numpy as np

from .. import _C
from .. import dtypes as _dtypes


def _shaped_like(out, like):
    """A host function's result (no static shape) given like's shape: its static dims, or its run-time shape."""
    dims = [-1 if d is None else d for d in like.shape.as_list()]
    if dims.count(-1) <= 1:
        return _C.reshape(out, dims)
    from .._ops import reshape
    return reshape(out, _C.shape(like))


class LayerRandom:
    """A layer's source of uniform draws, as a tensor of the shape and dtype of `like` (float32)."""

    def __init__(self, seed):
        self.seed = seed
        self._generator = None if seed is None else np.random.Generator(np.random.Philox(int(seed)))

    def uniform(self, like, low, high):
        """Draws in [low, high) shaped as `like` (a float32 tensor whose dims may be known only at run time)."""
        low, high = float(low), float(high)
        if low == high:  # a fixed factor (the engine's uniform needs low < high)
            return _C.add(_C.multiply(like, 0.0), low)
        if self._generator is None:
            return _C.random_uniform_like(like, low, high, None)

        def draw(dims):
            return self._generator.uniform(low, high, size=tuple(int(d) for d in dims)).astype(np.float32)

        if not _C.is_tracing() and like.shape.is_fully_defined():
            return _C.constant(draw(like.shape.as_list()), None)
        from ..function import py_function
        out = py_function(lambda dims: draw(dims.numpy()), [_C.shape(like)], _dtypes.float32)
        return _shaped_like(out, like)


    def normal(self, like):
        """Standard normal draws shaped as `like`, from the layer's own generator (seeded layers only)."""
        def draw(dims):
            return self._generator.standard_normal(size=tuple(int(d) for d in dims)).astype(np.float32)

        if not _C.is_tracing() and like.shape.is_fully_defined():
            return _C.constant(draw(like.shape.as_list()), None)
        from ..function import py_function
        out = py_function(lambda dims: draw(dims.numpy()), [_C.shape(like)], _dtypes.float32)
        return _shaped_like(out, like)


# keras.backend.experimental.enable_tf_random_generator: the noise layers made while it is on draw from a generator
# of their own, as Keras 2.15's BaseRandomLayer then does (a seed repeats its sequence in fresh layers; without one,
# a random seed), instead of TF's op-seeded stream.
_USE_GENERATOR = [False]


def generator_for(seed):
    """A noise layer's own generator when the switch is on at its construction, else None."""
    if not _USE_GENERATOR[0]:
        return None
    return LayerRandom(seed if seed is not None else random.randint(1, int(1e9)))


def uniform01(layer, like):
    """Uniform [0, 1) draws shaped as `like` for a noise layer: its generator's, or the op-seeded stream's."""
    own = getattr(layer, "_generator_draws", None)
    if own is not None:
        return _C.cast(own.uniform(_C.cast(like, _dtypes.float32._enum), 0.0, 1.0), like.dtype._enum)
    return _C.random_uniform_like(like, 0.0, 1.0, layer.seed)


def standard_normal(layer, like):
    own = getattr(layer, "_generator_draws", None)
    if own is not None:
        return _C.cast(own.normal(like), like.dtype._enum)
    from ._noise import standard_normal_like
    return standard_normal_like(like, layer.seed)


def per_image(random, images, low, high):
    """One draw per image of a [batch, h, w, c] batch in [low, high), shape [batch, 1]."""
    first = _C.reshape(_C.cast(_C.slice(images, [0, 0, 0, 0], [-1, 1, 1, 1]), _dtypes.float32._enum), [-1, 1])
    return random.uniform(first, low, high)
