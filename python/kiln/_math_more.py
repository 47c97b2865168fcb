"""tf.math functions composed from Kiln's ops (so their gradients come with them): the hyperbolic functions and
tan, written in forms that keep TF's accuracy (log1p and tanh where a plain formula would cancel, exp(|x| - 2) e^2/2
where exp(|x|) would overflow early), with each `where` fed inputs its branch is defined at, so no NaN comes back
through the branch not taken; and the small composites TF itself defines in Python."""
import math as _pymath

from . import _C
from . import dtypes as _dtypes


def _t(x, dtype=None):
    from ._ops import convert_to_tensor
    return convert_to_tensor(x, dtype=dtype)


def _const(value, like):
    from ._ops import constant
    return constant(value, dtype=like.dtype)


def _float_input(x, name):
    x = _t(x)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed values: "
                        f"bfloat16, float16, float32, float64, complex64, complex128 (tf.math.{name})")
    return x


def _split(cond, x, safe_true, safe_false):
    """x where its branch takes it, and a harmless value elsewhere, for each branch."""
    from ._ops import where
    return where(cond, x, _const(safe_true, x)), where(cond, _const(safe_false, x), x)


def tan(x, name=None):
    from ._ops import sin, cos, divide
    x = _float_input(x, "tan")
    return divide(sin(x), cos(x))


def _exp_half(a):
    """exp(a) / 2 for a >= 0, as exp(a - 2) * (e^2 / 2): no overflow before the result's (nor in its gradient),
    and a - 2 is exact for a >= 2, where a - ln 2 would round the exponent."""
    from ._ops import exp, multiply, subtract
    return multiply(exp(subtract(a, _const(2.0, a))), _const(_pymath.exp(2.0) / 2, a))


def cosh(x, name=None):
    from ._ops import abs as _abs, add, exp, multiply, negative
    x = _float_input(x, "cosh")
    a = _abs(x)
    return add(_exp_half(a), multiply(_const(0.5, a), exp(negative(a))))


def sinh(x, name=None):
    """2 t / (1 - t^2) with t = tanh(x / 2) below |x| = 1 (no cancellation), the exponentials above."""
    from ._ops import abs as _abs, divide, exp, less, multiply, negative, sign, square, subtract, tanh, where
    x = _float_input(x, "sinh")
    small = less(_abs(x), _const(1.0, x))
    xs, xl = _split(small, x, 0.0, 1.0)
    t = tanh(multiply(xs, _const(0.5, xs)))
    near = divide(multiply(_const(2.0, t), t), subtract(_const(1.0, t), square(t)))
    a = _abs(xl)
    far = multiply(sign(xl), subtract(_exp_half(a), multiply(_const(0.5, a), exp(negative(a)))))
    return where(small, near, far)


def _odd(x, f):
    """f(|x|) with x's sign, the |x| taken by a where so the gradient at 0 is f's."""
    from ._ops import less, negative, where
    neg = less(x, _const(0.0, x))
    a = where(neg, negative(x), x)
    y = f(a)
    return where(neg, negative(y), y)


def _big(x):
    return 1e8 if x.dtype in (_dtypes.float32, _dtypes.float16, _dtypes.bfloat16) else 1e150


def asinh(x, name=None):
    """log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x| (exact near 0), log(a) + ln 2 past 1e8."""
    from ._ops import add, divide, greater, log, log1p, sqrt, square, where
    x = _float_input(x, "asinh")

    def f(a):
        large = greater(a, _const(_big(a), a))
        al, an = _split(large, a, 2.0, 1.0)
        near = log1p(add(an, divide(square(an), add(_const(1.0, an), sqrt(add(_const(1.0, an), square(an)))))))
        return where(large, add(log(al), _const(_pymath.log(2.0), al)), near)
    return _odd(x, f)


def acosh(x, name=None):
    """log1p(t + sqrt(2t + t^2)) with t = x - 1 (exact near 1), log(x) + ln 2 past 1e8; NaN below 1."""
    from ._ops import add, greater, log, log1p, multiply, sqrt, subtract, where
    x = _float_input(x, "acosh")
    large = greater(x, _const(_big(x), x))
    xl, xn = _split(large, x, 2.0, 1.0)
    t = subtract(xn, _const(1.0, xn))
    near = log1p(add(t, sqrt(multiply(t, add(t, _const(2.0, t))))))
    return where(large, add(log(xl), _const(_pymath.log(2.0), xl)), near)


def atanh(x, name=None):
    from ._ops import log1p, multiply, negative, subtract
    x = _float_input(x, "atanh")
    return multiply(_const(0.5, x), subtract(log1p(x), log1p(negative(x))))


def log_sigmoid(x, name=None):
    """-softplus(-x), as TF defines it."""
    from ._ops import negative
    from .nn import softplus
    return negative(softplus(negative(_t(x))))


def logical_xor(x, y, name="LogicalXor"):
    from ._ops import logical_and, logical_not, logical_or
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0."""
    from ._math_ops import divide_no_nan
    x = _t(x)
    return divide_no_nan(_const(1, x), x)


def scalar_mul(scalar, x, name=None):
    from ._ops import multiply
    scalar = _t(scalar, dtype=None if not isinstance(x, (_C.Tensor, _C.Variable)) else x.dtype)
    if scalar.shape.rank != 0:
        raise ValueError(f"`scalar` must be a 0-D tensor, got shape {scalar.shape}. Only scalar multiply works.")
    return multiply(scalar, x)


def polyval(coeffs, x, name=None):
    """sum_i coeffs[i] * x^(n-1-i), by Horner's rule."""
    from ._ops import add, multiply, zeros_like
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    x = _t(x)
    if not coeffs:
        return zeros_like(x)
    p = _t(coeffs[0], dtype=x.dtype)
    for c in coeffs[1:]:
        p = add(_t(c, dtype=x.dtype), multiply(p, x))
    return p


def count_nonzero(input, axis=None, keepdims=None, dtype=_dtypes.int64, name=None):  # noqa: A002 - TF's name
    from ._ops import cast, not_equal, reduce_sum, zeros_like
    input = _t(input)
    nonzero = not_equal(input, zeros_like(input))
    return cast(reduce_sum(cast(nonzero, _dtypes.int64), axis=axis, keepdims=bool(keepdims)), dtype)


def invert_permutation(x, name=None):
    """y with y[x[i]] = i, for a permutation x of 0..n-1 (1-D, int32 or int64)."""
    from ._ops import expand_dims, range as _range, scatter_nd, shape
    x = _t(x)
    if x.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"invert_permutation takes int32 or int64, got {x.dtype.name}")
    if x.shape.rank != 1:
        raise ValueError(f"x must be a vector, got shape {x.shape}")
    return scatter_nd(expand_dims(x, 1), _range(shape(x, x.dtype)[0], dtype=x.dtype), shape(x, x.dtype))


def _monotone(x, op):
    from ._ops import reduce_all, reshape
    flat = reshape(_t(x), [-1])
    return reduce_all(op(flat[1:], flat[:-1]))


def is_non_decreasing(x, name=None):
    from ._ops import greater_equal
    return _monotone(x, greater_equal)


def is_strictly_increasing(x, name=None):
    from ._ops import greater
    return _monotone(x, greater)


def _segment_counts(segment_ids, num_segments, dtype):
    from ._ops import ones_like, cast
    from .math import unsorted_segment_sum
    return unsorted_segment_sum(cast(ones_like(segment_ids), dtype), segment_ids, num_segments)


def _sorted_num_segments(segment_ids):
    from ._ops import add, cast, reduce_max
    ids = _t(segment_ids)
    return add(cast(reduce_max(ids), _dtypes.int32), 1)


def _per_segment(values, result):
    """values [segments], reshaped [segments, 1, ...] to broadcast against result's rows."""
    from ._ops import concat, ones, rank, reshape, shape
    return reshape(values, concat([shape(values), ones([rank(result) - 1], _dtypes.int32)], 0))


def _empty_to_zero(result, counts):
    from ._ops import greater, shape, where, zeros_like
    from ._array_ops import broadcast_to
    present = _per_segment(greater(counts, _const(0, counts)), result)
    return where(broadcast_to(present, shape(result)), result, zeros_like(result))


def segment_max(data, segment_ids, name=None):
    """The max of each segment's rows (sorted ids); an empty segment is 0, as TF's."""
    from .math import unsorted_segment_max
    n = _sorted_num_segments(segment_ids)
    data = _t(data)
    return _empty_to_zero(unsorted_segment_max(data, segment_ids, n), _segment_counts(segment_ids, n, data.dtype))


def segment_min(data, segment_ids, name=None):
    """The min of each segment's rows (sorted ids); an empty segment is 0, as TF's."""
    from .math import unsorted_segment_min
    n = _sorted_num_segments(segment_ids)
    data = _t(data)
    return _empty_to_zero(unsorted_segment_min(data, segment_ids, n), _segment_counts(segment_ids, n, data.dtype))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Each segment's sum over the square root of its row count (0 for an empty one)."""
    from ._ops import divide, maximum, sqrt
    from .math import unsorted_segment_sum
    data = _t(data)
    if not data.dtype.is_floating:
        raise TypeError(f"unsorted_segment_sqrt_n takes a floating data tensor, got {data.dtype.name}")
    counts = maximum(_segment_counts(segment_ids, num_segments, data.dtype), _const(1, data))
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    return divide(total, sqrt(_per_segment(counts, total)))


def _top_along(operand, k, reduction_dimension, largest):
    from ._ops import negative, top_k, transpose
    operand = _t(operand)
    rank = operand.shape.rank
    axis = reduction_dimension % rank
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = operand if axis == rank - 1 else transpose(operand, perm)
    values, indices = top_k(moved if largest else negative(moved), k)
    if not largest:
        values = negative(values)
    if axis != rank - 1:
        values, indices = transpose(values, perm), transpose(indices, perm)
    return values, indices


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """The k largest values along reduction_dimension and their indices. On the CPU TF's answer is exact (it
    sorts); so is Kiln's."""
    return _top_along(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """The k smallest values along reduction_dimension and their indices (exact, as TF's on the CPU)."""
    return _top_along(operand, k, reduction_dimension, False)


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,  # noqa: A002
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    return _top_along(input, k, reduction_dimension, is_max_k)


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0 (y = -1 included)."""
    from ._ops import equal, log1p, multiply, where, zeros_like
    x = _t(x)
    y = _t(y, dtype=x.dtype) if not isinstance(y, (_C.Tensor, _C.Variable)) else y
    zero = equal(x, zeros_like(x))
    return where(zero, zeros_like(x), multiply(x, log1p(where(zero, zeros_like(y), y))))


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The sum of a list of tensors of one shape and dtype (TF 2.15 deprecates it for add_n, which it equals)."""
    from ._ops import add_n
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the same dtype and shape")
    tensors = [_t(x) for x in inputs]
    if any(t.dtype != tensors[0].dtype for t in tensors) or \
            any(not t.shape.is_compatible_with(tensors[0].shape) for t in tensors):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the same dtype and shape")
    if tensor_dtype is not None and _dtypes.as_dtype(tensor_dtype) != tensors[0].dtype:
        raise TypeError(f"tensor_dtype is {tensor_dtype}, but input is of type {tensors[0].dtype}")
    return add_n(tensors)


def expm1(x, name=None):
    """exp(x) - 1 to a few ulps (Kahan's (u - 1) x / log(u), u = exp(x), inside |x| <= 1), gradient exp(x)."""
    from .autodiff import custom_gradient
    from ._ops import equal, exp, log, multiply, divide, subtract, where
    x = _float_input(x, "expm1")
    if x.dtype.is_complex:
        raise TypeError("tf.math.expm1 of a complex tensor is not supported by Kiln")

    @custom_gradient
    def f(v):
        u = exp(v)
        um1 = subtract(u, _const(1.0, u))
        at_one = equal(u, _const(1.0, u))
        at_zero = equal(um1, _const(-1.0, um1))
        safe_log = log(where(at_one, _const(2.0, u), u))
        ratio = divide(multiply(um1, v), safe_log)
        value = where(at_one, v, where(at_zero, _const(-1.0, v), ratio))
        # past |v| = 1, u - 1 cancels nothing (and (u - 1) v could overflow before exp(v) does)
        from ._ops import abs as _abs, greater
        value = where(greater(_abs(v), _const(1.0, v)), um1, value)

        def grad(dy):
            return multiply(dy, u)
        return value, grad
    return f(x)


def nextafter(x1, x2, name=None):
    """The next representable value after x1 toward x2 (NumPy's nextafter; not differentiable, as TF's)."""
    from ._ops import constant
    x1 = _t(x1)
    x2 = _t(x2, dtype=x1.dtype) if not isinstance(x2, (_C.Tensor, _C.Variable)) else x2
    if x1.dtype not in (_dtypes.float32, _dtypes.float64) or x2.dtype != x1.dtype:
        raise TypeError(f"nextafter takes two float32 or two float64 tensors, got {x1.dtype.name} and "
                        f"{x2.dtype.name}")
    import numpy as np
    np_type = x1.dtype.as_numpy_dtype
    if not _C.is_tracing() and not x1._is_symbolic and not x2._is_symbolic:
        return constant(np.nextafter(x1.numpy(), x2.numpy()).astype(np_type))
    from .function import py_function
    return py_function(lambda a, b: np.nextafter(a.numpy(), b.numpy()).astype(np_type), [x1, x2], x1.dtype)


def _real_float(x, name):
    """x as float32/float64 (half types computed in float32), and the dtype to return."""
    from ._ops import cast
    x = _t(x)
    if x.dtype.is_complex:
        raise TypeError(f"tf.math.{name} of a complex tensor is not supported by Kiln")
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter 'x' has DataType {x.dtype.name} not in list of allowed values: "
                        f"bfloat16, float16, float32, float64 (tf.math.{name})")
    if x.dtype in (_dtypes.float16, _dtypes.bfloat16):
        return cast(x, _dtypes.float32), x.dtype
    return x, x.dtype


def _angle_of(re, im, out_dtype):
    """The argument of re + i im: atan2(im, re) to an ulp or so (the engine's complex arg), with its gradient."""
    from ._ops import angle, cast, complex as _complex
    result = angle(_complex(re, im))
    return result if result.dtype == out_dtype else cast(result, out_dtype)


def atan(x, name=None):
    """atan(x), as the argument of 1 + i x."""
    from ._ops import ones_like
    x, out = _real_float(x, "atan")
    return _angle_of(ones_like(x), x, out)


def atan2(y, x, name=None):
    """The angle of the point (x, y), in [-pi, pi], as the argument of x + i y (TF's signs of zeros included)."""
    y, out = _real_float(y, "atan2")
    x = _t(x, dtype=y.dtype) if not isinstance(x, (_C.Tensor, _C.Variable)) else x
    x, x_out = _real_float(x, "atan2")
    if x_out != out:
        raise TypeError(f"atan2: y is {out.name} but x is {x_out.name}")
    return _angle_of(x, y, out)


def _cosine_side(x):
    """sqrt(1 - x^2) as sqrt((1 - x)(1 + x)), exact in its factors near |x| = 1."""
    from ._ops import multiply, sqrt, subtract, add
    one = _const(1.0, x)
    return sqrt(multiply(subtract(one, x), add(one, x)))


def asin(x, name=None):
    """asin(x) = atan2(x, sqrt(1 - x^2)); NaN outside [-1, 1]."""
    x, out = _real_float(x, "asin")
    return _angle_of(_cosine_side(x), x, out)


def acos(x, name=None):
    """acos(x) = atan2(sqrt(1 - x^2), x); NaN outside [-1, 1]."""
    x, out = _real_float(x, "acos")
    return _angle_of(x, _cosine_side(x), out)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of each segment's rows (1 for an empty segment; negative ids drop their row), over a
    [segments, rows, ...] tensor holding each row where its id matches and 1 elsewhere."""
    from ._ops import cast, concat, equal, expand_dims, ones, ones_like, range as _range, reduce_prod, reshape, where
    from ._ops import shape as _shape
    data, ids = _t(data), _t(segment_ids)
    count = num_segments if isinstance(num_segments, int) else _t(num_segments)
    segments = cast(_range(count), ids.dtype)
    rows = reshape(data, concat([[-1], _shape(data)[ids.shape.rank:]], 0))
    match = equal(expand_dims(segments, 1), expand_dims(reshape(ids, [-1]), 0))  # [segments, rows]
    match = reshape(match, concat([_shape(match), ones([rows.shape.rank - 1], _dtypes.int32)], 0))
    lifted = expand_dims(rows, 0)
    return reduce_prod(where(match, lifted, ones_like(lifted)), axis=1)  # its gradient is zero-safe along one axis


def segment_prod(data, segment_ids, name=None):
    """The product of each segment's rows for sorted segment_ids (ids[-1] + 1 segments; an empty one is 1)."""
    return unsorted_segment_prod(data, segment_ids, _sorted_num_segments(segment_ids))
