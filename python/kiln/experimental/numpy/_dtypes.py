"""tf.experimental.numpy's dtypes and NumPy's type promotion as TF applies it.

The dtype names are NumPy's own scalar types (TF exports np.float32 as tnp.float32), so
`tnp.float32 is np.float32`. Promotion is `np.result_type` over the arguments, a tensor
standing for its dtype and a Python number for its value (NumPy 1.x value-based casting),
with Python floats read as float32 when `prefer_float32` is set."""
import numbers

import numpy as np

from ... import _C
from ... import dtypes as _kdtypes

bool_ = np.bool_
complex_ = np.complex128
complex128 = np.complex128
complex64 = np.complex64
float_ = np.float64
float16 = np.float16
float32 = np.float32
float64 = np.float64
inexact = np.inexact
int_ = np.int64
int16 = np.int16
int32 = np.int32
int64 = np.int64
int8 = np.int8
object_ = np.object_
string_ = np.bytes_
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
uint8 = np.uint8
unicode_ = np.str_
iinfo = np.iinfo

_state = {"prefer_float32": False}


def set_prefer_float32(value):
    _state["prefer_float32"] = bool(value)


def is_prefer_float32():
    return _state["prefer_float32"]


def default_float_type():
    """float64, or float32 under experimental_enable_numpy_behavior(prefer_float32=True)."""
    return _kdtypes.float32 if is_prefer_float32() else _kdtypes.float64


def _is_tensor(x):
    return isinstance(x, (_C.Tensor, _C.Variable))


def _type_argument(x):
    """What np.result_type sees for one argument: a tensor's (or DType's) NumPy type, a Python number
    itself (its value counts), anything else as it is."""
    if isinstance(x, bool) or isinstance(x, numbers.Number) and not isinstance(x, np.generic):
        if is_prefer_float32() and isinstance(x, float):
            return np.float32
        if is_prefer_float32() and isinstance(x, complex):
            return np.complex64
        return x
    if _is_tensor(x):
        return x.dtype.as_numpy_dtype
    return _numpy_type(x)


def _flatten(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from _flatten(a)
        else:
            yield a


def result_type(*arrays_and_dtypes):
    """tnp.result_type: the kiln DType NumPy's promotion gives these arrays, values and dtypes."""
    args = [_type_argument(x) for x in _flatten(arrays_and_dtypes)]
    if not args:
        args = [np.asarray([])]
    return _kdtypes.as_dtype(np.result_type(*args))


def _numpy_type(t):
    return t.as_numpy_dtype if isinstance(t, _kdtypes.DType) else t


def promote_types(type1, type2):
    """tnp.promote_types: NumPy's promote_types over kiln or NumPy dtypes."""
    return _kdtypes.as_dtype(np.promote_types(_numpy_type(type1), _numpy_type(type2)))


def as_kiln_dtype(dtype):
    """A dtype argument (kiln DType, NumPy type, Python type `float`/`int`/`bool`, name) as a kiln DType."""
    if dtype is None:
        return None
    if isinstance(dtype, _kdtypes.DType):
        return dtype
    return _kdtypes.as_dtype(np.dtype(dtype))


def issubdtype(arg1, arg2):
    return np.issubdtype(_numpy_type(arg1), _numpy_type(arg2))


class finfo:
    """tnp.finfo: NumPy's finfo, for kiln dtypes too (bfloat16's from its bits: 8 exponent, 7 mantissa)."""

    def __new__(cls, dtype):
        if isinstance(dtype, _kdtypes.DType) and dtype.name == "bfloat16":
            info = np.finfo(np.float32)
            return _BFloat16Info(info)
        if _is_tensor(dtype):
            dtype = dtype.dtype
        return np.finfo(_numpy_type(dtype))


class _BFloat16Info:
    def __init__(self, f32):
        self.bits, self.dtype = 16, "bfloat16"
        self.eps = 2.0 ** -7
        self.max, self.min = 3.3895313892515355e38, -3.3895313892515355e38
        self.tiny = self.smallest_normal = float(f32.tiny)
        self.resolution = 0.01
