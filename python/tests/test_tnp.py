"""kiln.experimental.numpy (tf.experimental.numpy) against NumPy in float64, family by family (edge cases: empty
arrays, NaN and infinities, negative axes), NumPy's promotion as TF applies it, gradients against central
differences, and the same values inside kiln.function."""
import numpy as np
import pytest

import kiln as tf
import kiln.experimental.numpy as tnp
from kiln.experimental.numpy import _behavior
from numeric_grad import check_gradients


@pytest.fixture(autouse=True)
def _plain_tensors_after():
    yield
    _behavior._disable_numpy_behavior()


def close(got, want, rtol=1e-12, atol=1e-12):
    got_np = got.numpy() if isinstance(got, tf.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    np.testing.assert_allclose(got_np, want, rtol=rtol, atol=atol, equal_nan=True)


RNG = np.random.default_rng(7)
X = RNG.uniform(-3, 3, (3, 4))
UNIT = RNG.uniform(-0.95, 0.95, (3, 4))
POS = RNG.uniform(0.1, 5, (3, 4))
SPECIAL = np.array([0.0, -0.0, 1e-9, -1e-9, np.nan, np.inf, -np.inf, 700.0, -700.0])


# ---- elementwise -------------------------------------------------------------------

UNARY = [  # (name, input, tolerance)
    ("sin", X, 1e-14), ("cos", X, 1e-14), ("tan", X, 1e-12), ("tanh", X, 1e-14), ("sinh", X, 1e-13),
    ("cosh", X, 1e-13), ("exp", X, 1e-14), ("expm1", X, 1e-13), ("exp2", X, 1e-13), ("arctan", X, 1e-14),
    ("arcsin", UNIT, 1e-13), ("arccos", UNIT, 1e-13), ("arctanh", UNIT, 1e-13), ("arcsinh", X, 1e-13),
    ("arccosh", POS + 1, 1e-13), ("log", POS, 1e-14), ("log2", POS, 1e-14), ("log10", POS, 1e-14),
    ("log1p", POS, 1e-14), ("sqrt", POS, 1e-14), ("cbrt", X, 1e-13), ("square", X, 1e-14),
    ("reciprocal", POS, 1e-14), ("abs", X, 0), ("absolute", X, 0), ("fabs", X, 0), ("negative", X, 0),
    ("positive", X, 0), ("sign", X, 0), ("floor", X, 0), ("ceil", X, 0), ("fix", X, 0), ("sinc", X, 1e-13),
    ("deg2rad", X, 1e-14), ("rad2deg", X, 1e-14), ("signbit", X, 0), ("isnan", SPECIAL, 0),
    ("isinf", SPECIAL, 0), ("isfinite", SPECIAL, 0), ("isposinf", SPECIAL, 0), ("isneginf", SPECIAL, 0),
]


@pytest.mark.parametrize("name,x,tol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_functions_match_numpy(name, x, tol):
    close(getattr(tnp, name)(x), getattr(np, name)(x), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["sin", "exp", "expm1", "sinh", "tanh", "arctan", "arcsinh", "log1p", "cbrt"])
def test_unary_functions_at_special_values(name):
    with np.errstate(all="ignore"):
        want = getattr(np, name)(SPECIAL)
    close(getattr(tnp, name)(SPECIAL), want, rtol=1e-12, atol=1e-300)


def test_unary_functions_on_empty_and_integers():
    assert tnp.sin(np.zeros((0, 3))).shape == (0, 3)
    assert tnp.sqrt([1, 4]).dtype == tf.float64 and tnp.sqrt(np.array([1, 4], np.int32)).dtype == tf.float64
    assert tnp.sqrt(np.float32(4)).dtype == tf.float32
    assert tnp.abs(np.array([-1, 2], np.int32)).dtype == tf.int32
    close(tnp.around([0.5, 1.5, 2.5, -0.5, 1.234567]), np.around([0.5, 1.5, 2.5, -0.5, 1.234567]))
    close(tnp.around([1.2345, 12.345], 2), np.around([1.2345, 12.345], 2))
    close(tnp.round(np.array([15, 25, 1234])), np.round(np.array([15, 25, 1234])))


def test_angle_real_imag_conj():
    z = np.array([1 + 2j, -3 - 1j, 0j, -2 + 0j])
    close(tnp.angle(z), np.angle(z))
    close(tnp.angle(z, deg=True), np.angle(z, deg=True))
    close(tnp.angle([-2.0, 3.0, 0.0]), np.angle([-2.0, 3.0, 0.0]))
    close(tnp.real(z), np.real(z))
    close(tnp.imag(z), np.imag(z))
    close(tnp.conj(z), np.conj(z))
    assert tnp.iscomplexobj(z) and tnp.isrealobj([1.0])
    close(tnp.iscomplex(z), np.iscomplex(z))
    close(tnp.isreal(z), np.isreal(z))


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder", "power",
          "maximum", "minimum", "arctan2", "hypot", "logaddexp", "logaddexp2", "heaviside", "equal", "not_equal",
          "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_match_numpy_with_broadcasting(name):
    a, b = X, POS[0]  # (3, 4) with (4,)
    if name == "power":
        a = POS
    close(getattr(tnp, name)(a, b), getattr(np, name)(a, b), rtol=1e-13, atol=1e-13)


def test_binary_functions_at_special_values():
    a = np.array([np.nan, 1.0, -np.inf, -np.inf, np.inf, 2.0])
    b = np.array([1.0, np.nan, -np.inf, 3.0, 1.0, 2.0])
    for name in ("maximum", "minimum", "logaddexp", "logaddexp2", "add", "hypot"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        close(getattr(tnp, name)(a, b), want)
    close(tnp.divmod([7, -7], [2, 2])[0], [3, -4])
    close(tnp.divmod([7, -7], [2, 2])[1], [1, 1])
    close(tnp.isclose([1.0, np.nan, np.inf, 1.0], [1.0 + 1e-9, np.nan, np.inf, 1.1]),
          np.isclose([1.0, np.nan, np.inf, 1.0], [1.0 + 1e-9, np.nan, np.inf, 1.1]))
    close(tnp.isclose([np.nan], [np.nan], equal_nan=True), [True])
    assert bool(tnp.allclose(X, X + 1e-10)) and not bool(tnp.allclose(X, X + 1e-3))
    assert bool(tnp.array_equal([1, 2], [1, 2])) and not bool(tnp.array_equal([1, 2], [1, 2, 3]))


def test_integer_functions():
    a, b = np.array([12, -18, 0, 7]), np.array([8, 12, 5, 0])
    for name in ("gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor"):
        got = getattr(tnp, name)(a, b)
        close(got, getattr(np, name)(a, b))
        assert got.dtype == tf.int64
    close(tnp.bitwise_not(np.array([0, 5], np.int32)), np.invert(np.array([0, 5], np.int32)))
    close(tnp.bitwise_and([True, False], [True, True]), [True, False])
    close(tnp.nextafter([1.0, 0.0], [2.0, -1.0]), np.nextafter([1.0, 0.0], [2.0, -1.0]), rtol=0, atol=0)
    with pytest.raises(TypeError, match="bitwise_and"):
        tnp.bitwise_and([1.5], [2.5])
    # Host functions inside a trace: the same values, and a static shape.
    f = tf.function(lambda x, y: tnp.gcd(x, y))
    out = f(tf.constant(a), tf.constant(b))
    close(out, np.gcd(a, b))


def test_polyval_and_clip():
    close(tnp.polyval([3.0, 0.0, 1.0], X), np.polyval([3.0, 0.0, 1.0], X))
    close(tnp.clip(X, -1, 1.5), np.clip(X, -1, 1.5))
    close(tnp.clip(X, None, 0.5), np.clip(X, None, 0.5))
    with pytest.raises(ValueError, match="a_min"):
        tnp.clip(X, None, None)


# ---- promotion ---------------------------------------------------------------------

@pytest.mark.parametrize("a,b", [
    (np.int32(1), np.int64(1)), (np.int32(1), np.float32(1)), (np.int8(1), np.uint8(1)), (np.int16(1), 1.5),
    (np.float32(1), 2.5), (np.float32(1), 2), (np.int32(1), 7), (np.bool_(True), 1), (np.uint8(1), 300),
    (np.float16(1), np.float32(1)), (np.complex64(1), 1.0), (np.int64(1), np.float16(1))])
def test_promotion_is_numpys(a, b):
    """Tensors promote by dtype and Python numbers by value (NumPy 1.x's rules)."""
    ta = tnp.asarray(np.asarray(a))
    want = np.result_type(np.asarray(a).dtype, b)
    assert tnp.add(ta, b).dtype.as_numpy_dtype == want
    assert tnp.result_type(ta, b).as_numpy_dtype == want


def test_array_creation_infers_numpys_dtypes():
    assert tnp.asarray(1).dtype == tf.int64 and tnp.asarray(1.0).dtype == tf.float64
    assert tnp.asarray([1, 2.5]).dtype == tf.float64 and tnp.asarray([True]).dtype == tf.bool
    assert tnp.asarray(np.array([1], np.int16)).dtype == tf.int16
    assert tnp.asarray(1 + 2j).dtype == tf.complex128
    assert tnp.array([tf.constant(1.0), 2.0]).dtype == tf.float32
    t = tf.constant([1, 2])
    assert tnp.asarray(t) is t and tnp.asarray(t, tnp.float32).dtype == tf.float32
    assert tnp.array(5, ndmin=3).shape == (1, 1, 1)
    assert tnp.ascontiguousarray(5).shape == (1,)
    assert tnp.promote_types(tnp.int32, tf.float32) == tf.float64
    assert tnp.issubdtype(tnp.float32, np.floating) and not tnp.issubdtype(tf.int32, np.floating)
    assert tnp.finfo(tnp.float32).eps == np.finfo(np.float32).eps and tnp.iinfo(tnp.int8).max == 127


def test_prefer_float32():
    tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    assert tnp.asarray(1.0).dtype == tf.float32 and tnp.add(1.0, 2.0).dtype == tf.float32
    assert tnp.sqrt(4).dtype == tf.float32 and tnp.random.randn(2).dtype == tf.float32
    assert tnp.zeros([2], dtype=None).dtype == tf.float32
    assert tnp.ones([2]).dtype == tf.float64  # dtype=float is NumPy's float, as in TF
    tnp.experimental_enable_numpy_behavior(prefer_float32=False)
    assert tnp.asarray(1.0).dtype == tf.float64 and tnp.random.randn(2).dtype == tf.float64


# ---- creation ------------------------------------------------------------------------

def test_arange():
    close(tnp.arange(5), np.arange(5))
    assert tnp.arange(5).dtype == tf.int64 and tnp.arange(0.0, 1.0, 0.25).dtype == tf.float64
    close(tnp.arange(0.0, 1.0, 0.1), np.arange(0.0, 1.0, 0.1))
    close(tnp.arange(10, 0, -3), np.arange(10, 0, -3))
    close(tnp.arange(3, 1), np.arange(3, 1))
    assert tnp.arange(3, dtype=tnp.float32).dtype == tf.float32
    with pytest.raises(ValueError, match="non-zero"):
        tnp.arange(0, 5, 0)


def test_spaced_values():
    close(tnp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    close(tnp.linspace(2.0, 3.0, num=5, endpoint=False), np.linspace(2.0, 3.0, num=5, endpoint=False))
    got, step = tnp.linspace(0, 10, 6, retstep=True)
    close(got, np.linspace(0, 10, 6)) and close(step, 2.0)
    close(tnp.linspace([0, 1], [10, 20], 3, axis=1), np.linspace([0, 1], [10, 20], 3, axis=1))
    close(tnp.linspace(0, 10, 4, dtype=int), np.linspace(0, 10, 4, dtype=int))
    assert tnp.linspace(0, 1, 0).shape == (0,)
    close(tnp.logspace(0, 3, 4), np.logspace(0, 3, 4))
    close(tnp.logspace(0, 3, 4, base=2.0), np.logspace(0, 3, 4, base=2.0))
    close(tnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))


def test_matrices():
    for args in [(3,), (3, 4), (3, 4, 1), (3, 4, -2), (2, 3, 5)]:
        close(tnp.eye(*args), np.eye(*args))
        close(tnp.tri(*args), np.tri(*args))
    close(tnp.identity(2), np.identity(2))
    m = RNG.normal(size=(2, 4, 5))
    for k in (-2, 0, 1, 7):
        close(tnp.tril(m, k), np.tril(m, k))
        close(tnp.triu(m, k), np.triu(m, k))
    for k in (-1, 0, 2):
        close(tnp.diag([1.0, 2.0, 3.0], k), np.diag([1.0, 2.0, 3.0], k))
        close(tnp.diag(m[0], k), np.diag(m[0], k))
        close(tnp.diagflat([[1, 2], [3, 4]], k), np.diagflat([[1, 2], [3, 4]], k))
    close(tnp.diagonal(m, 1, -1, 1), np.diagonal(m, 1, -1, 1))
    close(tnp.diagonal(m, -1, 2, 1), np.diagonal(m, -1, 2, 1))
    close(tnp.vander([1.0, 2.0, 3.0]), np.vander([1.0, 2.0, 3.0]))
    close(tnp.vander([1.0, 2.0], 4, increasing=True), np.vander([1.0, 2.0], 4, increasing=True))
    close(tnp.diag_indices(3)[0], np.diag_indices(3)[0])


def test_filled():
    close(tnp.zeros((2, 0)), np.zeros((2, 0)))
    assert tnp.zeros(3).dtype == tf.float64 and tnp.ones([2], tnp.int32).dtype == tf.int32
    close(tnp.full((2, 3), 7), np.full((2, 3), 7))
    close(tnp.full((2, 3), [1.0, 2.0, 3.0]), np.full((2, 3), [1.0, 2.0, 3.0]))
    close(tnp.full_like(X, 2), np.full_like(X, 2))
    assert tnp.full_like([1, 2], 2.7).dtype == tf.int64 and tnp.zeros_like([1.0], tnp.int32).dtype == tf.int32
    close(tnp.ones_like(np.zeros((2, 2), np.float32)), np.ones((2, 2)))
    close(tnp.empty_like(X), np.zeros_like(X))
    close(tnp.copy(X), X)
    xs, ys = tnp.meshgrid([1, 2, 3], [4, 5])
    want = np.meshgrid([1, 2, 3], [4, 5])
    close(xs, want[0]) and close(ys, want[1])
    got = tnp.ix_([0, 2], [True, False, True])
    want = np.ix_([0, 2], [True, False, True])
    close(got[0], want[0]) and close(got[1], want[1])


# ---- reductions ----------------------------------------------------------------------

A3 = RNG.normal(size=(2, 3, 4))
INTS = np.array([[1, 2, 3], [4, 5, 6]], np.int32)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "amax", "amin", "max", "min", "std", "var", "ptp", "all",
                                  "any"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    if name in ("ptp",) and isinstance(axis, tuple):
        axis = -2  # NumPy 1.24's ptp takes a tuple too; TF's reduces the same way, keep one axis here
    close(getattr(tnp, name)(A3, axis=axis, keepdims=keepdims), getattr(np, name)(A3, axis=axis,
                                                                                    keepdims=keepdims))


def test_reduction_dtypes_are_numpys():
    assert tnp.sum(INTS).dtype == tf.int64 and tnp.prod(INTS).dtype == tf.int64
    assert tnp.sum([True, True]).dtype == tf.int64 and int(tnp.sum([True, True])) == 2
    assert tnp.mean(INTS).dtype == tf.float64 and tnp.amax(INTS).dtype == tf.int32
    assert tnp.sum(INTS, dtype=tnp.float32).dtype == tf.float32
    close(tnp.var(A3, axis=1, ddof=1), np.var(A3, axis=1, ddof=1))
    close(tnp.count_nonzero([[0, 1], [2, 0]], axis=0), np.count_nonzero([[0, 1], [2, 0]], axis=0))


def test_reductions_of_empty_and_nan():
    close(tnp.sum(np.zeros((0, 3))), 0.0)
    close(tnp.prod(np.zeros((0,))), 1.0)
    close(tnp.sum(np.zeros((0, 3)), axis=0), np.zeros(3))
    with np.errstate(all="ignore"):
        close(tnp.mean(np.zeros((0,))), np.nan)
    v = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    close(tnp.amax(v, axis=1), np.amax(v, axis=1))
    close(tnp.amin(v), np.nan)
    close(tnp.nansum(v, axis=1), np.nansum(v, axis=1))
    close(tnp.nanprod(v), np.nanprod(v))
    close(tnp.nanmean(v, axis=0), np.nanmean(v, axis=0))
    assert float(tnp.amax(np.zeros((0,)))) == -np.inf  # TF's reduce_max; NumPy raises


def test_average_and_cumulative():
    w = np.array([1.0, 2.0, 3.0, 4.0])
    close(tnp.average(A3), np.average(A3))
    close(tnp.average(A3, axis=-1, weights=w), np.average(A3, axis=-1, weights=w))
    avg, total = tnp.average(A3, axis=2, weights=w, returned=True)
    want = np.average(A3, axis=2, weights=w, returned=True)
    close(avg, want[0]) and close(total, want[1])
    for name in ("cumsum", "cumprod"):
        close(getattr(tnp, name)(A3, axis=-2), getattr(np, name)(A3, axis=-2), rtol=1e-12)
        close(getattr(tnp, name)(INTS), getattr(np, name)(INTS))
        assert getattr(tnp, name)(INTS).dtype == tf.int64
    for name in ("argmax", "argmin"):
        close(getattr(tnp, name)(A3), getattr(np, name)(A3))
        close(getattr(tnp, name)(A3, axis=-1), getattr(np, name)(A3, axis=-1))
    close(tnp.trace(A3[0]), np.trace(A3[0]))
    close(tnp.trace(A3, 1, 1, 2), np.trace(A3, 1, 1, 2))


# ---- shapes ---------------------------------------------------------------------------

def test_shape_manipulation():
    close(tnp.reshape(A3, (4, 6)), np.reshape(A3, (4, 6)))
    close(tnp.reshape(A3, (4, -1), order="F"), np.reshape(A3, (4, -1), order="F"))
    close(tnp.ravel(A3), np.ravel(A3))
    close(tnp.flatten(A3, "F"), A3.flatten("F"))
    close(tnp.transpose(A3), np.transpose(A3))
    close(tnp.transpose(A3, (1, 0, 2)), np.transpose(A3, (1, 0, 2)))
    close(tnp.swapaxes(A3, 0, -1), np.swapaxes(A3, 0, -1))
    close(tnp.moveaxis(A3, 0, -1), np.moveaxis(A3, 0, -1))
    close(tnp.moveaxis(A3, (0, 1), (2, 0)), np.moveaxis(A3, (0, 1), (2, 0)))
    close(tnp.expand_dims(A3, -1), np.expand_dims(A3, -1))
    close(tnp.squeeze(np.zeros((1, 3, 1))), np.squeeze(np.zeros((1, 3, 1))))
    close(tnp.squeeze(np.zeros((1, 3, 1)), axis=-1), np.squeeze(np.zeros((1, 3, 1)), axis=-1))
    assert tnp.shape(A3) == (2, 3, 4) and tnp.ndim(A3) == 3 and tnp.size(A3) == 24 and tnp.isscalar(3.0)
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for v in (5.0, [1.0, 2.0], X):
            close(getattr(tnp, name)(v), getattr(np, name)(v))


def test_joining_and_splitting():
    a, b = X, X * 2
    close(tnp.concatenate([a, b], axis=-1), np.concatenate([a, b], axis=-1))
    close(tnp.concatenate([a, INTS], axis=None), np.concatenate([a, INTS], axis=None))
    close(tnp.stack([a, b], axis=1), np.stack([a, b], axis=1))
    for name in ("hstack", "vstack", "dstack"):
        close(getattr(tnp, name)([a, b]), getattr(np, name)([a, b]))
        close(getattr(tnp, name)([[1, 2], [3, 4]]), getattr(np, name)([[1, 2], [3, 4]]))
    for got, want in zip(tnp.split(np.arange(10), [3, 7, 20]), np.split(np.arange(10), [3, 7, 20])):
        close(got, want)
    for got, want in zip(tnp.hsplit(X, 2), np.hsplit(X, 2)):
        close(got, want)
    for got, want in zip(tnp.vsplit(X, [1]), np.vsplit(X, [1])):
        close(got, want)
    for got, want in zip(tnp.dsplit(A3, 2), np.dsplit(A3, 2)):
        close(got, want)
    with pytest.raises(ValueError, match="equal division"):
        tnp.split(np.arange(10), 3)
    close(tnp.append(X, [[1.0, 2.0, 3.0, 4.0]], axis=0), np.append(X, [[1.0, 2.0, 3.0, 4.0]], axis=0))
    close(tnp.append([1, 2], [[3]]), np.append([1, 2], [[3]]))


def test_rearranging():
    close(tnp.tile([1, 2], (2, 2)), np.tile([1, 2], (2, 2)))
    close(tnp.tile(X, 2), np.tile(X, 2))
    close(tnp.repeat(X, 2), np.repeat(X, 2))
    close(tnp.repeat(X, [1, 0, 2], axis=0), np.repeat(X, [1, 0, 2], axis=0))
    close(tnp.flip(A3), np.flip(A3))
    close(tnp.flip(A3, -1), np.flip(A3, -1))
    close(tnp.fliplr(X), np.fliplr(X)) and close(tnp.flipud(X), np.flipud(X))
    for k in range(-1, 5):
        close(tnp.rot90(A3, k), np.rot90(A3, k))
        close(tnp.rot90(A3, k, axes=(1, 2)), np.rot90(A3, k, axes=(1, 2)))
    close(tnp.roll(A3, 5), np.roll(A3, 5))
    close(tnp.roll(A3, -1, axis=1), np.roll(A3, -1, axis=1))
    for mode in ("constant", "reflect", "symmetric"):
        close(tnp.pad(X, ((1, 2), (2, 1)), mode), np.pad(X, ((1, 2), (2, 1)), mode))
    close(tnp.pad(X, 1, "constant", constant_values=9), np.pad(X, 1, "constant", constant_values=9))
    a, b = tnp.broadcast_arrays(X, POS[0])
    close(a, X) and close(b, np.broadcast_to(POS[0], X.shape))
    close(tnp.broadcast_to([1, 2], (3, 2)), np.broadcast_to([1, 2], (3, 2)))
    close(tnp.diff(A3, axis=1), np.diff(A3, axis=1))
    close(tnp.diff([1, 4, 9, 16], n=2), np.diff([1, 4, 9, 16], n=2))
    close(tnp.diff([True, False, False]), np.diff([True, False, False]))


# ---- indexing helpers ----------------------------------------------------------------

def test_take_and_take_along_axis():
    close(tnp.take(A3, [0, 2], axis=-1), np.take(A3, [0, 2], axis=-1))
    close(tnp.take(A3, [[1, 30]]), np.take(A3, [[1, 30]], mode="clip"))  # TF's default mode is 'clip'
    close(tnp.take(A3, [-1, 5], axis=1, mode="wrap"), np.take(A3, [-1, 5], axis=1, mode="wrap"))
    with pytest.raises(ValueError, match="raise"):
        tnp.take(A3, [0], mode="raise")
    order = np.argsort(A3, axis=1)
    close(tnp.take_along_axis(A3, order, 1), np.take_along_axis(A3, order, 1))
    idx = np.array([[[0]], [[-1]]])  # broadcast over the other axes, a negative index
    close(tnp.take_along_axis(A3, idx, -1), np.take_along_axis(A3, idx, -1))


def test_where_nonzero_compress_select():
    cond = X > 0
    close(tnp.where(cond, X, -1), np.where(cond, X, -1))
    close(tnp.where(cond, 1.0, [[0.0], [1.0], [2.0]]), np.where(cond, 1.0, [[0.0], [1.0], [2.0]]))
    for got, want in zip(tnp.where(cond), np.where(cond)):
        close(got, want)
    for got, want in zip(tnp.nonzero(INTS - 3), np.nonzero(INTS - 3)):
        close(got, want)
        assert got.dtype == tf.int64
    assert [t.shape for t in tnp.nonzero(np.zeros((2, 2)))] == [(0,), (0,)]
    close(tnp.nonzero(5)[0], [0])
    close(tnp.sign([1 + 2j, -3j, -2 + 1j]), [1, 0, -1])
    close(tnp.compress([True, False, True], X, axis=0), np.compress([True, False, True], X, axis=0))
    close(tnp.compress([False, True], X), np.compress([False, True], X))
    conds = [X < -1, X > 1]
    close(tnp.select(conds, [X, X * 10], default=7.0), np.select(conds, [X, X * 10], default=7.0))
    with pytest.raises(ValueError):
        tnp.where(cond, X)


def test_sorting():
    v = np.array([[3.0, 1.0, 2.0], [2.0, 2.0, 1.0]])
    close(tnp.sort(v), np.sort(v)) and close(tnp.sort(v, axis=0), np.sort(v, axis=0))
    close(tnp.sort(v, axis=None), np.sort(v, axis=None))
    close(tnp.argsort(v, kind="stable"), np.argsort(v, kind="stable"))
    assert tnp.argsort(v).dtype == tf.int64
    with pytest.raises(ValueError, match="kind"):
        tnp.sort(v, kind="mergesort")


# ---- products -------------------------------------------------------------------------

def test_products():
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(4, 5))
    v, w = RNG.normal(size=4), RNG.normal(size=4)
    close(tnp.dot(a, b), np.dot(a, b))
    c = RNG.normal(size=(3, 4, 2))
    close(tnp.dot(a, c), np.dot(a, c))
    close(tnp.dot(a, v), np.dot(a, v)) and close(tnp.dot(v, w), np.dot(v, w)) and close(tnp.dot(2, v), 2 * v)
    close(tnp.matmul(a, b), np.matmul(a, b))
    close(tnp.matmul(v, b), np.matmul(v, b)) and close(tnp.matmul(a, v), np.matmul(a, v))
    close(tnp.matmul(v, w), np.matmul(v, w))
    with pytest.raises(ValueError):
        tnp.matmul(2.0, v)
    z = np.array([1 + 2j, 3 - 1j])
    close(tnp.vdot(z, z[::-1]), np.vdot(z, z[::-1]))
    close(tnp.inner(a, v), np.inner(a, v)) and close(tnp.outer(v, w), np.outer(v, w))
    close(tnp.kron(X, INTS), np.kron(X, INTS)) and close(tnp.kron([1, 2], X), np.kron([1, 2], X))
    close(tnp.tensordot(a, c, axes=([1, 2], [0, 1])), np.tensordot(a, c, axes=([1, 2], [0, 1])))
    close(tnp.tensordot(a, b, 1), np.tensordot(a, b, 1))
    close(tnp.einsum("ijk,kl->ijl", a, b), np.einsum("ijk,kl->ijl", a, b))
    close(tnp.einsum("ij,j", X, np.array([1, 2, 3, 4], np.int32)), np.einsum("ij,j", X, [1, 2, 3, 4]))
    p, q = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    close(tnp.cross(p, q), np.cross(p, q))
    close(tnp.cross(p[:, :2], q), np.cross(p[:, :2], q)) and close(tnp.cross(p[:, :2], q[:, :2]),
                                                                  np.cross(p[:, :2], q[:, :2]))
    close(tnp.cross(p.T, q.T, axisa=0, axisb=0, axisc=0), np.cross(p.T, q.T, axisa=0, axisb=0, axisc=0))


# ---- random -----------------------------------------------------------------------------

def test_random():
    tnp.random.seed(42)
    first = tnp.random.randn(3, 2).numpy()
    tnp.random.seed(42)
    assert np.array_equal(first, tnp.random.randn(3, 2).numpy()) and first.dtype == np.float64
    u = tnp.random.uniform(2.0, 5.0, size=(1000,))
    assert u.dtype == tf.float64 and 2.0 <= float(tnp.min(u)) and float(tnp.max(u)) < 5.0
    assert tnp.random.rand(2, 3).shape == (2, 3) and tnp.random.random((4,)).shape == (4,)
    assert tnp.random.standard_normal().shape == ()
    r = tnp.random.randint(3, 7, size=500)
    assert r.dtype == tf.int64 and set(np.unique(r.numpy())) == {3, 4, 5, 6}
    assert tnp.random.randint(5, size=(2,), dtype=np.int32).dtype == tf.int32
    with pytest.raises(ValueError, match="int32 or np.int64"):
        tnp.random.randint(5, dtype=np.int8)
    p = tnp.random.poisson(3.0, size=(2000,))
    assert abs(float(tnp.mean(p)) - 3.0) < 0.3


# ---- NumPy behaviour on tensors ---------------------------------------------------------

def test_numpy_methods_on_tensors():
    t = tf.constant(A3)
    assert not hasattr(t, "astype")
    tnp.experimental_enable_numpy_behavior()
    close(t.T, A3.T) and close(t.reshape(4, 6), A3.reshape(4, 6)) and close(t.reshape((-1,)), A3.reshape(-1))
    close(t.reshape(4, 6, order="F"), A3.reshape(4, 6, order="F"))
    close(t.ravel(), A3.ravel()) and close(t.flatten(), A3.flatten())
    close(t.transpose((1, 0, 2)), A3.transpose((1, 0, 2)))
    close(t.clip(-0.5, 0.5), A3.clip(-0.5, 0.5))
    close(t.max(axis=0), A3.max(axis=0)) and close(t.mean(), A3.mean()) and close(t.min(-1), A3.min(-1))
    assert t.astype(np.float32).dtype == tf.float32 and t.astype(tnp.int32).dtype == tf.int32
    assert t.size == 24 and t.ndim == 3 and t.data is t and (+t) is t
    assert tf.constant([[1, 2]]).tolist() == [[1, 2]]
    close(round(tf.constant([1.5, 2.5])), [2.0, 2.0])
    assert float(np.sum(t)) == pytest.approx(A3.sum())  # NumPy's own function through __array__
    _behavior._disable_numpy_behavior()
    assert not hasattr(t, "astype") and not hasattr(t, "T")


@pytest.mark.parametrize("a,b", [
    (np.int32, np.int64), (np.int32, np.float32), (np.int64, np.float32), (np.float32, np.float64),
    (np.int8, np.uint8), (np.int32, np.float16)])
def test_operators_promote_under_numpy_behavior(a, b):
    x, y = tf.constant(np.ones(2, a)), tf.constant(np.ones(2, b))
    with pytest.raises(tf.errors.InvalidArgumentError):
        x + y  # plain TF: the dtypes must agree
    tnp.experimental_enable_numpy_behavior()
    want = np.result_type(a, b)
    for op in (lambda p, q: p + q, lambda p, q: p * q, lambda p, q: q - p, lambda p, q: p ** q):
        assert op(x, y).dtype.as_numpy_dtype == want
    assert (x < y).dtype == tf.bool and (x == y).numpy().all()


def test_operators_with_python_numbers_under_numpy_behavior():
    tnp.experimental_enable_numpy_behavior()
    f32, i32 = tf.constant([1.0, 2.0]), tf.constant([1, 2])
    assert (f32 + 1.5).dtype == tf.float32 and (1.5 * f32).dtype == tf.float32
    assert (i32 + 1.5).dtype == tf.float64 and (i32 + 1).dtype == tf.int32
    assert (i32 / 2).dtype == tf.float64 and (f32 + np.float64(1)).dtype == tf.float32
    close(i32 + np.array([0.5, 0.5]), [1.5, 2.5])
    tnp.experimental_enable_numpy_behavior(prefer_float32=True)  # a Python float reads as the float32 *type*
    assert (f32 + 1.5).dtype == tf.float32 and (i32 + 1.5).dtype == tf.float64


INDEX_CASES = [
    (1, slice(1, 3)), (Ellipsis, [0, 2]), ([1, 0],), (slice(None), (True, False, True)), (1, (0, 0, 1), [0, 1, 1]),
    ([[0], [1]], slice(None), [1, 3]), (slice(None), [0, 2], [1, 3]), (None, [1], Ellipsis, 0),
    (np.array([-1, 0]),), (slice(None), np.array([[0, 1], [2, 2]])), (Ellipsis, [-1, -4]),
    (np.array([True, False]), slice(1, None)), np.arange(24).reshape(2, 3, 4) > 10, np.array([False, True]),
]


@pytest.mark.parametrize("key", INDEX_CASES, ids=[str(i) for i in range(len(INDEX_CASES))])
def test_numpy_style_indexing_matches_numpy(key):
    x = np.arange(24).reshape(2, 3, 4)
    tnp.experimental_enable_numpy_behavior()
    close(tf.constant(x)[key], x[key])
    if isinstance(key, tuple):
        close(tf.constant(x)[tuple(tf.constant(k) if isinstance(k, list) else k for k in key)], x[key])
    else:
        close(tf.constant(x)[tf.constant(key)], x[key])


def test_indexing_where_tf_differs_from_numpy():
    """An integer beside separated arrays: TF drops its axis first, so the arrays' dims stay in place where
    NumPy moves them to the front."""
    x = np.arange(120).reshape(2, 3, 4, 5)
    tnp.experimental_enable_numpy_behavior()
    got = tf.constant(x)[:, 1, :, [0, 2]]
    assert got.shape == (2, 4, 2) and np.asarray(x[:, 1][:, :, [0, 2]]).shape == (2, 4, 2)
    close(got, x[:, 1][:, :, [0, 2]])
    assert x[:, 1, :, [0, 2]].shape == (2, 2, 4)  # NumPy's placement
    with pytest.raises(IndexError, match="too many indices"):
        tf.constant(x)[[0], 0, 0, 0, 0]


def test_indexing_in_a_function_and_mutation():
    tnp.experimental_enable_numpy_behavior()
    x = np.arange(24.0).reshape(2, 3, 4)
    f = tf.function(lambda t, i: t[:, i, [1, 3]])
    close(f(tf.constant(x), tf.constant([2, 0])), x[:, [2, 0], [1, 3]])
    with pytest.raises(TypeError):
        tnp.arange(6)[1] = -1


# ---- gradients and kiln.function ---------------------------------------------------------

GRAD_CASES = {
    "arctan2": (lambda a, b: tnp.sum(tnp.arctan2(a, b)), [X, POS]),
    "arcsin": (lambda a: tnp.sum(tnp.arcsin(a) * tnp.arccos(a)), [UNIT]),
    "arcsinh_arctanh": (lambda a: tnp.sum(tnp.arcsinh(a) + tnp.arctanh(a)), [UNIT]),
    "sinh_cosh_expm1": (lambda a: tnp.sum(tnp.sinh(a) * tnp.cosh(a) + tnp.expm1(a)), [X]),
    "tan_log2_cbrt": (lambda a: tnp.sum(tnp.tan(a) + tnp.log2(a) + tnp.cbrt(a)), [POS * 0.3]),
    "logaddexp_hypot": (lambda a, b: tnp.sum(tnp.logaddexp(a, b) * tnp.hypot(a, b)), [X, POS]),
    "std_var": (lambda a: tnp.std(a, axis=0)[1] + tnp.var(a, ddof=1), [X]),
    "take_along_axis": (lambda a: tnp.sum(tnp.take_along_axis(a, np.array([[2], [0], [3]]), 1) ** 2), [X]),
    "kron_cross": (lambda a, b: tnp.sum(tnp.kron(a[:2], b[:2])) + tnp.sum(tnp.cross(a[:, :3], b[:, 1:])), [X, POS]),
    "einsum_outer": (lambda a, b: tnp.einsum("ij,ij->", a, b) + tnp.sum(tnp.outer(a[0], b[1]) ** 2), [X, POS]),
    "diagonal_tril": (lambda a: tnp.sum(tnp.diagonal(a, 1) ** 2) + tnp.sum(tnp.tril(a) ** 3), [X]),
    "linspace": (lambda a: tnp.sum(tnp.linspace(a[0, 0], a[0, 1], 5) ** 2), [X]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_central_differences(name):
    fn, args = GRAD_CASES[name]
    check_gradients(fn, [tf.constant(a) for a in args], rtol=1e-6, atol=1e-7)


def test_gradient_through_advanced_indexing():
    tnp.experimental_enable_numpy_behavior()
    check_gradients(lambda a: tnp.sum(a[[0, 2, 2], 1:] ** 2) + tnp.sum(a[:, [True, False, True, False]]),
                    [tf.constant(X)])


def _program(a, b):
    """A little of everything: promotion, reductions, shapes, products, indexing helpers."""
    h = tnp.tanh(tnp.matmul(a, tnp.transpose(b)) + 1)
    h = tnp.concatenate([h, tnp.flip(h, -1)], axis=-1)
    order = tnp.argsort(h, axis=-1)
    h = tnp.multiply(tnp.take_along_axis(h, order, -1), tnp.arange(6))
    return tnp.sum(tnp.where(h > 0, tnp.logaddexp(h, 0.5), tnp.std(h, axis=0))) + tnp.amax(tnp.cumsum(h, axis=0))


def test_eager_and_traced_agree():
    a, b = tf.constant(RNG.normal(size=(4, 5))), tf.constant(RNG.normal(size=(3, 5)))
    eager = _program(a, b)
    traced = tf.function(_program)(a, b)
    close(traced, eager.numpy(), rtol=1e-12)
    assert traced.dtype == tf.float64


UNKNOWN_BATCH = {
    "sum": lambda x: tnp.sum(x, axis=0), "mean": lambda x: tnp.mean(x), "std": lambda x: tnp.std(x, axis=1),
    "var": lambda x: tnp.var(x), "matmul": lambda x: tnp.matmul(x, tnp.ones([4, 2])),
    "where": lambda x: tnp.where(x > 0, x, 0.0), "reshape": lambda x: tnp.reshape(x, [-1]),
    "concatenate": lambda x: tnp.concatenate([x, x]), "take": lambda x: tnp.take(x, [0], axis=1),
    "diff": lambda x: tnp.diff(x), "transpose": lambda x: tnp.transpose(x), "tile": lambda x: tnp.tile(x, 2),
    "cumsum": lambda x: tnp.cumsum(x, axis=0), "average": lambda x: tnp.average(x, axis=0),
    "expm1": lambda x: tnp.expm1(x), "amax": lambda x: tnp.amax(x, 0), "outer": lambda x: tnp.outer(x, x),
    "einsum": lambda x: tnp.einsum("ij->j", x), "tril": lambda x: tnp.tril(x), "triu": lambda x: tnp.triu(x, 1),
    "gcd": lambda x: tnp.gcd(tnp.asarray(x * 10, tnp.int64), 6), "dot": lambda x: tnp.dot(x, tnp.ones(4)),
    "split": lambda x: tnp.split(x, 2, axis=1)[0], "nonzero": lambda x: tnp.nonzero(x > 0)[1],
    "clip": lambda x: tnp.clip(x, 0, 1), "nanmean": lambda x: tnp.nanmean(x, axis=0),
    "take_along_axis": lambda x: tnp.take_along_axis(x, tnp.argsort(x, axis=1), 1),
    "count_nonzero": lambda x: tnp.count_nonzero(x > 0, axis=0), "sort": lambda x: tnp.sort(x, axis=-1),
}


@pytest.mark.parametrize("name", sorted(UNKNOWN_BATCH))
def test_functions_trace_with_an_unknown_batch_dim(name):
    fn = UNKNOWN_BATCH[name]
    x = tf.constant(X)
    traced = tf.function(fn, input_signature=[tf.TensorSpec([None, 4], tf.float64)], autograph=False)
    close(traced(x), fn(x).numpy(), rtol=1e-13)


def test_notebook_imports_of_tensorflow_modules_become_kilns(tmp_path):
    """scripts/notebook_to_program.py maps any `tensorflow.` module path (the NumPy API's too) to `kiln.`."""
    import json
    import os
    import subprocess
    import sys
    cells = ["import tensorflow as tf\nimport tensorflow.experimental.numpy as tnp\n"
             "from tensorflow.keras import layers\nfrom tensorflow import keras\nx = 'tensorflow.keep'"]
    nb = {"cells": [{"cell_type": "code", "source": c} for c in cells]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "notebook_to_program.py")
    subprocess.run([sys.executable, script, str(tmp_path / "nb.ipynb"), str(tmp_path / "out.py"), "T", "S", "N"],
                   check=True)
    out = (tmp_path / "out.py").read_text()
    assert ("import kiln as tf\nimport kiln.experimental.numpy as tnp\nfrom kiln.keras import layers\n"
            "from kiln import keras\nx = 'tensorflow.keep'") in out


def test_keras_and_tf_data_run_under_numpy_behavior():
    """The operators' promotion is global, as in TF: Keras' own arithmetic must keep working."""
    tnp.experimental_enable_numpy_behavior()
    tf.random.set_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(3)])
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    x = RNG.random((64, 4)).astype("float32")
    y = RNG.integers(0, 3, 64)
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    assert all(np.isfinite(history.history["loss"]))
    ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2, b + 1)).batch(8)
    features, labels = next(iter(ds))
    assert features.dtype == tf.float32 and labels.dtype == tf.int64
    close(labels, y[:8] + 1)


def test_indexing_with_run_time_index_lengths():
    """x[nonzero(mask)] inside a trace: the index arrays' length is known only when the graph runs."""
    tnp.experimental_enable_numpy_behavior()
    f = tf.function(lambda t: t[tnp.nonzero(t > 0)] + tnp.sum(t[tnp.nonzero(t > 0)[0], 1:]), autograph=False)
    got = f(tf.constant(X))
    want = X[np.nonzero(X > 0)] + X[np.nonzero(X > 0)[0], 1:].sum()
    close(got, want, rtol=1e-13)


@pytest.mark.parametrize("name,x,tol", [u for u in UNARY if u[1] is not SPECIAL], ids=[u[0] for u in UNARY
                                                                                       if u[1] is not SPECIAL])
def test_unary_functions_keep_float32(name, x, tol):
    got = getattr(tnp, name)(x.astype(np.float32))
    assert got.dtype in (tf.float32, tf.bool)
    close(got, getattr(np, name)(x.astype(np.float64)), rtol=3e-6, atol=3e-6)
