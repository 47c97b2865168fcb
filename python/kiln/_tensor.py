"""Python behaviour of kiln.Tensor and kiln.Variable (the classes come from _C):
printing, truth values, indexing, iteration, Variable's TF methods."""
import numpy as _np

from . import _C
from .dtypes import _BY_ENUM
from .errors import OperatorNotAllowedInGraphError
from .tensor_shape import TensorShape

Tensor = _C.Tensor
Variable = _C.Variable


def _graph_bool_error(what):
    return OperatorNotAllowedInGraphError(
        f"Using a symbolic `kiln.Tensor` as a Python `{what}` is not allowed: inside kiln.function the "
        "tensor has no value while the function is traced. Use kiln.cond / kiln.while_loop, or let "
        "AutoGraph convert the Python statement (kiln.function's autograph=True, the default).")


class SymbolicNumpyError(AttributeError, TypeError):
    """.numpy() of a graph tensor (one traced inside kiln.function, maybe leaked out of it):
    TF's graph tensors have no numpy attribute (AttributeError); Kiln raised TypeError before."""


# ---- Tensor -------------------------------------------------------------------

_eager_numpy = Tensor.numpy


def _numpy(self):
    if self._is_symbolic:
        raise SymbolicNumpyError(
            f"'SymbolicTensor' object has no attribute 'numpy': {self.name} is a graph tensor of a kiln.function "
            "trace and has no value outside the running graph (return it from the function, or kiln.print it)")
    return _eager_numpy(self)


def _repr(self):
    if self._is_symbolic:
        return f"<kiln.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
    value = _bfloat16_repr(self.numpy()) if self.dtype.name == "bfloat16" else repr(self.numpy())
    return f"<kiln.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={value}>"


def _bfloat16_repr(values):
    """As TF shows a bfloat16 value (ml_dtypes' array type: each element as C++'s ostream prints it); NumPy has
    no bfloat16, so .numpy() itself is float32."""
    if values.ndim == 0:
        return "%g" % values
    body = _np.array2string(values, separator=", ", prefix="array(", formatter={"float_kind": lambda v: "%g" % v})
    return f"array({body}, dtype=bfloat16)"


def _bool(self):
    if self._is_symbolic:
        raise _graph_bool_error("bool")
    return _C.truth_value(self)


def _scalar(convert, what):
    def method(self):
        if self._is_symbolic:
            raise _graph_bool_error(what)
        return convert(self._scalar_value())
    return method


def _index(self):
    if self._is_symbolic:
        raise _graph_bool_error("int")
    # bool too: TF's is NumPy's __index__, which takes np.bool_ (protobuf's Int64List([t]) relies on it).
    if self.dtype.name not in ("int32", "int64", "uint8", "bool") or self.ndim != 0:
        raise TypeError(f"Only integer scalar tensors can be converted to an index, got {self.dtype.name} "
                        f"with shape {self.shape}")
    return int(self._scalar_value())


def _len(self):
    if self.ndim is None or self.ndim == 0:
        raise TypeError("len() of a 0-d tensor" if self.ndim == 0 else "len() of a tensor of unknown rank")
    n = self.shape[0]
    if n is None:
        raise TypeError(f"len() of a tensor whose first dimension is unknown ({self.name}); use kiln.shape(x)[0]")
    return n


def _iter(self):
    if self.ndim == 0:
        raise TypeError("Cannot iterate over a scalar tensor.")
    if self._is_symbolic:
        raise OperatorNotAllowedInGraphError(
            "Iterating over a symbolic `kiln.Tensor` is not allowed: inside kiln.function the tensor has no "
            "value while the function is traced. Let AutoGraph convert the loop (autograph=True, the default) "
            "or use kiln.while_loop.")
    return iter(_C.unstack(self, 0))


def _format(self, format_spec):
    # As TF's EagerTensor: the NumPy value formats itself (a 0-d one as its item).
    if self._is_symbolic:
        return object.__format__(self, format_spec)
    return self.numpy().__format__(format_spec)


def _getitem(self, key):
    from . import _indexing
    return _indexing.getitem(self, key)


class _Reference:
    """tensor.ref() / variable.ref(): hashable, equal when it refers to the same tensor (the reference keeps
    it alive, so its id is stable) or the same variable (whatever Python object holds it)."""
    __slots__ = ("_obj", "_key")

    def __init__(self, obj, key):
        self._obj = obj
        self._key = key

    def deref(self):
        return self._obj

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._key == self._key


Tensor.__repr__ = _repr
Tensor.numpy = _numpy
Tensor.__format__ = _format
Tensor.__bool__ = _bool
Tensor.__float__ = _scalar(float, "float")
Tensor.__int__ = _scalar(int, "int")
Tensor.__index__ = _index
Tensor.__len__ = _len
Tensor.__iter__ = _iter
Tensor.__getitem__ = _getitem
Tensor.ref = lambda self: _Reference(self, ("tensor", id(self)))
Tensor.get_shape = lambda self: self.shape
Tensor.__array_priority__ = 100  # NumPy defers `ndarray + tensor` to the tensor
Tensor.__hash__ = None
# Tensors never change once made, so a copy is the tensor itself (as TF's EagerTensor); pickling
# rebuilds one from its value, as TF's __reduce__ does.
Tensor.__copy__ = lambda self: self
Tensor.__deepcopy__ = lambda self, memo: self


def _reduce(self):
    from ._ops import convert_to_tensor
    return convert_to_tensor, (self.numpy(),)


Tensor.__reduce__ = _reduce


def _set_shape(self, shape):
    """TF's Tensor.set_shape: ValueError unless `shape` is compatible with the tensor's; a graph tensor takes the
    merged static shape (an EnsureShape, checked when the graph runs)."""
    shape = TensorShape(shape)
    if not self.shape.is_compatible_with(shape):
        raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {shape}.")
    if self._is_symbolic and shape.rank is not None and self.shape != self.shape.merge_with(shape):
        from ._ops import ensure_shape
        self._rebind(ensure_shape(self, shape))


Tensor.set_shape = _set_shape


# ---- Variable -------------------------------------------------------------------

def _var_repr(self):
    if _C.is_tracing():
        return f"<kiln.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
    return (f"<kiln.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
            f"numpy={_repr_value(self.read_value())}>")


def _repr_value(t):
    return repr(t.numpy())


def _check_assign_shape(var, value):
    """TF checks a new value's static shape against the variable's before assigning (ValueError)."""
    if isinstance(value, (Tensor, Variable)):
        shape = value.shape
    else:
        try:
            shape = TensorShape(_np.shape(value))
        except ValueError:
            return  # a ragged list: the conversion reports it
    if not var.shape.is_compatible_with(shape):
        raise ValueError(f"Cannot assign to variable '{var.name}': it has shape {var.shape}, the value has shape "
                         f"{shape}, and a variable's shape cannot change.")


def _assign(op):
    def method(self, value, use_locking=False, name=None, read_value=True):
        _check_assign_shape(self, value)
        op(self, value)
        return self
    return method


def _forward(name):
    def method(self, *args):
        return getattr(self.read_value(), name)(*args)
    method.__name__ = name
    return method


Variable.dtype = property(lambda self: _BY_ENUM[self._dtype_enum])
Variable.shape = property(lambda self: TensorShape(self._dims if self._rank >= 0 else None))
Variable.name = property(lambda self: self._variable_name + ":0")
Variable.ndim = property(lambda self: self._rank)
Variable.numpy = lambda self: self.read_value().numpy()
Variable.value = lambda self: self.read_value()
Variable.get_shape = lambda self: self.shape
Variable.__repr__ = _var_repr
Variable.__str__ = _var_repr
Variable.__format__ = lambda self, spec: _format(self.read_value(), spec)
Variable.assign = _assign(Variable._assign)
Variable.assign_add = _assign(Variable._assign_add)
Variable.assign_sub = _assign(Variable._assign_sub)
Variable.__array__ = lambda self, dtype=None: self.read_value().__array__(dtype)
Variable.__array_priority__ = 100
Variable.ref = lambda self: _Reference(self, ("variable", self._state_id()))
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
              "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__",
              "__getitem__", "__bool__", "__float__", "__int__", "__index__", "__len__", "__iter__",
              "__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__", "__invert__"):
    setattr(Variable, _name, _forward(_name))


def _var_eq(self, other):
    # TF2: a Variable compares elementwise, as tensors do.
    return self.read_value() == other


Variable.__eq__ = _var_eq
Variable.__ne__ = lambda self, other: self.read_value() != other


def _unhashable(self):
    raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key.")


Variable.__hash__ = _unhashable



# A copy of a variable is a new variable with the same value, as TF's ResourceVariable (copy,
# deepcopy and pickle all go through __reduce__); not inside a trace, where it would be created per call.
def _var_reduce(self):
    import functools
    if _C.is_tracing():
        raise NotImplementedError("Copying a kiln.Variable is not supported inside a kiln.function trace")
    return functools.partial(Variable, initial_value=self.numpy(), trainable=self.trainable,
                             name=self.name.rsplit(":", 1)[0], dtype=self.dtype), ()


Variable.__reduce__ = _var_reduce
Variable.__deepcopy__ = lambda self, memo: _var_reduce(self)[0]()
