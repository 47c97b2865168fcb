"""kiln.bitwise (tf.bitwise): the engine's BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift and RightShift
(src/ops/bitwise_ops.cpp) on the eight integer dtypes, broadcasting; shift counts outside [0, width) are
clamped into it, as TF's kernels do. A Python value beside a tensor takes the tensor's dtype."""
from . import _C
from ._ops import op_input

_ALLOWED = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _tensor(value, parameter, dtype=None):
    return op_input(value, parameter, _ALLOWED, dtype=dtype)


def _pair(x, y):
    """x and y as tensors; a Python value takes the other's dtype (TF's type attr T binds both)."""
    x_is_value = not isinstance(x, (_C.Tensor, _C.Variable))
    if x_is_value and isinstance(y, (_C.Tensor, _C.Variable)):
        y = _tensor(y, "y")
        return _tensor(x, "x", y.dtype), y
    x = _tensor(x, "x")
    return x, _tensor(y, "y", x.dtype)


def bitwise_and(x, y, name=None):
    """x & y elementwise, on integer tensors."""
    return _C.bitwise_and(*_pair(x, y))


def bitwise_or(x, y, name=None):
    """x | y elementwise, on integer tensors."""
    return _C.bitwise_or(*_pair(x, y))


def bitwise_xor(x, y, name=None):
    """x ^ y elementwise, on integer tensors."""
    return _C.bitwise_xor(*_pair(x, y))


def left_shift(x, y, name=None):
    """x << y elementwise: counts below 0 shift by 0, those of the width or more by the width minus 1; the bits
    shifted out are lost (signed values wrap)."""
    return _C.left_shift(*_pair(x, y))


def right_shift(x, y, name=None):
    """x >> y elementwise, arithmetic for signed dtypes (the sign fills in); counts clamped as left_shift's."""
    return _C.right_shift(*_pair(x, y))


def invert(x, name=None):
    """~x elementwise: every bit of an integer tensor flipped."""
    return _C.invert(_tensor(x, "x"))
