"""kiln.saved_model (tf.saved_model): save an object's variables and kiln.functions,
and load them back, in the same directory format as Kiln's C++ API, so a model
saved from Python runs in C++ and kiln-cli, and the other way round.

    module = MyModule()                       # a kiln.Module with kiln.function methods
    kiln.saved_model.save(module, "dir")      # every traced method, without listing them
    loaded = kiln.saved_model.load("dir")
    loaded.add(kiln.constant(5.0))            # the saved method, on the restored variables
    loaded.signatures["serving_default"](x=kiln.constant(5.0))["output_0"]
"""
from . import _C
from . import dtypes as _dtypes
from . import nest as _nest
from ._ops import convert_to_tensor as _convert
from .function import ConcreteFunction, Function, TensorSpec

__all__ = ["save", "load", "SaveOptions", "LoadOptions"]


class SaveOptions:
    """Accepted for TF code; Kiln's saver has no options."""

    def __init__(self, **kwargs):
        self.options = kwargs


class LoadOptions(SaveOptions):
    """Accepted for TF code; Kiln's loader has no options."""


def _traces(fn):
    """Every trace of a kiln.function; one with an input_signature that was never
    called is traced now, as TF does on save."""
    traces = fn.concrete_functions()
    if not traces and fn.input_signature is not None:
        traces = [fn.get_concrete_function()]
    return traces


def _functions_of(obj):
    """The kiln.function attributes of `obj`: those set on the instance and the
    decorated methods of its class (each bound to `obj`, with its own traces)."""
    found = {}
    for name in dir(type(obj)):
        if isinstance(getattr(type(obj), name, None), Function):
            found[name] = getattr(obj, name)
    for name, value in vars(obj).items():
        if isinstance(value, Function):
            found[name] = value
    return found


def _is_trackable(value):
    from .module import Module
    return isinstance(value, Module)


def _tree(obj, seen):
    """The engine's object tree for `obj`: its variables, its traced kiln.functions and
    its child modules (also inside lists, tuples and dicts), by attribute name."""
    node = _C.SavedObject()
    seen.add(id(obj))

    def add(name, value):
        if isinstance(value, _C.Variable):
            node.add_variable(name, value)
        elif _is_trackable(value):
            if id(value) not in seen:
                node.add_child(name, _tree(value, seen))
        elif isinstance(value, dict):
            for k in sorted(value, key=str):
                add(f"{name}_{k}", value[k])
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                add(f"{name}_{i}", v)

    for name, fn in sorted(_functions_of(obj).items()):
        traces = _traces(fn)
        if traces:
            node.add_functions(name, [c._core for c in traces])
    for name in sorted(vars(obj)):
        if not name.startswith("__") and not isinstance(vars(obj)[name], Function):
            add(name, vars(obj)[name])
    return node


def _one_trace(value, what):
    if isinstance(value, ConcreteFunction):
        return value
    if isinstance(value, Function):
        traces = _traces(value)
        if len(traces) != 1:
            raise ValueError(f"{what}: a kiln.function used as a signature must have exactly one trace (an "
                             f"input_signature, or one get_concrete_function call); it has {len(traces)}. Pass "
                             f"f.get_concrete_function(...) to pick one.")
        return traces[0]
    raise ValueError(f"{what}: expected a kiln.function or a ConcreteFunction, got {type(value).__name__}")


def _signatures(obj, signatures):
    if signatures is None:
        # TF's rule: with exactly one kiln.function on the object, it serves by default.
        fns = [f for f in _functions_of(obj).values() if _traces(f)]
        if len(fns) == 1 and len(_traces(fns[0])) == 1:
            signatures = fns[0]
        else:
            return {}
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    return {name: (_one_trace(v, f"signature '{name}'")._core, []) for name, v in signatures.items()}


def save(obj, export_dir, signatures=None, options=None):
    """tf.saved_model.save: writes `obj`'s variables, every trace of its kiln.functions
    (methods included, found without listing them) and its child modules into
    `export_dir`, atomically. `signatures`: a kiln.function with one trace, a
    ConcreteFunction, or a dict of them by name; their inputs are named after the
    Python parameters (or the TensorSpecs' names), outputs output_0, output_1..."""
    export_dir = str(export_dir)
    _C.saved_model_save(_tree(obj, set()), export_dir, _signatures(obj, signatures))


class _LoadedFunction:
    """A saved kiln.function: calling it runs the first saved trace whose inputs accept
    the arguments. One output comes back as a tensor, several as a tuple."""

    def __init__(self, core):
        self._core = core

    def __call__(self, *args):
        flat = [_convert(a) for a in _nest.flatten(args)]
        out = self._core.call(flat)
        return out[0] if len(out) == 1 else tuple(out)

    @property
    def name(self):
        return self._core.name

    @property
    def concrete_functions(self):
        return [ConcreteFunction(c, None) for c in self._core.concrete_functions()]

    def __repr__(self):
        return f"<saved kiln.function {self.name}>"


def _spec(info):
    name, enum, dims, rank, _ = info
    return TensorSpec(None if rank < 0 else [None if d < 0 else d for d in dims], _dtypes._BY_ENUM[enum], name)


class _LoadedSignature:
    """A serving signature: keyword inputs by name in, a dict of named outputs out."""

    def __init__(self, name, core):
        self._name = name
        self._core = core
        self.structured_input_signature = ((), {s.name: s for s in map(_spec, core.inputs())})
        self.structured_outputs = {s.name: s for s in map(_spec, core.outputs())}

    def __call__(self, *args, **kwargs):
        if args:
            raise TypeError(f"signature '{self._name}' takes its inputs by keyword: "
                            f"{', '.join(self.structured_input_signature[1])}")
        inputs = {}
        for k, v in kwargs.items():
            spec = self.structured_input_signature[1].get(k)
            inputs[k] = _convert(v, spec.dtype if spec is not None else None)
        return self._core(inputs)

    def __repr__(self):
        return f"<signature {self._name}: {self._core.function.name}>"


class _LoadedObject:
    """A loaded object of the saved tree: its variables, functions and children as
    attributes, as TF's loaded objects have them."""

    def __init__(self, core):
        for name, var in core.own_variables():
            setattr(self, name, var)
        for name, fn in core.functions():
            setattr(self, name, _LoadedFunction(fn))
        for name, child in core.children():
            setattr(self, name, _LoadedObject(child))
        self._core = core

    @property
    def variables(self):
        return tuple(self._core.variables())

    @property
    def trainable_variables(self):
        return tuple(v for v in self._core.variables() if v.trainable)


class _Loaded(_LoadedObject):
    def __init__(self, core):
        super().__init__(core)
        self.signatures = {name: _LoadedSignature(name, s) for name, s in core.signatures().items()}


def load(export_dir, tags=None, options=None):
    """tf.saved_model.load: the saved object tree, with `signatures`."""
    return _Loaded(_C.saved_model_load(str(export_dir)))
