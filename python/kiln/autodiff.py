"""kiln.autodiff (tf.autodiff: ForwardAccumulator, GradientTape) and kiln.custom_gradient, kiln.recompute_grad, kiln.grad_pass_through.

A custom-gradient call is a node on the Python GradientTapes recording it (gradient._CustomNode):
its outputs are stop_gradient copies the tapes watch, and tape.gradient hands their gradients to
grad_fn, then carries grad_fn's results back through the tape from the inputs. Forward-mode
(ForwardAccumulator) is reverse-over-reverse: the gradient with respect to a placeholder output
gradient u of <J^T u, tangents> is J tangents."""
import functools
import inspect
import logging

from . import _C
from . import nest as _nest
from .gradient import (GradientTape, UnconnectedGradients, _CustomNode, add_graph_custom_node, recording_tapes,
                       recording_tapes_elsewhere)

_log = logging.getLogger("kiln")
_warned_outer_tape = []


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind == p.VAR_KEYWORD for p in params)


def _as_tensor(x):
    if isinstance(x, (_C.Tensor, _C.Variable)):
        return x
    from ._ops import convert_to_tensor
    return convert_to_tensor(x)


def _library(wrapper):
    """AutoGraph leaves the wrapper alone (it carries the user's __module__ through functools.wraps);
    the user's function inside is converted by _user_call."""
    wrapper.__kiln_do_not_convert__ = True
    return wrapper


def _user_call(f, *args, **kwargs):
    if _C.is_tracing():
        from .autograph import conversion
        f = conversion.call_target(f)
    return f(*args, **kwargs)


def custom_gradient(f=None):
    """Decorates f(*args) -> (outputs, grad_fn): grad_fn(*output_gradients) returns the gradients of
    the positional args (and, given `variables=`, those of the variables f reads, as
    (input_gradients, variable_gradients)). Works eagerly, inside kiln.function, and nested."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        tapes = recording_tapes()
        if not tapes:
            if recording_tapes_elsewhere() and not _warned_outer_tape:
                _warned_outer_tape.append(True)
                _log.warning("kiln.custom_gradient: %s runs in a graph (a kiln.function, cond branch or loop "
                             "body) built inside the GradientTape's context; that tape differentiates the graph's "
                             "ops, not grad_fn. Open the tape in the same graph as the call to use the custom "
                             "gradient.", getattr(f, "__name__", f))
            if not _C.is_tracing():
                outputs, _ = _user_call(f, *args, **kwargs)
                return outputs
            # In a graph no tape records, the outputs are noted for tf.gradients; the graph keeps
            # f's own ops, which a tape around a call of the graph differentiates.
            return _noted_call(f, args, kwargs, [], _own_value)
        return _noted_call(f, args, kwargs, tapes, _C.stop_gradient)
    return _library(decorated)


def _own_value(y):
    """y as a value of its own in the graph (an EnsureShape of its own shape: the identity), so
    stopping it stops nothing else."""
    if y.shape.rank is None or not (y.dtype.is_floating or y.dtype.is_complex):
        return y
    return _C.ensure_shape(y, [-1 if d is None else int(d) for d in y.shape.as_list()])


def _noted_call(f, args, kwargs, tapes, mark):
    """f's outputs, each passed through `mark` (stop_gradient for the tapes, which watch the result;
    an identity in a graph no tape records), and noted with grad_fn as a node on the tapes and,
    while tracing, on the graph for tf.gradients. f's own ops are not recorded on the tapes."""
    for t in tapes:
        t._tape.stop()
        t._recording = False
    reads = _C.GradientTape(False, True)  # learns the trainable variables f reads
    try:
        outputs, grad_fn = _user_call(f, *args, **kwargs)
        variables = list(reads.watched_variables())
    finally:
        reads.stop()
        del reads
        for t in tapes:
            t._tape.resume()
            t._recording = True
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("@custom_gradient grad_fn must accept keyword argument 'variables', since function "
                        f"uses variables: {[v.name for v in variables]}")
    flat_out = [_as_tensor(y) for y in _nest.flatten(outputs)]
    marked = [mark(y.read_value() if isinstance(y, _C.Variable) else y) for y in flat_out]
    inputs = [a if isinstance(a, (_C.Tensor, _C.Variable)) else None for a in _nest.flatten(list(args))]
    node = _CustomNode(inputs, marked, grad_fn, variables)
    for t in tapes:
        t._add_custom_node(node)
    if _C.is_tracing():
        add_graph_custom_node(node)
    return _nest.pack_sequence_as(outputs, marked) if not isinstance(outputs, (_C.Tensor, _C.Variable)) \
        else marked[0]


def recompute_grad(f):
    """tf.recompute_grad: Kiln keeps f's activations for the backward pass (no recomputation, so no
    memory saved), which gives the same gradients."""
    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return _user_call(f, *args, **kwargs)
    return _library(wrapped)


def grad_pass_through(f):
    """f's value, with the gradient of the identity (a straight-through estimator)."""
    @functools.wraps(f)
    def wrapped(x):
        @custom_gradient
        def through(x):
            def grad(dy, variables=None):
                return (dy, [None] * len(variables)) if variables else dy
            return f(x), grad
        return through(x)
    return _library(wrapped)


class ForwardAccumulator:
    """Jacobian-vector products of the ops run inside its `with` block: acc.jvp(y) is d y / d primals
    applied to the tangents."""

    def __init__(self, primals, tangents):
        self._primals = _nest.flatten(primals)
        self._tangents = [_as_tensor(t) for t in _nest.flatten(tangents)]
        if len(self._primals) != len(self._tangents):
            raise ValueError(f"primals and tangents must have the same structure: {len(self._primals)} primals and "
                             f"{len(self._tangents)} tangents")
        for p, t in zip(self._primals, self._tangents):
            if p.shape.as_list() != t.shape.as_list() or p.dtype != t.dtype:
                raise ValueError(f"Tangent {t.shape} {t.dtype.name} does not match the primal {p.shape} "
                                 f"{p.dtype.name}")
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)

    def __enter__(self):
        self._tape.__enter__()
        self._tape.watch(self._primals)
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def watch(self, primals, tangents):
        primals, tangents = _nest.flatten(primals), [_as_tensor(t) for t in _nest.flatten(tangents)]
        self._primals += primals
        self._tangents += tangents
        self._tape.watch(primals)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        zero = str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() == "zero"
        return _nest.map_structure(lambda t: self._jvp_one(_as_tensor(t), zero), primals)

    def _jvp_one(self, target, zero):
        if isinstance(target, _C.Variable):
            target = target.read_value()
        if not target.dtype.is_floating:
            return None
        u = _C.zeros_like(target, None)
        with GradientTape(watch_accessed_variables=False) as outer:
            outer.watch(u)
            grads = self._tape.gradient(target, self._primals, output_gradients=u)
            total = None
            for g, v in zip(grads, self._tangents):
                if g is not None:
                    term = _C.reduce_sum(_C.multiply(g, v), None, False)
                    total = term if total is None else _C.add(total, term)
        result = None if total is None else outer.gradient(total, u)
        if result is None and zero:
            return _C.zeros_like(target, None)
        return result
