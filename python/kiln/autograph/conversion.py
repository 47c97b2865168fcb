"""Converting functions: read the source, transform it, compile it under the user's
own file name and line numbers, and rebuild the function around the new code with
the original globals, closure cells, defaults and attributes. One conversion per
code object; one converted function per function object."""
import ast
import functools
import gc
import inspect
import linecache
import sys
import sysconfig
import types
import warnings
import weakref

from . import analysis, builders, operators, transformer

_AG_CELL = types.CellType(operators)
_CODE_CACHE = {}          # original code -> _Converted (or None: cannot be converted)
# id(code) -> code for every code object that conversion produced. By identity: a set
# would hash each nested code object (hashing recurses into co_consts) and compare it
# with an equal one made by an earlier conversion of the same function.
_CONVERTED_CODES = {}
_FN_CACHE = weakref.WeakKeyDictionary()
_WARNED = set()
_USER_CODE = {}           # code -> whether it is the user's (convertible) code
_FILE_TREES = {}          # filename -> (lines, tree), for lambdas

_STDLIB = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")})
_SKIP_MODULES = frozenset({"kiln", "numpy", "pytest", "_pytest", "hypothesis", "pluggy", "functools",
                           "contextlib", "abc", "collections", "typing"})
_CO_SKIP = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


class _Converted:
    """A conversion's code. The converted tree is not kept: ~5000 nodes and lists per
    100 lines, which the cycle collector would scan once the conversion is over and
    in every later young collection; to_code converts again instead."""
    __slots__ = ("code",)

    def __init__(self, code):
        self.code = code


class Unconvertible(Exception):
    pass


# ---- source --------------------------------------------------------------------

def _function_node(f):
    code = f.__code__
    if code.co_name == "<lambda>":
        return _lambda_node(f)
    node = _fast_block(f)
    if node is not None:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != code.co_name:
            raise Unconvertible("its source does not match its code (was the file changed?)")
        return node
    try:
        lines, lnum = inspect.getsourcelines(code)  # the code object: a decorator's wrapper is not unwrapped
    except (OSError, TypeError) as e:
        raise Unconvertible(f"its source code is not available ({e})") from None
    first = lines[0]
    indent = first[:len(first) - len(first.lstrip())]
    if indent:
        lines = [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines]
    try:
        module = ast.parse("".join(lines))
    except SyntaxError as e:
        raise Unconvertible(f"its source could not be parsed ({e})") from None
    node = module.body[0] if module.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != code.co_name:
        raise Unconvertible("its source does not match its code (was the file changed?)")
    # The user's line numbers and columns, in one walk (ast.increment_lineno is slower).
    dl, dc = lnum - 1, len(indent)
    for sub in analysis.walk(module):
        if "lineno" in sub._attributes:
            sub.lineno += dl
            sub.col_offset += dc
            if getattr(sub, "end_lineno", None) is not None:
                sub.end_lineno += dl
                sub.end_col_offset += dc
    return node


def _fast_block(f):
    """The function's node, parsed from its lines by indentation (no tokenizer): from its
    first line to the last line indented deeper; None when that does not parse
    (inspect's way then)."""
    code = f.__code__
    all_lines = linecache.getlines(code.co_filename, f.__globals__)
    start = code.co_firstlineno - 1
    if not all_lines or start >= len(all_lines):
        return None
    first = all_lines[start]
    indent = first[:len(first) - len(first.lstrip())]
    n = len(indent)
    end = start + 1
    seen_body = False
    while end < len(all_lines):
        text = all_lines[end]
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            deeper = len(text) - len(text.lstrip()) > n
            if not deeper and not (not seen_body and (stripped[0] in ")]}@" or stripped.startswith(("def ", "async def ")))):
                break
            seen_body = seen_body or deeper
        end += 1
    # Parsed where it stands, so that positions come out as the user's without a walk
    # over the tree: blank lines before it, and an `if 1:` line above an indented block.
    if n and start == 0:
        return None
    text = ("\n" * (start - 1) + "if 1:\n" if n else "\n" * start) + "".join(all_lines[start:end])
    try:
        module = ast.parse(text)
    except SyntaxError:
        return None
    if not module.body:
        return None
    node = module.body[0]
    if n:
        node = node.body[0] if isinstance(node, ast.If) and node.body else None
    return node


def _lambda_node(f):
    code = f.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename, f.__globals__)
    if not lines:
        raise Unconvertible("its source code is not available")
    cached = _FILE_TREES.get(filename)
    if cached is None or cached[0] is not lines:
        try:
            cached = (lines, ast.parse("".join(lines), filename))
        except SyntaxError as e:
            raise Unconvertible(f"its source could not be parsed ({e})") from None
        _FILE_TREES[filename] = cached
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = []
    for node in ast.walk(cached[1]):
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno:
            a = node.args
            names = tuple(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
            if names == params:
                found.append(node)
    if len(found) != 1:
        raise Unconvertible("several lambdas on its line look alike" if found else "its source was not found")
    import copy
    return copy.deepcopy(found[0])


# ---- conversion ----------------------------------------------------------------

def _is_converted(code):
    return _CONVERTED_CODES.get(id(code)) is code


def _collect_codes(code):
    codes, code_type = [code], types.CodeType
    for c in codes:  # the list grows while it is read: nested code objects come after their parent
        _CONVERTED_CODES[id(c)] = c
        for k in c.co_consts:
            if k.__class__ is code_type:
                codes.append(k)


def _strip_for_compile(node):
    """Defaults and annotations are taken from the original function object, not
    evaluated again (to_code shows them)."""
    a = node.args
    a.defaults = []
    a.kw_defaults = [None] * len(a.kwonlyargs)
    for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]:
        x.annotation = None
    if isinstance(node, ast.FunctionDef):
        node.returns = None


def _converted_tree(f):
    """f's converted syntax tree (what to_code shows)."""
    node = _function_node(f)
    if isinstance(node, ast.FunctionDef):
        node.decorator_list = []
    transformer.convert_scope(node, transformer.Namer(node))
    return node


def _convert_code(f):
    code = f.__code__
    node = _converted_tree(f)
    _strip_for_compile(node)

    pos = dict(lineno=node.lineno, col_offset=0, end_lineno=node.lineno, end_col_offset=0)
    freevars = [n for n in code.co_freevars]
    factory_body = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store(), **pos)],
                               value=ast.Constant(value=None, **pos), **pos) for n in ["ag__"] + freevars]
    result_name = "__kiln_converted__"
    if isinstance(node, ast.Lambda):
        inner = ast.Assign(targets=[ast.Name(id=result_name, ctx=ast.Store(), **pos)], value=node, **pos)
        factory_body.append(inner)
        ret = ast.Name(id=result_name, ctx=ast.Load(), **pos)
    elif "__class__" in freevars:
        # Zero-argument super() needs the __class__ cell: define the function inside a
        # class of the original class's name (so private names mangle the same way).
        cls_name = f.__qualname__.split(".")[-2] if "." in f.__qualname__ else "_"
        factory_body[:] = [s for s in factory_body if s.targets[0].id != "__class__"]
        cls = ast.ClassDef(name=cls_name, bases=[], keywords=[], body=[node], decorator_list=[], **pos)
        factory_body.append(cls)
        ret = ast.Attribute(value=ast.Name(id=cls_name, ctx=ast.Load(), **pos), attr=node.name, ctx=ast.Load(),
                            **pos)
        ret = ast.Call(func=ast.Attribute(value=ret, attr="__get__", ctx=ast.Load(), **pos),
                       args=[ast.Constant(value=None, **pos), ast.Name(id=cls_name, ctx=ast.Load(), **pos)],
                       keywords=[], **pos)
    else:
        # Defined under another name, so that the body's own name (a recursive call) stays
        # the global it was (the kiln.function), not a cell of the factory.
        node.name = result_name
        factory_body.append(node)
        ret = ast.Name(id=node.name, ctx=ast.Load(), **pos)
    factory_body.append(ast.Return(value=ret, **pos))
    factory = ast.FunctionDef(name="__kiln_factory__", args=builders._no_args(), body=factory_body,
                              decorator_list=[], returns=None, type_comment=None, **pos)
    module = ast.Module(body=[factory], type_ignores=[])
    # Generated nodes get their positions when they are made (all four fields at once),
    # so a node without a position has no lineno, which compile rejects: only then is
    # the tree walked to fill positions in (a full walk costs ~0.8 ms on the bench).
    try:
        compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    except (TypeError, ValueError):
        _fix_missing_locations(module)
        compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    namespace = {}
    exec(compiled, namespace)  # defines the factory only; the user's globals are untouched
    new_code = namespace["__kiln_factory__"]().__code__
    if new_code.co_name == result_name and isinstance(node, ast.FunctionDef):
        # Tracebacks name the user's function.
        names = {"co_name": code.co_name}
        if hasattr(code, "co_qualname"):
            names["co_qualname"] = new_code.co_qualname.replace(result_name, code.co_name)
        new_code = new_code.replace(**names)
    _collect_codes(new_code)
    return _Converted(new_code)


def _without_gc(fn, *args):
    """fn(*args) with the cycle collector paused. A conversion makes some 5000 AST nodes
    and lists, none in a cycle (they are freed by reference counting), which would
    otherwise run several collections over the whole heap per conversion."""
    if not gc.isenabled():
        return fn(*args)
    gc.disable()
    try:
        return fn(*args)
    finally:
        gc.enable()


def _fix_missing_locations(module):
    """ast.fix_missing_locations over analysis.children (several times faster): a node
    without a position takes its parent's."""
    todo = [(module, (1, 0, 1, 0))]
    children = analysis.children
    while todo:
        node, pos = todo.pop()
        if "lineno" in node._attributes:
            if getattr(node, "lineno", None) is None:
                node.lineno, node.col_offset = pos[0], pos[1]
            if getattr(node, "end_lineno", None) is None:
                node.end_lineno, node.end_col_offset = pos[2], pos[3]
            pos = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        todo.extend([(child, pos) for child in children(node)])


def _cached(f):
    code = f.__code__
    try:
        entry = _CODE_CACHE[code]
    except KeyError:
        try:
            entry = _without_gc(_convert_code, f)
        except Unconvertible as e:
            entry = None
            if code not in _WARNED:
                _WARNED.add(code)
                warnings.warn(f"AutoGraph could not convert {f.__qualname__} ({code.co_filename}:"
                              f"{code.co_firstlineno}): {e}. It runs as written: Python control flow on tensors "
                              "inside it fails while tracing.", stacklevel=4)
        _CODE_CACHE[code] = entry
    return entry


def _build(f, entry):
    cells = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
    closure = tuple(_AG_CELL if n == "ag__" else cells[n] for n in entry.code.co_freevars)
    new = types.FunctionType(entry.code, f.__globals__, f.__name__, f.__defaults__, closure)
    new.__kwdefaults__ = f.__kwdefaults__
    new.__qualname__ = f.__qualname__
    new.__doc__ = f.__doc__
    new.__module__ = f.__module__
    new.__annotations__ = dict(getattr(f, "__annotations__", {}) or {})
    new.__dict__.update(f.__dict__)
    return new


def convert_function(f):
    """The converted version of a plain Python function (cached), or `f` itself when
    its source cannot be read (with one warning)."""
    try:
        return _FN_CACHE[f]
    except (KeyError, TypeError):
        pass
    if _is_converted(f.__code__) or f.__code__.co_flags & _CO_SKIP:
        out = f
    else:
        entry = _cached(f)
        out = f if entry is None else _build(f, entry)
    try:
        _FN_CACHE[f] = out
    except TypeError:
        pass
    return out


def convert(f):
    """Any callable -> its converted form (what kiln.function calls)."""
    if getattr(f, "__kiln_do_not_convert__", False):
        return f
    if isinstance(f, types.FunctionType):
        return convert_function(f)
    if isinstance(f, types.MethodType):
        conv = convert(f.__func__)
        return f if conv is f.__func__ else types.MethodType(conv, f.__self__)
    if isinstance(f, functools.partial):
        conv = convert(f.func)
        return f if conv is f.func else functools.partial(conv, *f.args, **f.keywords)
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(f, type) and _is_user_code(call):
        conv = convert_function(call)
        return f if conv is call else types.MethodType(conv, f)
    return f


def _is_user_code(f):
    code = f.__code__
    known = _USER_CODE.get(code)
    if known is not None:
        return known
    module = (getattr(f, "__module__", None) or "").split(".")[0]
    filename = code.co_filename
    user = not (module in _SKIP_MODULES or _is_converted(code) or code.co_flags & _CO_SKIP
                or filename.startswith(_STDLIB) or "site-packages" in filename or "dist-packages" in filename
                or filename.startswith("<frozen"))
    _USER_CODE[code] = user
    return user


def call_target(f):
    """What converted code calls for `f(...)`: the converted function for the user's
    own code, `f` itself for everything else (kiln, NumPy, the standard library,
    builtins, classes, kiln.function objects, do_not_convert)."""
    if isinstance(f, types.FunctionType):
        if getattr(f, "__kiln_do_not_convert__", False) or not _is_user_code(f):
            return f
        return convert_function(f)
    if isinstance(f, types.MethodType):
        func = f.__func__
        if not isinstance(func, types.FunctionType) or getattr(func, "__kiln_do_not_convert__", False) \
                or not _is_user_code(func):
            return f
        conv = convert_function(func)
        return f if conv is func else types.MethodType(conv, f.__self__)
    if isinstance(f, (types.BuiltinFunctionType, type)) or f is None:
        return f
    if isinstance(f, functools.partial):
        conv = call_target(f.func)
        return f if conv is f.func else functools.partial(conv, *f.args, **f.keywords)
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and not getattr(f, "__kiln_do_not_convert__", False) \
            and _is_user_code(call):
        conv = convert_function(call)
        return f if conv is call else types.MethodType(conv, f)
    return f


def source_of(f):
    """The converted source of `f` (for to_code)."""
    target = f
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, functools.partial):
        target = target.func
    if not isinstance(target, types.FunctionType):
        call = getattr(type(f), "__call__", None)
        if isinstance(call, types.FunctionType):
            target = call
        else:
            raise TypeError(f"to_code: {f!r} is not a Python function")
    if _is_converted(target.__code__):
        raise TypeError("to_code: this function is already converted; pass the original (e.g. f.python_function)")
    if _cached(target) is None:
        raise ValueError(f"to_code: the source of {target.__qualname__} is not available")
    try:
        node = _without_gc(_converted_tree, target)
    except Unconvertible as e:  # the file changed since the function was converted
        raise ValueError(f"to_code: {target.__qualname__} cannot be converted again: {e}") from None
    return ast.unparse(node) + "\n"


del sys
