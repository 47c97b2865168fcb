"""The AST side of AutoGraph: one function's syntax tree in, the converted tree out.

Per function scope, in order:
  1. loop directives (`set_loop_options(...)` at the top of a loop body) become the
     loop's options;
  2. `return` inside if/while/for becomes a `do_return` flag and a `retval_` value;
     `break` a `break_` flag tested by the loop; `continue` a `continue_` flag; the
     statements after a jump run under `if not flag:`;
  3. expressions: `and`/`or`/`not`, `a if c else b`, calls (`converted_call`) and
     `assert` become run-time dispatchers, and in the same walk reads of the names bound
     only inside if/while/for bodies become `ag__.ld(name)`;
  4. liveness analysis, then if/while/for become local functions and one call of
     `ag__.if_stmt` / `ag__.while_stmt` / `ag__.for_stmt`; the variables they assign
     are `nonlocal` in those functions, and the ones live afterwards are the
     statement's state (what a graph cond or loop carries).
Generated nodes get the source position of the user's statement they come from (the
builders in builders.py take it), so tracebacks name the user's file and lines."""
import ast
import inspect

from . import analysis, experimental
from .builders import (AG, _STORE, _Assign, _ag, _assign, _at, _call, _const, _def, _expr, _lambda, _load, _new,
                       _nonlocal, _not, _pass, _pos, _return, _span, _store, _tuple)

# Calls that look at their caller's frame: never routed through converted_call.
_FRAME_CALLS = frozenset({"super", "locals", "globals", "vars", "eval", "exec", "dir"})
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NAMED_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_SUSPENDS = (ast.Yield, ast.YieldFrom, ast.Await)


class Namer:
    """Fresh names that collide with nothing the user's function mentions."""

    def __init__(self, node):
        used = set()
        # Whether the function (nested scopes included) holds a walrus, which lets an
        # expression bind a name, and a yield or await, which can only be found by
        # walking expressions: without them, later passes follow statements only.
        self.walrus = self.suspends = False
        todo, children = [node], analysis.children
        name, attribute, constant = ast.Name, ast.Attribute, ast.Constant
        while todo:
            sub = todo.pop()
            cls = sub.__class__
            if cls is name:  # a leaf
                used.add(sub.id)
                continue
            if cls is constant:
                continue
            if cls is attribute and sub.value.__class__ is name:  # `x.attr`: its one name
                used.add(sub.value.id)
                continue
            children(sub, todo)
            if cls is ast.arg:
                used.add(sub.arg)
            elif cls in _NAMED_DEFS:
                used.add(sub.name)
            elif cls is ast.NamedExpr:
                self.walrus = True
            elif cls in _SUSPENDS:
                self.suspends = True
        used.add(AG)
        self.used = used
        self._next = {}  # base -> the first suffix not tried yet (names taken stay taken)

    def new(self, base):
        i = self._next.get(base, 0)
        name = f"{base}_{i}" if i else base
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self._next[base] = i + 1
        self.used.add(name)
        return name


# ---- 1. loop directives --------------------------------------------------------

_LOOP_OPTIONS = tuple(inspect.signature(experimental.set_loop_options).parameters)


def _directive_options(stmt):
    """The options a `set_loop_options(...)` statement gives, as keywords (positional
    arguments named); None for any other statement, and for a call whose arguments do not
    fit the function: it stays in the loop and raises Python's TypeError at its line."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name != "set_loop_options":
        return None
    named = _LOOP_OPTIONS[:len(call.args)]
    if len(call.args) > len(_LOOP_OPTIONS) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None or k.arg not in _LOOP_OPTIONS or k.arg in named for k in call.keywords):
        return None
    return [_at(ast.keyword(n, a), _pos(a)) for n, a in zip(named, call.args)] + call.keywords


def _extract_directives(loops):
    """Moves each loop's set_loop_options calls to loop.kiln_opts; returns those loops."""
    out = []
    for node in loops:
        keep, opts = [], []
        for s in node.body:
            options = _directive_options(s)
            if options is None:
                keep.append(s)
            else:
                opts.extend(options)
        if opts:
            # The position the loop's generated nodes get (see _ControlFlow).
            node.body = keep or [_pass(_span(node, node.test if isinstance(node, ast.While) else node.iter))]
            node.kiln_opts = opts
            out.append(node)
    return out


def _walk_scope(node, expressions):
    """Every node of this scope from statement `node` on, as a list: a nested function or
    class is listed, not entered (its yields, loops and declarations are its own); only
    statements (and except/case clauses) unless `expressions`."""
    todo, out = [node], []
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, _SCOPE_NODES):
            continue
        if expressions:
            for child in analysis.children(n):
                if not isinstance(child, _SCOPE_NODES):
                    todo.append(child)
        else:
            for field in _STMT_FIELDS:
                part = getattr(n, field, None)
                if type(part) is list:
                    todo.extend(part)
    return out


# ---- 2. jumps: return, break, continue -----------------------------------------

class _Jumps:
    """Lowers one kind of jump ('return', 'break' or 'continue') to a flag."""

    def __init__(self, kind, flag, retval=None):
        self.kind, self.flag, self.retval = kind, flag, retval

    def block(self, stmts):
        """-> (new statements, may jump, always jumps)."""
        out = []
        for idx, stmt in enumerate(stmts):
            new, may, always = self.stmt(stmt)
            out.extend(new)
            if always:
                return out, True, True
            if may:
                rest = stmts[idx + 1:]
                if rest:
                    rest_new, _, rest_always = self.block(rest)
                    last = new[-1] if new else None
                    side = getattr(last, "kiln_jumps", None) if isinstance(last, ast.If) else None
                    if side == "body":
                        last.orelse = last.orelse + rest_new
                        return out, True, rest_always
                    if side == "orelse":
                        last.body = last.body + rest_new
                        return out, True, rest_always
                    p = _span(rest[0])
                    out.append(_at(ast.If(_not(self.flag, p), rest_new, []), p))
                return out, True, False
        return out, False, False

    def stmt(self, s):
        k = self.kind
        if k == "return" and isinstance(s, ast.Return):
            p = _span(s)
            new = [_assign(self.flag, _const(True, p), p),
                   _assign(self.retval, s.value if s.value is not None else _const(None, p), p)]
            return new, True, True
        if (k == "break" and isinstance(s, ast.Break)) or (k == "continue" and isinstance(s, ast.Continue)):
            p = _span(s)
            return [_assign(self.flag, _const(True, p), p)], True, True
        if isinstance(s, ast.If):
            s.body, bm, ba = self.block(s.body)
            s.orelse, om, oa = self.block(s.orelse)
            s.body = s.body or [_pass(_span(s))]
            if ba and not oa:
                s.kiln_jumps = "body"
            elif oa and not ba:
                s.kiln_jumps = "orelse"
            return [s], bm or om, ba and oa
        if isinstance(s, (ast.While, ast.For)):
            if k != "return":
                return [s], False, False  # an inner loop owns its break/continue
            s.body, bm, _ = self.block(s.body)
            s.body = s.body or [_pass(_span(s))]
            s.orelse, om, _ = self.block(s.orelse)
            if bm:
                _add_loop_test(s, self.flag)
            return [s], bm or om, False
        if isinstance(s, (ast.With, ast.AsyncWith)):
            s.body, m, a = self.block(s.body)
            s.body = s.body or [_pass(_span(s))]
            return [s], m, a
        if isinstance(s, ast.Try):
            may = False
            for field in ("body", "orelse", "finalbody"):
                new, m, _ = self.block(getattr(s, field))
                setattr(s, field, new if (new or field != "body") else [_pass(_span(s))])
                may |= m
            for h in s.handlers:
                h.body, m, _ = self.block(h.body)
                h.body = h.body or [_pass(_span(h))]
                may |= m
            return [s], may, False
        if isinstance(s, ast.Match):
            may = False
            for case in s.cases:
                case.body, m, _ = self.block(case.body)
                case.body = case.body or [_pass(_span(case.pattern))]
                may |= m
            return [s], may, False
        return [s], False, False


def _add_loop_test(loop, flag):
    """The loop also stops once `flag` is set (the flag is tested first)."""
    if isinstance(loop, ast.While):
        test = loop.test
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and getattr(test, "kiln_flags", False):
            test.values.insert(0, _not(flag, _pos(test)))  # a return and a break: both flags
        else:
            p = _span(test)
            test = _at(ast.BoolOp(ast.And(), [_not(flag, p), test]), p)
            test.kiln_flags = True
        loop.test = test
    else:
        loop.kiln_extra_test = getattr(loop, "kiln_extra_test", []) + [flag]


# In the order of the node classes' fields (Try: body, handlers, orelse, finalbody).
_STMT_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


def _jumps(stmts, kinds):
    """Which jumps of `kinds` (node classes) belong to these statements (break/continue:
    not inside inner loops; return: anywhere in the scope). Jumps are statements, so only
    statement lists are followed, never expressions."""
    found, todo = set(), list(stmts)
    while todo:
        n = todo.pop()
        if n.__class__ in kinds:
            found.add(n.__class__)
            if len(found) == len(kinds):
                break
            continue
        if isinstance(n, _SCOPE_NODES):
            continue
        if isinstance(n, (ast.While, ast.For)) and ast.Return not in kinds:
            continue
        for field in _STMT_FIELDS:
            part = getattr(n, field, None)
            if type(part) is list:
                todo.extend(part)
    return found


def _returns_nested(body):
    """A `return` somewhere other than the function's top level."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            continue
        if _jumps([stmt], (ast.Return,)):
            return True
    return False


def _lower_loops(stmts, namer):
    """break/continue of every loop in these statements (this scope) -> flags."""
    out = []
    for s in stmts:
        if isinstance(s, (ast.If, ast.While, ast.For, ast.With, ast.AsyncWith, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                part = getattr(s, field, None)
                if part:
                    setattr(s, field, _lower_loops(part, namer))
            if isinstance(s, ast.Try):
                for h in s.handlers:
                    h.body = _lower_loops(h.body, namer)
        elif isinstance(s, ast.Match):
            for case in s.cases:
                case.body = _lower_loops(case.body, namer)
        if not isinstance(s, (ast.While, ast.For)):
            out.append(s)
            continue
        before, after = [], []
        jumps = _jumps(s.body, (ast.Break, ast.Continue))  # lowering continue leaves the breaks
        if ast.Continue in jumps:
            flag = namer.new("continue_")
            body, _, _ = _Jumps("continue", flag).block(s.body)
            p = _span(s)
            s.body = [_assign(flag, _const(False, p), p)] + (body or [_pass(p)])
        if ast.Break in jumps:
            flag = namer.new("break_")
            body, _, _ = _Jumps("break", flag).block(s.body)
            p = _span(s)
            s.body = body or [_pass(p)]
            _add_loop_test(s, flag)
            before = [_assign(flag, _const(False, p), p)]
            if s.orelse:
                q = _span(s.orelse[0])
                after = [_at(ast.If(_not(flag, q), s.orelse, []), q)]
        elif s.orelse:
            after = s.orelse  # no break: the else clause always runs after the loop
        s.orelse = []
        out.extend(before + [s] + after)
    return out


# ---- 3. expressions ------------------------------------------------------------

class _Loads(analysis.Transformer):
    """x -> ag__.ld(x) for reads of the given names (this scope only)."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names and isinstance(node.ctx, ast.Load):
            p = _pos(node)
            return _call(_ag("ld", p), p, [node])
        return node

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


class _Expressions(_Loads):
    """and/or/not, conditional expressions, calls and assert; nested functions and
    lambdas are converted as scopes of their own. Reads of `loads` are rewritten in the
    same walk (as _Loads would after it: not inside lambdas, generated or not, nor in
    nested scopes)."""

    def __init__(self, namer, first_param=None, loads=frozenset()):
        super().__init__(loads)
        self.namer = namer
        self.first_param = first_param
        if not loads:
            self._methods = {ast.Name: None}  # names stay leaves, not visited

    def without_loads(self, visit, node):
        """visit(node), rewriting no reads."""
        names, self.names = self.names, frozenset()
        try:
            return visit(node)
        finally:
            self.names = names

    def visit_FunctionDef(self, node):
        node.decorator_list = [self.without_loads(self.visit, d) for d in node.decorator_list]
        node.args = self.without_loads(self.visit, node.args)
        convert_scope(node, self.namer)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        return self.without_loads(self.generic_visit, node)

    visit_Lambda = visit_ClassDef

    def visit_BoolOp(self, node):
        values = node.values
        values[0] = self.visit(values[0])
        values[1:] = [self.without_loads(self.visit, v) for v in values[1:]]  # lambdas below
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        p = _span(node)
        result = values[-1]
        for value in reversed(values[:-1]):
            result = _call(_ag(fn, p), p, [value, _lambda(result, p)])
        return result

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            p = _span(node)
            return _call(_ag("not_", p), p, [node.operand])
        return node

    def visit_IfExp(self, node):
        test = self.visit(node.test)
        body, orelse = self.without_loads(self.visit, node.body), self.without_loads(self.visit, node.orelse)
        p = _span(node)
        return _call(_ag("if_exp", p), p, [test, _lambda(body, p), _lambda(orelse, p)])

    def visit_Call(self, node):
        func = node.func  # looked at as written, before its reads are rewritten
        frame_call = isinstance(func, ast.Name) and func.id in _FRAME_CALLS
        generated = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == AG
        self.generic_visit(node)
        if frame_call:
            if func.id == "super" and not node.args and not node.keywords and self.first_param:
                # Zero-argument super() also works from the generated local functions.
                node.args = [_load("__class__", _pos(node)), _load(self.first_param, _pos(node))]
            return node
        if generated:
            return node
        p = _span(node)
        if node.keywords:
            kwargs = _at(ast.Dict([_const(k.arg, p) if k.arg is not None else None for k in node.keywords],
                                  [k.value for k in node.keywords]), p)
        else:
            kwargs = _const(None, p)
        return _call(_ag("converted_call", p), p, [node.func, _tuple(node.args, p), kwargs])

    def visit_Assert(self, node):
        p = _span(node)
        args = [self.visit(node.test)]
        if node.msg is not None:
            args.append(_lambda(self.without_loads(self.visit, node.msg), p))
        return _expr(_call(_ag("assert_stmt", p), p, args), p)


# ---- 4. control flow -----------------------------------------------------------

class _ControlFlow:
    def __init__(self, namer, liveness, globals_, assigned_cache):
        self.namer = namer
        self.live = liveness
        self.globals = globals_
        self.assigned_cache = assigned_cache

    def _decl(self, names, p, exclude=()):
        if exclude:
            names = [n for n in names if n not in exclude]
        if not names:
            return []
        if not self.globals:  # the common case
            return [_nonlocal(list(names), p)]
        glob = [n for n in names if n in self.globals]
        loc = [n for n in names if n not in self.globals]
        out = []
        if glob:
            out.append(_at(ast.Global(glob), p))
        if loc:
            out.append(_nonlocal(loc, p))
        return out

    def block(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, ast.If):
                out.extend(self.if_(s))
            elif isinstance(s, ast.While):
                out.extend(self.while_(s))
            elif isinstance(s, ast.For):
                out.extend(self.for_(s))
            else:
                if isinstance(s, (ast.With, ast.AsyncWith, ast.Try, ast.AsyncFor)):
                    for field in ("body", "orelse", "finalbody"):
                        if hasattr(s, field):
                            setattr(s, field, self.block(getattr(s, field)))
                    for h in getattr(s, "handlers", ()):
                        h.body = self.block(h.body)
                elif isinstance(s, ast.Match):
                    for case in s.cases:
                        case.body = self.block(case.body)
                out.append(s)
        return out

    def _state_fns(self, state, p):
        get_name, set_name = self.namer.new("get_state"), self.namer.new("set_state")
        if not hasattr(self.namer, "vars_name"):
            self.namer.vars_name = self.namer.new("vars_")  # a parameter: one name serves every set_state
        vars_ = self.namer.vars_name
        get_fn = _def(get_name, [], [_return(_tuple([_load(n, p) for n in state], p), p)], p)
        target = _tuple([_store(n, p) for n in state], p, _STORE)
        unpack = _new(_Assign)
        unpack.__dict__ = {"targets": [target], "value": _load(vars_, p), **p}
        set_fn = _def(set_name, [vars_], self._decl(state, p) + [unpack], p)
        return [get_fn, set_fn], _load(get_name, p), _load(set_name, p)

    def _names(self, state, p):
        return _tuple([_const(n, p) for n in state], p)

    def _opts(self, s, p):
        kws = getattr(s, "kiln_opts", None)
        if not kws:
            return []
        d = _at(ast.Dict([_const(k.arg, p) for k in kws], [k.value for k in kws]), p)
        return [_at(ast.keyword("opts", d), p)]

    def if_(self, s):
        live_out = self.live.live_out.get(id(s), set())
        body_name = self.namer.new("if_body")
        else_name = self.namer.new("else_body") if s.orelse else None
        body = self.block(s.body)
        orelse = self.block(s.orelse)
        mod_body = analysis.assigned(s.body, cache=self.assigned_cache)
        mod_else = analysis.assigned(s.orelse, cache=self.assigned_cache)
        modified = dict(mod_body)
        modified.update(mod_else)
        # Outputs (live afterwards) first; the others are restored around each branch of
        # a graph cond, so that a branch never sees what the other one assigned.
        state = [n for n in modified if n in live_out]
        nouts = len(state)
        state += [n for n in modified if n not in live_out]
        p = _span(s, s.test)
        defs = [_def(body_name, [], self._decl(mod_body, p) + body, p)]
        else_ref = _const(None, p)
        if orelse:
            defs.append(_def(else_name, [], self._decl(mod_else, p) + orelse, p))
            else_ref = _load(else_name, p)
        args = [s.test, _load(body_name, p), else_ref]
        if state:
            fns, get_ref, set_ref = self._state_fns(state, p)
            defs.extend(fns)
            args += [get_ref, set_ref, self._names(state, p), _const(nouts, p)]
        elif not orelse:
            args.pop()
        return defs + [_expr(_call(_ag("if_stmt", p), p, args), p)]

    def while_(self, s):
        head = self.live.live_head.get(id(s), set())
        test_name, body_name = self.namer.new("loop_test"), self.namer.new("loop_body")
        body = self.block(s.body)
        modified = analysis.assigned(s.body, cache=self.assigned_cache)
        state = [n for n in modified if n in head]
        p = _span(s, s.test)
        defs = [_def(test_name, [], [_return(s.test, p)], p),
                _def(body_name, [], self._decl(modified, p) + body, p)]
        return self._loop_call("while_stmt", s, p, defs, [_load(test_name, p), _load(body_name, p)], state)

    def _loop_call(self, op, s, p, defs, args, state):
        if state:
            fns, get_ref, set_ref = self._state_fns(state, p)
            defs.extend(fns)
            args += [get_ref, set_ref, self._names(state, p)]
        else:
            args += [_const(None, p), _const(None, p), _tuple([], p)]
        return defs + [_expr(_call(_ag(op, p), p, args, self._opts(s, p)), p)]

    def for_(self, s):
        head = self.live.live_head.get(id(s), set())
        itr = self.namer.new("itr")
        body_name = self.namer.new("loop_body")
        q = _span(s, s.target)
        body = [_at(ast.Assign([s.target], _load(itr, q)), q)] + self.block(s.body)
        modified = analysis.assigned([s.target] + s.body, cache=self.assigned_cache)
        state = [n for n in modified if n in head]
        p = _span(s, s.iter)
        defs = [_def(body_name, [itr], self._decl(modified, p, exclude={itr}) + body, p)]
        extra = _const(None, p)
        flags = getattr(s, "kiln_extra_test", None)
        if flags:
            test_name = self.namer.new("extra_test")
            expr = _call(_ag("not_any", p), p, [_load(f, p) for f in flags])
            defs.insert(0, _def(test_name, [], [_return(expr, p)], p))
            extra = _load(test_name, p)
        it = s.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "converted_call"
                and isinstance(it.func.value, ast.Name) and it.func.value.id == AG):
            # lets `for i in kiln.range(n)` loop without materializing the range
            it.func = _ag("for_iter", _pos(it))
        return self._loop_call("for_stmt", s, p, defs, [it, extra, _load(body_name, p)], state)


def _bound_outside_control_flow(stmts, cache):
    out = set()
    for s in stmts:
        if isinstance(s, (ast.If, ast.While, ast.For)):
            continue
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                if item.optional_vars is not None:
                    out |= set(analysis.assigned(item.optional_vars, cache=cache))
            out |= _bound_outside_control_flow(s.body, cache)
        elif isinstance(s, ast.Try):
            for part in (s.body, s.orelse, s.finalbody):
                out |= _bound_outside_control_flow(part, cache)
            for h in s.handlers:
                if h.name:
                    out.add(h.name)
                out |= _bound_outside_control_flow(h.body, cache)
        elif isinstance(s, ast.Match):
            for case in s.cases:
                out |= set(analysis.assigned(case.pattern, cache=cache)) | _bound_outside_control_flow(case.body, cache)
        else:
            out |= set(analysis.assigned(s, cache=cache))
    return out


def _nonlocal_names(stmt, shallow):
    """Names declared nonlocal anywhere in `stmt`, nested functions included. Only
    statement lists can hold a declaration, so expressions are not walked. `shallow`
    (no function of the user's inside an if/while/for body): a generated function's own
    declaration, first in its body, names all those inside it, since each declares what
    its statement assigns, a part of what the enclosing statement assigns."""
    if shallow and getattr(stmt, "kiln_generated", False):
        return {n for d in stmt.body[:2] if d.__class__ is ast.Nonlocal for n in d.names}
    out, todo = set(), [stmt]
    while todo:
        s = todo.pop()
        if isinstance(s, ast.Nonlocal):
            out.update(s.names)
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            part = getattr(s, field, None)
            if type(part) is list:
                todo.extend(part)
    return out


# ---- the scope pipeline --------------------------------------------------------

def convert_scope(fn, namer):
    """Converts one function (FunctionDef or Lambda) in place, nested scopes included."""
    if isinstance(fn, ast.Lambda):
        fn.args = _Expressions(namer).visit(fn.args)
        fn.body = _Expressions(namer).visit(fn.body)
        return fn
    if isinstance(fn, ast.AsyncFunctionDef):
        return fn
    body = fn.body
    globals_, nonlocals, loops = set(), set(), []
    defs_in_blocks = False  # a nested function or class inside a compound statement
    for s in body:
        for node in _walk_scope(s, namer.suspends):
            if isinstance(node, (ast.While, ast.For)):
                loops.append(node)
            elif node.__class__ in _NAMED_DEFS:
                defs_in_blocks = defs_in_blocks or node is not s
            elif isinstance(node, ast.Global):
                globals_.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                nonlocals.update(node.names)
            elif isinstance(node, _SUSPENDS):
                return fn  # generators and coroutines run as written
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    if fn.args.vararg:
        params.add(fn.args.vararg.arg)
    if fn.args.kwarg:
        params.add(fn.args.kwarg.arg)

    loops = _extract_directives(loops)
    if _returns_nested(body):
        do_return, retval = namer.new("do_return"), namer.new("retval_")
        lowered, _, _ = _Jumps("return", do_return, retval).block(body)
        p = _span(fn)
        head = [_assign(do_return, _const(False, p), p),
                _assign(retval, _call(_ag("UndefinedReturnValue", p), p), p)]
        tail = [_return(_call(_ag("retval", p), p, [_load(retval, p)]), p)]
        body = head + lowered + tail
    body = _lower_loops(body, namer)
    positional = fn.args.posonlyargs + fn.args.args
    first_param = positional[0].arg if positional else None
    assigned_cache = {} if namer.walrus else {analysis.NO_WALRUS: True}

    def locals_():
        """The names this scope assigns, and those of them that are bound only inside
        if/while/for bodies: Python raises UnboundLocalError on reading them unassigned,
        converted code reads them through ag__.ld (same error)."""
        names = analysis.assigned(body, cache=assigned_cache)
        return names, set(names) - _bound_outside_control_flow(body, assigned_cache) - params - globals_ - nonlocals

    if namer.walrus:
        # A walrus in an and/or operand, a conditional expression's branch or an assert
        # message binds in the lambda it ends up in: the locals are known after the rewrite.
        expr = _Expressions(namer, first_param)
        body = [expr.visit(s) for s in body]
        all_locals, maybe_unbound = locals_()
        if maybe_unbound:
            loads = _Loads(maybe_unbound)
            body = [loads.visit(s) for s in body]
    else:
        # Otherwise the rewrite assigns nothing: the locals are known before it, and it
        # rewrites their reads in the same walk.
        all_locals, maybe_unbound = locals_()
        expr = _Expressions(namer, first_param, maybe_unbound)
        body = [expr.visit(s) for s in body]
    for loop in loops:  # the loops that have options (lowering keeps the loop nodes)
        for k in loop.kiln_opts:
            k.value = expr.without_loads(expr.visit, k.value)
    liveness = analysis.Liveness()
    liveness.block(body, set())
    body = _ControlFlow(namer, liveness, globals_, assigned_cache).block(body)

    # Names assigned only inside generated functions still need a binding in this
    # function for their `nonlocal` declarations: bind them (to Undefined) right
    # before the first statement that uses them (nothing earlier binds them).
    bound = set(analysis.assigned(body, cache=assigned_cache)) | params | globals_ | nonlocals
    missing = [n for n in all_locals if n not in bound]
    if missing:
        out, todo = [], dict.fromkeys(missing)
        for s in body:
            if todo:
                decl = _nonlocal_names(s, shallow=not defs_in_blocks)
                here = [n for n in todo if n in decl]
                for n in here:
                    del todo[n]
                    p = _span(s)
                    out.append(_assign(n, _call(_ag("Undefined", p), p, [_const(n, p)]), p))
            out.append(s)
        body = out
    fn.body = body
    return fn
