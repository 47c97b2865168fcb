"""Keras' AutoCastVariable: a float32 layer weight that reads as the layer's compute dtype inside its `call`.

A layer whose policy computes in another dtype than its variables ("mixed_bfloat16": bfloat16 and float32) makes
its floating weights AutoCastVariables. `Layer.__call__` runs `call` inside `enable_auto_cast_variables(compute
dtype)`; there an AutoCastVariable's value (read_value, operators, and every conversion the engine's bindings
make, `_C.matmul(x, self.kernel)` included) is the variable's value cast to that dtype, so the gradient reaches the
float32 variable through the Cast. Outside that scope it is a plain float32 variable (`layer.kernel.dtype` is
float32), as Keras'.

Kiln's AutoCastVariable *is* the variable (a subclass of kiln.Variable made by add_weight), not a wrapper:
optimizers, tapes, checkpoints and savers take it as any other variable. The scope lives in the extension
(per thread, as Keras' thread-local), which casts on conversion."""
from .. import _C
from .. import dtypes as _dtypes


def _scope_dtype():
    """The dtype AutoCastVariables read as now, or None outside any scope."""
    number = _C._autocast_dtype()
    return None if number < 0 else _dtypes._BY_ENUM[number]


class AutoCastVariable(_C.Variable):
    """A floating variable that reads as the autocast scope's dtype (Keras' AutoCastVariable)."""

    def _should_cast(self):
        target = _scope_dtype()
        return target is not None and target != self.true_dtype

    @property
    def true_dtype(self):
        """The dtype of the variable itself, before any cast."""
        return _dtypes._BY_ENUM[self._dtype_enum]

    @property
    def dtype(self):
        """The dtype a read gives: the scope's compute dtype inside a layer's call, else the variable's."""
        return _scope_dtype() or self.true_dtype

    def read_value(self):
        value = _C.Variable.read_value(self)
        return _C.cast(value, self.dtype._enum) if self._should_cast() else value

    def value(self):
        return self.read_value()

    def __repr__(self):
        text = f"<AutoCastVariable '{self.name}' shape={self.shape} dtype={self.true_dtype.name} " \
               f"dtype_to_cast_to={self.dtype.name}"
        if _C.is_tracing():
            return text + ">"
        return text + f", numpy={self.read_value().numpy()!r}>"

    __str__ = __repr__


_C._set_autocast_variable_type(AutoCastVariable)


class enable_auto_cast_variables:  # noqa: N801 (Keras' name)
    """Within it, AutoCastVariables read as `dtype` (a floating dtype; None or another dtype: no casting)."""

    __slots__ = ("_number", "_previous")

    def __init__(self, dtype):
        dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._number = dtype._enum if dtype is not None and dtype.is_floating else -1

    def __enter__(self):
        self._previous = _C._set_autocast_dtype(self._number)

    def __exit__(self, *exc):
        _C._set_autocast_dtype(self._previous)
