"""tf.gradients and tf.hessians: the symbolic gradient of the graph being traced (a tf.function, a
cond branch or loop body, a `tf.Graph().as_default()` block), from tensors that already exist.

The engine treats the graph's nodes traced so far as the entries of a tape and runs the tape's
backward walk, which appends the gradient ops to the same graph (kiln::gradients,
src/graph_ops/symbolic_gradients.cpp). Eagerly there is no graph: TF's RuntimeError."""
from . import _C
from .gradient import UnconnectedGradients, graph_custom_nodes, through_custom_nodes

_EAGER = "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead."


def _as_list(value):
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _tensor(x, what):
    if isinstance(x, (_C.Tensor, _C.Variable)):
        return x
    from ._composite import is_composite
    if is_composite(x):
        raise TypeError(f"tf.gradients: {what} is a {type(x).__name__}; pass its component tensors")
    from ._ops import convert_to_tensor
    return convert_to_tensor(x)


def _zero_unconnected(unconnected_gradients):
    value = getattr(unconnected_gradients, "value", unconnected_gradients)
    if value not in ("none", "zero"):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
    return value == "zero"


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False, aggregation_method=None,
              stop_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
    """A list with d(sum of ys)/dx for each x (None where the ys do not depend on x, unless
    unconnected_gradients is ZERO). grad_ys weights each y (None entries are ones); no gradient
    flows through the tensors in stop_gradients to what computes them. gate_gradients and
    aggregation_method only change how TF schedules the sums: the values are the same."""
    if not _C.is_tracing():
        raise RuntimeError(_EAGER)
    zero = _zero_unconnected(unconnected_gradients)
    flat_ys = [_tensor(y, "a y") for y in _as_list(ys)]
    flat_ys = [y.read_value() if isinstance(y, _C.Variable) else y for y in flat_ys]
    flat_xs = [_tensor(x, "an x") for x in _as_list(xs)]
    seeds = _as_list(grad_ys)
    if grad_ys is not None and len(seeds) != len(flat_ys):
        raise ValueError(f"Passed {len(seeds)} grad_ys for {len(flat_ys)} ys")
    seeds = [None if g is None else _C.cast(_tensor(g, "a grad_y"), y.dtype._enum)
             if _tensor(g, "a grad_y").dtype != y.dtype else _tensor(g, "a grad_y") for g, y in zip(seeds, flat_ys)]
    for g, y in zip(seeds, flat_ys):
        if g is not None and g.shape.is_fully_defined() and y.shape.is_fully_defined() and g.shape != y.shape:
            raise ValueError(f"Incompatible shapes between op input and calculated input gradient. grad_ys "
                             f"{g.shape} for a y of shape {y.shape}")
    stops = [s.read_value() if isinstance(s, _C.Variable) else _tensor(s, "a stop_gradients entry")
             for s in _as_list(stop_gradients)]
    grads = _with_custom_gradients(flat_ys, flat_xs, seeds, stops)
    if zero:
        grads = [_C.zeros_like(x.read_value() if isinstance(x, _C.Variable) else x, None) if g is None else g
                 for g, x in zip(grads, flat_xs)]
    return grads


def _with_custom_gradients(ys, xs, seeds, stops):
    """The engine's backward pass, with each kiln.custom_gradient call of this graph standing for its
    ops: no gradient flows through its outputs, whose gradients go to its grad_fn (as GradientTape
    does)."""
    nodes = graph_custom_nodes()
    if not nodes:
        return _C.gradients(ys, xs, seeds, stops)
    stops = stops + [o for n in nodes for o in n.outputs]
    return through_custom_nodes(nodes, ys, xs, seeds, lambda t, s, g: _C.gradients(t, s, g, stops))


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """For each x, the Hessian of sum(ys): shape x.shape + x.shape, built row by row from the
    gradient's elements (TF builds the same rows in a while_loop)."""
    out = []
    flat_xs = _as_list(xs)
    for x, g in zip(flat_xs, gradients(ys, flat_xs)):
        if g is None:
            out.append(None)
            continue
        dims = x.shape.as_list()
        if None in dims:
            raise ValueError(f"tf.hessians needs x's shape known, got {x.shape}")
        n = 1
        for d in dims:
            n *= d
        flat_g = _C.reshape(g, [n])
        rows = []
        for i in range(n):
            row = gradients(flat_g[i], x, unconnected_gradients=UnconnectedGradients.ZERO)[0]
            rows.append(_C.reshape(row, [n]))
        hess = _C.stack(rows, 0) if rows else _C.zeros([0, 0], x.dtype._enum)
        out.append(_C.reshape(hess, dims + dims))
    return out
