"""tf.map_fn: fn applied to the slices of `elems` along their first dimension, the results stacked. With a known
length (eagerly, or a static first dimension in a trace) it is a Python loop over the slices; with a length known
only when the graph runs, a while_loop writing TensorArrays (dense results only). A RaggedTensor's slices are its
rows, and its results come back ragged, as in TF (or as `fn_output_signature` says)."""
import sys

from . import dtypes as _dtypes
from . import nest as _nest
from .ragged_tensor import RaggedTensor, RaggedTensorSpec


def _ops():
    return sys.modules[__package__]


def _length(x):
    return x.shape[0] if x.shape.rank else None


def _signature_leaves(signature, count):
    if signature is None:
        return [None] * count
    leaves = _nest.flatten(signature)
    if len(leaves) != count:
        raise ValueError(f"fn_output_signature has {len(leaves)} parts, but fn returned {count}")
    return leaves


def _is_ragged_spec(s):
    return isinstance(s, RaggedTensorSpec)


def _from_rows(rows, spec):
    """Rows of one result as a RaggedTensor (each row its first dimension's length)."""
    ops = _ops()
    row_splits_dtype = spec.row_splits_dtype if spec is not None else _dtypes.int64
    lengths = [r.nrows(row_splits_dtype) if isinstance(r, RaggedTensor) else ops.shape(r, out_type=row_splits_dtype)[0]
               for r in rows]
    values = ops.concat(list(rows), 0)
    return RaggedTensor.from_row_lengths(values, ops.stack(lengths), validate=False)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    ops = _ops()
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat = [x if isinstance(x, RaggedTensor) else ops.convert_to_tensor(x) for x in _nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. Got {}".format(elems))
    if any(not isinstance(x, RaggedTensor) and x.shape.rank == 0 for x in flat):
        raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    n = _length(flat[0])
    ragged_input = any(isinstance(x, RaggedTensor) for x in flat)
    if n is None:
        if ragged_input:
            raise NotImplementedError("tf.map_fn over a RaggedTensor of unknown length inside kiln.function is not "
                                      "supported by Kiln")
        return _map_dynamic(fn, elems, flat, signature)
    for x in flat[1:]:
        if _length(x) is not None and _length(x) != n:
            raise ValueError(f"Arrays to map over must have the same first dimension: {n} and {_length(x)}")
    if n == 0:
        raise NotImplementedError("tf.map_fn over zero elements is not supported by Kiln")
    raw = [fn(_nest.pack_sequence_as(elems, [x[i] for x in flat])) for i in range(n)]
    results = [_nest.flatten(r) for r in raw]
    specs = _signature_leaves(signature, len(results[0]))
    out = []
    for k, spec in enumerate(specs):
        rows = [r[k] for r in results]
        if _is_ragged_spec(spec) or (spec is None and ragged_input) or isinstance(rows[0], RaggedTensor):
            if rows[0].shape.rank == 0 and not _is_ragged_spec(spec):
                out.append(ops.stack(rows))  # scalars per row stack densely
            else:
                out.append(_from_rows(rows, spec))
        else:
            out.append(ops.stack(rows))
    return _nest.pack_sequence_as(signature if signature is not None else raw[0], out)


def _map_dynamic(fn, elems, flat, signature):
    """A length known when the graph runs: a while_loop that writes each result into a TensorArray."""
    ops = _ops()
    from .control_flow import TensorArray, while_loop
    n = ops.shape(flat[0])[0]
    dtypes = [s.dtype if hasattr(s, "dtype") else _dtypes.as_dtype(s) for s in _nest.flatten(signature)] \
        if signature is not None else [x.dtype for x in flat]
    arrays = [TensorArray(d, size=n) for d in dtypes]

    def body(i, *tas):
        result = _nest.flatten(fn(_nest.pack_sequence_as(elems, [ops.gather(x, i) for x in flat])))
        return (i + 1,) + tuple(ta.write(i, r) for ta, r in zip(tas, result))

    final = while_loop(lambda i, *tas: i < n, body, (ops.constant(0),) + tuple(arrays))
    stacked = [ta.stack() for ta in final[1:]]
    structure = signature if signature is not None else elems
    return _nest.pack_sequence_as(structure, stacked) if _nest.is_nested(structure) else stacked[0]



def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """tf.vectorized_map: fn over the slices of `elems` along their first dimension, the results stacked.
    Kiln has no pfor (the vectorizing rewrite), so this is map_fn, what TF falls back to for ops pfor cannot
    vectorize: the same values, without the speed-up (docs/design-notes.md, "tf.vectorized_map")."""
    del fallback_to_while_loop, warn
    return map_fn(fn, elems)
