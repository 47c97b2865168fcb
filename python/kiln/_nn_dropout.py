"""tf.nn.dropout and tf.nn.experimental's general_dropout and stateless_dropout: one mask rule (keep where a
uniform draw in [0, 1) is >= rate, scale the kept by 1 / (1 - rate)), three sources of the draws."""
from . import _C
from ._ops import _dims, convert_to_tensor as _convert_to_tensor


def _check_rate(rate):
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}")


def _noise_dims(x, noise_shape):
    """noise_shape with None entries taking x's dim, as TF's; the mask broadcasts against x."""
    return [x.shape[i] if d is None else int(d) for i, d in enumerate(_dims(noise_shape))]


def _apply(x, rate, noise):
    # TF scales by 1 / (1 - rate) rounded to x.dtype, not by a division: the same last bit.
    return _C.where(_C.greater_equal(noise, rate), _C.multiply(x, 1 / (1 - rate)), 0)


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    _check_rate(rate)
    x = _convert_to_tensor(x)
    if rate == 0:
        return x  # as TF: no draw at all
    if noise_shape is None:
        noise = _C.random_uniform_like(x, 0.0, 1.0, seed)  # dims known only at run time included
    else:
        noise = _C.random_uniform(_noise_dims(x, noise_shape), 0.0, 1.0, x.dtype._enum, seed)
    return _apply(x, rate, noise)


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """dropout with the draws from uniform_sampler(shape=..., dtype=...), floats in [0, 1)."""
    _check_rate(rate)
    x = _convert_to_tensor(x)
    if rate == 0:
        return x
    dims = x.shape.as_list() if noise_shape is None else _noise_dims(x, noise_shape)
    return _apply(x, rate, uniform_sampler(shape=dims, dtype=x.dtype))


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """dropout whose mask is determined by `seed` (shape [2]) alone: the same seed, the same mask. The draws
    are NumPy's Philox generator's (as Kiln's other stateless draws), not TF's numbers."""
    from .image._random import stateless_uniform

    return general_dropout(x, rate, lambda shape, dtype: stateless_uniform(shape, seed, 0.0, 1.0, dtype),
                           noise_shape)
