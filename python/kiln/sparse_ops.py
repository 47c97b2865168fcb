"""tf.sparse's operations, composed of dense ops (gather, tensor_scatter_nd_*, argsort, unique, boolean_mask), so
each runs eagerly and traced and passes gradients to `values` where TF's do (to_dense, sparse_dense_matmul, add,
reduce_sum, map_values). Indices are int64 and kept in row-major order, as TF's ops leave them."""
import sys

import numpy as np

from . import _C
from ._composite import map_nested as _map_nested
from . import dtypes as _dtypes
from .ragged_tensor import unravel
from .sparse_tensor import SparseTensor, _concrete, check_indices, is_sparse


def _ops():
    return sys.modules[__package__]


def _invalid(message):
    from .errors import InvalidArgumentError
    return InvalidArgumentError(message)


def _i64(x):
    return _ops().cast(x, _dtypes.int64) if isinstance(x, _C.Tensor) else _ops().convert_to_tensor(x, _dtypes.int64)


def _check_sparse(x, op):
    if not is_sparse(x):
        raise TypeError(f"{op}: expected a SparseTensor, got {type(x).__name__}")


def _shape_arg(st):
    """dense_shape as a Python list when static (so results keep a static shape), else the tensor."""
    dims = st.shape.as_list() if st.shape.rank is not None else None
    return dims if dims is not None and None not in dims else st.dense_shape


def _linear(indices, dense_shape):
    """Row-major flat positions of `indices` in a tensor of shape `dense_shape` (int64)."""
    ops = _ops()
    shape = _i64(dense_shape)
    strides = ops.reverse(ops.cumprod(ops.reverse(ops.concat([shape[1:], ops.ones([1], _dtypes.int64)], 0), [0])),
                          [0])
    return ops.reduce_sum(indices * ops.reshape(strides, [1, -1]), axis=1)


def _argsort(v):
    """Stable ascending order of a vector; by a host function where a trace leaves its length unknown (the
    engine's sort needs it), as boolean_mask computes its indices."""
    if v.shape.rank == 1 and v.shape[0] is not None:
        return _ops().argsort(v, stable=True)
    from ._array_ops import _host_ints
    return _host_ints(lambda x: np.argsort(x, kind="stable"), [v], "argsort")


def _rank(st):
    r = st.indices.shape[1]
    if r is None:
        r = st.dense_shape.shape[0]
    if r is None:
        raise ValueError("The rank of the SparseTensor must be known")
    return r


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """tf.sparse.to_dense: values at their indices, `default_value` (0) elsewhere."""
    ops = _ops()
    _check_sparse(sp_input, "to_dense")
    if validate_indices:
        check_indices(sp_input, "to_dense")
    default = ops.zeros([], sp_input.dtype) if default_value is None else ops.cast(
        ops.convert_to_tensor(default_value), sp_input.dtype) if not isinstance(default_value, (str, bytes)) \
        else ops.convert_to_tensor(default_value)
    base = ops.fill(_shape_arg(sp_input), default)
    return ops.tensor_scatter_nd_update(base, sp_input.indices, sp_input.values)


def from_dense(tensor, name=None):
    """tf.sparse.from_dense: the non-zero (non-empty, for strings) elements of a dense tensor."""
    ops = _ops()
    tensor = ops.convert_to_tensor(tensor)
    zero = ops.constant("", _dtypes.string) if tensor.dtype == _dtypes.string else ops.zeros([], tensor.dtype)
    keep = ops.reshape(ops.not_equal(tensor, zero), [-1])
    dims = ops.shape(tensor, out_type=_dtypes.int64)
    flat = ops.boolean_mask(ops.range(ops.size(tensor, out_type=_dtypes.int64), dtype=_dtypes.int64), keep)
    indices = unravel(flat, dims, tensor.shape.rank)
    values = ops.boolean_mask(ops.reshape(tensor, [-1]), keep)
    static = tensor.shape.as_list() if tensor.shape.rank is not None else None
    return SparseTensor(indices, values, static if static is not None and None not in static else dims)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """tf.sparse.sparse_dense_matmul: a SparseTensor of rank 2 times a dense matrix (or a dense matrix times a
    SparseTensor), with TF's adjoint flags."""
    ops = _ops()
    if is_sparse(b) and not is_sparse(sp_a):
        # a @ B = (B^T a^T)^T
        return ops.transpose(sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a))
    _check_sparse(sp_a, "sparse_dense_matmul")
    b = b if isinstance(b, _C.Tensor) else ops.convert_to_tensor(b, dtype=sp_a.dtype)
    if b.dtype != sp_a.dtype:
        raise _invalid(f"cannot compute SparseTensorDenseMatMul as input #1(zero-based) was expected to be a "
                       f"{sp_a.dtype.name} tensor but is a {b.dtype.name} tensor")
    if _rank(sp_a) != 2 or b.shape.rank != 2:
        raise ValueError("sparse_dense_matmul needs a SparseTensor of rank 2 and a dense matrix")
    if adjoint_b:
        b = ops.transpose(b)
    rows, cols = sp_a.indices[:, 0], sp_a.indices[:, 1]
    if adjoint_a:
        rows, cols = cols, rows
    shape = sp_a.shape.as_list()
    inner, out_rows = (shape[0], shape[1]) if adjoint_a else (shape[1], shape[0])
    if inner is not None and b.shape[0] is not None and inner != b.shape[0]:
        raise _invalid(f"Cannot multiply A and B because inner dimension does not match: {inner} vs. {b.shape[0]}. "
                       "Did you forget a transpose?  Dimensions of A: [" + ", ".join(map(str, shape))
                       + f"). Dimensions of B: {b.shape.as_list()}")
    if out_rows is None:
        out_rows = sp_a.dense_shape[1] if adjoint_a else sp_a.dense_shape[0]
    n = b.shape[1] if b.shape[1] is not None else ops.shape(b, out_type=_dtypes.int64)[1]
    contrib = ops.gather(b, cols) * ops.reshape(sp_a.values, [-1, 1])
    out_shape = [out_rows, n] if not any(isinstance(d, _C.Tensor) for d in (out_rows, n)) else ops.stack(
        [_i64(out_rows), _i64(n)])
    return ops.tensor_scatter_nd_add(ops.zeros(out_shape, sp_a.dtype), ops.reshape(rows, [-1, 1]), contrib)


def _merge(indices, values, dense_shape, static_shape, keep_fn=None):
    """A SparseTensor from possibly repeated, unordered entries: repeats summed, row-major order."""
    ops = _ops()
    lin = _linear(indices, dense_shape)
    uniq = ops.unique(lin)
    uniq_lin = ops.reshape(uniq.y, [-1])  # a vector in a trace too
    n = ops.size(uniq_lin, out_type=_dtypes.int64)
    summed = ops.tensor_scatter_nd_add(ops.zeros(ops.reshape(n, [1]), values.dtype),
                                       ops.reshape(ops.cast(uniq.idx, _dtypes.int64), [-1, 1]), values)
    order = _argsort(uniq_lin)
    lin, summed = ops.gather(uniq_lin, order), ops.gather(summed, order)
    if keep_fn is not None:
        keep = keep_fn(summed)
        lin, summed = ops.boolean_mask(lin, keep), ops.boolean_mask(summed, keep)
    rank = indices.shape[1]
    return SparseTensor._with_static_shape(unravel(lin, _i64(dense_shape), rank), summed, dense_shape, static_shape)


def add(a, b, threshold=0):
    """tf.sparse.add: sparse + sparse -> sparse (sums of magnitude below `threshold` dropped); sparse + dense ->
    dense."""
    ops = _ops()
    if not is_sparse(a) and not is_sparse(b):
        raise TypeError("tf.sparse.add needs at least one SparseTensor")
    if not is_sparse(a) or not is_sparse(b):
        sp, dense = (a, b) if is_sparse(a) else (b, a)
        dense = ops.convert_to_tensor(dense, dtype=sp.dtype)
        return ops.tensor_scatter_nd_add(dense, sp.indices, sp.values)
    if a.dtype != b.dtype:
        raise TypeError(f"tf.sparse.add: values of {a.dtype.name} and {b.dtype.name}")
    if _concrete(a.dense_shape, b.dense_shape) and not np.array_equal(a.dense_shape.numpy(), b.dense_shape.numpy()):
        raise _invalid(f"Operands do not have the same ranks; got shapes: {a.dense_shape.numpy().tolist()} and "
                       f"{b.dense_shape.numpy().tolist()}" if a.dense_shape.shape != b.dense_shape.shape else
                       f"Operands' shapes do not match: got {a.dense_shape.numpy().tolist()} and "
                       f"{b.dense_shape.numpy().tolist()} for sparse add")
    indices = ops.concat([a.indices, b.indices], 0)
    values = ops.concat([a.values, b.values], 0)
    keep = None
    if not (isinstance(threshold, (int, float)) and threshold == 0):
        thresh = ops.cast(ops.convert_to_tensor(threshold), a.dtype)
        keep = lambda v: ops.greater_equal(ops.abs(v), thresh)  # noqa: E731
    return _merge(indices, values, _shape_arg(a), a.shape, keep)


def _reduce(kind, sp_input, axis, keepdims, output_is_sparse):
    ops = _ops()
    _check_sparse(sp_input, f"sparse.{kind}")
    if axis is None and not output_is_sparse and not keepdims:
        if kind == "reduce_sum":
            return ops.reduce_sum(sp_input.values)
    fill = 0
    if kind == "reduce_max":
        np_dtype = sp_input.dtype.as_numpy_dtype
        fill = -np.inf if np.issubdtype(np_dtype, np.floating) else np.iinfo(np_dtype).min
    dims = _shape_arg(sp_input)
    if isinstance(dims, list):
        out = _segment_reduce(kind, sp_input, dims, axis, keepdims, fill)
    else:  # a run-time dense shape: no static segment count, so through the dense tensor
        dense = to_dense(sp_input, default_value=fill, validate_indices=False)
        out = getattr(ops, kind)(dense, axis=axis, keepdims=keepdims)
    if not output_is_sparse:
        return out
    # Entries where some input value landed, as TF's sparse output lists them (sums of zero included).
    rank = _rank(sp_input)
    axes = list(range(rank)) if axis is None else [a % rank for a in ([axis] if isinstance(axis, int) else axis)]
    kept = [d for d in range(rank) if d not in axes]
    if keepdims:
        cols = [sp_input.indices[:, d] if d in kept else ops.zeros_like(sp_input.indices[:, 0]) for d in range(rank)]
    else:
        cols = [sp_input.indices[:, d] for d in kept]
    out_shape = ops.shape(out, out_type=_dtypes.int64)
    if not cols:
        return SparseTensor(ops.zeros([1, 0], _dtypes.int64), ops.reshape(out, [1]), out_shape)
    lin = ops.reshape(ops.unique(_linear(ops.stack(cols, axis=1), out_shape)).y, [-1])
    lin = ops.gather(lin, _argsort(lin))
    return SparseTensor(unravel(lin, out_shape, len(cols)), ops.gather(ops.reshape(out, [-1]), lin), out_shape)


def _segment_reduce(kind, sp_input, dims, axis, keepdims, fill):
    """A reduction over `axis` as a segment reduction of the values, one segment per output entry: it costs the
    number of values plus the output's size, never the dense input's."""
    ops, math = _ops(), _ops().math
    rank = len(dims)
    axes = list(range(rank)) if axis is None else sorted({a % rank for a in ([axis] if isinstance(axis, int)
                                                                               else list(axis))})
    kept = [d for d in range(rank) if d not in axes]
    out_dims = [dims[d] for d in kept]
    count = int(np.prod(out_dims)) if out_dims else 1
    ids = _linear(ops.gather(sp_input.indices, kept, axis=1), out_dims) if kept else ops.zeros_like(
        sp_input.indices[:, 0])
    segment = math.unsorted_segment_sum if kind == "reduce_sum" else math.unsorted_segment_max
    out = segment(sp_input.values, ids, count)
    if kind == "reduce_max":  # an output no value reaches holds `fill`, as through the dense tensor
        reached = math.unsorted_segment_sum(ops.ones_like(ids), ids, count) > 0
        out = ops.where(reached, out, ops.fill([count], ops.cast(fill, sp_input.dtype)))
    shape = [1 if d in axes else dims[d] for d in range(rank)] if keepdims else out_dims
    return ops.reshape(out, shape)


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """tf.sparse.reduce_sum: missing values count as zero."""
    return _reduce("reduce_sum", sp_input, axis, bool(keepdims), output_is_sparse)


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """tf.sparse.reduce_max: only the values present take part (missing values are not zeros); an output that no
    value reaches holds the dtype's lowest value."""
    return _reduce("reduce_max", sp_input, axis, bool(keepdims), output_is_sparse)


def reorder(sp_input, name=None):
    """tf.sparse.reorder: entries in row-major (canonical) order."""
    ops = _ops()
    _check_sparse(sp_input, "reorder")
    order = _argsort(_linear(sp_input.indices, sp_input.dense_shape))
    return SparseTensor._with_static_shape(ops.gather(sp_input.indices, order), ops.gather(sp_input.values, order),
                                           sp_input.dense_shape, sp_input.shape)


def slice(sp_input, start, size, name=None):  # noqa: A001 - TF's name
    """tf.sparse.slice: the entries inside [start, start + size), re-indexed from `start`; the shape is cut at the
    input's edge."""
    ops = _ops()
    _check_sparse(sp_input, "slice")
    start, size = _i64(start), _i64(size)
    idx = sp_input.indices
    inside = ops.logical_and(ops.greater_equal(idx, ops.reshape(start, [1, -1])),
                             ops.less(idx, ops.reshape(start + size, [1, -1])))
    keep = ops.reduce_all(inside, axis=1)
    shape = ops.maximum(ops.minimum(start + size, sp_input.dense_shape) - start, ops.zeros_like(start))
    return SparseTensor(ops.boolean_mask(idx, keep) - ops.reshape(start, [1, -1]),
                        ops.boolean_mask(sp_input.values, keep), shape)


def reshape(sp_input, shape, name=None):
    """tf.sparse.reshape: the same values in a dense shape of the same size (one -1 inferred)."""
    ops = _ops()
    _check_sparse(sp_input, "reshape")
    new = _i64(shape)
    total = ops.reduce_prod(sp_input.dense_shape)
    known = ops.reduce_prod(ops.where(new < 0, ops.ones_like(new), new))
    new = ops.where(new < 0, total // ops.maximum(known, ops.ones_like(known)), new)
    if _concrete(new, total) and int(ops.reduce_prod(new).numpy()) != int(total.numpy()):
        raise _invalid(f"Input to reshape is a SparseTensor with {int(total.numpy())} dense values, but the "
                       f"requested shape has {int(ops.reduce_prod(new).numpy())}")
    lin = _linear(sp_input.indices, sp_input.dense_shape)
    return SparseTensor(unravel(lin, new, new.shape[0]), sp_input.values, new)


def transpose(sp_input, perm=None, name=None):
    """tf.sparse.transpose: dimensions permuted (reversed by default), entries reordered."""
    ops = _ops()
    _check_sparse(sp_input, "transpose")
    rank = _rank(sp_input)
    perm = list(reversed(range(rank))) if perm is None else [int(p) for p in (
        perm.numpy() if isinstance(perm, _C.Tensor) else perm)]
    indices = ops.gather(sp_input.indices, perm, axis=1)
    dims = sp_input.shape.as_list()
    shape = [dims[p] for p in perm] if None not in dims else ops.gather(sp_input.dense_shape, perm)
    return reorder(SparseTensor(indices, sp_input.values, shape))


def concat(axis, sp_inputs, name=None, expand_nonconcat_dims=False, concat_dim=None, expand_nonconcat_dim=None):
    """tf.sparse.concat(axis, sp_inputs): SparseTensors joined along `axis` (other dimensions equal, or grown to
    the largest with expand_nonconcat_dims=True)."""
    ops = _ops()
    if concat_dim is not None:
        axis = concat_dim
    expand = expand_nonconcat_dims or bool(expand_nonconcat_dim)
    inputs = list(sp_inputs)
    for s in inputs:
        _check_sparse(s, "concat")
    rank = _rank(inputs[0])
    axis = axis % rank
    shapes = [s.dense_shape for s in inputs]
    if not expand and _concrete(*shapes):
        base = shapes[0].numpy()
        for k, s in enumerate(shapes[1:], 1):
            other = s.numpy()
            if len(other) != len(base) or any(other[d] != base[d] for d in range(rank) if d != axis):
                raise _invalid(f"Input shapes must match: expected {base.tolist()} for dimensions other than {axis} "
                               f"but got {other.tolist()} at position {k}")
    onehot = ops.one_hot(axis, rank, dtype=_dtypes.int64)
    offset = ops.zeros([], _dtypes.int64)
    indices, values = [], []
    for s in inputs:
        indices.append(s.indices + ops.reshape(onehot * offset, [1, -1]))
        values.append(s.values)
        offset = offset + s.dense_shape[axis]
    stacked = ops.stack(shapes)
    shape = ops.reduce_max(stacked, axis=0) if expand else shapes[0]
    shape = shape * (1 - onehot) + onehot * offset
    return reorder(SparseTensor(ops.concat(indices, 0), ops.concat(values, 0), shape))


def retain(sp_input, to_retain):
    """tf.sparse.retain: the entries where the boolean vector `to_retain` is true."""
    ops = _ops()
    _check_sparse(sp_input, "retain")
    keep = ops.convert_to_tensor(to_retain, dtype=_dtypes.bool)
    return SparseTensor._with_static_shape(ops.boolean_mask(sp_input.indices, keep),
                                           ops.boolean_mask(sp_input.values, keep), sp_input.dense_shape,
                                           sp_input.shape)


def fill_empty_rows(sp_input, default_value, name=None):
    """tf.sparse.fill_empty_rows: (the input with `default_value` at [row, 0, ...] of every empty row, a bool
    vector of which rows were empty)."""
    ops = _ops()
    _check_sparse(sp_input, "fill_empty_rows")
    nrows = sp_input.dense_shape[0]
    rows = sp_input.indices[:, 0]
    counts = ops.tensor_scatter_nd_add(ops.zeros(ops.reshape(nrows, [1]), _dtypes.int64), ops.reshape(rows, [-1, 1]),
                                       ops.ones_like(rows))
    empty = ops.equal(counts, 0)
    empty_rows = ops.boolean_mask(ops.range(nrows, dtype=_dtypes.int64), empty)
    rank = _rank(sp_input)
    zero_cols = ops.zeros(ops.stack([ops.size(empty_rows, out_type=_dtypes.int64),
                                     ops.constant(rank - 1, _dtypes.int64)]), _dtypes.int64)
    new_idx = ops.concat([ops.reshape(empty_rows, [-1, 1]), zero_cols], 1)
    default = ops.cast(ops.convert_to_tensor(default_value), sp_input.dtype) if sp_input.dtype != _dtypes.string \
        else ops.convert_to_tensor(default_value)
    new_vals = ops.fill(ops.shape(empty_rows), default)
    out = reorder(SparseTensor._with_static_shape(ops.concat([sp_input.indices, new_idx], 0),
                                                  ops.concat([sp_input.values, new_vals], 0), sp_input.dense_shape,
                                                  sp_input.shape))
    return out, empty


def map_values(op, *args, **kwargs):
    """tf.sparse.map_values: op on the values of the SparseTensors among the arguments, which must share their
    indices; the result keeps them."""
    found = []

    def strip(x):
        if is_sparse(x):
            found.append(x)
            return x.values
        return x

    args, kwargs = _map_nested(list(args), strip), _map_nested(kwargs, strip)
    if not found:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    for other in found[1:]:
        if other.indices is not first.indices and _concrete(first.indices, other.indices) and (
                first.indices.shape != other.indices.shape
                or not np.array_equal(first.indices.numpy(), other.indices.numpy())):
            raise _invalid("SparseTensors to map_values must have the same indices")
    return first.with_values(op(*args, **kwargs))


def _cwise(name, sp, other):
    """SparseTensor * dense (and /): each value with the dense tensor, broadcast to the dense shape, at its
    index; the result keeps the sparse indices."""
    ops = _ops()
    if is_sparse(other):
        raise TypeError(f"SparseTensor {'*' if name == 'multiply' else '/'} SparseTensor is not supported; use "
                        "tf.sparse.map_values or convert one to dense")
    dense = other if isinstance(other, _C.Tensor) else ops.convert_to_tensor(other, dtype=sp.dtype)
    if dense.shape.rank == 0:
        picked = dense
    else:
        picked = ops.gather_nd(ops.broadcast_to(dense, _shape_arg(sp)), sp.indices)
    return sp.with_values(getattr(ops, name)(sp.values, picked))


def expand_dims(sp_input, axis=None, name=None):
    """tf.sparse.expand_dims: a dimension of size 1 inserted at `axis`."""
    ops = _ops()
    rank = _rank(sp_input)
    axis = -1 if axis is None else axis
    axis = axis + rank + 1 if axis < 0 else axis
    idx = sp_input.indices
    zeros = ops.zeros_like(idx[:, :1])
    indices = ops.concat([idx[:, :axis], zeros, idx[:, axis:]], 1)
    shape = ops.concat([sp_input.dense_shape[:axis], ops.ones([1], _dtypes.int64), sp_input.dense_shape[axis:]], 0)
    return SparseTensor(indices, sp_input.values, shape)
