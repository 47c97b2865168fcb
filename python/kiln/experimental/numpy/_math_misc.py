"""clip (NumPy's: either bound may be None)."""
from ... import _ops
from ._convert import promote


def clip(a, a_min, a_max):
    if a_min is None and a_max is None:
        raise ValueError("Not more than one of `a_min` and `a_max` may be `None`.")
    if a_min is None:
        a, hi = promote(a, a_max)
        return _ops.minimum(a, hi)
    if a_max is None:
        a, lo = promote(a, a_min)
        return _ops.maximum(a, lo)
    a, lo, hi = promote(a, a_min, a_max)
    return _ops.minimum(_ops.maximum(a, lo), hi)
