"""The first rewrites of a function scope (transformer.py runs them before the expressions):
  1. loop directives: `set_loop_options(...)` at the top of a loop body becomes the loop's
     options (`loop.kiln_opts`);
  2. jumps: `return` inside if/while/for becomes a `do_return` flag and a `retval_` value,
     `break` a `break_` flag the loop tests, `continue` a `continue_` flag; the statements
     after a jump run under `if not flag:`."""
import ast
import inspect

from . import analysis, experimental
from .builders import _assign, _at, _const, _not, _pass, _pos, _span

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


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
