"""The AST side of AutoGraph: one function's syntax tree in, the converted tree out.

Per function scope, in order:
  1-2. loop directives and jumps (return, break, continue) are lowered (lowering.py);
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

from . import analysis
from .lowering import _Jumps, _extract_directives, _lower_loops, _returns_nested, _walk_scope
from .builders import (AG, _ag, _assign, _at, _call, _const, _declare, _def, _expr, _lambda, _load, _loop_options,
                       _pos, _return, _span, _state_functions, _state_names, _tuple)

# Calls that look at their caller's frame: never routed through converted_call.
_FRAME_CALLS = frozenset({"super", "locals", "globals", "vars", "eval", "exec", "dir"})
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
        defs = [_def(body_name, [], _declare(self.globals, mod_body, p) + body, p)]
        else_ref = _const(None, p)
        if orelse:
            defs.append(_def(else_name, [], _declare(self.globals, mod_else, p) + orelse, p))
            else_ref = _load(else_name, p)
        args = [s.test, _load(body_name, p), else_ref]
        if state:
            fns, get_ref, set_ref = _state_functions(self.namer, self.globals, state, p)
            defs.extend(fns)
            args += [get_ref, set_ref, _state_names(state, p), _const(nouts, p)]
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
                _def(body_name, [], _declare(self.globals, modified, p) + body, p)]
        return self._loop_call("while_stmt", s, p, defs, [_load(test_name, p), _load(body_name, p)], state)

    def _loop_call(self, op, s, p, defs, args, state):
        if state:
            fns, get_ref, set_ref = _state_functions(self.namer, self.globals, state, p)
            defs.extend(fns)
            args += [get_ref, set_ref, _state_names(state, p)]
        else:
            args += [_const(None, p), _const(None, p), _tuple([], p)]
        return defs + [_expr(_call(_ag(op, p), p, args, _loop_options(s, p)), p)]

    def for_(self, s):
        head = self.live.live_head.get(id(s), set())
        itr = self.namer.new("itr")
        body_name = self.namer.new("loop_body")
        q = _span(s, s.target)
        body = [_at(ast.Assign([s.target], _load(itr, q)), q)] + self.block(s.body)
        modified = analysis.assigned([s.target] + s.body, cache=self.assigned_cache)
        state = [n for n in modified if n in head]
        p = _span(s, s.iter)
        defs = [_def(body_name, [itr], _declare(self.globals, modified, p, exclude={itr}) + body, p)]
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
