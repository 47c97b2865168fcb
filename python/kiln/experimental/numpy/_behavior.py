"""tnp.experimental_enable_numpy_behavior: NumPy's methods on kiln.Tensor (T, reshape, astype, ...: TF's set),
NumPy-style indexing (advanced indices), and NumPy's type promotion in the tensor operators
(`int32_tensor + float64_tensor` is float64, `float32_tensor + 1.5` stays float32). Global, as in
TF; `_disable_numpy_behavior` (Kiln's, for tests) puts the plain behaviour back."""
import numbers

import numpy as np

from ... import _C
from . import _dtypes
from ._convert import promote

_BINARY_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                     "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
                     "__matmul__", "__rmatmul__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
                     "__and__", "__rand__", "__or__", "__ror__")

_saved = {}  # attribute name -> the plain Tensor's attribute (None: it had none)


def _array_like(x):
    return isinstance(x, (_C.Tensor, _C.Variable, numbers.Number, np.ndarray, np.generic, list, tuple))


def _promoting(name, plain):
    def operator(self, other):
        if isinstance(other, _C.Tensor) and other.dtype == self.dtype or not _array_like(other):
            return plain(self, other)
        a, b = promote(self, other)
        return plain(a, b)
    operator.__name__ = name
    return operator


def _reshape(self, *newshape, order="C"):
    from ._shapes import reshape
    if len(newshape) == 1 and not isinstance(newshape[0], (int, np.integer)):
        newshape = newshape[0]
    return reshape(self, newshape, order=order)


def _tolist(self):
    if self._is_symbolic:
        raise ValueError("Symbolic Tensors do not support the tolist API.")
    return self.numpy().tolist()


def _methods():
    """TF's set (np_math_ops' enable_numpy_methods_on_tensor), no more: NumPy's own functions
    (np.sum(tensor)) look for these names and must fall back to __array__ where TF's tensors do."""
    from . import _reductions as r, _shapes as s, _elementwise as e
    return {
        "T": property(lambda self: s.transpose(self)),
        "size": property(lambda self: self.shape.num_elements()),  # None while a dimension is unknown
        "data": property(lambda self: self),
        "__pos__": lambda self: self,
        "tolist": _tolist,
        "transpose": lambda self, axes=None: s.transpose(self, axes),
        "flatten": lambda self: s.ravel(self),
        "reshape": _reshape,
        "ravel": lambda self: s.ravel(self),
        "clip": lambda self, a_min, a_max: e.clip(self, a_min, a_max),
        "astype": lambda self, dtype: _cast(self, dtype),
        "__round__": lambda self, ndigits=None: e.around(self, 0 if ndigits is None else ndigits),
        "max": lambda self, axis=None, out=None, keepdims=None: r.amax(self, axis, out, keepdims),
        "mean": lambda self, axis=None, dtype=None, out=None, keepdims=None: r.mean(self, axis, dtype, out, keepdims),
        "min": lambda self, axis=None, out=None, keepdims=None: r.amin(self, axis, out, keepdims),
    }


def _cast(x, dtype):
    from ... import _ops
    return _ops.cast(x, _dtypes.as_kiln_dtype(dtype))


def _numpy_getitem(self, key):
    from ._indexing import getitem
    return getitem(self, key)


def _set(name, value):
    if name not in _saved:
        _saved[name] = Tensor.__dict__.get(name)
    setattr(Tensor, name, value)


Tensor = _C.Tensor


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Gives kiln.Tensor NumPy's methods, indexing and type promotion (TF's numpy behaviour); with
    `prefer_float32`, Python floats and the default float type are float32."""
    if dtype_conversion_mode != "legacy":
        raise NotImplementedError(f"dtype_conversion_mode={dtype_conversion_mode!r}: Kiln follows the 'legacy' "
                                  "NumPy promotion only")
    _dtypes.set_prefer_float32(prefer_float32)
    if _saved:
        return
    for name in _BINARY_OPERATORS:
        _set(name, _promoting(name, Tensor.__dict__.get(name) or getattr(Tensor, name)))
    for name, value in _methods().items():
        _set(name, value)
    _set("__getitem__", _numpy_getitem)


def is_enabled():
    return bool(_saved)


def _disable_numpy_behavior():
    """Kiln's own (TF has no way back): the plain tensor behaviour again, for tests."""
    for name, value in _saved.items():
        if value is None:
            delattr(Tensor, name)
        else:
            setattr(Tensor, name, value)
    _saved.clear()
    _dtypes.set_prefer_float32(False)
