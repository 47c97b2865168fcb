"""kiln.GradientTape: records eager ops (and, inside kiln.function, builds the
backward ops into the graph) while its `with` block runs."""
import enum
import threading

from . import _C


def _flatten(structure, out):
    if isinstance(structure, (list, tuple)):
        for s in structure:
            _flatten(s, out)
    elif isinstance(structure, dict):
        for k in sorted(structure, key=repr):
            _flatten(structure[k], out)
    else:
        out.append(structure)
    return out


def _pack(structure, flat):
    if isinstance(structure, (list, tuple)):
        items = [_pack(s, flat) for s in structure]
        if hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items) if isinstance(structure, tuple) else items
    if isinstance(structure, dict):
        values = {k: _pack(structure[k], flat) for k in sorted(structure, key=repr)}
        return {k: values[k] for k in structure}
    return next(flat)


class _TapeUsedError(RuntimeError, ValueError):
    """A non-persistent tape asked for gradients twice: TF's RuntimeError (Kiln raised ValueError before)."""


class UnconnectedGradients(enum.Enum):
    """What tape.gradient gives a source the target does not depend on: None, or zeros."""
    NONE = "none"
    ZERO = "zero"


# The Python tapes entered on this thread, innermost last: kiln.custom_gradient registers its
# functions' outputs on the ones recording (see _CustomNode).
_active = threading.local()


def _active_tapes():
    if not hasattr(_active, "tapes"):
        _active.tapes = []
    return _active.tapes


def graph_depth():
    """How many graphs are being built around the running code: 0 eagerly, 1 in a kiln.function's
    trace, one more in each cond branch, while_loop body or nested kiln.function traced inside it.
    A tape records only ops of the graph it was created in."""
    return getattr(_active, "depth", 0)


class nested_graph:
    """Marks the building of a nested graph (a trace, a cond branch, a loop body)."""

    def __enter__(self):
        _active.depth = graph_depth() + 1
        _graph_custom_nodes().pop(graph_depth(), None)

    def __exit__(self, *exc):
        _graph_custom_nodes().pop(graph_depth(), None)
        _active.depth = graph_depth() - 1
        return False


def _graph_custom_nodes():
    if not hasattr(_active, "graph_custom"):
        _active.graph_custom = {}
    return _active.graph_custom


def add_graph_custom_node(node):
    """A kiln.custom_gradient call traced with no tape recording: tf.gradients of this graph uses
    its grad_fn (the nodes of a graph are dropped when its building ends)."""
    _graph_custom_nodes().setdefault(graph_depth(), []).append(node)


def graph_custom_nodes():
    """The custom-gradient calls of the graph being built, in call order."""
    return list(_graph_custom_nodes().get(graph_depth(), ()))


def in_nested_graph(fn):
    """fn, run as the builder of a nested graph."""
    def run(*args):
        with nested_graph():
            return fn(*args)
    return run


def recording_tapes():
    """The Python tapes recording now, in the current context (eager, or the graph being built)."""
    depth = graph_depth()
    return [t for t in _active_tapes() if t._recording and t._depth == depth]


def recording_tapes_elsewhere():
    """Tapes recording in an enclosing context (an eager tape around a kiln.function call, a
    function's tape around a cond branch)."""
    depth = graph_depth()
    return [t for t in _active_tapes() if t._recording and t._depth != depth]


class _CustomNode:
    """A kiln.custom_gradient call as a tape sees it: its outputs are watched leaves (stop_gradient
    of the function's results); tape.gradient feeds their gradients to grad_fn and carries what it
    returns back from the inputs and variables."""

    def __init__(self, inputs, outputs, grad_fn, variables):
        self.inputs = inputs
        self.outputs = outputs
        self.grad_fn = grad_fn
        self.variables = variables


def _source_key(s):
    return ("variable", s._state_id()) if isinstance(s, _C.Variable) else ("tensor", id(s))


def _add(a, b):
    if a is None:
        return b
    return a if b is None else _C.add(a, b)


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._tape = None
        self._recording = False
        self._used = False
        self._depth = 0
        self._custom_nodes = []

    def __enter__(self):
        if self._tape is None:
            # Always persistent in the engine: custom gradients take several passes over one tape;
            # a non-persistent tape's one-use rule is kept here.
            self._tape = _C.GradientTape(True, self._watch_accessed)
            self._depth = graph_depth()
        else:
            self._tape.resume()
        self._recording = not self._used or self._persistent
        if not self._recording:
            self._tape.stop()
        _active_tapes().append(self)
        return self

    def __exit__(self, *exc):
        self._tape.stop()
        self._recording = False
        tapes = _active_tapes()
        if self in tapes:
            tapes.reverse()
            tapes.remove(self)
            tapes.reverse()
        return False

    def _require(self, what):
        if self._tape is None:
            raise ValueError(f"GradientTape.{what} is only valid once the tape's `with` block has started")

    def watch(self, tensor):
        self._require("watch")
        for t in _flatten(tensor, []):
            if not isinstance(t, (_C.Tensor, _C.Variable)):
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not kiln.Tensor or "
                                 "kiln.Variable, to GradientTape.watch")
            self._tape.watch(t)

    def watched_variables(self):
        self._require("watched_variables")
        if self._used and not self._persistent:
            return self._released_variables
        return tuple(self._tape.watched_variables())

    def stop_recording(self):
        tape = self

        class _Stop:
            def __enter__(self):
                self.was = tape._recording
                tape._tape.stop()
                tape._recording = False

            def __exit__(self, *exc):
                if self.was:
                    tape._tape.resume()
                    tape._recording = True
                return False
        return _Stop()

    def reset(self):
        self._tape = _C.GradientTape(True, self._watch_accessed)
        self._depth = graph_depth()
        self._custom_nodes = []
        self._used = False
        if not self._recording:
            self._tape.stop()

    def _add_custom_node(self, node):
        self._custom_nodes.append(node)
        for out in node.outputs:
            if out.dtype.is_floating or out.dtype.is_complex:
                self._tape.watch(out)
        if self._watch_accessed:
            for v in node.variables:
                if v.trainable:
                    self._tape.watch(v)

    def _check_sources(self, flat_sources):
        for s in flat_sources:
            if not isinstance(s, (_C.Tensor, _C.Variable)):
                raise ValueError(f"GradientTape.gradient: a source is {type(s).__name__}, not a kiln.Tensor or "
                                 "kiln.Variable")

    def _use(self):
        if self._used and not self._persistent:
            raise _TapeUsedError("A non-persistent GradientTape can only be used to compute one set of gradients "
                                 "(or jacobians). Create the tape with tf.GradientTape(persistent=True) to compute "
                                 "several.")

    def _release_if_done(self):
        if not self._persistent:
            self._used = True
            self._tape.stop()
            self._recording = False
            self._custom_nodes = []
            self._released_variables = tuple(self._tape.watched_variables())
            self._tape = _C.GradientTape(False, False)  # frees the recorded ops
            self._tape.stop()

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        self._require("gradient")
        self._use()
        targets = _flatten(target, [])
        flat_sources = _flatten(sources, [])
        self._check_sources(flat_sources)
        seeds = None if output_gradients is None else _flatten(output_gradients, [])
        # A variable as a target (`result = v0`) is its own value: d v / d v is the seed, as TF takes
        # the variable's handle for it; it depends on nothing else.
        variable_targets = [(t, None if seeds is None else seeds[k]) for k, t in enumerate(targets)
                            if isinstance(t, _C.Variable)]
        kept = [k for k, t in enumerate(targets) if not isinstance(t, _C.Variable)]
        targets = [targets[k] if isinstance(targets[k], _C.Tensor) else _C.constant(targets[k], None) for k in kept]
        seeds = None if seeds is None else [seeds[k] for k in kept]
        grads = self._gradients(targets, flat_sources, seeds) if targets else [None] * len(flat_sources)
        for var, seed in variable_targets:
            for i, s in enumerate(flat_sources):
                if isinstance(s, _C.Variable) and s._same_state(var) and (var.dtype.is_floating or var.dtype.is_complex):
                    grads[i] = _add(grads[i], _C.ones_like(var.read_value(), None) if seed is None else seed)
        self._release_if_done()
        if str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() == "zero":
            grads = [_zeros_for(s) if g is None else g for g, s in zip(grads, flat_sources)]
        return _pack(sources, iter(grads))

    def _gradients(self, targets, sources, seeds):
        """The engine's backward pass, one more per custom-gradient call the targets reach (latest
        first, so each grad_fn sees its outputs' whole gradient)."""
        was_recording = self._recording
        if was_recording:  # the backward ops of grad_fns are not recorded on this tape either
            self._tape.stop()
            self._recording = False
        try:
            nodes = list(self._custom_nodes)
            if not nodes:
                return self._tape.gradient(targets, sources, seeds)
            return through_custom_nodes(nodes, targets, sources, seeds, self._tape.gradient)
        finally:
            if was_recording:
                self._tape.resume()
                self._recording = True

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
                 experimental_use_pfor=True):
        """d target[i...] / d source[j...] for each source, shaped target.shape + source.shape: one
        backward pass per element of the target (TF vectorizes them with pfor by default)."""
        self._require("jacobian")
        self._use()
        target = target if isinstance(target, _C.Tensor) else _C.constant(target, None)
        flat_sources = _flatten(sources, [])
        self._check_sources(flat_sources)
        n = _static_size(target, "jacobian")
        rows = [[] for _ in flat_sources]
        for i in range(n):
            seed = _C.reshape(_C.one_hot(_C.constant(i, None), n, 1, 0, -1, target.dtype._enum),
                              target.shape.as_list())
            for r, g in zip(rows, self._gradients([target], flat_sources, [seed])):
                r.append(g)
        self._release_if_done()
        out = []
        zero = str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() == "zero"
        for r, s in zip(rows, flat_sources):
            s_shape = s.shape.as_list()
            if all(g is None for g in r) and not zero:
                out.append(None)
                continue
            r = [_zeros_for(s) if g is None else g for g in r]
            stacked = _C.stack(r, 0) if r else _C.zeros([0] + s_shape, s.dtype._enum)
            out.append(_C.reshape(stacked, target.shape.as_list() + s_shape))
        return _pack(sources, iter(out))

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """d target[b, i...] / d source[b, j...], shaped [batch] + target dims + source dims, each
        example's rows independent of the others' (as TF assumes): one backward pass per element of
        one example's target."""
        self._require("batch_jacobian")
        self._use()
        t_shape, s_shape = target.shape.as_list(), source.shape.as_list()
        if target.ndim < 1 or source.ndim < 1 or t_shape[0] != s_shape[0]:
            raise ValueError(f"Need first dimension of `target` shape ({target.shape}) and `source` shape "
                             f"({source.shape}) to match.")
        batch = t_shape[0]
        per_example = _static_size(target, "batch_jacobian") // batch if batch else 0
        rows = []
        for i in range(per_example):
            one = _C.one_hot(_C.constant(i, None), per_example, 1, 0, -1, target.dtype._enum)
            seed = _C.reshape(_C.add(_C.zeros([batch, 1], target.dtype._enum), _C.reshape(one, [1, per_example])),
                              t_shape)
            rows.append(self._gradients([target], [source], [seed])[0])
        self._release_if_done()
        if all(g is None for g in rows):
            if str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() != "zero":
                return None
        rows = [_zeros_for(source) if g is None else g for g in rows]
        stacked = _C.stack(rows, 1) if rows else _C.zeros([batch, 0] + s_shape[1:], source.dtype._enum)
        return _C.reshape(stacked, t_shape + s_shape[1:])


def through_custom_nodes(nodes, targets, sources, seeds, backprop):
    """Gradients of targets with respect to sources where custom-gradient calls stand for their
    ops: backprop(targets, sources, seeds) (the engine's pass, which stops at the calls' outputs)
    gives their outputs' gradients, each grad_fn (latest call first, so it sees its outputs' whole
    gradient) turns them into its inputs' and variables', and backprop carries those on."""
    outs = [o for n in nodes for o in n.outputs]
    flat = backprop(targets, sources + outs, seeds)
    grads = flat[:len(sources)]
    out_grads = {id(o): g for o, g in zip(outs, flat[len(sources):])}
    source_at = {_source_key(s): i for i, s in enumerate(sources)}
    for k in range(len(nodes) - 1, -1, -1):
        node = nodes[k]
        dys = [out_grads.get(id(o)) for o in node.outputs]
        if all(d is None for d in dys):
            continue
        dys = [_C.zeros_like(o, None) if d is None else d for d, o in zip(dys, node.outputs)]
        input_grads, var_grads = _call_grad_fn(node, dys)
        for v, g in zip(node.variables, var_grads):
            at = source_at.get(_source_key(v))
            if at is not None and g is not None:
                grads[at] = _add(grads[at], g)
        back_targets, back_seeds = [], []
        for x, g in zip(node.inputs, input_grads):
            if g is None or x is None:
                continue
            if isinstance(x, _C.Variable):
                at = source_at.get(_source_key(x))
                if at is not None:
                    grads[at] = _add(grads[at], g)
                continue
            if x.dtype.is_floating or x.dtype.is_complex:
                back_targets.append(x)
                back_seeds.append(_C.cast(g, x.dtype._enum) if g.dtype != x.dtype else g)
        if not back_targets:
            continue
        earlier = [o for n in nodes[:k] for o in n.outputs]
        more = backprop(back_targets, sources + earlier, back_seeds)
        for i, g in enumerate(more[:len(sources)]):
            grads[i] = _add(grads[i], g)
        for o, g in zip(earlier, more[len(sources):]):
            out_grads[id(o)] = _add(out_grads.get(id(o)), g)
    return grads


def _static_size(t, what):
    dims = t.shape.as_list() if t.shape.rank is not None else None
    if dims is None or None in dims:
        raise ValueError(f"GradientTape.{what} needs the target's shape known (got {t.shape})")
    n = 1
    for d in dims:
        n *= d
    return n


def _zeros_for(s):
    return _C.zeros_like(s.read_value() if isinstance(s, _C.Variable) else s, None)


def _call_grad_fn(node, dys):
    """grad_fn's (input gradients, variable gradients), checked against TF's rules."""
    if node.variables:
        result = node.grad_fn(*dys, variables=node.variables)
        if not isinstance(result, (list, tuple)) or len(result) != 2:
            raise ValueError("A custom_gradient grad_fn given `variables` must return (input gradients, variable "
                             "gradients)")
        input_grads, var_grads = result
        var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        if len(var_grads) != len(node.variables):
            raise ValueError(f"Must return gradient for each variable from @custom_gradient grad_fn: got "
                             f"{len(var_grads)} for {len(node.variables)} variables")
    else:
        input_grads, var_grads = node.grad_fn(*dys), []
    if not isinstance(input_grads, (list, tuple)):
        input_grads = [input_grads]
    input_grads = _flatten(list(input_grads), [])
    if len(input_grads) != len(node.inputs):
        raise ValueError(f"custom_gradient function expected to return {len(node.inputs)} gradients, but returned "
                         f"{len(input_grads)} instead.")
    input_grads = [g if g is None or isinstance(g, _C.Tensor) else _C.constant(g, None) for g in input_grads]
    return input_grads, var_grads
