"""The run-time side of AutoGraph (what converted code calls as `ag__.*`).

Each statement decides when it runs: a condition that is a kiln tensor while a
function is traced builds `kiln.cond` / `kiln.while_loop` / one dataset loop;
anything else runs as the Python statement it was. kiln is imported lazily so the
converter itself needs no engine."""
import functools
import inspect
import types

_kiln = None
_C = None
_BUILTIN = type(len)
_ENUMERATE = inspect.signature(lambda iterable, start=0: None)  # enumerate's parameters


def _k():
    global _kiln, _C
    if _kiln is None:
        import kiln
        from kiln import _C as c
        _kiln, _C = kiln, c
    return _kiln


class Undefined:
    """The value of a variable that has not been assigned yet (Python would raise
    UnboundLocalError on reading it)."""
    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        self.symbol_name = symbol_name

    def __repr__(self):
        return f"<undefined '{self.symbol_name}'>"

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(f"local variable '{self.symbol_name}' is used before it is assigned a value")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._fail()

    __bool__ = __call__ = __iter__ = __len__ = __getitem__ = __add__ = __radd__ = __sub__ = __rsub__ = _fail
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __neg__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = __matmul__ = __index__ = __int__ = __float__ = _fail


def ld(value):
    """A read of a variable that may not be assigned yet: Python's error if it is not."""
    if isinstance(value, Undefined):
        raise UnboundLocalError(f"cannot access local variable '{value.symbol_name}' where it is not associated "
                                "with a value")
    return value


class UndefinedReturnValue:
    """The return value of a function before a `return` ran (None to Python)."""
    __slots__ = ()

    def __repr__(self):
        return "<no return value>"


def retval(value):
    """What the function returns: None when no return statement ran."""
    return None if isinstance(value, UndefinedReturnValue) else value


# ---- helpers -------------------------------------------------------------------

def _is_tensor(x):
    _k()
    return isinstance(x, (_C.Tensor, _C.Variable))


def _tracing():
    _k()
    return _C.control_flow_intercepted()


def _graph_cond(c):
    """A condition that needs a graph op: a tensor while tracing."""
    return _is_tensor(c) and _tracing()


def _verify_condition(c, tag):
    """TF's check of a tensor condition: a bool scalar (or one element), else ValueError."""
    hint = "; to check for None, use `is not None`"
    if c.dtype != _k().bool:
        raise ValueError(f"condition of {tag} expected to be `tf.bool` scalar, got {c}; to use as boolean "
                         f"Tensor, use `tf.cast`{hint}")
    dims = c.shape.dims
    if dims:
        known = 1
        for d in dims:
            known *= 1 if d is None else d
        if known > 1:
            raise ValueError(f"condition of {tag} expected to be `tf.bool` scalar, got {c}{hint}")
    return c


def _is_ta(x):
    _k()
    return isinstance(x, _C.TensorArray)


def _tensor_like(v):
    """Can travel through a graph cond or loop: tensors, TensorArrays, Python numbers,
    and tuples/lists/dicts of those."""
    if isinstance(v, (bool, int, float)) or _is_tensor(v) or _is_ta(v):
        return True
    if isinstance(v, (tuple, list)):
        return len(v) > 0 and all(_tensor_like(x) for x in v)
    if isinstance(v, dict):
        return len(v) > 0 and all(_tensor_like(x) for x in v.values())
    return False


def _dtype_name(v):
    if _is_tensor(v):
        return v.dtype.name
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int32"
    if isinstance(v, float):
        return "float32"
    return None


def _read(get_state, names):
    if get_state is None:
        return ()
    try:
        return tuple(get_state())
    except NameError:
        # Some variable is not bound yet: read the closure cells one by one.
        cells = dict(zip(get_state.__code__.co_freevars, get_state.__closure__ or ()))
        out = []
        for n in names:
            try:
                out.append(cells[n].cell_contents)
            except (KeyError, ValueError):
                out.append(Undefined(n))
        return tuple(out)


def _write(set_state, values):
    if set_state is not None:
        set_state(tuple(values))


def _same_python_value(a, b):
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(a, (bool, int, float, str, bytes)):
        return False
    return a == b


# ---- if ------------------------------------------------------------------------

def if_stmt(cond, body, orelse=None, get_state=None, set_state=None, symbol_names=(), nouts=None):
    """`if cond: body() else: orelse()`; a graph cond when `cond` is a tensor while tracing.
    The state is every variable the branches assign; the first `nouts` are the cond's outputs."""
    if _graph_cond(cond):
        _verify_condition(cond, "if statement")
        names = tuple(symbol_names)
        _tf_if(cond, body, orelse, get_state, set_state, names, len(names) if nouts is None else nouts)
    elif cond:
        body()
    elif orelse is not None:
        orelse()


def _tf_if(cond, body, orelse, get_state, set_state, all_names, nouts):
    kiln = _k()
    init = _read(get_state, all_names)
    names = all_names[:nouts]
    seen = {}

    def branch(fn, which):
        def run():
            _write(set_state, init)
            if fn is not None:
                fn()
            values = _read(get_state, all_names)[:nouts]
            kinds = [_kind(v) for v in values]
            if which == "main":
                seen["main"] = (values, kinds)
            else:
                _check_branches(names, *seen["main"], values, kinds)
            seen[which] = (values, kinds)
            return tuple(v for v, k in zip(values, kinds) if k == "tensor")
        return run

    outs = kiln.cond(cond, branch(body, "main"), branch(orelse, "else"))
    outs = iter(outs if isinstance(outs, (tuple, list)) else (() if outs is None else (outs,)))
    (mv, mk), (ev, _) = seen["main"], seen["else"]
    final = []
    for name, a, b, k in zip(names, mv, ev, mk):
        if k == "undefined":
            final.append(Undefined(name))
        elif k == "python":
            final.append(a)
        else:
            out = next(outs)
            final.append(a if _same_python_value(a, b) and isinstance(a, (bool, int, float)) else out)
    _write(set_state, tuple(final) + init[nouts:])


def _kind(v):
    if isinstance(v, Undefined):
        return "undefined"
    return "tensor" if _tensor_like(v) else "python"


def _check_branches(names, mv, mk, ev, ek):
    for name, a, ka, b, kb in zip(names, mv, mk, ev, ek):
        if ka == kb == "undefined":
            continue
        ra, rb = isinstance(a, UndefinedReturnValue), isinstance(b, UndefinedReturnValue)
        if ra != rb:
            raise ValueError(f"the {'main' if ra else 'else'} branch must also have a return statement.")
        if ka == "undefined" or kb == "undefined":
            raise ValueError(f"'{name}' must also be initialized in the {'main' if ka == 'undefined' else 'else'} "
                             "branch")
        if ka == kb == "python":
            if a is b or _same_python_value(a, b):
                continue
        if a is None or b is None:
            if a is None and b is None:
                continue
            raise ValueError(f"'{name}' is None at the end of the {'main' if a is None else 'else'} branch")
        if ka != kb or ka == "python":
            raise TypeError(f"'{name}' must be a tensor, or the same Python value, at the end of both branches of "
                            f"a conditional on a tensor: it is {_describe(a)} in the main branch and {_describe(b)} "
                            "in the else branch")
        da, db = _dtype_name(a), _dtype_name(b)
        if da is not None and db is not None and da != db:
            raise TypeError(f"'{name}' has dtype {da} in the main branch, but dtype {db} in the else branch")


def _describe(v):
    if _is_tensor(v):
        return f"a {v.dtype.name} tensor"
    return f"a Python {type(v).__name__} ({v!r})" if isinstance(v, (str, bytes, int, float)) else \
        f"a Python {type(v).__name__}"


def if_exp(cond, if_true, if_false, expr_repr=None):
    """`if_true() if cond else if_false()`."""
    if _graph_cond(cond):
        _verify_condition(cond, "if expression")
        return _k().cond(cond, if_true, if_false)
    return if_true() if cond else if_false()


# ---- logical operators ---------------------------------------------------------

def and_(a, b):
    """`a and b()`, lazy; a graph cond when `a` is a tensor while tracing."""
    if _graph_cond(a):
        return _k().cond(a, b, lambda: a)
    return a and b()


def or_(a, b):
    if _graph_cond(a):
        return _k().cond(a, lambda: a, b)
    return a or b()


def not_(a):
    if _is_tensor(a):
        return _k().logical_not(a)
    return not a


def not_any(*flags):
    """None of the loop's flags (break_, do_return) is set."""
    result = True
    for f in flags:
        if _is_tensor(f):
            nf = _k().logical_not(f)
            result = nf if result is True else _k().logical_and(result, nf)
        elif f:
            return False
    return result


# ---- assert --------------------------------------------------------------------

def assert_stmt(expression, message=None):
    """`assert expression, message()`; a graph assertion (checked on every call) for a tensor."""
    if _is_tensor(expression):
        data = [message() if message is not None else "Assertion failed"]
        _k().debugging.Assert(expression, data)
        return
    if not expression:
        raise AssertionError(message() if message is not None else None)


# ---- loops ---------------------------------------------------------------------

_MAX_PYTHON_ITERATIONS = None


def _loop_init(names, values):
    kiln = _k()
    out = []
    for name, v in zip(names, values):
        _check_loop_value(name, v, True)
        out.append(_numbers_to_tensors(kiln, v))
    return out


def _check_loop_value(name, v, before):
    if isinstance(v, UndefinedReturnValue):
        raise ValueError("return statements are not supported inside a loop whose condition is a tensor (a graph "
                         "loop): assign the result to a variable, break, and return it after the loop.")
    if isinstance(v, Undefined):
        raise ValueError(f"'{name}' must be defined before the loop.")
    if v is None:
        raise ValueError(f"'{name}' may not be None before the loop." if before else
                         f"'{name}' is None at the end of the iteration.")
    if not _tensor_like(v):
        where = "before a loop" if before else "at the end of an iteration of a loop"
        raise TypeError(f"'{name}' is {_describe(v)} {where} whose condition is a tensor; the variables such a loop "
                        "changes must be tensors (or Python numbers, which become tensors).")


def _numbers_to_tensors(kiln, v):
    if isinstance(v, (bool, int, float)):
        return kiln.constant(v)
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return tuple(_numbers_to_tensors(kiln, x) for x in v)
    if isinstance(v, list):
        return [_numbers_to_tensors(kiln, x) for x in v]
    if isinstance(v, dict):
        return {k: _numbers_to_tensors(kiln, x) for k, x in v.items()}
    return v


def _check_iteration(names, before, after, invariants, check_shapes=True):
    kiln = _k()
    out = []
    for name, b, a, inv in zip(names, before, after, invariants):
        _check_loop_value(name, a, False)
        if _is_tensor(b) and (_is_tensor(a) or isinstance(a, (bool, int, float))):
            db, da = _dtype_name(b), _dtype_name(a)
            if da != db:
                raise TypeError(f"'{name}' has dtype {db} before the loop, but dtype {da} after one iteration")
            if _is_tensor(a) and check_shapes:
                sb = b.shape if inv is None else kiln.TensorShape(inv)
                if not sb.is_compatible_with(a.shape) or (inv is None and sb.rank != a.shape.rank):
                    raise ValueError(f"'{name}' has shape {b.shape} before the loop, but shape {a.shape} after one "
                                     "iteration. Use kiln.autograph.experimental.set_loop_options to set shape "
                                     "invariants.")
        out.append(_numbers_to_tensors(kiln, a) if not _is_tensor(b) or not isinstance(a, (bool, int, float))
                   else kiln.cast(kiln.constant(a), b.dtype))
    return out


def _invariants(opts, names, raw_init, init):
    """shape_invariants given as (value, shape) pairs, matched to loop variables by
    identity; each must fit its variable's shape on entry (kiln.while_loop's rule, said
    with the variable's name)."""
    pairs = (opts or {}).get("shape_invariants") or ()
    out = []
    for name, raw, v in zip(names, raw_init, init):
        shape = None
        for value, s in pairs:
            if value is raw:
                shape = s
        if shape is not None and _is_tensor(v) and not _k().TensorShape(shape).is_compatible_with(v.shape):
            raise ValueError(f"'{name}' has shape {v.shape} before the loop, which does not fit its shape invariant "
                             f"{_k().TensorShape(shape)}.")
        out.append(shape)
    return out


def _tf_loop(test_fn, body_fn, names, get_state, set_state, opts, counter=None):
    """A kiln.while_loop over the state (and a counter for for-loops): `counter` is
    (initial, step(i) -> next i, test(i) -> tensor)."""
    kiln = _k()
    raw = _read(get_state, names)
    init = _loop_init(names, raw)
    invariants = _invariants(opts, names, raw, init)
    lead = [] if counter is None else [counter[0]]

    def cond(*vars_):
        state = vars_[len(lead):]
        _write(set_state, state)
        c = test_fn(*vars_[:len(lead)])
        if not _is_tensor(c):
            c = kiln.constant(bool(c))
        return c

    def body(*vars_):
        state = vars_[len(lead):]
        _write(set_state, state)
        body_fn(*vars_[:len(lead)])
        after = _check_iteration(names, state, _read(get_state, names), invariants)
        nxt = [counter[1](vars_[0])] if counter is not None else []
        return tuple(nxt + after)

    shape_invariants = None
    if any(s is not None for s in invariants):
        shape_invariants = [None] * len(lead) + [None if s is None else kiln.TensorShape(s) for s in invariants]
    loop_vars = tuple(lead + list(init))
    if not loop_vars:
        raise ValueError("a loop whose condition is a tensor must change at least one variable")
    kw = {}
    if opts and opts.get("maximum_iterations") is not None:
        kw["maximum_iterations"] = opts["maximum_iterations"]
    result = kiln.while_loop(cond, body, loop_vars, shape_invariants=shape_invariants, **kw)
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    _write(set_state, result[len(lead):])


def while_stmt(test, body, get_state=None, set_state=None, symbol_names=(), opts=None):
    """`while test(): body()`; a graph loop when the test is a tensor while tracing."""
    names = tuple(symbol_names)
    c = _first_test(test)
    while True:
        if _graph_cond(c):
            _verify_condition(c, "while loop")
            _tf_loop(lambda: test(), body, names, get_state, set_state, opts)
            return
        if not c:
            return
        body()
        c = test()


def _first_test(test):
    """The loop test's first value. While tracing it is evaluated in a scratch graph
    that is then dropped: when it is a tensor the loop's cond graph evaluates it again,
    and evaluating it in the function's own graph too would leave dead nodes there (a
    converted loop's graph would be larger than the hand-written kiln.while_loop's)."""
    if not _tracing():
        return test()
    kiln = _k()
    seen = []

    def probe():
        seen.append(test())

    kiln.function(probe, autograph=False).get_concrete_function()
    return seen[0]


class _Range:
    """The bounds of `kiln.range(...)` in a for statement while tracing: the loop
    counts without materializing the range tensor."""
    __slots__ = ("start", "limit", "delta", "dtype")

    def __init__(self, start, limit, delta, dtype):
        self.start, self.limit, self.delta, self.dtype = start, limit, delta, dtype


def _tensor_range(f, args, kwargs):
    """Python's range given a tensor bound is kiln.range, as in TF (py_builtins.range_)."""
    return f is range and not kwargs and len(args) <= 3 and any(_is_tensor(a) for a in args)


def for_iter(f, args, kwargs=None):
    """The iterated expression of a for statement that is a call."""
    kiln = _k()
    if _tensor_range(f, args, kwargs) and _tracing():
        limits = (0,) + tuple(args) if len(args) == 1 else tuple(args)
        return _Range(*(limits + (1,))[:3], None)
    data = getattr(kiln, "data", None)
    if f is enumerate and args and data is not None and isinstance(args[0], data.Dataset) and _tracing():
        try:
            bound = _ENUMERATE.bind(*args, **(kwargs or {}))
        except TypeError:
            return converted_call(f, args, kwargs)  # Python's own error
        return _Enumerated(bound.arguments["iterable"], bound.arguments.get("start", 0))
    if f is kiln.range and _tracing():
        try:
            bound = inspect.signature(kiln.range).bind(*args, **(kwargs or {}))
        except TypeError:
            return converted_call(f, args, kwargs)
        a = bound.arguments
        start, limit, delta = a.get("start"), a.get("limit"), a.get("delta", 1)
        if limit is None:
            start, limit = 0, start
        return _Range(start, limit, delta, a.get("dtype"))
    return converted_call(f, args, kwargs)


def _range_dtype(r):
    kiln = _k()
    if r.dtype is not None:
        return kiln.as_dtype(r.dtype)
    for b in (r.start, r.limit, r.delta):
        if _is_tensor(b):
            return b.dtype
    if any(isinstance(b, float) for b in (r.start, r.limit, r.delta)):
        return kiln.float32
    return kiln.int32


def for_stmt(iter_, extra_test, body, get_state=None, set_state=None, symbol_names=(), opts=None):
    """`for x in iter_: body(x)`, stopping early once `extra_test()` is false.
    kiln.range / a tensor / a TensorArray while tracing: one kiln.while_loop;
    a kiln.data.Dataset while tracing: one dataset loop; anything else: Python."""
    kiln = _k()
    names = tuple(symbol_names)
    if isinstance(iter_, _Range):
        return _range_loop(iter_, extra_test, body, get_state, set_state, names, opts)
    data = getattr(kiln, "data", None)
    if _tracing() and isinstance(iter_, kiln.distribute.DistributedDataset):
        iter_ = iter_._kiln_dataset  # this worker's batches: one dataset loop, as TF's distributed loop
    if data is not None and isinstance(iter_, data.Dataset) and _tracing():
        return _dataset_loop(iter_, extra_test, body, get_state, set_state, names)
    if isinstance(iter_, _Enumerated):
        return _dataset_loop(iter_.dataset, extra_test, body, get_state, set_state, names, iter_.start)
    if _tracing():
        if _is_tensor(iter_):
            bounds = kiln._range_bounds(iter_)
            if bounds is not None:
                r = _Range(*bounds, iter_.dtype)
                return _range_loop(r, extra_test, body, get_state, set_state, names, opts)
            n = iter_.shape[0] if iter_.shape.rank else None
            if iter_.shape.rank == 0:
                raise TypeError("Cannot iterate over a scalar tensor.")
            n = kiln.shape(iter_)[0] if n is None else n
            r = _Range(0, n, 1, kiln.int32)
            return _range_loop(r, extra_test, lambda i: body(iter_[i]), get_state, set_state, names, opts)
        if _is_ta(iter_):
            r = _Range(0, iter_.size(), 1, kiln.int32)
            return _range_loop(r, extra_test, lambda i: body(iter_.read(i)), get_state, set_state, names, opts)
    if _is_ta(iter_):
        iter_ = [iter_.read(i) for i in range(int(iter_.size()))]
    _python_for(iter(iter_), extra_test, body, get_state, set_state, names)


def _python_for(it, extra_test, body, get_state, set_state, names):
    while True:
        if extra_test is not None:
            ok = extra_test()
            if _graph_cond(ok):
                # A break on a tensor: the remaining iterations each run under a cond.
                for item in it:
                    if_stmt(ok, functools.partial(body, item), None, get_state, set_state, names)
                    ok = extra_test()
                    if not _is_tensor(ok) and not ok:
                        return
                return
            if not ok:
                return
        try:
            item = next(it)
        except StopIteration:
            return
        body(item)


def _range_loop(r, extra_test, body, get_state, set_state, names, opts):
    kiln = _k()
    dtype = _range_dtype(r)
    start = kiln.cast(r.start, dtype) if _is_tensor(r.start) else kiln.constant(r.start, dtype)
    limit = kiln.cast(r.limit, dtype) if _is_tensor(r.limit) and r.limit.dtype != dtype else r.limit
    delta = kiln.cast(r.delta, dtype) if _is_tensor(r.delta) and r.delta.dtype != dtype else r.delta

    def in_range(i):
        if isinstance(delta, (int, float)):
            return i < limit if delta > 0 else i > limit
        return kiln.logical_or(kiln.logical_and(delta > 0, i < limit), kiln.logical_and(delta < 0, i > limit))

    def test(i):
        c = in_range(i)
        if extra_test is not None:
            e = extra_test()
            if _is_tensor(e):
                c = kiln.logical_and(c, e)
            elif not e:
                c = kiln.constant(False)
        return c

    _tf_loop(test, body, names, get_state, set_state, opts, counter=(start, lambda i: i + delta, test))


class _Enumerated:
    """`enumerate(dataset, start)` in a for statement while tracing: one dataset loop that
    carries the count (TF's loop over `dataset.enumerate(start)`; int64 as there)."""
    __slots__ = ("dataset", "start")

    def __init__(self, dataset, start):
        self.dataset, self.start = dataset, start


def _dataset_loop(ds, extra_test, body, get_state, set_state, names, count_from=None):
    kiln = _k()
    raw = _read(get_state, names)
    init = _loop_init(names, raw)
    counts = count_from is not None
    count0 = (kiln.cast(count_from, kiln.int64) if _is_tensor(count_from) else kiln.constant(count_from, kiln.int64),) \
        if counts else ()

    def reduce_fn(state, *element):
        element = element[0] if len(element) == 1 else tuple(element)
        state = tuple(state) if isinstance(state, (tuple, list)) else (state,)
        if counts:
            count, state = state[0], state[1:]
            element = (count, element)
        _write(set_state, state)
        body(element)  # keep_going held before this element was pulled
        # TF checks no shapes here (check_shapes=False): the dataset's reduce relaxes the state's shape.
        out = tuple(_check_iteration(names, state, _read(get_state, names), [None] * len(names), False))
        return (count + 1,) + out if counts else out

    keep_going = None
    if extra_test is not None:
        def keep_going(state):
            # The loop pulls no more elements once a break (or return) is taken, so a
            # loop over an infinite dataset ends, as TF's take_while makes it.
            if names:
                state = tuple(state) if isinstance(state, (tuple, list)) else (state,)
                _write(set_state, state[1:] if counts else state)
            return extra_test()

    if not init and not counts:
        dummy = kiln.constant(0)
        ds._reduce((dummy,), lambda s, *e: (reduce_fn((), *e), s)[1], keep_going)
        return
    result = ds._reduce(count0 + tuple(init), reduce_fn, keep_going)
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    _write(set_state, result[len(count0):])


# ---- calls ---------------------------------------------------------------------

# ---- Python builtins on tensors and datasets (TF's py_builtins) ------------------
# Each takes a call's arguments and returns its result, or _PYTHON for Python's own.

_PYTHON = object()


def _len(args, kwargs):
    """A tensor's first dimension: a Python int when it is known, else the tensor
    kiln.shape(x)[0] (so `range(len(x))` over a batch of unknown size is one graph
    loop, where Python's len() fails)."""
    if len(args) != 1 or kwargs or not _is_tensor(args[0]):
        return _PYTHON
    shape = args[0].shape
    if shape.rank == 0:
        raise ValueError(f"len requires a non-scalar tensor, got one of shape {shape}")
    if shape.rank is not None and shape[0] is not None:
        return shape[0]
    return _k().shape(args[0])[0]


def _zip(args, kwargs):
    """Datasets zip into one Dataset, so a for loop over them is one dataset loop
    instead of a Python loop unrolled while tracing."""
    data = getattr(_k(), "data", None)
    if not args or kwargs or data is None or not all(isinstance(a, data.Dataset) for a in args):
        return _PYTHON
    return data.Dataset.zip(args)


def _cast_to(dtype_name):
    def cast(args, kwargs):
        """int(x) / float(x) of a tensor: a cast to int32 / float32 (a traced tensor has no
        Python value)."""
        if len(args) != 1 or kwargs or not _is_tensor(args[0]):
            return _PYTHON
        kiln = _k()
        return kiln.cast(args[0], getattr(kiln, dtype_name))
    return cast


def _reduce(name):
    def reduce(args, kwargs):
        """max/min of scalar tensors, or over a vector: one reduce_max/reduce_min."""
        if not any(_is_tensor(a) for a in args):
            return _PYTHON
        if kwargs:
            raise ValueError(f"These keyword arguments are currently not supported: {kwargs}")
        kiln = _k()
        op = getattr(kiln, "reduce_" + name)
        if len(args) == 1:
            rank = args[0].shape.rank
            if rank == 0:
                return args[0]
            if rank == 1:
                return op(args[0], axis=0)
            raise ValueError(f"{name}(arg) currently support only tensor with rank 1, but got a tensor with rank "
                             f"{rank}")
        dtype = next(a for a in args if _is_tensor(a)).dtype
        values = [a if _is_tensor(a) else kiln.constant(a, dtype) for a in args]  # Python numbers join in
        for v in values:
            if v.shape.rank != 0:
                raise ValueError(f"{name}(arg1, arg2, *args) currently support only scalar tensor, but got a "
                                 f"tensor with shape {v.shape.rank}")
        return op(kiln.stack(values), axis=0)
    return reduce


_BUILTINS = {len: _len, zip: _zip, int: _cast_to("int32"), float: _cast_to("float32"), max: _reduce("max"),
             min: _reduce("min")}


def converted_call(f, args, kwargs=None):
    """Calls `f`, converting it first when it is the user's own Python function."""
    from . import conversion
    if _tensor_range(f, args, kwargs):
        return _k().range(*args)
    if f.__class__ is _BUILTIN or f.__class__ is type:
        builtin = _BUILTINS.get(f)
        if builtin is not None:
            result = builtin(args, kwargs)
            if result is not _PYTHON:
                return result
    target = conversion.call_target(f)
    if kwargs:
        return target(*args, **kwargs)
    return target(*args)
