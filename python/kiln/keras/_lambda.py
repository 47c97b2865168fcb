"""Keras' Lambda layer: any function of the inputs as a layer. Its config holds the function: by name for a
named function (found again through custom_objects or its module), as marshalled bytecode for a lambda (Keras'
format, loaded only with safe_mode=False)."""
import base64
import importlib
import inspect
import marshal
import types

from ..tensor_shape import TensorShape
from ._layer import Layer
from ._serialization import get_registered_object

# load_model's safe_mode while it runs; from_config outside a load allows lambdas (Keras' in_safe_mode() is None).
_SAFE_MODE = [False]


def _dump_function(fn):
    code = base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii")
    closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
    return code, fn.__defaults__, closure


def _load_function(code, defaults=None, closure=None, globs=None):
    if isinstance(code, (list, tuple)):
        code, defaults, closure = (list(code) + [None, None])[:3]
    raw = marshal.loads(base64.b64decode(code.encode("ascii")))
    cells = tuple(types.CellType(c) for c in closure) if closure else None
    return types.FunctionType(raw, globs or globals(), raw.co_name, tuple(defaults) if defaults else None, cells)


class Lambda(Layer):
    """Lambda(function, output_shape=None, mask=None, arguments=None): call is function(inputs, **arguments)
    (given `mask` and `training` too when the function takes them)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda expects a callable `function`, got {function!r}")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        self.mask = mask
        self.supports_masking = mask is not None
        try:
            params = inspect.signature(function).parameters
        except (TypeError, ValueError):
            params = {}
        self._fn_takes_mask = "mask" in params
        self._fn_takes_training = "training" in params

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_takes_mask:
            kwargs["mask"] = mask
        if self._fn_takes_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return Layer.compute_output_shape(self, input_shape)
        if callable(self._output_shape):
            return TensorShape(self._output_shape(input_shape))
        batch = TensorShape(input_shape)[0] if not isinstance(input_shape, list) else None
        return TensorShape([batch] + list(self._output_shape))

    def get_config(self):
        config = super().get_config()
        fn = self.function
        if isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>":
            config.update(function=_dump_function(fn), function_type="lambda", module=fn.__module__)
        else:
            config.update(function=fn.__name__, function_type="function", module=fn.__module__)
        if self._output_shape is not None:
            if callable(self._output_shape):
                config.update(output_shape=_dump_function(self._output_shape), output_shape_type="lambda")
            else:
                config.update(output_shape=list(self._output_shape), output_shape_type="raw")
        config["arguments"] = self.arguments
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        kind = config.pop("function_type", "function")
        module = config.pop("module", None)
        fn = config.pop("function")
        if kind == "lambda":
            if _SAFE_MODE[-1]:
                raise ValueError("Requested the deserialization of a `Lambda` layer with a Python `lambda` inside it. "
                                 "This carries a potential risk of arbitrary code execution and thus it is disallowed "
                                 "by default. If you trust the source of the saved model, you can pass "
                                 "`safe_mode=False` to the loading function in order to allow `Lambda` layer loading.")
            globs = vars(importlib.import_module(module)) if module and _importable(module) else None
            fn = _load_function(fn, globs=globs)
        else:
            found = get_registered_object(fn, custom_objects)
            if found is None and module and _importable(module):
                found = getattr(importlib.import_module(module), fn, None)
            if found is None:
                raise ValueError(f"Unknown function: '{fn}'. Please ensure you are using a "
                                 "`keras.utils.custom_object_scope` and that this object is included in the scope.")
            fn = found
        shape_kind = config.pop("output_shape_type", "raw")
        if shape_kind == "lambda" and config.get("output_shape") is not None:
            config["output_shape"] = _load_function(config["output_shape"])
        return cls(fn, **config)


def _importable(module):
    try:
        importlib.import_module(module)
        return True
    except Exception:
        return False
