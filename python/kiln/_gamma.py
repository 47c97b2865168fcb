"""tf.math.lgamma, digamma and lbeta composed from Kiln's ops, in float64 (float32 and the half types are
computed in it and rounded once), so their gradients come with them (lgamma's is digamma, digamma's the
trigamma function).

lgamma: Lanczos' approximation (g = 7, 9 terms) for z >= 1/2, and near its zeros at 1 and 2, where the log
form would cancel, the Taylor series of lgamma(1 + e) in zeta values; below 1/2, the reflection
log(pi / |sin(pi x)|) - lgamma(1 - x) with sin taken of x's distance to the nearest integer (exact), so
large negative arguments keep their accuracy. digamma: psi(z + 10) by its asymptotic series, less the ten
reciprocals, and psi(1 - x) - pi / tan(pi x) below 1/2. Each `where` gets inputs its branch is defined at."""
import math as _pymath

from . import _C
from . import dtypes as _dtypes

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
_EULER_GAMMA = 0.57721566490153286061


def _zeta(k, terms=1000):
    """Riemann zeta(k), k >= 2: the first terms summed, the rest by Euler-Maclaurin."""
    head = sum(n ** -k for n in range(1, terms))
    n = float(terms)
    return head + n ** (1 - k) / (k - 1) + 0.5 * n ** -k + k * n ** (-k - 1) / 12


# lgamma(1 + e) = -gamma e + sum_{k>=2} (-1)^k zeta(k) e^k / k: coefficients of e^1 .. e^26 (|e| < 0.2: < 1e-19)
_SERIES = [-_EULER_GAMMA] + [(-1) ** k * _zeta(k) / k for k in range(2, 27)]
# The asymptotic series of digamma: B_2k / (2k), k = 1..7
_PSI_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _as_float64(x, name):
    from ._ops import cast, convert_to_tensor
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed values: "
                        f"bfloat16, float16, float32, float64 (tf.math.{name})")
    return (x if x.dtype == _dtypes.float64 else cast(x, _dtypes.float64)), x.dtype


def _back(y, dtype):
    from ._ops import cast
    return y if dtype == _dtypes.float64 else cast(y, dtype)


def _c(value):
    from ._ops import constant
    return constant(value, dtype=_dtypes.float64)


def _lanczos(z):
    """lgamma(z) for z >= 1/2."""
    from ._ops import add, divide, log, multiply, subtract
    w = subtract(z, _c(1.0))
    a = _c(_LANCZOS[0])
    for i, p in enumerate(_LANCZOS[1:], start=1):
        a = add(a, divide(_c(p), add(w, _c(float(i)))))
    t = add(w, _c(7.5))
    return add(add(_c(0.5 * _pymath.log(2 * _pymath.pi)), subtract(multiply(add(w, _c(0.5)), log(t)), t)), log(a))


def _series(e):
    """lgamma(1 + e) for small e, by Horner's rule."""
    from ._ops import add, multiply
    acc = _c(_SERIES[-1])
    for coefficient in reversed(_SERIES[:-1]):
        acc = add(multiply(acc, e), _c(coefficient))
    return multiply(acc, e)


def _lgamma_right(z):
    """lgamma(z) for z >= 1/2."""
    from ._ops import abs as _abs, add, less, log1p, subtract, where
    near1 = less(_abs(subtract(z, _c(1.0))), _c(0.2))
    near2 = less(_abs(subtract(z, _c(2.0))), _c(0.2))
    e1 = where(near1, subtract(z, _c(1.0)), _c(0.0))
    e2 = where(near2, subtract(z, _c(2.0)), _c(0.0))
    far = where(near1 | near2, _c(3.0), z)
    return where(near1, _series(e1), where(near2, add(_series(e2), log1p(e2)), _lanczos(far)))


def _reflected(x):
    """(x < 1/2, 1 - x there and x elsewhere, x's distance to the nearest integer where x < 1/2 else 1/4)."""
    from ._ops import less, round as _round, subtract, where
    low = less(x, _c(0.5))
    z = where(low, subtract(_c(1.0), x), x)
    r = where(low, subtract(x, _round(x)), _c(0.25))
    return low, z, r


def lgamma(x, name=None):
    """log |Gamma(x)|; inf at the poles (0, -1, -2, ...) and at +-inf."""
    from ._ops import abs as _abs, divide, equal, log, multiply, sin, subtract, where
    x, dtype = _as_float64(x, "lgamma")
    infinite = equal(_abs(x), _c(float("inf")))
    x = where(infinite, _c(2.0), x)
    low, z, r = _reflected(x)
    right = _lgamma_right(z)
    reflected = subtract(log(divide(_c(_pymath.pi), _abs(sin(multiply(_c(_pymath.pi), r))))), right)
    return _back(where(infinite, _c(float("inf")), where(low, reflected, right)), dtype)


def _digamma_right(z):
    """digamma(z) for z >= 1/2: psi(z + 10) by its asymptotic series, less 1/z + ... + 1/(z + 9)."""
    from ._ops import add, divide, log, multiply, square, subtract
    y = add(z, _c(10.0))
    inv2 = divide(_c(1.0), square(y))
    tail = _c(_PSI_ASYMPTOTIC[-1])
    for coefficient in reversed(_PSI_ASYMPTOTIC[:-1]):
        tail = add(multiply(tail, inv2), _c(coefficient))
    psi = subtract(subtract(log(y), divide(_c(0.5), y)), multiply(tail, inv2))
    for k in range(10):
        psi = subtract(psi, divide(_c(1.0), add(z, _c(float(k)))))
    return psi


def digamma(x, name=None):
    """The derivative of lgamma (psi); infinite at the poles."""
    from ._ops import divide, multiply, subtract, where
    from ._math_more import tan
    x, dtype = _as_float64(x, "digamma")
    low, z, r = _reflected(x)
    right = _digamma_right(z)
    reflected = subtract(right, divide(_c(_pymath.pi), tan(multiply(_c(_pymath.pi), r))))
    return _back(where(low, reflected, right), dtype)


def lbeta(x, name=None):
    """log |Beta(x)| of the last dimension: sum(lgamma(x)) - lgamma(sum(x)) (TF's; -inf for an empty one)."""
    from ._ops import convert_to_tensor, reduce_sum, subtract
    x = convert_to_tensor(x)
    if x.shape.rank == 0:
        raise ValueError("lbeta takes a tensor of rank >= 1")
    if x.shape[-1] == 0:
        from ._ops import fill, shape
        return fill(shape(x)[:-1], _C.constant(float("-inf"), x.dtype._enum))
    return subtract(reduce_sum(lgamma(x), axis=-1), lgamma(reduce_sum(x, axis=-1)))
