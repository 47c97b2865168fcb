"""kiln.debugging (tf.debugging)."""
from . import _C
from . import dtypes as _dtypes
from . import errors as _errors


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    _C.enable_check_numerics()


def disable_check_numerics():
    _C.disable_check_numerics()


def Assert(condition, data, summarize=None, name=None):
    """tf.debugging.Assert: raises InvalidArgumentError when `condition` is false, when the op runs (eagerly
    now, or on every call of a graph)."""
    from ._ops import convert_to_tensor
    from ._config_optimizer import debug_stripper_on
    condition = convert_to_tensor(condition)
    if debug_stripper_on() and (condition._is_symbolic or _C.is_tracing()):
        return None  # Grappler's debug_stripper leaves graphs' assertions out
    data = [d if isinstance(d, (_C.Tensor, _C.Variable)) else convert_to_tensor(d) for d in data]

    def check(cond, *values):
        if not bool(cond.numpy()):
            shown = ", ".join(str(v.numpy()) for v in values)
            raise _errors.InvalidArgumentError("assertion failed: [" + shown + "]")
        return ()
    _C.host_function(check, [condition, *data], [])


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    from ._ops import equal, reduce_all
    Assert(reduce_all(equal(x, y)), data if data is not None else [message or "x == y did not hold", x, y])


from ._asserts import (  # noqa: E402,F401
    assert_all_finite, assert_greater, assert_greater_equal, assert_integer, assert_less, assert_less_equal,
    assert_near, assert_negative, assert_non_negative, assert_non_positive, assert_none_equal, assert_positive,
    assert_proper_iterable, assert_rank, assert_rank_at_least, assert_rank_in, assert_same_float_dtype,
    assert_scalar, assert_shapes, assert_type, check_numerics, is_numeric_tensor)
