"""kiln.DType: TensorFlow's dtype objects (kiln.float32, ...)."""
import numpy as _np

from . import _C


class DType:
    """A tensor's element type, as tf.dtypes.DType."""

    __slots__ = ("_enum", "name", "_np")

    def __init__(self, enum, name, np_type):
        self._enum = enum
        self.name = name
        self._np = np_type

    @property
    def as_numpy_dtype(self):
        return self._np

    @property
    def is_floating(self):
        return self.name in ("float32", "float64")

    @property
    def is_integer(self):
        return self.name in ("int32", "int64", "uint8")

    @property
    def is_bool(self):
        return self.name == "bool"

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        return _np.dtype(self._np).itemsize

    def __repr__(self):
        return "kiln." + self.name

    def __str__(self):
        return f"<dtype: '{self.name}'>"  # as TF prints a dtype: print(x.dtype)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._enum == other._enum
        try:
            return self._enum == as_dtype(other)._enum
        except TypeError:
            return False

    def __hash__(self):
        return self._enum

    def __reduce__(self):
        return as_dtype, (self.name,)


_E = _C.DTypeEnum
float32 = DType(int(_E.float32), "float32", _np.float32)
float64 = DType(int(_E.float64), "float64", _np.float64)
int32 = DType(int(_E.int32), "int32", _np.int32)
int64 = DType(int(_E.int64), "int64", _np.int64)
uint8 = DType(int(_E.uint8), "uint8", _np.uint8)
bool = DType(int(_E.bool), "bool", _np.bool_)  # noqa: A001 - TF's name
string = DType(int(_E.string), "string", _np.object_)
resource = DType(int(_E.resource), "resource", _np.object_)
double = float64

_BY_ENUM = [float32, float64, int32, int64, uint8, bool, string, resource]
_BY_NAME = {d.name: d for d in _BY_ENUM}
_BY_NAME["double"] = float64
_BY_NAME["float"] = float32
_BY_TF_ENUM = {1: float32, 2: float64, 3: int32, 4: uint8, 7: string, 9: int64, 10: bool, 20: resource}


def as_dtype(type_value):
    """Converts a DType, a NumPy dtype or type, or a name to a kiln.DType."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str) and type_value in _BY_NAME:
        return _BY_NAME[type_value]
    if type_value is builtins_bool:
        return bool
    if type_value is builtins_int:
        return int32
    if type_value is builtins_float:
        return float32
    if isinstance(type_value, builtins_int) and not isinstance(type_value, builtins_bool):
        # TF's DataType numbers (types.proto): tf.as_dtype(1) is tf.float32, so tf.zeros(1, 1) is float32 zeros.
        if type_value in _BY_TF_ENUM:
            return _BY_TF_ENUM[type_value]
        raise TypeError(f"Cannot convert {type_value!r} to a kiln DType: TF's DataType numbers Kiln has are "
                        f"{sorted(_BY_TF_ENUM)}.")
    try:
        npd = _np.dtype(type_value)
    except TypeError:
        raise TypeError(f"Cannot convert {type_value!r} to a kiln DType.") from None
    for d in _BY_ENUM[:6]:
        if _np.dtype(d._np) == npd:
            return d
    if npd.kind in "OSU":
        return string
    raise TypeError(f"Cannot convert {type_value!r} to a kiln DType: Kiln has float32, float64, int32, "
                    "int64, uint8, bool and string.")


import builtins as _builtins  # noqa: E402

builtins_bool, builtins_int, builtins_float = _builtins.bool, _builtins.int, _builtins.float
