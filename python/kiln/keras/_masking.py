"""Keras' implicit masks: the mask a layer's output carries to the next layer (TF's `_keras_mask`).

A Kiln tensor is a C++ object without an attribute dictionary, so the masks live in one table keyed by
the tensor object's identity and held weakly: an entry goes when its tensor does, and `id()` reuse
cannot hand a dead tensor's mask to a new one. `Tensor._keras_mask` reads and writes the table, so code
written for TF (`getattr(x, "_keras_mask", None)`, `x._keras_mask = m`) works as it is. A KerasTensor
(the functional API's symbolic value) needs no mask: a functional model's layers are called on real
tensors, whose masks travel as they do in eager code."""
import weakref

from .. import _C
from .. import dtypes as _dtypes

_masks = {}  # id(tensor) -> (weak reference to the tensor, its mask)


def get_mask(x):
    """The mask `x` carries, or None."""
    entry = _masks.get(id(x))
    if entry is None or entry[0]() is not x:
        return None
    return entry[1]


def set_mask(x, mask):
    """Makes `mask` the mask `x` carries (None: no mask)."""
    key = id(x)
    if mask is None:
        _masks.pop(key, None)
        return

    def forget(ref):
        entry = _masks.get(key)
        if entry is not None and entry[0] is ref:
            del _masks[key]

    _masks[key] = (weakref.ref(x, forget), mask)


_C.Tensor._keras_mask = property(get_mask, set_mask)


def as_bool(mask):
    """A mask (a tensor or array) of numbers (nonzero: kept) or bools as bools, as TF's `tf.cast(mask, tf.bool)`."""
    if not isinstance(mask, _C.Tensor):
        mask = _C.constant(mask, None)
    return mask if mask.dtype == _dtypes.bool else _C.not_equal(mask, _C.zeros_like(mask, None))


def weights_from_mask(mask, like):
    """A mask as weights of `like`'s dtype (1 kept, 0 masked)."""
    return _C.cast(as_bool(mask), like.dtype._enum)


def masked_weights(mask, sample_weight, like):
    """The sample weights times the mask (Keras' apply_mask), in `like`'s dtype: weights of fewer dims than
    the mask ([batch] against [batch, steps]) apply to every step."""
    weights = weights_from_mask(mask, like)
    if sample_weight is None:
        return weights
    w = sample_weight if isinstance(sample_weight, _C.Tensor) else _C.constant(sample_weight, None)
    if w.dtype != like.dtype:
        w = _C.cast(w, like.dtype._enum)
    if w.ndim is not None and weights.ndim is not None:
        if w.ndim == weights.ndim + 1 and w.shape[-1] == 1:
            w = _C.squeeze(w, [-1])
        while w.ndim < weights.ndim:
            w = _C.expand_dims(w, -1)
    return _C.multiply(w, weights)
