"""kiln.function: trace Python code into a graph, one per input signature.

Trace keys follow TensorFlow's rules (tensors by dtype and shape, Python
scalars and strings by value, containers by structure, variables by spec,
other objects by identity); the cache, shape relaxation, input_signature and
the retrace log are the engine's (the same as C++'s kiln::function)."""
import functools
import inspect
import weakref

from . import _C
from . import dtypes as _dtypes
from .tensor_shape import TensorShape


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
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"


def _spec_from_engine(entry):
    dims, enum, rank = entry
    return TensorSpec(None if rank < 0 else [None if d < 0 else d for d in dims], _dtypes._BY_ENUM[enum])


class _GraphDef:
    def __init__(self, n):
        self.node = [None] * n


class FuncGraph:
    """A traced graph: printable (`str`), drawable (`to_dot`), countable."""

    def __init__(self, core):
        self._core = core

    def num_nodes(self):
        return self._core.num_nodes()

    def as_graph_def(self):
        return _GraphDef(self._core.num_nodes())

    def to_string(self):
        return self._core.graph_text()

    def to_dot(self):
        return self._core.graph_dot()

    __str__ = to_string


class ConcreteFunction:
    """One traced graph: callable with strict dtype and shape checks."""

    def __init__(self, core, template, python_function=None):
        self._core = core
        self._template = template
        self._python_function = python_function

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = _bind(self._python_function, args, kwargs) if self._python_function else args
        return self._core.call(self._template, tuple(args))

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


class Function:
    """What kiln.function returns (tf.function's Function)."""

    def __init__(self, python_function, input_signature=None, autograph=True, jit_compile=None,
                 reduce_retracing=False, name=None, exact_shapes=False, verify=False, max_cache_entries=64):
        functools.update_wrapper(self, python_function, updated=())
        self._python_function = python_function
        self._input_signature = None if input_signature is None else list(input_signature)
        self._autograph = autograph
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._name = name or getattr(python_function, "__name__", "function")
        self._options = dict(exact_shapes=exact_shapes, verify=verify, max_cache_entries=max_cache_entries)
        self._converted = None
        self._descriptor_cache = weakref.WeakKeyDictionary()
        self._simple = self._has_simple_signature(python_function)
        self._core = _C.FunctionCore(self._trace, self._input_signature, self._name, exact_shapes, verify,
                                     max_cache_entries, self._arg_names(python_function, self._input_signature))

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
        return _unbind(self._callable(), flat)

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

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
        try:
            return self._core.call(self._flat_args(args, kwargs))
        except _C.InvalidArgumentError as e:
            if self._input_signature is not None and "do not fit its input_signature" in str(e):
                raise InputSignatureError(f"Python inputs incompatible with input_signature: {e}") from None
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
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        core, template = self._core.concrete(self._flat_args(args, kwargs))
        return ConcreteFunction(core, template, self._python_function)

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


def py_function(func, inp, Tout, name=None):
    """tf.py_function: `func` runs on every call (eagerly now, or whenever the graph runs)."""
    single = not isinstance(Tout, (list, tuple))
    touts = [Tout] if single else list(Tout)
    from ._ops import convert_to_tensor
    inputs = [x if isinstance(x, _C.Tensor) else convert_to_tensor(x) for x in inp]
    out = _C.host_function(func, inputs, [_dtypes.as_dtype(t) for t in touts])
    if single:
        return out[0] if out else None
    return out
