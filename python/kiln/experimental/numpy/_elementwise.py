"""Elementwise math (tnp.add, sin, logaddexp, isclose, ...): NumPy's promotion on the arguments,
then Kiln's ops, or tf.math's compositions of them where Kiln has no kernel (tan, arcsin, arctan2,
sinh, expm1, ...), so each is differentiable and traces."""
import math as _math

import numpy as np

from ... import _C, _ops
from ... import dtypes as _kdtypes
from ... import math as _kmath
from ...tensor_shape import TensorShape
from . import _dtypes
from ._convert import as_bool, asarray, promote, float_or_same


def _unary(fn, to_float=False, name=None):
    def f(x):
        x = float_or_same(x) if to_float else asarray(x)
        return fn(x)
    f.__name__ = name or fn.__name__
    return f


def _binary(fn, to_float=False, name=None):
    def f(x1, x2):
        a, b = promote(x1, x2, to_float=to_float)
        return fn(a, b)
    f.__name__ = name or fn.__name__
    return f


def _const(value, like):
    return _ops.constant(value, dtype=like.dtype)


# ---- arithmetic ----------------------------------------------------------------

def _add(a, b):
    return _ops.logical_or(a, b) if a.dtype == _kdtypes.bool else _ops.add(a, b)


def _multiply(a, b):
    return _ops.logical_and(a, b) if a.dtype == _kdtypes.bool else _ops.multiply(a, b)


def _subtract(a, b):
    if a.dtype == _kdtypes.bool:
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
                        "operator, or the logical_xor function instead.")
    return _ops.subtract(a, b)


def _true_divide(a, b):
    if a.dtype == _kdtypes.bool:
        a, b = _ops.cast(a, _dtypes.default_float_type()), _ops.cast(b, _dtypes.default_float_type())
    return _ops.truediv(a, b)


def _floor_divide(a, b):
    if a.dtype == _kdtypes.bool:
        raise TypeError("floor_divide is not supported for bool")
    return _ops.floordiv(a, b)


def _mod(a, b):
    if a.dtype == _kdtypes.bool:
        raise TypeError("mod is not supported for bool")
    return _ops.floormod(a, b)


add = _binary(_add, name="add")
subtract = _binary(_subtract, name="subtract")
multiply = _binary(_multiply, name="multiply")
true_divide = _binary(_true_divide, name="true_divide")
divide = _binary(_true_divide, name="divide")
floor_divide = _binary(_floor_divide, name="floor_divide")
mod = _binary(_mod, name="mod")
remainder = _binary(_mod, name="remainder")
power = _binary(_ops.pow, name="power")


def divmod(x1, x2):  # noqa: A001 - NumPy's name
    return floor_divide(x1, x2), mod(x1, x2)


def float_power(x1, x2):
    """TF's float_power is power (no widening to float64, which NumPy's does)."""
    return power(x1, x2)


def _extreme(pick, logical):
    """Kiln's kernels propagate NaN, as NumPy's maximum/minimum; bools are or/and, as TF's."""
    def f(a, b):
        return logical(a, b) if a.dtype == _kdtypes.bool else pick(a, b)
    return f


maximum = _binary(_extreme(_ops.maximum, _ops.logical_or), name="maximum")
minimum = _binary(_extreme(_ops.minimum, _ops.logical_and), name="minimum")


def negative(x):
    x = asarray(x)
    return _ops.logical_not(x) if x.dtype == _kdtypes.bool else _ops.negative(x)


def positive(x):
    return asarray(x)


def _abs(x):
    return x if x.dtype == _kdtypes.bool or x.dtype.is_unsigned else _ops.abs(x)


abs = _unary(_abs, name="abs")  # noqa: A001
absolute = _unary(_abs, name="absolute")
fabs = _unary(_ops.abs, to_float=True, name="fabs")
def _sign(x):
    """Of a complex number, the sign of its real part (TF's rule, NumPy 1.x's too)."""
    return _ops.cast(_ops.sign(_ops.real(x)), x.dtype) if x.dtype.is_complex else _ops.sign(x)


def sign(x, out=None, where=None, **kwargs):
    if out is not None or where is not None or kwargs:
        raise ValueError("tf.numpy doesn't support setting out, where or other arguments of sign")
    return _sign(asarray(x))



square = _unary(_ops.square, name="square")
reciprocal = _unary(_kmath.reciprocal, name="reciprocal")
sqrt = _unary(_ops.sqrt, to_float=True, name="sqrt")
exp = _unary(_ops.exp, to_float=True, name="exp")
log = _unary(_ops.log, to_float=True, name="log")
log1p = _unary(_ops.log1p, to_float=True, name="log1p")
sin = _unary(_ops.sin, to_float=True, name="sin")
cos = _unary(_ops.cos, to_float=True, name="cos")
tanh = _unary(_ops.tanh, to_float=True, name="tanh")
floor = _unary(_ops.floor, to_float=True, name="floor")
ceil = _unary(_ops.ceil, to_float=True, name="ceil")


def _real_by_tf_math(math_fn, complex_fn):
    """tf.math's accurate real-valued composite; complex inputs by the plain formula (tf.math's refuse them)."""
    return lambda x: complex_fn(x) if x.dtype.is_complex else math_fn(x)


def _cosh_formula(x):
    return (_ops.exp(x) + _ops.exp(-x)) * 0.5


# e^x - 1 = tanh(x/2) (e^x + 1) for complex x: no cancellation near 0, where exp(x) - 1 would have it.
expm1 = _unary(_real_by_tf_math(_kmath.expm1, lambda x: _ops.tanh(x * 0.5) * (_ops.exp(x) + 1)), to_float=True,
               name="expm1")
exp2 = _unary(lambda x: _ops.exp(x * _math.log(2.0)), to_float=True, name="exp2")
log2 = _unary(lambda x: _ops.log(x) / _math.log(2.0), to_float=True, name="log2")
log10 = _unary(lambda x: _ops.log(x) / _math.log(10.0), to_float=True, name="log10")
tan = _unary(_kmath.tan, to_float=True, name="tan")
cosh = _unary(_real_by_tf_math(_kmath.cosh, _cosh_formula), to_float=True, name="cosh")
sinh = _unary(_real_by_tf_math(_kmath.sinh, lambda x: _ops.tanh(x) * _cosh_formula(x)), to_float=True, name="sinh")


def arctan2(x1, x2):
    y, x = promote(x1, x2, to_float=True)
    return _kmath.atan2(y, x)


arctan = _unary(_kmath.atan, to_float=True, name="arctan")
arcsin = _unary(_kmath.asin, to_float=True, name="arcsin")
arccos = _unary(_kmath.acos, to_float=True, name="arccos")
arcsinh = _unary(_kmath.asinh, to_float=True, name="arcsinh")
arccosh = _unary(_kmath.acosh, to_float=True, name="arccosh")
arctanh = _unary(_kmath.atanh, to_float=True, name="arctanh")
deg2rad = _unary(lambda x: x * (np.pi / 180.0), to_float=True, name="deg2rad")
rad2deg = _unary(lambda x: x * (180.0 / np.pi), to_float=True, name="rad2deg")


def cbrt(x):
    x = float_or_same(x)
    return _ops.sign(x) * _ops.pow(_ops.abs(x), _const(1.0 / 3.0, x))


def sinc(x):
    x = float_or_same(x)
    safe = _ops.where(_ops.equal(x, 0), _ops.ones_like(x), x) * np.pi
    return _ops.where(_ops.equal(x, 0), _ops.ones_like(x), _ops.sin(safe) / safe)


def fix(x):
    x = float_or_same(x)
    return _ops.where(_ops.less(x, 0), _ops.ceil(x), _ops.floor(x))


def around(a, decimals=0):
    """Halves to even, as NumPy; integers unchanged for decimals >= 0."""
    a = asarray(a)
    if a.dtype.is_integer or a.dtype == _kdtypes.bool:
        if decimals >= 0:
            return a
        factor = 10.0 ** -decimals
        return _ops.cast(_ops.round(_ops.cast(a, _kdtypes.float64) / factor) * factor, a.dtype)
    if decimals == 0:
        return _ops.round(a)
    factor = _const(10.0 ** decimals, a)
    return _ops.round(a * factor) / factor


round_ = around


def conj(x):
    x = asarray(x)
    return _ops.conj(x) if x.dtype.is_complex else x


conjugate = conj


def real(val):
    val = asarray(val)
    return _ops.real(val) if val.dtype.is_complex else val


def imag(val):
    val = asarray(val)
    return _ops.imag(val) if val.dtype.is_complex else _ops.zeros_like(val)


def angle(z, deg=False):
    z = asarray(z)
    if z.dtype.is_complex:
        out = _ops.angle(z)
    else:
        z = float_or_same(z)
        out = _kmath.atan2(_ops.zeros_like(z), z)
    return out * (180.0 / np.pi) if deg else out


def hypot(x1, x2):
    a, b = promote(x1, x2, to_float=True)
    return _ops.sqrt(a * a + b * b)


def logaddexp(x1, x2):
    a, b = promote(x1, x2, to_float=True)
    big = _ops.maximum(a, b)
    out = big + _ops.log1p(_ops.exp(-_ops.abs(a - b)))
    return _ops.where(_ops.equal(a, b), a + _math.log(2.0), out)  # -inf, -inf -> -inf (not NaN)


def logaddexp2(x1, x2):
    a, b = promote(x1, x2, to_float=True)
    ln2 = _math.log(2.0)
    return logaddexp(a * ln2, b * ln2) / ln2


def heaviside(x1, x2):
    a, b = promote(x1, x2, to_float=True)
    return _ops.where(_ops.less(a, 0), _ops.zeros_like(a), _ops.where(_ops.greater(a, 0), _ops.ones_like(a), b))


def signbit(x):
    x = asarray(x)
    if x.dtype == _kdtypes.bool or x.dtype.is_unsigned:
        return _ops.zeros_like(x, dtype=_kdtypes.bool)
    negative_zero = _ops.logical_and(_ops.equal(x, 0), _ops.less(_kmath.reciprocal(x), 0)) \
        if x.dtype.is_floating else _ops.zeros_like(x, dtype=_kdtypes.bool)
    return _ops.logical_or(_ops.less(x, 0), negative_zero)


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


# ---- comparisons and logic ----------------------------------------------------

equal = _binary(_ops.equal, name="equal")
not_equal = _binary(_ops.not_equal, name="not_equal")
less = _binary(_ops.less, name="less")
less_equal = _binary(_ops.less_equal, name="less_equal")
greater = _binary(_ops.greater, name="greater")
greater_equal = _binary(_ops.greater_equal, name="greater_equal")


def logical_and(x1, x2):
    return _ops.logical_and(as_bool(x1), as_bool(x2))


def logical_or(x1, x2):
    return _ops.logical_or(as_bool(x1), as_bool(x2))


def logical_xor(x1, x2):
    return _ops.not_equal(as_bool(x1), as_bool(x2))


def logical_not(x):
    return _ops.logical_not(as_bool(x))


isnan = _unary(lambda x: _kmath.is_nan(x) if x.dtype.is_floating else _ops.zeros_like(x, dtype=_kdtypes.bool),
               name="isnan")
isinf = _unary(lambda x: _kmath.is_inf(x) if x.dtype.is_floating else _ops.zeros_like(x, dtype=_kdtypes.bool),
               name="isinf")
isfinite = _unary(lambda x: _kmath.is_finite(x) if x.dtype.is_floating else _ops.ones_like(x, dtype=_kdtypes.bool),
                  name="isfinite")


def isposinf(x):
    x = asarray(x)
    return _ops.logical_and(isinf(x), _ops.greater(x, 0))


def isneginf(x):
    x = asarray(x)
    return _ops.logical_and(isinf(x), _ops.less(x, 0))


def iscomplex(x):
    x = asarray(x)
    return _ops.not_equal(_ops.imag(x), 0) if x.dtype.is_complex else _ops.zeros_like(x, dtype=_kdtypes.bool)


def isreal(x):
    return _ops.logical_not(iscomplex(x))


def iscomplexobj(x):
    return asarray(x).dtype.is_complex


def isrealobj(x):
    return not iscomplexobj(x)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = promote(a, b, to_float=True)
    close = _ops.less_equal(_ops.abs(a - b), atol + rtol * _ops.abs(b))
    close = _ops.logical_or(close, _ops.equal(a, b))  # equal infinities
    if equal_nan:
        close = _ops.logical_or(close, _ops.logical_and(_kmath.is_nan(a), _kmath.is_nan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _ops.reduce_all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape.is_fully_defined() and a2.shape.is_fully_defined() and a1.shape != a2.shape:
        return _ops.constant(False)
    a, b = promote(a1, a2)
    return _ops.reduce_all(_ops.equal(a, b))


# ---- integer ops: NumPy on the host (Kiln has no bitwise or gcd kernels) --------

def _host(fn, *args):
    """fn over the arguments' NumPy values where the values are known (eagerly, or when the graph runs)."""
    tensors = promote(*args)
    out_dtype = _kdtypes.as_dtype(np.result_type(fn(*[np.zeros((), t.dtype.as_numpy_dtype) for t in tensors])))

    def run(*values):
        return np.asarray(fn(*[v.numpy() for v in values]), dtype=out_dtype.as_numpy_dtype)
    out = _C.host_function(run, tensors, [out_dtype])[0]
    shape = tensors[0].shape
    for t in tensors[1:]:
        shape = np.broadcast_shapes(tuple(shape.as_list()), tuple(t.shape.as_list())) \
            if shape.is_fully_defined() and t.shape.is_fully_defined() else None
        if shape is None:
            return out
        shape = TensorShape(shape)
    return _ops.reshape(out, shape.as_list()) if shape.is_fully_defined() else out


def _integer_only(name, fn):
    def f(*args):
        for a in args:
            dtype = asarray(a).dtype
            if not (dtype.is_integer or dtype == _kdtypes.bool):
                raise TypeError(f"ufunc '{name}' not supported for the input types ({dtype.name}), only integer and "
                                "boolean types")
        return _host(fn, *args)
    f.__name__ = name
    return f


bitwise_and = _integer_only("bitwise_and", np.bitwise_and)
bitwise_or = _integer_only("bitwise_or", np.bitwise_or)
bitwise_xor = _integer_only("bitwise_xor", np.bitwise_xor)
bitwise_not = _integer_only("bitwise_not", np.invert)
gcd = _integer_only("gcd", np.gcd)
lcm = _integer_only("lcm", np.lcm)


def nextafter(x1, x2):
    a, b = promote(x1, x2, to_float=True)
    return _host(np.nextafter, a, b)


def polyval(p, x):
    """Horner's rule over the coefficients, highest power first."""
    x, p = promote(x, p)
    if p.shape.rank == 0:
        p = _ops.reshape(p, [1])
    out = _ops.zeros_like(x)
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out
