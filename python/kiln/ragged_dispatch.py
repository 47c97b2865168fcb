"""tf.* functions that accept RaggedTensors and SparseTensors, as TF's dispatch makes them: installed once at
import over the kiln and kiln.math (and kiln.strings) namespaces. A wrapper looks at its tensor arguments' types
and calls the plain function unless one is a composite, so dense calls pay one type check; Kiln's own modules call
the plain functions (kiln._ops) and pay nothing."""
import functools
import inspect

from . import ragged_ops
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor

_COMPOSITES = (RaggedTensor, SparseTensor)

# Elementwise functions of one tensor (their first argument): on a ragged tensor they map its flat values, on a
# sparse one its values (TF's unary elementwise dispatch).
_UNARY = ("abs", "negative", "sign", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "sin", "cos", "tanh",
          "sigmoid", "floor", "ceil", "round", "rint", "logical_not", "cast", "identity", "ones_like", "zeros_like",
          "is_nan", "is_finite", "is_inf", "erf", "softplus", "reciprocal", "expm1", "saturate_cast")
_BINARY = ("add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod", "maximum", "minimum",
           "pow", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "squared_difference", "truncatediv", "truncatemod", "divide_no_nan", "multiply_no_nan")
_REDUCE = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all")
_STRING_UNARY = ("lower", "upper", "strip", "length", "substr", "regex_replace", "regex_full_match", "to_number",
                 "as_string", "split")


def _first_param(fn):
    try:
        return next(iter(inspect.signature(fn).parameters))
    except (TypeError, ValueError, StopIteration):
        return None


def _unary(orig):
    pname = _first_param(orig)

    @functools.wraps(orig)
    def dispatch(*args, **kwargs):
        x = args[0] if args else kwargs.get(pname)
        if type(x) is RaggedTensor:
            if args:
                return ragged_ops.ragged_unary(orig, x, *args[1:], **kwargs)
            rest = {k: v for k, v in kwargs.items() if k != pname}
            return ragged_ops.ragged_unary(orig, x, **rest)
        if type(x) is SparseTensor:
            rest = args[1:] if args else ()
            kw = {k: v for k, v in kwargs.items() if k != pname} if not args else kwargs
            return x.with_values(orig(x.values, *rest, **kw))
        return orig(*args, **kwargs)
    return dispatch


def _binary(orig, name):
    @functools.wraps(orig)
    def dispatch(x, y, *args, **kwargs):
        if type(x) is RaggedTensor or type(y) is RaggedTensor:
            return ragged_ops.ragged_binary(name, x, y)
        if type(x) is SparseTensor or type(y) is SparseTensor:
            if name in ("multiply", "divide", "truediv") and type(x) is SparseTensor:
                from .sparse_ops import _cwise
                return _cwise("multiply" if name == "multiply" else "truediv", x, y)
            raise TypeError(f"tf.{name} does not take a SparseTensor; use tf.sparse.map_values, tf.sparse.add or "
                            "tf.sparse.to_dense")
        return orig(x, y, *args, **kwargs)
    return dispatch


def _reduce(orig, name):
    pname = _first_param(orig)

    @functools.wraps(orig)
    def dispatch(*args, **kwargs):
        x = args[0] if args else kwargs.get(pname)
        if type(x) is RaggedTensor:
            return ragged_ops.reduce(name, *args, **kwargs)
        if type(x) is SparseTensor:
            raise TypeError(f"tf.{name} does not take a SparseTensor; use tf.sparse.{name}")
        return orig(*args, **kwargs)
    return dispatch


def _list_op(orig, ragged_fn):
    @functools.wraps(orig)
    def dispatch(values, *args, **kwargs):
        if isinstance(values, (list, tuple)) and any(type(v) is RaggedTensor for v in values):
            return ragged_fn(values, *args, **kwargs)
        return orig(values, *args, **kwargs)
    return dispatch


def _first_ragged(orig, ragged_fn):
    @functools.wraps(orig)
    def dispatch(x, *args, **kwargs):
        if type(x) is RaggedTensor:
            return ragged_fn(x, *args, **kwargs)
        return orig(x, *args, **kwargs)
    return dispatch


def _string_join(orig):
    @functools.wraps(orig)
    def dispatch(inputs, separator="", name=None):
        if isinstance(inputs, (list, tuple)) and any(type(v) is RaggedTensor for v in inputs):
            return ragged_ops.map_flat_values(lambda *vs: orig(list(vs), separator=separator), *inputs)
        return orig(inputs, separator=separator, name=name)
    return dispatch


def _ragged_shape_ops(kiln):
    """tf.shape of a RaggedTensor is a DynamicRaggedShape, which tf.reshape, zeros, ones and fill take."""
    from . import ragged_shape

    def shape(orig):
        @functools.wraps(orig)
        def dispatch(input, out_type=None, name=None):  # noqa: A002 - TF's name
            if type(input) is RaggedTensor:
                return ragged_shape.DynamicRaggedShape.from_tensor(input, out_type or kiln.int32)
            return orig(input, kiln.int32 if out_type is None else out_type, name)
        return dispatch

    def by_shape(orig, ragged_fn):
        first = _first_param(orig)  # `shape` (zeros, ones) or `dims` (fill)

        @functools.wraps(orig)
        def dispatch(*args, **kwargs):
            shape = args[0] if args else kwargs.get(first)
            if ragged_shape.is_ragged_shape(shape):
                rest = {k: v for k, v in kwargs.items() if k not in ("name", first)}
                return ragged_fn(shape, *args[1:], **rest)
            return orig(*args, **kwargs)
        return dispatch

    def reshape(orig):
        @functools.wraps(orig)
        def dispatch(tensor, shape, name=None):
            if ragged_shape.is_ragged_shape(shape):
                return ragged_shape.reshape(tensor, shape)
            return orig(tensor, shape, name)
        return dispatch

    return {"shape": shape, "reshape": reshape,
            "zeros": lambda orig: by_shape(orig, ragged_shape.zeros),
            "ones": lambda orig: by_shape(orig, ragged_shape.ones),
            "fill": lambda orig: by_shape(orig, ragged_shape.fill)}


def install():
    """Wraps the functions in place (once); the same wrapper object goes to every namespace that holds a
    function, so `tf.add is tf.math.add` stays true."""
    import sys
    kiln = sys.modules[__package__]
    done = {}

    def put(modules, name, make):
        for module in modules:
            orig = getattr(module, name, None)
            if orig is None or getattr(orig, "_kiln_composite_dispatch", False):
                continue
            wrapped = done.get(id(orig))
            if wrapped is None:
                wrapped = done[id(orig)] = make(orig)
                wrapped._kiln_composite_dispatch = True
            setattr(module, name, wrapped)

    spaces = (kiln, kiln.math)
    for name in _UNARY:
        put(spaces, name, _unary)
    for name in _BINARY:
        put(spaces, name, lambda orig, n=name: _binary(orig, n))
    for name in _REDUCE:
        put(spaces, name, lambda orig, n=name: _reduce(orig, n))
    put(spaces, "concat", lambda orig: _list_op(orig, ragged_ops.concat))
    put(spaces, "stack", lambda orig: _list_op(orig, ragged_ops.stack))
    put(spaces, "tile", lambda orig: _first_ragged(orig, ragged_ops.tile))
    put(spaces, "reverse", lambda orig: _first_ragged(orig, ragged_ops.reverse))
    for name, make in _ragged_shape_ops(kiln).items():
        put(spaces, name, make)
    for name in _STRING_UNARY:
        put((kiln.strings,), name, _unary)
    put((kiln.strings,), "join", _string_join)
