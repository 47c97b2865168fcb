"""TF ops on KerasTensors (Keras 2's TFOpLambda): `tf.reduce_sum(x)`, `x * 2` or `x[:, 0]` while a functional
model is built become layers named after the op ("tf.math.reduce_sum", "tf.__operators__.add"), so models
written as keras.io writes them (`model.add_loss(tf.reduce_sum(x1) * 0.1)`, `outputs = tf.nn.softmax(x)`) build.

The public ops of `kiln`, `kiln.math`, `kiln.nn`, ... are wrapped when the first KerasTensor is made (install()):
the wrapper looks at its top-level arguments for a KerasTensor (one type check each) and, when an op fails on a
KerasTensor nested in a list (`tf.concat([a, b], 1)`), retries as a layer; any other call runs the op untouched.
A program that never builds a functional model never pays for the wrapper (about 0.5 us per eager op call)."""
import functools
import sys
import types

from ._layer import KerasTensor, Layer, _flatten
from . import backend

# Not ops: their arguments are functions, scopes or settings, or autograph recognises them by identity.
_NOT_OPS = {"range", "print", "cond", "while_loop", "function", "py_function", "custom_gradient", "grad_pass_through",
            "recompute_grad", "name_scope", "device", "executing_eagerly", "get_logger", "init_scope", "Assert",
            "is_tensor", "as_dtype", "convert_to_tensor", "constant", "Variable", "TensorArray", "GradientTape",
            "TensorSpec", "TensorShape", "Module", "DType", "Tensor", "identity_n", "numpy_function", "gradients",
            "hessians"}

# keras.backend's functions that are ops (the others read shapes, settings or variables).
_BACKEND_OPS = {"cast", "sum", "mean", "max", "min", "var", "std"}

# Where Keras names a symbol (the first module that has it gives the layer name "tf.<module>.<op>").
_MODULES = ("math", "nn", "linalg", "image", "strings", "signal", "random", "", "keras.backend")
# Symbols TF exports under tf.nn first, though tf.math has them too (TF's canonical name is the first).
_CANONICAL = {"math.softmax": "nn.softmax", "math.log_softmax": "nn.log_softmax"}


def _symbolic(args, kwargs):
    return any(isinstance(a, KerasTensor) for a in _flatten([list(args), kwargs]))


def _op_layer_call(fn, symbol, args, kwargs):
    """The op as a new layer called on its arguments; the layer's input is the first argument that holds a
    KerasTensor (a positional one, else a keyword one), the others are the call's other arguments."""
    def holds(v):
        return any(isinstance(t, KerasTensor) for t in _flatten(v))
    position = next((i for i, a in enumerate(args) if holds(a)), None)
    if symbol == "__operators__.getitem":
        return SlicingOpLambda(fn, symbol)(args[0], _slices_to_dicts(args[1]))
    if position is not None:
        layer = TFOpLambda(fn, symbol, input_position=position)
        return layer(args[position], *args[:position], *args[position + 1:], **kwargs)
    key = next(k for k, v in kwargs.items() if holds(v))
    kwargs = dict(kwargs)
    inputs = kwargs.pop(key)
    return TFOpLambda(fn, symbol, input_key=key)(inputs, *args, **kwargs)


def _wrap(fn, symbol):
    @functools.wraps(fn)
    def op(*args, **kwargs):
        for a in args:
            if type(a) is KerasTensor:
                return _op_layer_call(fn, symbol, args, kwargs)
        for a in kwargs.values():
            if type(a) is KerasTensor:
                return _op_layer_call(fn, symbol, args, kwargs)
        try:
            return fn(*args, **kwargs)
        except Exception:
            if not _symbolic(args, kwargs):
                raise
        return _op_layer_call(fn, symbol, args, kwargs)

    op.__kiln_op_wrapper__ = fn
    # AutoGraph calls it as it is (functools.wraps copied the op's __module__, which may not name kiln).
    op.__kiln_do_not_convert__ = True
    return op


class TFOpLambda(Layer):
    """One TF op of a functional model as a layer: call(inputs, *args, **kwargs) is the op on the same arguments.
    Its config names the op ("function": "math.reduce_sum", Keras 2's key); the other arguments are the node's."""

    def __init__(self, function, symbol=None, input_position=0, input_key=None, **kwargs):
        if isinstance(function, str):
            symbol, function = function, _resolve(function)
        symbol = symbol or getattr(function, "__name__", "op")
        kwargs.setdefault("name", backend.unique_object_name(f"tf.{symbol}", zero_based=True))
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.function = function
        self.symbol = symbol
        self.input_position, self.input_key = input_position, input_key
        self._always_trace = True  # output shapes and dtype from tracing the op on the inputs
        self._call_accepts_training = self._call_accepts_mask = False
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        if _symbolic([inputs, *args], kwargs):
            return self._functional_call(inputs, args, kwargs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, *args, **kwargs):
        return self._apply(inputs, args, kwargs)

    def _apply(self, inputs, args, kwargs):
        if self.input_key is not None:
            return self.function(*args, **{self.input_key: inputs}, **kwargs)
        p = self.input_position
        return self.function(*args[:p], inputs, *args[p:], **kwargs)

    def _traced_output_shape(self, inputs, args, kwargs):
        from ..function import function, TensorSpec
        structure = [inputs, list(args), kwargs]
        symbolic = [t for t in _flatten(structure) if isinstance(t, KerasTensor)]

        def run(*values):
            lookup = {id(t): v for t, v in zip(symbolic, values)}
            x, a, k = _replace(structure, lookup)
            return self._apply(x, a, k)

        specs = [TensorSpec(t.shape, t.dtype) for t in symbolic]
        outputs = function(run, autograph=False).get_concrete_function(*specs).outputs
        self._output_dtype = outputs[0].dtype
        return outputs[0].shape if len(outputs) == 1 else [o.shape for o in outputs]

    def get_config(self):
        config = super().get_config()
        config["function"] = self.symbol
        if self.input_position:
            config["input_position"] = self.input_position
        if self.input_key is not None:
            config["input_key"] = self.input_key
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        return cls(config.pop("function"), **config)


class SlicingOpLambda(TFOpLambda):
    """`x[...]` on a KerasTensor (Keras 2's SlicingOpLambda): the node keeps each slice as a dict {"start", "stop",
    "step"} (and Ellipsis as {"class_name": "__ellipsis__"}), so the functional config is JSON."""

    def _apply(self, inputs, args, kwargs):
        return self.function(inputs, *_dicts_to_slices(list(args)), **kwargs)


def _slices_to_dicts(key):
    if isinstance(key, tuple):
        return [_slices_to_dicts(k) for k in key]
    if isinstance(key, slice):
        return {"start": key.start, "stop": key.stop, "step": key.step}
    if key is Ellipsis:
        return {"class_name": "__ellipsis__"}
    return key


def _dicts_to_slices(value):
    if isinstance(value, list):
        return tuple(_dicts_to_slices(v) for v in value)
    if isinstance(value, dict) and value.get("class_name") == "__ellipsis__":
        return Ellipsis
    if isinstance(value, dict) and set(value) == {"start", "stop", "step"}:
        return slice(value["start"], value["stop"], value["step"])
    return value


def _replace(structure, lookup):
    if isinstance(structure, list):
        return [_replace(s, lookup) for s in structure]
    if isinstance(structure, tuple):
        return tuple(_replace(s, lookup) for s in structure)
    if isinstance(structure, dict):
        return {k: _replace(v, lookup) for k, v in structure.items()}
    return lookup.get(id(structure), structure) if isinstance(structure, KerasTensor) else structure


def _resolve(symbol):
    """"math.reduce_sum" -> kiln.math.reduce_sum; "__operators__.add" -> the operator."""
    import kiln
    if symbol.startswith("__operators__."):
        return _OPERATORS[symbol.split(".", 1)[1]][1]
    target = kiln
    for part in symbol.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ValueError(f"Unknown TF op in a TFOpLambda config: 'tf.{symbol}'")
    return target


def _operators():
    import operator
    import kiln
    return {
        "add": ("__operators__.add", operator.add), "sub": ("math.subtract", kiln.subtract),
        "mul": ("math.multiply", kiln.multiply), "truediv": ("math.truediv", kiln.truediv),
        "floordiv": ("math.floordiv", kiln.math.floordiv), "mod": ("math.floormod", kiln.math.floormod),
        "pow": ("math.pow", kiln.pow), "matmul": ("linalg.matmul", kiln.matmul),
        "getitem": ("__operators__.getitem", operator.getitem), "neg": ("math.negative", kiln.negative),
        "abs": ("math.abs", kiln.abs), "lt": ("math.less", kiln.less), "le": ("math.less_equal", kiln.less_equal),
        "gt": ("math.greater", kiln.greater), "ge": ("math.greater_equal", kiln.greater_equal),
        "and": ("math.logical_and", kiln.logical_and), "or": ("math.logical_or", kiln.logical_or),
        "invert": ("math.logical_not", kiln.logical_not),
    }


_OPERATORS = {}


def _binary(key, reflected=False):
    def method(self, other):
        symbol, fn = _OPERATORS[key]
        return _op_layer_call(fn, symbol, (other, self) if reflected else (self, other), {})
    return method


def _unary(key):
    def method(self):
        symbol, fn = _OPERATORS[key]
        return TFOpLambda(fn, symbol)(self)
    return method


def install():
    """Wraps the public ops of kiln's namespaces and gives KerasTensor its operators (once, at import)."""
    import kiln
    _OPERATORS.update(_operators())
    wrapped = {}
    for prefix in _MODULES:
        module = sys.modules.get(f"kiln.{prefix}") if prefix else kiln
        if not isinstance(module, types.ModuleType):
            continue
        for name, fn in list(vars(module).items()):
            if name.startswith("_") or name in _NOT_OPS or not isinstance(fn, (types.FunctionType,
                                                                               types.BuiltinFunctionType)):
                continue
            if prefix == "keras.backend" and name not in _BACKEND_OPS:
                continue
            fn = getattr(fn, "__kiln_op_wrapper__", fn)
            if id(fn) not in wrapped:
                symbol = f"{prefix}.{name}" if prefix else name
                wrapped[id(fn)] = _wrap(fn, _CANONICAL.get(symbol, symbol))
            setattr(module, name, wrapped[id(fn)])
    for key in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lt", "le", "gt", "ge", "and",
                "or"):
        setattr(KerasTensor, f"__{key}__", _binary(key))
        if key not in ("lt", "le", "gt", "ge"):
            setattr(KerasTensor, f"__r{key}__", _binary(key, reflected=True))
    for key in ("neg", "abs", "invert"):
        setattr(KerasTensor, f"__{key}__", _unary(key))
    KerasTensor.__getitem__ = _binary("getitem")
