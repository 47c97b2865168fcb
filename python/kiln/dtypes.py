"""kiln.DType: TensorFlow's dtype objects (kiln.float32, ...)."""
import numpy as _np

from . import _C


class DType:
    """A tensor's element type, as tf.dtypes.DType."""

    __slots__ = ("_enum", "name", "_np", "_tf_enum", "_size")

    def __init__(self, enum, name, np_type, tf_enum, size):
        self._enum = enum
        self.name = name
        self._np = np_type
        self._tf_enum = tf_enum
        self._size = size

    @property
    def as_numpy_dtype(self):
        # NumPy has no bfloat16 (TF uses ml_dtypes.bfloat16, which Debian lacks): Kiln's bfloat16
        # tensors read out as float32 arrays (docs/design-notes.md, "Dtypes beyond float32").
        return self._np

    @property
    def as_datatype_enum(self):
        return self._tf_enum  # TF's DataType number (types.proto)

    @property
    def is_floating(self):
        return self.name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_integer(self):
        return self.name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

    @property
    def is_complex(self):
        return self.name in ("complex64", "complex128")

    @property
    def is_unsigned(self):
        return self.name in ("uint8", "uint16", "uint32", "uint64")

    @property
    def is_bool(self):
        return self.name == "bool"

    @property
    def is_quantized(self):
        return False

    @property
    def is_numpy_compatible(self):
        return self.name not in ("resource", "bfloat16")

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def _limit(self, which):
        if self.name == "bfloat16":  # NumPy has no bfloat16: its extremes as float32
            return _np.float32((-1 if which == "min" else 1) * 3.3895313892515355e38)
        if self.is_floating:
            return getattr(_np.finfo(self._np), which)
        if self.is_integer:
            return getattr(_np.iinfo(self._np), which)
        raise TypeError(f"Cannot find {'minimum' if which == 'min' else 'maximum'} value of {self}.")

    @property
    def min(self):
        """The smallest value of the dtype (TF raises TypeError for bool, string and complex)."""
        return self._limit("min")

    @property
    def max(self):
        """The largest value of the dtype."""
        return self._limit("max")

    @property
    def limits(self):
        return self.min, self.max

    @property
    def size(self):
        return self._size

    def is_compatible_with(self, other):
        return self == as_dtype(other)

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


def _make(name, np_type, tf_enum, size=None):
    return DType(int(getattr(_C.DTypeEnum, name)), name, np_type,
                 tf_enum, size if size is not None else _np.dtype(np_type).itemsize)


float32 = _make("float32", _np.float32, 1)
float64 = _make("float64", _np.float64, 2)
int32 = _make("int32", _np.int32, 3)
int64 = _make("int64", _np.int64, 9)
uint8 = _make("uint8", _np.uint8, 4)
bool = _make("bool", _np.bool_, 10)  # noqa: A001 - TF's name
string = _make("string", _np.object_, 7, 8)
resource = _make("resource", _np.object_, 20, 8)
float16 = _make("float16", _np.float16, 19)
bfloat16 = _make("bfloat16", _np.float32, 14, 2)
int8 = _make("int8", _np.int8, 6)
int16 = _make("int16", _np.int16, 5)
uint16 = _make("uint16", _np.uint16, 17)
uint32 = _make("uint32", _np.uint32, 22)
uint64 = _make("uint64", _np.uint64, 23)
complex64 = _make("complex64", _np.complex64, 8)
complex128 = _make("complex128", _np.complex128, 18)
double = float64
half = float16

_BY_ENUM = sorted([float32, float64, int32, int64, uint8, bool, string, resource, float16, bfloat16, int8, int16,
                   uint16, uint32, uint64, complex64, complex128], key=lambda d: d._enum)
_BY_NAME = {d.name: d for d in _BY_ENUM}
_BY_NAME.update({"double": float64, "float": float32, "half": float16})
_BY_TF_ENUM = {d._tf_enum: d for d in _BY_ENUM}
# The NumPy dtypes Kiln takes, each to its dtype (bfloat16 has none: float32 is float32's).
_BY_NUMPY = {_np.dtype(d._np): d for d in _BY_ENUM if d.is_numpy_compatible and d not in (string,)}


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
    if type_value is builtins_complex:
        return complex128
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
    if npd in _BY_NUMPY:
        return _BY_NUMPY[npd]
    if npd.kind in "OSU":
        return string
    raise TypeError(f"Cannot convert {type_value!r} to a kiln DType: Kiln has "
                    + ", ".join(d.name for d in _BY_ENUM if d is not resource) + ".")


import builtins as _builtins  # noqa: E402

builtins_bool, builtins_int, builtins_float = _builtins.bool, _builtins.int, _builtins.float
builtins_complex = _builtins.complex
