"""Small AST builders for the converter (transformer.py): names, calls, assignments, generated
functions.

Each takes the position `p` its nodes get (a dict of lineno, col_offset, end_lineno,
end_col_offset): every generated node is located when it is made, so the tree
compiles without a walk that fills positions in. The commonest nodes are made
without their constructor, their fields and position set as one dict (an AST
constructor handles its arguments one attribute at a time; this is about a fifth
faster per node, and the converter makes some 2000 of them per 100 lines)."""
import ast

# The converted code's name for kiln.autograph.operators (a closure cell conversion.py fills).
AG = "ag__"
_LOAD, _STORE = ast.Load(), ast.Store()
_new = ast.AST.__new__
_Name, _Attribute, _Call, _Assign = ast.Name, ast.Attribute, ast.Call, ast.Assign
_UnaryOp, _Pass, _Tuple, _Lambda = ast.UnaryOp, ast.Pass, ast.Tuple, ast.Lambda
_FunctionDef, _arguments, _arg, _Nonlocal = ast.FunctionDef, ast.arguments, ast.arg, ast.Nonlocal
_NOT = ast.Not()  # operators carry no position: one serves every `not`


def _span(src, end=None):
    """The position of the user's statement `src` for the nodes generated from it: its
    header (up to `end`, a node) rather than its body, on one line."""
    end = end or src
    lineno, col = src.lineno, src.col_offset
    end_lineno, end_col = end.end_lineno, end.end_col_offset
    if end_lineno != lineno:
        end_lineno, end_col = lineno, col + 1
    return {"lineno": lineno, "col_offset": col, "end_lineno": end_lineno, "end_col_offset": end_col}


def _pos(node):
    """`node`'s own position, as it stands."""
    return {"lineno": node.lineno, "col_offset": node.col_offset, "end_lineno": node.end_lineno,
            "end_col_offset": node.end_col_offset}


def _at(node, p):
    node.__dict__.update(p)
    return node


def _load(name, p):
    node = _new(_Name)
    node.__dict__ = {"id": name, "ctx": _LOAD, **p}
    return node


def _store(name, p):
    node = _new(_Name)
    node.__dict__ = {"id": name, "ctx": _STORE, **p}
    return node


def _ag(attr, p):
    node = _new(_Attribute)
    node.__dict__ = {"value": _load(AG, p), "attr": attr, "ctx": _LOAD, **p}
    return node


def _call(func, p, args=(), keywords=()):
    node = _new(_Call)
    node.__dict__ = {"func": func, "args": list(args), "keywords": list(keywords), **p}
    return node


def _assign(name, value, p):
    node = _new(_Assign)
    node.__dict__ = {"targets": [_store(name, p)], "value": value, **p}
    return node


def _value_node(cls):
    """A builder of `cls(value)` nodes (Constant, Return, Expr) at a position."""
    def build(value, p):
        node = _new(cls)
        node.__dict__ = {"value": value, **p}
        return node
    return build


_const, _return, _expr = _value_node(ast.Constant), _value_node(ast.Return), _value_node(ast.Expr)


def _nonlocal(names, p):
    node = _new(_Nonlocal)
    node.__dict__ = {"names": names, **p}
    return node


def _not(name, p):
    node = _new(_UnaryOp)
    node.__dict__ = {"op": _NOT, "operand": _load(name, p), **p}
    return node


def _pass(p):
    node = _new(_Pass)
    node.__dict__ = dict(p)
    return node


def _tuple(elts, p, ctx=_LOAD):
    node = _new(_Tuple)
    node.__dict__ = {"elts": elts, "ctx": ctx, **p}
    return node


def _lambda(body, p):
    node = _new(_Lambda)
    node.__dict__ = {"args": _no_args(), "body": body, **p}
    return node


def _def(name, params, body, p):
    args = []
    for a in params:
        arg = _new(_arg)
        arg.__dict__ = {"arg": a, **p}
        args.append(arg)
    node = _new(_FunctionDef)
    node.__dict__ = {"name": name, "args": _no_args(args), "body": body or [_pass(p)], "decorator_list": [],
                     "returns": None, "type_comment": None, **p}
    node.kiln_generated = True  # see transformer._nonlocal_names
    return node


def _no_args(args=None):
    """The arguments of a generated function: positional parameters `args` only."""
    node = _new(_arguments)
    node.__dict__ = {"posonlyargs": [], "args": [] if args is None else args, "vararg": None, "kwonlyargs": [],
                     "kw_defaults": [], "kwarg": None, "defaults": []}
    return node


# ---- the pieces of an if_stmt / while_stmt / for_stmt call -------------------------------------

def _declare(globals_, names, p, exclude=()):
    """`nonlocal` (or `global`, for the scope's globals) declarations of `names` in a generated function."""
    if exclude:
        names = [n for n in names if n not in exclude]
    if not names:
        return []
    if not globals_:  # the common case
        return [_nonlocal(list(names), p)]
    glob = [n for n in names if n in globals_]
    loc = [n for n in names if n not in globals_]
    out = []
    if glob:
        out.append(_at(ast.Global(glob), p))
    if loc:
        out.append(_nonlocal(loc, p))
    return out


def _state_functions(namer, globals_, state, p):
    """get_state() returning the state variables as a tuple, set_state(vars_) assigning them: the two
    definitions, and references to them."""
    get_name, set_name = namer.new("get_state"), namer.new("set_state")
    if not hasattr(namer, "vars_name"):
        namer.vars_name = namer.new("vars_")  # a parameter: one name serves every set_state
    vars_ = namer.vars_name
    get_fn = _def(get_name, [], [_return(_tuple([_load(n, p) for n in state], p), p)], p)
    target = _tuple([_store(n, p) for n in state], p, _STORE)
    unpack = _new(_Assign)
    unpack.__dict__ = {"targets": [target], "value": _load(vars_, p), **p}
    set_fn = _def(set_name, [vars_], _declare(globals_, state, p) + [unpack], p)
    return [get_fn, set_fn], _load(get_name, p), _load(set_name, p)


def _state_names(state, p):
    """The state variables' names, a tuple of strings (for the error messages)."""
    return _tuple([_const(n, p) for n in state], p)


def _loop_options(loop, p):
    """`opts={...}` from the loop's set_loop_options directives, or no keyword."""
    kws = getattr(loop, "kiln_opts", None)
    if not kws:
        return []
    d = _at(ast.Dict([_const(k.arg, p) for k in kws], [k.value for k in kws]), p)
    return [_at(ast.keyword("opts", d), p)]
