"""kiln.experimental.numpy: TF 2.15's tf.experimental.numpy, NumPy's API on kiln tensors.

`import kiln.experimental.numpy as tnp`. Every function takes array-likes (tensors, NumPy arrays,
lists, numbers), promotes them with NumPy's rules (`_dtypes.result_type`) and returns a
kiln.Tensor (`tnp.ndarray` is `kiln.Tensor`, as tf.Tensor in TF), computed with Kiln's ops so
that gradients and kiln.function work. Names of TF's module that Kiln leaves out are listed, with
the reason, in python/tests/test_tnp_catalogue.py."""
import math as _math

from ... import _C
from ._dtypes import (  # noqa: F401
    bool_, complex_, complex128, complex64, float_, float16, float32, float64, inexact, int_, int16, int32, int64,
    int8, object_, string_, uint16, uint32, uint64, uint8, unicode_, iinfo, finfo, issubdtype, promote_types,
    result_type)
from ._convert import array, asarray  # noqa: F401
from ._creation import (  # noqa: F401
    arange, copy, diag, diag_indices, diagflat, diagonal, empty, empty_like, eye, full, full_like, geomspace,
    identity, ix_, linspace, logspace, meshgrid, ones, ones_like, tri, tril, triu, vander, zeros, zeros_like)
from ._elementwise import (  # noqa: F401
    abs, absolute, add, allclose, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, around,
    array_equal, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj, conjugate, cos, cosh,
    deg2rad, divide, divmod, equal, exp, exp2, expm1, fabs, fix, float_power, floor, floor_divide, gcd, greater,
    greater_equal, heaviside, hypot, imag, isclose, iscomplex, iscomplexobj, isfinite, isinf, isnan, isneginf,
    isposinf, isreal, isrealobj, lcm, less, less_equal, log, log10, log1p, log2, logaddexp, logaddexp2,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative, nextafter,
    not_equal, polyval, positive, power, rad2deg, real, reciprocal, remainder, sign, signbit, sin, sinc, sinh,
    sqrt, square, subtract, tan, tanh, true_divide)
from ._elementwise import round_ as round  # noqa: F401,A004
from ._reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum, max, mean, min, nanmean,
    nanprod, nansum, prod, ptp, std, sum, trace, var)
from ._shapes import (  # noqa: F401
    append, argsort, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, broadcast_to, compress, concatenate,
    diff, dsplit, dstack, expand_dims, flatten, flip, fliplr, flipud, hsplit, hstack, isscalar, moveaxis, ndim, nonzero,
    pad, ravel, repeat, reshape, roll, rot90, select, shape, size, sort, split, squeeze, stack, swapaxes, take,
    take_along_axis, tile, transpose, vsplit, vstack, where)
from ._linalg import cross, dot, einsum, inner, kron, matmul, outer, tensordot, vdot  # noqa: F401
from ._behavior import experimental_enable_numpy_behavior  # noqa: F401
from . import random  # noqa: F401

ndarray = _C.Tensor
asanyarray = asarray


def ascontiguousarray(a, dtype=None):
    return array(a, dtype, ndmin=1)


newaxis = None
e = _math.e
pi = _math.pi
inf = float("inf")
