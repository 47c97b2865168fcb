"""tf.debugging's assertions: comparisons of tensors (eagerly: checked at once, raising InvalidArgumentError
with TF's message; in a trace: an Assert that checks on every call), static rank/dtype checks (ValueError,
TypeError, as TF raises them), and check_numerics."""
import numpy as np

from . import _C
from . import dtypes as _dtypes
from . import errors as _errors


def _tensor(x):
    from ._ops import convert_to_tensor
    return x if isinstance(x, (_C.Tensor, _C.Variable)) else convert_to_tensor(x)


def _pretty(item, summarize):
    """A data item as TF's eager assertions print it: the first `summarize` values of a tensor."""
    if not isinstance(item, (_C.Tensor, _C.Variable)):
        return str(item)
    arr = item.numpy()
    if np.ndim(arr) == 0:
        return str(arr)
    flat = arr.reshape(-1)
    shown = [str(v) for v in flat[:summarize]]
    if len(shown) < flat.size:
        shown.append("...")
    return str(shown)


def _described(name, x):
    return f"{name} (shape={x.shape} dtype={x.dtype.name}) = "


def _check(condition, data, summarize):
    """Raises now when eager and false; adds an Assert when traced."""
    if not condition._is_symbolic and not _C.is_tracing():
        if bool(condition.numpy()):
            return None
        if summarize is None:
            summarize = 3
        elif summarize < 0:
            summarize = 10 ** 9
        raise _errors.InvalidArgumentError("\n".join(_pretty(d, summarize) for d in data))
    from .debugging import Assert
    return Assert(condition, data, summarize)


def _binary(op, symbol, x, y, message, summarize, wording="did not hold element-wise:"):
    from ._ops import reduce_all
    x = _tensor(x)
    if not isinstance(y, (_C.Tensor, _C.Variable)):  # a Python or NumPy value: in x's dtype
        from ._ops import convert_to_tensor
        y = convert_to_tensor(y, dtype=x.dtype)
    data = [message or "", f"Condition x {symbol} y {wording}", _described("x", x), x, _described("y", y), y]
    return _check(reduce_all(op(x, y)), data, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    from ._ops import greater
    return _binary(greater, ">", x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    from ._ops import greater_equal
    return _binary(greater_equal, ">=", x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    from ._ops import less
    return _binary(less, "<", x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    from ._ops import less_equal
    return _binary(less_equal, "<=", x, y, message, summarize)


def assert_none_equal(x, y, summarize=None, message=None, name=None):
    from ._ops import not_equal
    return _binary(not_equal, "!=", x, y, message, summarize, "did not hold for every single element:")


def _against_zero(op, symbol, x, message, summarize):
    from ._ops import reduce_all, zeros_like
    x = _tensor(x)
    data = [message or "", f"Condition x {symbol} 0 did not hold element-wise:", _described("x", x), x]
    return _check(reduce_all(op(x, zeros_like(x))), data, summarize)


def assert_negative(x, message=None, summarize=None, name=None):
    from ._ops import less
    return _against_zero(less, "<", x, message, summarize)


def assert_positive(x, message=None, summarize=None, name=None):
    from ._ops import greater
    return _against_zero(greater, ">", x, message, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None):
    from ._ops import greater_equal
    return _against_zero(greater_equal, ">=", x, message, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None):
    from ._ops import less_equal
    return _against_zero(less_equal, "<=", x, message, summarize)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """|x - y| <= atol + rtol * |y| everywhere; rtol and atol default to 10 eps of x's dtype."""
    from ._ops import abs as _abs, less_equal, reduce_all, subtract, add, multiply, constant
    x, y = _tensor(x), _tensor(y)
    eps = float(np.finfo(x.dtype.real_dtype.as_numpy_dtype).eps)
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    real = x.dtype.real_dtype
    tolerance = add(constant(atol, dtype=real), multiply(constant(rtol, dtype=real), _abs(y)))
    data = [message or "", f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
            _described("x", x), x, _described("y", y), y]
    return _check(reduce_all(less_equal(_abs(subtract(x, y)), tolerance)), data, summarize)


def _static_rank(x, message, what, ok, shown):
    rank = x.shape.rank
    if rank is not None and not ok(rank):
        raise ValueError(f"{message or ''}Tensor must have {what} {shown}.  Received rank {rank}, shape {x.shape}")


def assert_rank(x, rank, message=None, name=None):
    x = _tensor(x)
    _static_rank(x, message, "rank", lambda r: r == int(rank), int(rank))


def assert_rank_at_least(x, rank, message=None, name=None):
    x = _tensor(x)
    _static_rank(x, message, "rank at least", lambda r: r >= int(rank), int(rank))


def assert_rank_in(x, ranks, message=None, name=None):
    x = _tensor(x)
    ranks = tuple(int(r) for r in ranks)
    _static_rank(x, message, "rank in", lambda r: r in ranks, ranks)


def assert_scalar(tensor, message=None, name=None):
    """The tensor itself when its shape is (); ValueError otherwise."""
    tensor = _tensor(tensor)
    if tensor.shape.rank != 0:
        raise ValueError(f"{message or ''}Expected scalar shape, saw shape: {tensor.shape}.")
    return tensor


def assert_type(tensor, tf_type, message=None, name=None):
    tensor = _tensor(tensor)
    tf_type = _dtypes.as_dtype(tf_type)
    if tensor.dtype != tf_type:
        raise TypeError(f"{message or ''}{getattr(tensor, 'name', 'tensor')} must be of type {tf_type!r}; "
                        f"got {tensor.dtype!r}")


def assert_integer(x, message=None, name=None):
    x = _tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"{message or ''}Expected \"x\" to be integer type.  Found: {x.dtype!r}.")


def check_numerics(tensor, message, name=None):
    """The tensor, after checking it holds no NaN or Inf (InvalidArgumentError, TF's message, when it does)."""
    tensor = _tensor(tensor)
    if not (tensor.dtype.is_floating or tensor.dtype.is_complex):
        return tensor

    def check(value):
        arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        nan, inf = bool(np.isnan(arr).any()), bool(np.isinf(arr).any())
        if nan or inf:
            what = "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")
            raise _errors.InvalidArgumentError(f"{message} : Tensor had {what} values")
        return ()
    if not tensor._is_symbolic and not _C.is_tracing():
        check(tensor)
        return tensor
    from ._config_optimizer import debug_stripper_on
    if not debug_stripper_on():  # Grappler's debug_stripper leaves the check out of graphs
        _C.host_function(check, [tensor], [])
    return tensor


def assert_all_finite(x, message, name=None):
    return check_numerics(x, message, name)


def is_numeric_tensor(tensor):
    """Whether `tensor` is a Tensor of a number type (bool and string are not)."""
    return isinstance(tensor, _C.Tensor) and (tensor.dtype.is_floating or tensor.dtype.is_integer
                                              or tensor.dtype.is_complex)


def assert_proper_iterable(values):
    """TypeError unless `values` is an iterable other than a tensor, array, or string."""
    unintentional = (_C.Tensor, np.ndarray, bytes, str)
    if isinstance(values, unintentional):
        raise TypeError(f"Expected argument \"values\" to be a \"proper\" iterable.  Found: {type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument \"values\" to be iterable.  Found: {type(values)}")


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of `tensors` (and `dtype`), float32 when neither says; ValueError otherwise."""
    found = _dtypes.as_dtype(dtype) if dtype is not None else None
    for t in tensors or []:
        if found is None:
            found = t.dtype
        elif t.dtype != found:
            raise ValueError(f"{t}, type={t.dtype} must be of the same type ({found}).")
    if found is None:
        return _dtypes.float32
    if not found.is_floating:
        raise ValueError(f"Expected floating point type, got {found}.")
    return found


def _shape_spec(spec):
    """A shape spec as a list: ints, symbols (strings), '.' (any size) and a leading '...' (any leading dims)."""
    if isinstance(spec, str):
        return list(spec)  # TF: a string is a sequence of one-character symbols ("NHWC")
    try:
        return list(spec)
    except TypeError:
        raise ValueError(f"Shape spec {spec!r} must be an iterable") from None


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks tensors' shapes against specs (ints, symbol strings that must take one size everywhere, '.' for any
    size, a leading '...' for any leading dimensions). A mismatch known without running a graph raises
    ValueError (TF's static check); sizes known only when a traced function runs are checked then
    (InvalidArgumentError)."""
    from ._ops import shape as _shape, equal, reduce_all, constant, stack
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    prefix = f"{message} " if message else ""
    sizes = {}        # symbol -> (static size or None, a tensor of the size, where it was set)
    runtime = []
    for tensor, spec in pairs:
        tensor = _tensor(tensor)
        spec = _shape_spec(spec)
        rank = tensor.shape.rank
        ellipsis = bool(spec) and spec[0] == "..."
        dims = spec[1:] if ellipsis else spec
        if "..." in dims:
            raise ValueError(f"{prefix}'...' may only be the first dimension of a shape spec, got {spec}")
        if rank is not None and (rank < len(dims) if ellipsis else rank != len(dims)):
            raise ValueError(f"{prefix}Specified by tensor {getattr(tensor, 'name', '')} dimension 0.  Tensor "
                             f"must have rank {len(dims)}{' or more' if ellipsis else ''}.  Received rank {rank}, "
                             f"shape {tensor.shape}")
        first = (rank - len(dims)) if rank is not None else 0
        for k, want in enumerate(dims):
            if want == ".":
                continue
            axis = first + k
            static = tensor.shape[axis] if rank is not None else None
            dynamic = None if static is not None else _shape(tensor)[axis]
            where = f"dimension {axis}"
            if isinstance(want, str):
                if want not in sizes:
                    sizes[want] = (static, dynamic if dynamic is not None else constant(static), where)
                    continue
                known, size, origin = sizes[want]
                if static is not None and known is not None:
                    if static != known:
                        raise ValueError(f"{prefix}Specified by tensor {origin}.  Tensor dimension {axis} must have "
                                         f"size {known}.  Received size {static}, shape {tensor.shape}")
                    continue
                runtime.append((dynamic if dynamic is not None else constant(static), size,
                                f"dimension {axis} must match {want} ({origin})"))
            else:
                want = int(want)
                if static is not None:
                    if static != want:
                        raise ValueError(f"{prefix}Tensor dimension {axis} must have size {want}.  Received size "
                                         f"{static}, shape {tensor.shape}")
                else:
                    runtime.append((dynamic, constant(want), f"dimension {axis} must have size {want}"))
    if runtime:
        got = stack([r[0] for r in runtime])
        want = stack([r[1] for r in runtime])
        _check(reduce_all(equal(got, want)), [prefix + "Shape mismatch: " + "; ".join(r[2] for r in runtime),
                                              got, want], summarize)
