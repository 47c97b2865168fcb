"""tf.scan, tf.foldl, tf.foldr: fn carried over the slices of `elems` along their first dimension. As tf.map_fn:
with a known length (eagerly, or a static first dimension in a trace) a Python loop over the slices; with a
length known only when the graph runs, a while_loop (scan's results written into TensorArrays)."""
import sys

from . import nest as _nest


def _ops():
    return sys.modules[__package__]


def _flat_elems(elems):
    ops = _ops()
    flat = [ops.convert_to_tensor(x) for x in _nest.flatten(elems)]
    if not flat:
        raise ValueError(f"elems must be a Tensor or (possibly nested) sequence of Tensors. Got {elems}")
    for x in flat:
        if x.shape.rank == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    return flat


def _slice(elems, flat, i):
    ops = _ops()
    return _nest.pack_sequence_as(elems, [x[i] if isinstance(i, int) else ops.gather(x, i) for x in flat])


def _as_tensors(structure):
    ops = _ops()
    return _nest.map_structure(ops.convert_to_tensor, structure)


def _prepare(fn, elems):
    """elems' flat tensors and their static length (None when known only at run time)."""
    if not callable(fn):
        raise TypeError(f"{fn!r} is not callable. Please provide a callable function.")
    flat = _flat_elems(elems)
    return flat, flat[0].shape[0]


def _static_start(elems, flat, n, initializer, reverse):
    """(first accumulator, the indices still to visit) for a known length: the initializer, or the first
    element visited when there is none."""
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is not None:
        return _as_tensors(initializer), order
    if n == 0:
        raise ValueError("tf.scan/foldl/foldr of zero elements needs an initializer")
    return _slice(elems, flat, order[0]), order[1:]


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """[a_1, a_2, ...] with a_i = fn(a_{i-1}, elems[i]) (a_0 = initializer, or elems[0] which is then the first
    output), stacked along a new first dimension; `reverse` walks elems from the end."""
    ops = _ops()
    flat, n = _prepare(fn, elems)
    if n is None:
        return _scan_dynamic(fn, elems, flat, initializer, reverse)
    acc, order = _static_start(elems, flat, n, initializer, reverse)
    outputs = [acc] if initializer is None else []
    for i in order:
        acc = fn(acc, _slice(elems, flat, i))
        outputs.append(acc)
    if reverse:
        outputs = outputs[::-1]
    if not outputs:
        raise NotImplementedError("tf.scan over zero elements is not supported by Kiln")
    leaves = [_nest.flatten(o) for o in outputs]
    stacked = [ops.stack([leaf[k] for leaf in leaves]) for k in range(len(leaves[0]))]
    return _nest.pack_sequence_as(outputs[0], stacked)


def _scan_dynamic(fn, elems, flat, initializer, reverse):
    ops = _ops()
    from .control_flow import TensorArray, while_loop
    n = ops.shape(flat[0])[0]
    if initializer is None:
        first = ops.constant(0) if not reverse else n - 1
        acc, start = _slice(elems, flat, first), 1
    else:
        acc, start = _as_tensors(initializer), 0
    acc_flat = _nest.flatten(acc)
    arrays = [TensorArray(a.dtype, size=n) for a in acc_flat]
    if initializer is None:
        arrays = [ta.write(first, a) for ta, a in zip(arrays, acc_flat)]

    def body(k, *state):
        carried, tas = state[:len(acc_flat)], state[len(acc_flat):]
        i = (n - 1 - k) if reverse else k
        new = _nest.flatten(fn(_nest.pack_sequence_as(acc, list(carried)), _slice(elems, flat, i)))
        return (k + 1,) + tuple(new) + tuple(ta.write(i, v) for ta, v in zip(tas, new))

    final = while_loop(lambda k, *state: k < n, body, (ops.constant(start),) + tuple(acc_flat) + tuple(arrays))
    return _nest.pack_sequence_as(acc, [ta.stack() for ta in final[1 + len(acc_flat):]])


def _fold(fn, elems, initializer, reverse):
    ops = _ops()
    flat, n = _prepare(fn, elems)
    if n is None:
        from .control_flow import while_loop
        length = ops.shape(flat[0])[0]
        if initializer is None:
            acc, start = _slice(elems, flat, (length - 1) if reverse else ops.constant(0)), 1
        else:
            acc, start = _as_tensors(initializer), 0
        acc_flat = _nest.flatten(acc)

        def body(k, *carried):
            i = (length - 1 - k) if reverse else k
            return (k + 1,) + tuple(_nest.flatten(fn(_nest.pack_sequence_as(acc, list(carried)),
                                                     _slice(elems, flat, i))))
        final = while_loop(lambda k, *c: k < length, body, (ops.constant(start),) + tuple(acc_flat))
        return _nest.pack_sequence_as(acc, list(final[1:]))
    acc, order = _static_start(elems, flat, n, initializer, reverse)
    for i in order:
        acc = fn(acc, _slice(elems, flat, i))
    return acc


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1]) (initializer: elems[0] when None)."""
    return _fold(fn, elems, initializer, False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """foldl from the last element to the first."""
    return _fold(fn, elems, initializer, True)
