"""kiln.function: trace Python code into a graph, one per input signature.

Trace keys follow TensorFlow's rules (tensors by dtype and shape, Python
scalars and strings by value, containers by structure, variables by spec,
other objects by identity); the cache, shape relaxation, input_signature and
the retrace log are the engine's (the same as C++'s kiln::function)."""
import functools
import inspect
import threading
import weakref

import numpy as _np

from . import _C
from . import _composite
from . import _scope
from . import dtypes as _dtypes
from .tensor_shape import TensorShape
from ._nested_spec import NestedSpec, conform_to_tensor_spec


class TensorSpec:
    """tf.TensorSpec(shape, dtype=kiln.float32, name=None)."""
    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self.shape = TensorShape(shape)
        self.dtype = _dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    def _kiln_spec(self):
        rank = self.shape.rank
        dims = [] if rank is None else [-1 if d is None else d for d in self.shape.as_list()]
        return dims, self.dtype._enum, -1 if rank is None else rank

    def is_compatible_with(self, other):
        return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (other.shape, other.dtype,
                                                                                          other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        # As TF prints it (error messages quote the signature).
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


def _spec_from_engine(entry):
    dims, enum, rank = entry
    return TensorSpec(None if rank < 0 else [None if d < 0 else d for d in dims], _dtypes._BY_ENUM[enum])


class _NodeDef:
    """A node of FuncGraph.as_graph_def(): its name, op and inputs, as a GraphDef's NodeDef names them."""

    def __init__(self, name, op, inputs):
        self.name, self.op, self.input = name, op, list(inputs)

    def __repr__(self):
        return f"<NodeDef {self.name} = {self.op}({', '.join(self.input)})>"


class _GraphDef:
    """FuncGraph.as_graph_def(): the graph's nodes (name, op, inputs); printed in a GraphDef's text layout
    (Kiln's nodes carry no attrs)."""

    def __init__(self, nodes):
        self.node = [_NodeDef(*n) for n in nodes]

    def __str__(self):
        lines = []
        for n in self.node:
            lines += ["node {", f'  name: "{n.name}"', f'  op: "{n.op}"'] + [f'  input: "{i}"' for i in n.input] + ["}"]
        return "\n".join(lines) + "\n"


class FuncGraph:
    """A traced graph: printable (`str`), drawable (`to_dot`), countable."""

    def __init__(self, core):
        self._core = core

    def num_nodes(self):
        return self._core.num_nodes()

    def as_graph_def(self):
        return _GraphDef(self._core.graph_nodes())

    def to_string(self):
        return self._core.graph_text()

    def to_dot(self):
        return self._core.graph_dot()

    __str__ = to_string


def _holds_tensors(value, depth=0):
    """Whether an argument is (or holds) a tensor, a variable, a NumPy value or a TensorSpec: a traced input,
    where anything else is a Python value the trace was made for."""
    if isinstance(value, (_C.Tensor, _C.Variable, TensorSpec, _np.ndarray, _np.generic)):
        return True  # NumPy values are tensors to a function, keyed by dtype and shape
    if _composite.is_composite(value) or _composite.is_composite_spec(value):
        return True
    if depth > 32:
        return False
    if isinstance(value, (list, tuple)):
        return any(_holds_tensors(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_holds_tensors(v, depth + 1) for v in value.values())
    return False


def _same_python_value(a, b):
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a plain equality are keyed by identity
        return False


class ConcreteFunction:
    """One traced graph: callable with strict dtype and shape checks. Made by
    get_concrete_function, it takes its tensor arguments alone (positionally in order, or by
    name); a Python argument it was traced for may be passed again only with that value."""

    def __init__(self, core, template, python_function=None, traced_args=None, expand=None):
        self._core = core
        self._template = template
        self._python_function = python_function
        self._traced_args = traced_args
        self._expand = expand  # composite specs of an input_signature -> their components

    def _engine_args(self, values):
        """The call's arguments as the trace takes them: composites as their components."""
        if self._expand is not None:
            values = self._expand(values)
        return _composite.encode_like(values, self._traced_args) if self._traced_args is not None else \
            _composite.encode(values)

    def __call__(self, *args, **kwargs):
        if self._traced_args is not None:
            bound = self._bind_traced(args, kwargs)
            if bound is not None:
                return _composite.decode(self._core.call(self._template, self._engine_args(bound)))
        if kwargs:
            args = _bind(self._python_function, args, kwargs) if self._python_function else args
        return _composite.decode(self._core.call(self._template, self._engine_args(tuple(args))))

    def _bind_traced(self, args, kwargs):
        """The call's arguments in the traced layout, Python values filled in; None when the
        callable's parameters are not plain ones (then the arguments go as given)."""
        try:
            params = list(inspect.signature(self._python_function).parameters.values())
        except (TypeError, ValueError):
            return None
        plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                 inspect.Parameter.KEYWORD_ONLY)
        if any(p.kind not in plain for p in params) or len(params) != len(self._traced_args):
            return None
        names = [p.name for p in params]
        traced = self._traced_args
        inputs = [i for i, v in enumerate(traced) if _holds_tensors(v)]
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise TypeError(f"{self.name}() got an unexpected keyword argument {unknown[0]!r}")
        given = None
        try:  # as the Python function takes them
            structured = inspect.Signature(params).bind_partial(*args, **kwargs).arguments
            given = {names.index(k): v for k, v in structured.items()}
            if any(i not in given for i in inputs) or any(
                    i not in inputs and _holds_tensors(v) for i, v in given.items()):
                given = None
        except TypeError:
            pass
        if given is None:  # the traced inputs alone, positionally
            if len(args) > len(inputs):
                raise TypeError(f"{self.name}() takes {len(inputs)} tensor arguments "
                                f"({', '.join(names[i] for i in inputs)}), got {len(args)}")
            given = dict(zip(inputs, args))
            given.update({names.index(k): v for k, v in kwargs.items()})
        out = []
        for i, name in enumerate(names):
            if i in inputs:
                if i not in given:
                    raise TypeError(f"{self.name}() missing required argument: {name!r}")
                out.append(given[i])
            else:
                if i in given and not _same_python_value(given[i], traced[i]):
                    raise TypeError(f"ConcreteFunction {self.name} was traced with {name}={traced[i]!r}, but was "
                                    f"called with {name}={given[i]!r}: a concrete function takes the Python "
                                    "values it was traced for; trace another with get_concrete_function.")
                out.append(traced[i])
        return tuple(out)

    @property
    def graph(self):
        return FuncGraph(self._core)

    @property
    def name(self):
        return self._core.name

    @property
    def inputs(self):
        return [_spec_from_engine(s) for s in self._core.input_specs()]

    @property
    def outputs(self):
        return [_spec_from_engine(s) for s in self._core.output_specs()]

    @property
    def structured_input_signature(self):
        return tuple(self.inputs), {}

    def pretty_printed_signature(self, verbose=True):
        return self._core.to_string()

    def __repr__(self):
        return f"<ConcreteFunction {self._core.to_string()}>"


def _bind(fn, args, kwargs):
    """The call's arguments in the callable's positional order, defaults filled in."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        if kwargs:
            raise TypeError("kiln.function: keyword arguments need a callable with a signature") from None
        return tuple(args)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    out = []
    for name, param in sig.parameters.items():
        value = bound.arguments.get(name)
        if param.kind == inspect.Parameter.VAR_POSITIONAL:
            out.extend(value or ())
        elif param.kind == inspect.Parameter.VAR_KEYWORD:
            out.append(dict(value or {}))
        else:
            out.append(value)
    return tuple(out)


def _unbind(fn, flat):
    """Calls `fn` with arguments laid out by _bind."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(*flat)
    args, kwargs = [], {}
    it = iter(flat)
    params = list(sig.parameters.values())
    for p in params:
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            n_after = sum(1 for q in params if q.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD))
            rest = list(it)
            args.extend(rest[:len(rest) - n_after])
            it = iter(rest[len(rest) - n_after:])
        elif p.kind == inspect.Parameter.VAR_KEYWORD:
            kwargs.update(next(it))
        elif p.kind == inspect.Parameter.KEYWORD_ONLY:
            kwargs[p.name] = next(it)
        else:
            args.append(next(it))
    return fn(*args, **kwargs)


class InputSignatureError(TypeError, ValueError):
    """Arguments that do not fit a kiln.function's input_signature: TF 2.x raised
    ValueError for this and raises TypeError since 2.13, so code catching either works."""


class VariableCreationError(ValueError, _C.FailedPreconditionError):
    """A kiln.function made variables on a trace after its first: TF's ValueError (and the
    engine's FailedPreconditionError, which Kiln raised before)."""


_tracing = threading.local()


def _tracing_stack():
    stack = getattr(_tracing, "stack", None)
    if stack is None:
        stack = _tracing.stack = []
    return stack


_variable_init = _C.Variable.__init__


def _checked_variable_init(self, *args, **kwargs):
    # TF's rule, raised where the variable is made (so nothing after it in the trace runs): a
    # function may make variables on its first trace only (the engine traces a function that
    # made some once more, to see that it makes none the second time).
    stack = getattr(_tracing, "stack", None)
    if stack and stack[-1]._traced_once:
        fn = stack[-1]
        raise VariableCreationError(
            f"kiln::function '{fn._name}' created variables on trace {fn._trace_number}, after its first trace. "
            "tf.function-decorated function tried to create variables on non-first call.")
    if _scope.current():  # inside tf.name_scope: the scope prefixes the name
        if len(args) >= 3:
            args = args[:2] + (_scope.scoped_variable_name(args[2]),) + args[3:]
        else:
            kwargs["name"] = _scope.scoped_variable_name(kwargs.get("name"))
    _variable_init(self, *args, **kwargs)


_C.Variable.__init__ = _checked_variable_init


def _outputs_to_tensors(value, depth=0):
    """A traced function's result with its Python numbers and strings as tensors, as TF returns
    them (TF's tf.function converts every output but None)."""
    if isinstance(value, (str, bytes, bool, int, float, _np.ndarray, _np.generic)):
        from ._ops import convert_to_tensor
        return convert_to_tensor(value)
    if depth > 32:
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_outputs_to_tensors(v, depth + 1) for v in value))
    if isinstance(value, (list, tuple)):
        items = [_outputs_to_tensors(v, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict) and type(value) is dict:
        return {k: _outputs_to_tensors(v, depth + 1) for k, v in value.items()}
    return value


def _is_dataset_iterator(obj):
    """An iterator that says what it yields (`element_spec`), as tf.data's iterators do."""
    return (hasattr(type(obj), "__next__") and not isinstance(obj, (_C.Tensor, _C.Variable))
            and getattr(obj, "element_spec", None) is not None)


def _with_spec_shapes(tensors, specs):
    """The host function's outputs take the element spec's shapes (a model built on them needs their rank)."""
    for t, spec in zip(tensors, specs):
        shape = getattr(spec, "shape", None)
        if shape is not None and shape.rank is not None:
            t.set_shape(shape)


class _IteratorInGraph:
    """A dataset iterator argument inside a trace: next() pulls the next element when the graph
    runs (a host function), so every call advances the iterator, as TF's iterator ops do. The
    trace is keyed by the iterator's identity, so the graph keeps pulling from this one."""

    def __init__(self, iterator):
        self._iterator = iterator
        self.element_spec = iterator.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        from . import nest
        specs = nest.flatten(self.element_spec)
        iterator = self._iterator

        def pull():
            return [t if isinstance(t, _C.Tensor) else _C.constant(t, None) for t in nest.flatten(next(iterator))]

        flat = py_function(pull, [], [s.dtype for s in specs])
        _with_spec_shapes(flat, specs)
        return nest.pack_sequence_as(self.element_spec, list(flat))

    def get_next(self):
        return next(self)

    def get_next_as_optional(self):
        """The next element as an Optional whose has_value() is a tensor: at the end, False and zeros of the
        element's dtypes (unknown dims 0) in place of the value, as TF's OptionalNone."""
        from . import nest
        from .data._iterator import Optional
        specs = nest.flatten(self.element_spec)
        iterator = self._iterator

        def pull():
            try:
                values = nest.flatten(next(iterator))
            except StopIteration:
                empty = [_np.zeros([d or 0 for d in (s.shape.as_list() if s.shape.rank is not None else [])],
                                   dtype=s.dtype.as_numpy_dtype) for s in specs]
                return [_C.constant(False, None)] + [_C.constant(e, s.dtype._enum) for e, s in zip(empty, specs)]
            return [_C.constant(True, None)] + [t if isinstance(t, _C.Tensor) else _C.constant(t, None)
                                                 for t in values]

        flat = py_function(pull, [], [_dtypes.bool] + [s.dtype for s in specs])
        _with_spec_shapes(flat[1:], specs)
        return Optional(nest.pack_sequence_as(self.element_spec, list(flat[1:])), self.element_spec, flat[0])


def _checked_input_signature(input_signature):
    """input_signature as a list of specs, one per argument, a nested structure of specs as a NestedSpec;
    anything but specs is TF's TypeError, found without recursion (a structure nested 100,000 deep, or
    one that holds itself, is a ValueError rather than a crash)."""
    if input_signature is None:
        return None
    if not isinstance(input_signature, (list, tuple)):
        raise TypeError(f"input_signature must be either a tuple or a list, got {type(input_signature)}.")
    specs = list(input_signature)
    for spec in specs:
        if hasattr(spec, "_kiln_spec") or _composite.is_composite_spec(spec):
            continue
        bad, stack, depth_limit, visits = [], [(spec, 1)], 1000, 0
        while stack:
            item, depth = stack.pop()
            visits += 1
            if isinstance(item, (list, tuple, dict)):
                if depth > depth_limit or visits > 100_000:
                    raise ValueError(f"input_signature is nested more than {depth_limit} deep, or holds itself; "
                                     f"it must be a sequence of TypeSpec objects")
                stack.extend((c, depth + 1) for c in (item.values() if isinstance(item, dict) else item))
            elif not (hasattr(item, "_kiln_spec") or _composite.is_composite_spec(item)):
                bad.append(item)
        if bad:
            raise TypeError(f"input_signature must be a possibly nested sequence of TypeSpec objects, got invalid "
                            f"args {bad[:8]!r} with types {[type(b) for b in bad[:8]]!r}.")
    return [spec if hasattr(spec, "_kiln_spec") or _composite.is_composite_spec(spec) else NestedSpec(spec)
            for spec in specs]


def _signature_text(fn, specs):
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        names = []
    parts = [f"{names[i] if i < len(names) else f'arg{i}'}: {spec!r}" for i, spec in enumerate(specs)]
    return "(" + ", ".join(parts) + ")"


class Function:
    """What kiln.function returns (tf.function's Function)."""

    def __init__(self, python_function, input_signature=None, autograph=True, jit_compile=None,
                 reduce_retracing=False, name=None, exact_shapes=False, verify=False, max_cache_entries=64):
        functools.update_wrapper(self, python_function, updated=())
        self._python_function = python_function
        self._input_signature = _checked_input_signature(input_signature)
        self._autograph = autograph
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._name = name or getattr(python_function, "__name__", "function")
        self._options = dict(exact_shapes=exact_shapes, verify=verify, max_cache_entries=max_cache_entries)
        self._converted = None
        self._traced_once = False
        self._trace_number = 0  # Python traces begun, the engine's check of a first trace included
        self._concrete_cache = {}
        self._descriptor_cache = weakref.WeakKeyDictionary()
        self._simple = self._has_simple_signature(python_function)
        self._returns_composites = False
        # A composite spec in the signature stands for its components, one engine parameter each.
        self._composite_layout = None
        engine_signature = self._input_signature
        if engine_signature is not None and any(_composite.is_composite_spec(s) for s in engine_signature):
            self._composite_layout = list(engine_signature)
            engine_signature = self._expand(engine_signature)
        self._core = _C.FunctionCore(self._trace, engine_signature, self._name, exact_shapes, verify,
                                     max_cache_entries, self._arg_names(python_function, self._input_signature))

    def _expand(self, flat):
        """Arguments laid out for the engine: a composite (or its spec) in a composite spec's place becomes its
        components (or theirs)."""
        out = []
        for i, value in enumerate(flat):
            spec = self._composite_layout[i] if i < len(self._composite_layout) else None
            if spec is not None and _composite.is_composite_spec(spec):
                out.extend(value._component_specs() if _composite.is_composite_spec(value)
                           else spec._to_components(value))
            else:
                out.append(value)
        return tuple(out)

    def _regroup(self, flat):
        """The inverse of _expand inside a trace: the composites rebuilt from their components."""
        out, pos = [], 0
        for spec in self._composite_layout:
            if _composite.is_composite_spec(spec):
                n = len(spec._component_specs())
                out.append(spec._from_components(list(flat[pos:pos + n])))
                pos += n
            else:
                out.append(flat[pos])
                pos += 1
        return tuple(out) + tuple(flat[pos:])

    @staticmethod
    def _arg_names(fn, input_signature):
        """Names for the graph's parameters, one per argument as _bind lays them out: the
        Python parameters' (a TensorSpec's own name first, as in TF)."""
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return []
        names = [p.name for p in params if p.kind != inspect.Parameter.VAR_POSITIONAL]
        if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
            # *args spreads into any number of arguments: only those before it keep names.
            names = [p.name for p in params[:[p.kind for p in params].index(inspect.Parameter.VAR_POSITIONAL)]]
        for i, spec in enumerate(input_signature or ()):
            spec_name = getattr(spec, "name", None)
            if spec_name:
                if i < len(names):
                    names[i] = spec_name
                else:
                    names.append(spec_name)
        if input_signature and any(_composite.is_composite_spec(s) for s in input_signature):
            expanded = []  # one name per component: rt, rt_1, rt_2... (a nested spec's leaves by their names)
            for i, spec in enumerate(input_signature):
                base = names[i] if i < len(names) else f"arg{i}"
                parts = spec._component_specs() if _composite.is_composite_spec(spec) else [spec]
                own = [getattr(p, "name", None) if isinstance(spec, NestedSpec) else None for p in parts]
                expanded.extend(own[k] or (base if k == 0 else f"{base}_{k}") for k in range(len(parts)))
            names = expanded
        return names

    @staticmethod
    def _has_simple_signature(fn):
        """Number of positional parameters when the callable has only those (a call with that many positional
        arguments needs no binding), else None."""
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return None
        if any(p.kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
               for p in params):
            return None
        return len(params)

    def _callable(self):
        if self._converted is None:
            fn = self._python_function
            if self._autograph:
                try:
                    from . import autograph
                    fn = autograph._convert(fn)
                except ImportError:
                    pass
            self._converted = fn
        return self._converted

    def _trace(self, *flat):
        self._trace_number += 1
        stack = _tracing_stack()
        stack.append(self)
        from .gradient import nested_graph  # custom gradients ask which graph a tape belongs to
        try:
            with nested_graph():
                if self._composite_layout is not None:
                    flat = self._regroup(flat)
                flat = _composite.decode(flat)
                flat = tuple(_IteratorInGraph(a) if _is_dataset_iterator(a) else a for a in flat)
                out = _outputs_to_tensors(_unbind(self._callable(), flat))
                if _composite.holds_composites(out):
                    self._returns_composites = True
                    out = _composite.encode(out)
        finally:
            stack.pop()
        self._traced_once = True
        return out

    def _conform(self, flat, args, kwargs):
        """input_signature: Python values become tensors of their spec's dtype (TF converts
        them before matching); a value that does not fit raises, quoting the signature."""
        specs = self._input_signature
        if len(flat) > len(specs):
            raise InputSignatureError(
                f"Python inputs incompatible with input_signature: {self._name} takes {len(specs)} arguments by "
                f"its signature {_signature_text(self._python_function, specs)}, got {len(flat)}")
        out = list(flat)
        for i, (value, spec) in enumerate(zip(flat, specs)):
            if _composite.is_composite_spec(spec):
                try:
                    out[i] = spec._conform(value)
                except (TypeError, ValueError, _C.InvalidArgumentError) as e:
                    raise InputSignatureError(self._signature_error(args, kwargs, str(e))) from None
                continue
            if not isinstance(spec, TensorSpec):
                continue
            try:
                out[i] = conform_to_tensor_spec(value, spec)
            except ValueError as e:
                raise InputSignatureError(self._signature_error(args, kwargs, str(e))) from None
        return tuple(out)

    def _signature_error(self, args, kwargs, why):
        return (f"Python inputs incompatible with input_signature: {why}\n Binding inputs to tf.function "
                f"`{self._name}` failed. Received args: {tuple(args)!r} and kwargs: {dict(kwargs)!r} for signature: "
                f"{_signature_text(self._python_function, self._input_signature)}.")

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return tuple(s.structure if isinstance(s, NestedSpec) else s for s in self._input_signature) \
            if self._input_signature is not None else None

    @property
    def function_spec(self):
        return inspect.signature(self._python_function)

    def _flat_args(self, args, kwargs):
        if not kwargs and self._simple == len(args):
            return args
        return _bind(self._python_function, args, kwargs)

    def __call__(self, *args, **kwargs):
        if _C.functions_run_eagerly():
            return self._python_function(*args, **kwargs)
        if self in getattr(_tracing, "stack", ()):
            # A recursive call while this function traces: its body runs inline in the trace, as
            # TF traces the inner call again (Python values end; a tensor recurses until Python's limit).
            return self._callable()(*args, **kwargs)
        try:
            flat = self._flat_args(args, kwargs)
        except TypeError as e:
            if self._input_signature is None:
                raise
            raise InputSignatureError(self._signature_error(args, kwargs, str(e))) from None
        if self._input_signature is not None:
            flat = self._conform(flat, args, kwargs)
            if self._composite_layout is not None:
                flat = self._expand(flat)
        if _composite.holds_composites(flat):
            flat = _composite.encode(flat)
        try:
            result = self._core.call(flat)
            return _composite.decode(result) if self._returns_composites else result
        except _C.InvalidArgumentError as e:
            if self._input_signature is not None and "do not fit its input_signature" in str(e):
                raise InputSignatureError(self._signature_error(args, kwargs, str(e))) from None
            raise

    def __get__(self, instance, owner=None):
        # A method: one Function (and cache) per instance, as TF does.
        if instance is None:
            return self
        bound = self._descriptor_cache.get(instance)
        if bound is None:
            method = self._python_function.__get__(instance, owner)
            bound = Function(method, self._input_signature, self._autograph, self._jit_compile,
                             self._reduce_retracing, self._name, **self._options)
            bound._unbound = self
            self._descriptor_cache[instance] = bound
        return bound

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (TensorSpecs, tensors or Python values); the same
        ConcreteFunction object each time the same trace is asked for."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        flat = self._flat_args(args, kwargs)
        expand = self._expand if self._composite_layout is not None else None
        core, template = self._core.concrete(_composite.encode(expand(flat) if expand else flat))
        python_values = tuple(None if _holds_tensors(v) else (type(v).__name__, repr(v)) for v in flat)
        # The engine's signature text (the relaxed specs it traced for) and the Python values.
        key = (core.to_string(), python_values)
        concrete = self._concrete_cache.get(key)
        if concrete is None:
            concrete = self._concrete_cache[key] = ConcreteFunction(core, template, self._python_function, flat,
                                                                    expand)
        return concrete

    def experimental_get_tracing_count(self):
        return self._core.tracing_count()

    def tracing_count(self):
        return self._core.tracing_count()

    def retrace_log(self):
        return self._core.retrace_log()

    def cache_info(self):
        return self._core.cache_info()

    def expect_max_traces(self, n):
        self._core.expect_max_traces(n)

    def concrete_functions(self):
        return [ConcreteFunction(c, t, self._python_function) for c, t in self._core.concrete_functions()]

    def pretty_printed_concrete_signatures(self, verbose=True):
        return "\n\n".join(c.pretty_printed_signature() for c in self.concrete_functions())

    def __repr__(self):
        return f"<kiln.function {self._name}>"


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None, experimental_follow_type_hints=None,
             name=None, exact_shapes=False, verify=False):
    """tf.function. `jit_compile` is accepted and ignored (every graph is compiled by Kiln's passes);
    `reduce_retracing` is always on in Kiln's sense (shapes relax by themselves; `exact_shapes=True` turns it
    off). `verify=True` runs every call eagerly too and compares (Kiln's own)."""
    def decorate(fn):
        return Function(fn, input_signature=input_signature, autograph=autograph, jit_compile=jit_compile,
                        reduce_retracing=reduce_retracing, name=name, exact_shapes=exact_shapes, verify=verify)
    if func is None:
        return decorate
    return decorate(func)


def py_function(func=None, inp=None, Tout=None, name=None):
    """tf.py_function: `func` runs on every call (eagerly now, or whenever the graph runs).
    Without `func` (`@tf.py_function(Tout=...)`), a decorator: the function's call arguments
    are its `inp`."""
    if func is None:
        def decorate(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                return py_function(fn, list(args), Tout, name)
            return wrapper
        return decorate
    if inp is None:
        raise TypeError("py_function() needs `inp`, the list of the function's inputs")
    if Tout is None:
        raise TypeError("py_function() needs `Tout`, the dtype (or list of dtypes) of what it returns")
    single = not isinstance(Tout, (list, tuple))
    touts = [Tout] if single else list(Tout)
    from ._ops import convert_to_tensor
    inputs = [x if isinstance(x, _C.Tensor) else convert_to_tensor(x) for x in inp]
    out = _C.host_function(func, inputs, [_dtypes.as_dtype(t) for t in touts])
    if single:
        return out[0] if out else None
    return out
