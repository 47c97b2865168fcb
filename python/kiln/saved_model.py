"""kiln.saved_model (tf.saved_model): save an object's variables and kiln.functions,
and load them back, in the same directory format as Kiln's C++ API, so a model
saved from Python runs in C++ and kiln-cli, and the other way round.

    module = MyModule()                       # a kiln.Module with kiln.function methods
    kiln.saved_model.save(module, "dir")      # every traced method, without listing them
    loaded = kiln.saved_model.load("dir")
    loaded.add(kiln.constant(5.0))            # the saved method, on the restored variables
    loaded.signatures["serving_default"](x=kiln.constant(5.0))["output_0"]
"""
import itertools
import inspect
import json
import os

from . import _C
from . import _composite
from . import dtypes as _dtypes
from . import nest as _nest
from ._ops import convert_to_tensor as _convert
from .function import ConcreteFunction, Function, TensorSpec, _holds_tensors

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


# What the engine's format does not keep of Python functions, in a file beside it: each saved
# function's parameter names (restored functions take keywords) and result structure, and
# each signature's output names (a dict's keys, as TF's).
_PYTHON_INFO = "kiln_python.json"
_LEAF = "leaf"


def _encode_structure(template):
    """A trace's result template as JSON (None when it holds what JSON cannot say)."""
    if type(template) is object:  # the engine's leaf marker
        return _LEAF
    if type(template) is _composite.Composite:  # a RaggedTensor or SparseTensor: its spec and components
        components = [_encode_structure(c) for c in template.components]
        spec = _composite.spec_of_key(template.key)
        return None if None in components else {"composite": _composite.spec_to_json(spec), "components": components}
    if template is None or isinstance(template, (bool, int, float, str)):
        return {"py": template}
    if isinstance(template, dict):
        keys = sorted(template, key=repr)
        if not all(isinstance(k, str) for k in keys):
            return None
        values = [_encode_structure(template[k]) for k in keys]
        return None if None in values else {"dict": keys, "values": values}
    if isinstance(template, (list, tuple)):
        values = [_encode_structure(v) for v in template]
        return None if None in values else {"list" if isinstance(template, list) else "tuple": values}
    return None


def _decode_structure(code, leaves):
    if code == _LEAF:
        return next(leaves)
    if "py" in code:
        return code["py"]
    if "composite" in code:
        spec = _composite.spec_from_json(code["composite"])
        return spec._from_components([_decode_structure(c, leaves) for c in code["components"]])
    if "dict" in code:
        values = [_decode_structure(v, leaves) for v in code["values"]]
        return dict(zip(code["dict"], values))
    if "list" in code:
        return [_decode_structure(v, leaves) for v in code["list"]]
    return tuple(_decode_structure(v, leaves) for v in code["tuple"])


def _parameter_names(fn):
    try:
        params = inspect.signature(fn.python_function).parameters.values()
    except (TypeError, ValueError):
        return None
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in plain for p in params):
        return None
    return [p.name for p in params]


def _function_info(fn, traces):
    structures = [_encode_structure(c._template) for c in traces]
    same = all(st == structures[0] for st in structures)
    info = {"params": _parameter_names(fn), "outputs": structures[0] if structures and same else None}
    if not same:  # each trace's result structure, found at a call by the trace whose inputs take the arguments
        info["traces"] = [{"inputs": [[t.dtype.name, None if t.shape.rank is None else t.shape.as_list()]
                                      for t in c.inputs], "outputs": st} for c, st in zip(traces, structures)]
    if fn.input_signature is not None and any(_nest.is_nested(s) for s in fn.input_signature):
        # A nested signature's structures, so that a call's dict of Python lists splits where the specs do.
        info["inputs"] = [_encode_structure(_nest.map_structure(lambda _: object(), s)) for s in fn.input_signature]
    return info


def _is_output(value):
    """A signature output: a tensor (the engine's leaf marker) or a composite of tensors."""
    return type(value) is object or (type(value) is _composite.Composite and all(
        type(c) is object for c in value.components))


def _signature_outputs(concrete):
    """A signature's outputs as (name, composite spec or None): a dict's keys (of tensors or composites), else
    output_0 (one result) or output_0, output_1... (a tuple or list of them); None for other results."""
    template = concrete._template
    if isinstance(template, dict) and all(isinstance(k, str) for k in template):
        items = [(k, template[k]) for k in sorted(template, key=repr)]
    elif isinstance(template, (list, tuple)) and type(template) is not _composite.Composite:
        items = [(f"output_{i}", v) for i, v in enumerate(template)]
    else:
        items = [("output_0", template)]
    if not all(_is_output(v) for _, v in items):
        return None
    return [(k, _composite.spec_of_key(v.key) if type(v) is _composite.Composite else None) for k, v in items]


def _output_names(concrete):
    """The signature's flat output names: a composite's components are `key`, `key_1`, ... (as TF names the
    components of a composite argument)."""
    outputs = _signature_outputs(concrete)
    if outputs is None:
        return None
    return [name if i == 0 else f"{name}_{i}" for name, spec in outputs
            for i in range(1 if spec is None else len(spec._component_specs()))]


def _output_composites(concrete):
    """{output name: its spec's JSON} for the composite outputs of a signature (the loader rebuilds them)."""
    return {name: _composite.spec_to_json(spec) for name, spec in (_signature_outputs(concrete) or [])
            if spec is not None}


def _tree(obj, seen, info=None, path=""):
    """The engine's object tree for `obj`: its variables, its traced kiln.functions and
    its child modules (also inside lists, tuples and dicts), by attribute name."""
    node = _C.SavedObject()
    seen.add(id(obj))
    info = {} if info is None else info

    def add(name, value):
        if isinstance(value, _C.Variable):
            node.add_variable(name, value)
        elif _is_trackable(value):
            if id(value) not in seen:
                node.add_child(name, _tree(value, seen, info, path + name + "/"))
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
            info[path + name] = _function_info(fn, traces)
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
    return {name: _one_trace(v, f"signature '{name}'") for name, v in signatures.items()}


def save(obj, export_dir, signatures=None, options=None):
    """tf.saved_model.save: writes `obj`'s variables, every trace of its kiln.functions
    (methods included, found without listing them) and its child modules into
    `export_dir`, atomically. `signatures`: a kiln.function with one trace, a
    ConcreteFunction, or a dict of them by name; their inputs are named after the
    Python parameters (or the TensorSpecs' names), outputs after the keys of the dict the
    function returns, else output_0, output_1..."""
    export_dir = str(export_dir)
    functions = {}
    tree = _tree(obj, set(), functions)
    sigs = _signatures(obj, signatures)
    _C.saved_model_save(tree, export_dir, {name: (c._core, [], _output_names(c) or []) for name, c in sigs.items()})
    info = {"functions": functions, "signature_outputs": {name: _output_names(c) for name, c in sigs.items()},
            "signature_composites": {name: _output_composites(c) for name, c in sigs.items()}}
    with open(os.path.join(export_dir, _PYTHON_INFO), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)


class NoMatchingTraceError(ValueError, _C.InvalidArgumentError):
    """A restored function called with inputs that no saved trace takes: TF's ValueError
    (Kiln's InvalidArgumentError before)."""


def _leaf_tensors(value):
    """An argument leaf as the saved graph takes it: a RaggedTensor or SparseTensor as its component tensors
    (the trace's inputs, in its spec's order), anything else as one tensor."""
    if _composite.is_composite(value):
        return list(value._type_spec._to_components(value))
    return [_convert(value)]


class _LoadedFunction:
    """A saved kiln.function: calling it runs the first saved trace whose inputs accept
    the arguments (positional, or by the Python parameters' names). The result comes back
    in the structure the function returned (a tensor, a tuple, a dict...)."""

    def __init__(self, core, info=None):
        self._core = core
        info = info or {}
        self._params = info.get("params")
        self._outputs = info.get("outputs")
        self._inputs = info.get("inputs")
        self._traces = info.get("traces")

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._positional(args, kwargs)
        flat = []
        for i, a in enumerate(args):  # a list of Python numbers is one tensor, as a tf.function's argument
            if self._inputs is not None and i < len(self._inputs) and self._inputs[i] not in (None, _LEAF):
                shallow = _decode_structure(self._inputs[i], itertools.repeat(None))
                flat.extend(c for x in _nest.flatten_up_to(shallow, a) for c in _leaf_tensors(x))
            elif isinstance(a, (list, tuple, dict)) and (_holds_tensors(a) or isinstance(a, dict)):
                flat.extend(c for x in _nest.flatten(a) for c in _leaf_tensors(x))
            else:
                flat.extend(_leaf_tensors(a))
        try:
            out = self._core.call(flat)
        except _C.InvalidArgumentError as e:
            if "no saved trace takes" in str(e):
                raise NoMatchingTraceError(
                    f"Could not find matching concrete function to call loaded from the SavedModel: {e}") from None
            raise
        outputs = self._outputs if self._traces is None else self._outputs_for(flat)
        if outputs is not None:
            leaves = iter(out)
            try:
                return _decode_structure(outputs, leaves)
            except StopIteration:
                pass
        return out[0] if len(out) == 1 else tuple(out)

    def _outputs_for(self, flat):
        """The result structure of the first trace whose inputs take `flat` (the engine's choice)."""
        for trace in self._traces:
            specs = trace["inputs"]
            if len(specs) == len(flat) and all(
                    t.dtype.name == dtype and (dims is None or (t.shape.rank == len(dims) and all(
                        d is None or d == have for d, have in zip(dims, t.shape.as_list()))))
                    for t, (dtype, dims) in zip(flat, specs)):
                return trace["outputs"]
        return None

    def _positional(self, args, kwargs):
        if self._params is None:
            raise TypeError(f"restored function '{self.name}' takes its arguments by position")
        values = dict(zip(self._params, args))
        for k, v in kwargs.items():
            if k not in self._params:
                raise TypeError(f"restored function '{self.name}' got an unexpected keyword argument {k!r} "
                                f"(its parameters: {', '.join(self._params)})")
            if k in values:
                raise TypeError(f"restored function '{self.name}' got multiple values for argument {k!r}")
            values[k] = v
        missing = [p for p in self._params if p not in values]
        if missing:
            raise TypeError(f"restored function '{self.name}' missing required argument {missing[0]!r}")
        return tuple(values[p] for p in self._params)

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
    """A serving signature: keyword inputs by name in, a dict of named outputs out (a
    function's dict keeps its keys; other results are output_0, output_1...)."""

    def __init__(self, name, core, output_names=None, timeout=None, composites=None):
        self._name = name
        self._core = core
        self._timeout = timeout  # seconds per call (kiln.onnx.import_model's), or None
        self.structured_input_signature = ((), {s.name: s for s in map(_spec, core.inputs())})
        outputs = list(map(_spec, core.outputs()))
        self._renames = None
        if output_names and len(output_names) == len(outputs):
            self._renames = {s.name: key for s, key in zip(outputs, output_names)}
            outputs = [TensorSpec(s.shape, s.dtype, self._renames[s.name]) for s in outputs]
        self.structured_outputs = {s.name: s for s in outputs}
        # Composite outputs: their spec, rebuilt from the components `name`, `name_1`, ...
        self._composites = {k: _composite.spec_from_json(v) for k, v in (composites or {}).items()}
        for key, spec in self._composites.items():
            for i in range(len(spec._component_specs())):
                self.structured_outputs.pop(key if i == 0 else f"{key}_{i}", None)
            self.structured_outputs[key] = spec

    def __call__(self, *args, **kwargs):
        if args:
            raise TypeError(f"signature '{self._name}' takes its inputs by keyword: "
                            f"{', '.join(self.structured_input_signature[1])}")
        inputs = {}
        for k, v in kwargs.items():
            spec = self.structured_input_signature[1].get(k)
            inputs[k] = _convert(v, spec.dtype if spec is not None else None)
        out = self._core(inputs, self._timeout)
        if self._renames:
            out = {self._renames.get(k, k): v for k, v in out.items()}
        for key, spec in self._composites.items():
            names = [key if i == 0 else f"{key}_{i}" for i in range(len(spec._component_specs()))]
            out[key] = spec._from_components([out.pop(n) for n in names])
        return out

    def __repr__(self):
        return f"<signature {self._name}: {self._core.function.name}>"


class _LoadedObject:
    """A loaded object of the saved tree: its variables, functions and children as
    attributes, as TF's loaded objects have them; callable when its __call__ was saved."""

    def __init__(self, core, info=None, path=""):
        info = {} if info is None else info
        functions = info.get("functions", {})
        for name, var in core.own_variables():
            setattr(self, name, var)
        for name, fn in core.functions():
            setattr(self, name, _LoadedFunction(fn, functions.get(path + name)))
        for name, child in core.children():
            setattr(self, name, _LoadedObject(child, info, path + name + "/"))
        self._core = core

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError(f"'{type(self).__name__}' object is not callable: the saved object had no "
                            "kiln.function __call__")
        return fn(*args, **kwargs)

    @property
    def variables(self):
        return tuple(self._core.variables())

    @property
    def trainable_variables(self):
        return tuple(v for v in self._core.variables() if v.trainable)


class _Loaded(_LoadedObject):
    def __init__(self, core, info=None):
        info = {} if info is None else info
        super().__init__(core, info)
        outputs = info.get("signature_outputs", {})
        composites = info.get("signature_composites", {})
        self.signatures = {name: _LoadedSignature(name, s, outputs.get(name), composites=composites.get(name))
                           for name, s in core.signatures().items()}


def _read_python_info(export_dir):
    try:
        with open(os.path.join(export_dir, _PYTHON_INFO)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}  # saved by C++ or an older Kiln: positional calls, flat results


def load(export_dir, tags=None, options=None):
    """tf.saved_model.load: the saved object tree, with `signatures`."""
    export_dir = str(export_dir)
    return _Loaded(_C.saved_model_load(export_dir), _read_python_info(export_dir))


# TF's tag and signature constants (Kiln's SavedModels use the same names). TF's file-name constants
# (SAVED_MODEL_FILENAME_PB, VARIABLES_DIRECTORY, ...) describe TF's directory layout, not Kiln's, and are left out.
SERVING, TRAINING, GPU, TPU = "serve", "train", "gpu", "tpu"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_INPUTS, CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES = "inputs", "classes", "scores"
PREDICT_METHOD_NAME, PREDICT_INPUTS, PREDICT_OUTPUTS = "tensorflow/serving/predict", "inputs", "outputs"
REGRESS_METHOD_NAME, REGRESS_INPUTS, REGRESS_OUTPUTS = "tensorflow/serving/regress", "inputs", "outputs"


def contains_saved_model(export_dir):
    """Whether export_dir holds a SavedModel Kiln can load (its saved_model.json)."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), "saved_model.json"))
