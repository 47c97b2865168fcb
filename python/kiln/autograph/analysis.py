"""Static analysis for AutoGraph: which names a piece of code assigns and reads,
and which names are live after a statement (used later before being assigned
again). All of it stays inside one function scope: nested functions, lambdas,
classes and comprehensions are scopes of their own."""
import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# Fields that never hold a node worth visiting: contexts (Load/Store), operators and
# plain values. Skipping them makes `children` several times faster than
# ast.iter_child_nodes, which dominated conversion time (see bench/autograph_convert.py).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "arg", "attr", "name", "kind",
                          "type_comment", "level", "module", "is_async", "conversion", "lineno"})
_CHILD_FIELDS = {}


def _child_fields(cls):
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS
                                            and not (cls is ast.Constant and f == "value"))
    return fields


# List fields that may hold None (Dict.keys, kw_defaults) or strings (Global.names,
# MatchClass.kwd_attrs); every other list field holds nodes only.
_MIXED_LISTS = frozenset({"keys", "kw_defaults", "names", "kwd_attrs"})
_PLANS = {}
_AST = ast.AST
_UNSEEN = object()  # a node class whose visit method is not looked up yet


def _plan(cls):
    plan = _PLANS[cls] = tuple((f, f in _MIXED_LISTS) for f in _child_fields(cls))
    return plan


def children(node, out=None):
    """The child nodes of `node` (what ast.iter_child_nodes gives, less contexts and
    operators), appended to `out` (a new list by default)."""
    if out is None:
        out = []
    try:
        plan = _PLANS[node.__class__]
    except KeyError:
        plan = _plan(node.__class__)
    for field, mixed in plan:
        v = getattr(node, field, None)
        if v is None:
            continue
        if v.__class__ is list:
            if mixed:
                out.extend([x for x in v if x is not None and not isinstance(x, (str, int))])
            else:
                out.extend(v)
        elif isinstance(v, _AST):
            out.append(v)
    return out


class Transformer(ast.NodeTransformer):
    """ast.NodeTransformer whose generic_visit follows only the fields `children`
    follows: contexts, operators and names are not visited (nothing rewrites them).
    `visit` remembers each node class's method, per instance."""

    def _method(self, cls):
        """The method that visits a node of class `cls`; None for a node that has no
        method of its own and no children (visiting it would return it unchanged)."""
        try:
            methods = self._methods
        except AttributeError:
            methods = self._methods = {}
        method = getattr(self, "visit_" + cls.__name__, None)
        if method is not None and getattr(method, "__func__", None) is ast.NodeVisitor.visit_Constant:
            # ast's own visit_Constant only serves the pre-3.8 visit_Num/visit_Str names
            # (at the price of a failed getattr per constant); a constant has no children.
            method = None
        elif method is None:
            method = self.generic_visit if _child_fields(cls) else None
        methods[cls] = method
        return method

    def visit(self, node):
        try:
            method = self._methods[node.__class__]
        except (AttributeError, KeyError):
            method = self._method(node.__class__)
        return method(node) if method is not None else node

    def generic_visit(self, node):
        fields = _CHILD_FIELDS.get(type(node))
        if fields is None:
            fields = _child_fields(type(node))
        try:
            methods = self._methods
        except AttributeError:
            methods = self._methods = {}
        for field in fields:
            old = getattr(node, field, None)
            if type(old) is list:
                # Replaced in place while each visit returns one node (the usual case);
                # rebuilt once a visit drops its node or returns several.
                for i, x in enumerate(old):
                    if not isinstance(x, _AST):
                        continue
                    method = methods.get(x.__class__, _UNSEEN)
                    if method is _UNSEEN:
                        method = self._method(x.__class__)
                    if method is None:
                        continue
                    y = method(x)
                    if y is None or not isinstance(y, _AST):
                        old[i:] = self._rest(y, old[i + 1:], methods)
                        break
                    old[i] = y
            elif isinstance(old, _AST):
                method = methods.get(old.__class__, _UNSEEN)
                if method is _UNSEEN:
                    method = self._method(old.__class__)
                new = old if method is None else method(old)
                if new is None:
                    delattr(node, field)
                elif new is not old:
                    setattr(node, field, new)
        return node

    def _rest(self, first, rest, methods):
        """The list that a visit returning `first` (None, or a list of nodes) and the
        visits of the elements `rest` after it make."""
        new = [] if first is None else list(first)
        for x in rest:
            if isinstance(x, _AST):
                method = methods.get(x.__class__, _UNSEEN)
                if method is _UNSEEN:
                    method = self._method(x.__class__)
                if method is not None:
                    x = method(x)
                    if x is None:
                        continue
                    if not isinstance(x, _AST):
                        new.extend(x)
                        continue
            new.append(x)
        return new


def walk(node):
    """Every node under `node` (itself included), in no particular order."""
    todo = [node]
    out = []
    while todo:
        n = todo.pop()
        out.append(n)
        children(n, todo)
    return out


# A key of assigned()'s cache: set (to True) when the function holds no walrus (:=), so
# that an expression other than an assignment target cannot bind a name and is not walked.
NO_WALRUS = "no walrus"
_TARGETS = (ast.Name, ast.Tuple, ast.List, ast.Starred)


def assigned(nodes, out=None, cache=None):
    """Names bound in this scope by `nodes` (a node or a list), in order of appearance.
    `cache` (a dict kept across calls) remembers the names of each if/while/for: the
    converter asks again for every enclosing statement, and the statements do not
    change their assignments meanwhile. With cache[NO_WALRUS] set, expressions that
    are not targets are skipped."""
    out = {} if out is None else out
    skip_exprs = cache is not None and NO_WALRUS in cache
    for node in nodes if isinstance(nodes, list) else [nodes]:
        _assigned(node, out, cache, skip_exprs)
    return out


# What _assigned does with a node, by its class (looked up once per class). _EXPR: an
# expression that binds nothing but through a walrus, or a statement made of such expressions only.
_NAME, _CACHED, _DEF, _SCOPE, _COMPREHENSION, _IMPORT, _BINDS_NAME, _MAPPING, _EXPR, _OTHER, _ASSIGN = range(11)
_KINDS = {ast.Name: _NAME, ast.If: _CACHED, ast.While: _CACHED, ast.For: _CACHED, ast.FunctionDef: _DEF,
          ast.AsyncFunctionDef: _DEF, ast.ClassDef: _DEF, ast.Lambda: _SCOPE, ast.Import: _IMPORT,
          ast.ImportFrom: _IMPORT, ast.ExceptHandler: _BINDS_NAME, ast.MatchAs: _BINDS_NAME,
          ast.MatchStar: _BINDS_NAME, ast.MatchMapping: _MAPPING, ast.Assign: _ASSIGN, ast.AugAssign: _ASSIGN,
          ast.AnnAssign: _ASSIGN, ast.Expr: _EXPR, ast.Return: _EXPR, ast.Assert: _EXPR, ast.Raise: _EXPR}
_KINDS.update(dict.fromkeys(_COMPREHENSIONS, _COMPREHENSION))


def _kind(cls):
    kind = _KINDS[cls] = _EXPR if issubclass(cls, ast.expr) and not issubclass(cls, _TARGETS) else _OTHER
    return kind


def _assigned(node, out, cache, skip_exprs):
    cls = node.__class__
    try:
        kind = _KINDS[cls]
    except KeyError:
        kind = _kind(cls)
    if kind == _NAME:
        if node.ctx.__class__ is not ast.Load:  # Store or Del
            out.setdefault(node.id)
        return
    if skip_exprs:  # the commonest statements, without a walk of their expressions
        if kind == _ASSIGN:
            for target in (node.targets if cls is ast.Assign else (node.target,)):
                if target.__class__ is ast.Name:
                    out.setdefault(target.id)
                else:
                    _assigned(target, out, cache, skip_exprs)
            return
        if kind == _EXPR:
            return
    if kind == _OTHER or kind == _EXPR or kind == _ASSIGN:
        for child in children(node):
            _assigned(child, out, cache, skip_exprs)
        return
    if kind == _CACHED:
        if cache is None:
            for child in children(node):
                _assigned(child, out, cache, skip_exprs)
            return
        hit = cache.get(id(node))
        if hit is None or hit[0] is not node:  # the node is kept, so its id is not reused
            names = {}
            for child in children(node):
                _assigned(child, names, cache, skip_exprs)
            hit = cache[id(node)] = (node, names)
        for name in hit[1]:
            out.setdefault(name)
        return
    if kind == _DEF:
        out.setdefault(node.name)
    elif kind == _SCOPE or skip_exprs and kind == _COMPREHENSION:
        return
    elif kind == _COMPREHENSION:
        # Only a walrus inside a comprehension binds in the enclosing scope.
        for sub in walk(node):
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                out.setdefault(sub.target.id)
    elif kind == _IMPORT:
        for alias in node.names:
            if alias.name != "*":
                out.setdefault(alias.asname or alias.name.split(".")[0])
    else:  # an except clause or a match pattern binds a name, then its parts may bind more
        if kind == _BINDS_NAME and node.name:
            out.setdefault(node.name)
        elif kind == _MAPPING and node.rest:
            out.setdefault(node.rest)
        for child in children(node):
            _assigned(child, out, cache, skip_exprs)


def reads(node):
    """Every name read in `node`, nested scopes included (a nested function may read a
    name whenever it is called, so it counts as reading it)."""
    out = set()
    todo = list(node) if isinstance(node, list) else [node]
    name, augassign, load, constant, attribute = ast.Name, ast.AugAssign, ast.Load, ast.Constant, ast.Attribute
    while todo:
        sub = todo.pop()
        cls = sub.__class__
        if cls is name:  # names and constants are leaves: no children to follow
            if sub.ctx.__class__ is load:
                out.add(sub.id)
            continue
        if cls is constant:
            continue
        if cls is attribute and sub.value.__class__ is name:  # `x.attr` (`ag__.fn` above all) reads x
            out.add(sub.value.id)
            continue
        if cls is augassign and sub.target.__class__ is name:
            out.add(sub.target.id)
        children(sub, todo)
    return out


def _target_reads(target, reads_of=reads):
    """Names read by an assignment target (subscripts and attributes read their base)."""
    if isinstance(target, ast.Name):
        return set()
    if isinstance(target, (ast.Tuple, ast.List)):
        out = set()
        for elt in target.elts:
            out |= _target_reads(elt, reads_of)
        return out
    if isinstance(target, ast.Starred):
        return _target_reads(target.value, reads_of)
    return reads_of(target)


# Statements that hold blocks of this scope, and assignments (the commonest statements).
_HOLDS_BLOCKS = frozenset({ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try, ast.Match,
                           getattr(ast, "TryStar", ast.Try)})
_ASSIGNMENTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})


class Liveness:
    """Backward liveness over a lowered function body (no break/continue/return inside
    loops or conditionals any more). `live_out[id(stmt)]` is the set of names live right
    after an if/while/for statement; `live_head[id(loop)]` those live at the loop's test.

    Each statement's effect is `before = gen | (after - kill)` (`kill` None: every name),
    summed up once per statement; a loop's head is then its least fixpoint directly
    (head = what the else clause and test read | the body's gen), so each statement is
    visited twice in all instead of once per fixpoint round of every enclosing loop."""

    def __init__(self):
        self.live_out = {}
        self.live_head = {}
        self._reads = {}    # id(node) -> reads(node)
        self._summary = {}  # id(stmt) -> (gen, kill)

    def reads(self, node):
        """reads(node), computed once per node; the set is shared: never change it."""
        hit = self._reads.get(id(node))
        if hit is None:
            hit = self._reads[id(node)] = reads(node)
        return hit

    # -- summaries: (gen, kill) of a statement or a block --------------------------

    def block_summary(self, stmts):
        gen, kill = set(), set()
        for s in reversed(stmts):
            g, k = self.summary(s)
            if k is None:
                gen, kill = set(g), None
            else:
                gen = g | (gen - k)
                if kill is not None:
                    kill = kill | k
        return gen, kill

    def summary(self, s):
        hit = self._summary.get(id(s))
        if hit is None:
            hit = self._summary[id(s)] = self._summarize(s)
        return hit

    def _summarize(self, s):
        reads = self.reads
        if s.__class__ in _ASSIGNMENTS:
            return self._assign_uses(s), self._assign_kills(s)
        if isinstance(s, ast.If):
            gb, kb = self.block_summary(s.body)
            ge, ke = self.block_summary(s.orelse)
            kill = ke if kb is None else kb if ke is None else kb & ke
            return reads(s.test) | gb | ge, kill
        if isinstance(s, ast.While):
            gb, _ = self.block_summary(s.body)
            ge, ke = self.block_summary(s.orelse)
            return ge | reads(s.test) | gb, ke
        if isinstance(s, (ast.For, ast.AsyncFor)):
            gb, _ = self.block_summary(s.body)
            ge, ke = self.block_summary(s.orelse)
            gen = ge | set(getattr(s, "kiln_extra_test", ())) | (gb - set(assigned(s.target))) \
                | _target_reads(s.target, reads) | reads(s.iter)
            return gen, ke
        if isinstance(s, (ast.With, ast.AsyncWith)):
            gen, kill = self.block_summary(s.body)
            for item in s.items:
                if item.optional_vars is not None:
                    binds = set(assigned(item.optional_vars))
                    gen = (gen - binds) | _target_reads(item.optional_vars, reads)
                    if kill is not None:
                        kill = kill | binds
                gen = gen | reads(item.context_expr)
            return gen, kill
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return reads(s), {s.name}
        if isinstance(s, ast.Return):
            return (reads(s.value) if s.value is not None else set()), None
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            return set(), set(assigned(s))
        return reads(s), set()  # try (an exception may leave anywhere: nothing killed), match, the rest

    def _assign_kills(self, s):
        kills = set()
        if not (s.__class__ is ast.AnnAssign and s.value is None):
            for t in (s.targets if s.__class__ is ast.Assign else [s.target]):
                if t.__class__ is ast.Name:  # the commonest target, without a walk
                    kills.add(t.id)
                else:
                    kills.update(assigned(t))
        return kills

    def _assign_uses(self, s):
        uses = self.reads(s.value) if s.value is not None else set()  # shared: copied before a change
        for t in (s.targets if s.__class__ is ast.Assign else [s.target]):
            if t.__class__ is not ast.Name:  # a name target reads nothing
                uses = uses | _target_reads(t, self.reads)
        if s.__class__ is ast.AugAssign and s.target.__class__ is ast.Name:
            uses = uses | {s.target.id}
        return uses

    # -- the live sets ----------------------------------------------------------------

    def block(self, stmts, live):
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live)
        return live

    def stmt(self, s, live):
        if s.__class__ not in _HOLDS_BLOCKS:  # its summary says it all
            gen, kill = self.summary(s)
            return set(gen) if kill is None else gen | (live - kill)
        reads = self.reads
        if isinstance(s, ast.If):
            self.live_out[id(s)] = set(live)
            return reads(s.test) | self.block(s.body, live) | self.block(s.orelse, live)
        if isinstance(s, ast.While):
            self.live_out[id(s)] = set(live)
            head = self.block(s.orelse, live) | reads(s.test) | self.block_summary(s.body)[0]
            self.live_head[id(s)] = head
            self.block(s.body, head)
            return head
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self.live_out[id(s)] = set(live)
            head = self.block(s.orelse, live) | set(getattr(s, "kiln_extra_test", ()))  # the loop's flags
            head |= (self.block_summary(s.body)[0] - set(assigned(s.target))) | _target_reads(s.target, reads)
            self.live_head[id(s)] = head
            self.block(s.body, head)
            return head | reads(s.iter)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            inner = self.block(s.body, live)
            for item in s.items:
                if item.optional_vars is not None:
                    inner = (inner - set(assigned(item.optional_vars))) | _target_reads(item.optional_vars, reads)
                inner |= reads(item.context_expr)
            return inner
        if isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            # Conservative: an exception may leave at any point, nothing is killed.
            for part in (s.body, s.orelse, s.finalbody, *[h.body for h in s.handlers]):
                self.block(part, live)
            return set(live) | reads(s)
        for case in s.cases:  # match
            self.block(case.body, live)
        return set(live) | reads(s)
