"""More of tf.sparse, composed of Kiln's dense ops (gradients flow to the values): eye, the sparse segment
reductions, element-wise maximum/minimum over the union of two index sets, softmax over each row's entries,
split, reset_shape and to_indicator."""
from . import dtypes as _dtypes
from .sparse_tensor import SparseTensor


def _t(x, dtype=None):
    from ._ops import convert_to_tensor
    return convert_to_tensor(x, dtype=dtype)


def _check(sp, what):
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor for tf.sparse.{what}, got {type(sp).__name__}.")


def eye(num_rows, num_columns=None, dtype=_dtypes.float32, name=None):
    """The identity as a SparseTensor [num_rows, num_columns] (square by default)."""
    from ._ops import cast, minimum, ones, range as _range, stack
    rows = _t(num_rows, dtype=_dtypes.int64)
    cols = rows if num_columns is None else _t(num_columns, dtype=_dtypes.int64)
    diag = _range(minimum(rows, cols), dtype=_dtypes.int64)
    values = ones(cast(minimum(rows, cols), _dtypes.int32)[None], _dtypes.as_dtype(dtype))
    return SparseTensor(stack([diag, diag], axis=1), values, stack([rows, cols]))


def _segment(reduce, data, indices, segment_ids, num_segments):
    from ._ops import gather
    from . import math
    rows = gather(_t(data), _t(indices))
    if num_segments is None:
        sorted_reduce = {"sum": math.segment_sum, "mean": math.segment_mean}.get(reduce)
        if sorted_reduce is not None:
            return sorted_reduce(rows, segment_ids)
        from ._math_more import _sorted_num_segments
        num_segments = _sorted_num_segments(segment_ids)
    unsorted = {"sum": math.unsorted_segment_sum, "mean": math.unsorted_segment_mean,
                "sqrt_n": math.unsorted_segment_sqrt_n}[reduce]
    return unsorted(rows, segment_ids, num_segments)


def segment_sum(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """Sums of the rows data[indices] grouped by segment_ids."""
    return _segment("sum", data, indices, segment_ids, num_segments)


def segment_mean(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """Means of the rows data[indices] grouped by segment_ids."""
    return _segment("mean", data, indices, segment_ids, num_segments)


def segment_sqrt_n(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """Sums of the rows data[indices] grouped by segment_ids, over the square root of each group's size."""
    return _segment("sqrt_n", data, indices, segment_ids, num_segments)


def _union(sp_a, sp_b, combine):
    """combine(dense a, dense b) at the union of both index sets (absent entries read as 0)."""
    from ._ops import gather_nd, logical_or, not_equal, ones_like, where
    from .sparse_ops import to_dense
    a, b = to_dense(sp_a), to_dense(sp_b)
    present = logical_or(*[not_equal(to_dense(SparseTensor(s.indices, ones_like(s.values, dtype=_dtypes.int32),
                                                            s.dense_shape)), 0) for s in (sp_a, sp_b)])
    indices = where(present)
    return SparseTensor(indices, gather_nd(combine(a, b), indices), sp_a.dense_shape)


def maximum(sp_a, sp_b, name=None):
    """The element-wise maximum of two SparseTensors of one shape, at the union of their indices."""
    from ._ops import maximum as _maximum
    _check(sp_a, "maximum")
    _check(sp_b, "maximum")
    return _union(sp_a, sp_b, _maximum)


def minimum(sp_a, sp_b, name=None):
    """The element-wise minimum of two SparseTensors of one shape, at the union of their indices."""
    from ._ops import minimum as _minimum
    _check(sp_a, "minimum")
    _check(sp_b, "minimum")
    return _union(sp_a, sp_b, _minimum)


def softmax(sp_input, name=None):
    """Softmax over each innermost row's present entries (absent entries take no part and stay absent)."""
    from ._ops import constant, gather_nd, ones_like, where, zeros_like
    from .nn import softmax as _softmax
    from .sparse_ops import to_dense
    _check(sp_input, "softmax")
    values = sp_input.values
    dense = to_dense(sp_input)
    mask = to_dense(SparseTensor(sp_input.indices, ones_like(values, dtype=_dtypes.bool), sp_input.dense_shape),
                    default_value=False)
    logits = where(mask, dense, zeros_like(dense) + constant(float("-inf"), dtype=values.dtype))
    return SparseTensor(sp_input.indices, gather_nd(_softmax(logits), sp_input.indices), sp_input.dense_shape)


def split(sp_input=None, num_split=None, axis=None, name=None):
    """num_split SparseTensors along axis; the first size % num_split pieces are one longer, as TF's."""
    from .sparse_ops import slice as _slice
    _check(sp_input, "split")
    if num_split is None or axis is None:
        raise ValueError("tf.sparse.split needs num_split and axis")
    shape = [int(d) for d in sp_input.dense_shape.numpy()]
    axis = int(axis) % len(shape)
    size, extra = divmod(shape[axis], int(num_split))
    pieces, start = [], 0
    for k in range(int(num_split)):
        length = size + (1 if k < extra else 0)
        begin = [0] * len(shape)
        begin[axis] = start
        extent = list(shape)
        extent[axis] = length
        pieces.append(_slice(sp_input, begin, extent))
        start += length
    return pieces


def reset_shape(sp_input, new_shape=None):
    """The same entries with dense_shape new_shape (which must hold them and keep the rank), or, when None, the
    tightest shape: each dimension's largest index + 1."""
    from ._ops import add, reduce_max, reduce_all, greater_equal
    from . import errors
    _check(sp_input, "reset_shape")
    if new_shape is None:
        return SparseTensor(sp_input.indices, sp_input.values, add(reduce_max(sp_input.indices, axis=0), 1))
    new_shape = _t(new_shape, dtype=_dtypes.int64)
    if new_shape.shape.rank != 1 or new_shape.shape[0] != sp_input.dense_shape.shape[0]:
        raise ValueError(f"new_shape {new_shape.shape} must be a vector of the input's rank")
    if not bool(reduce_all(greater_equal(new_shape, sp_input.dense_shape))):
        raise errors.InvalidArgumentError("Requires new_shape >= sp_input.dense_shape in every dimension")
    return SparseTensor(sp_input.indices, sp_input.values, new_shape)


def to_indicator(sp_input, vocab_size, name=None):
    """Dense bool [batch..., vocab_size]: True where a row's ids (sp_input's int values) include that id."""
    from ._ops import cast, concat, greater, ones_like, scatter_nd
    _check(sp_input, "to_indicator")
    ids = cast(sp_input.values, _dtypes.int64)
    indices = concat([sp_input.indices[:, :-1], ids[:, None]], axis=1)
    shape = concat([sp_input.dense_shape[:-1], _t([vocab_size], dtype=_dtypes.int64)], 0)
    counts = scatter_nd(indices, ones_like(ids, dtype=_dtypes.int32), shape)
    return greater(counts, 0)


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None, binary_output=False, name=None):
    """Counts (or summed weights, or 1s with binary_output) of each value as a SparseTensor of the values
    present: over all values (axis 0: shape [size]) or per row of a 2-D input (axis -1: [rows, size]); size is
    the largest value + 1, at least minlength, values from maxlength on dropped. Dense or SparseTensor values."""
    import numpy as np
    from . import _C
    from ._ops import constant
    if axis not in (0, -1):
        raise ValueError(f"Unsupported axis value {axis}. Only 0 and -1 are currently supported.")
    sparse = isinstance(values, SparseTensor)
    vals = values.values if sparse else _t(values)
    if not vals.dtype.is_integer:
        raise TypeError(f"bincount takes integer values, got {vals.dtype.name}")
    if weights is not None:
        weights = weights.values if isinstance(weights, SparseTensor) else _t(weights)
    out_dtype = weights.dtype if weights is not None else vals.dtype

    def run(*arrays):
        arrays = [np.asarray(a.numpy() if hasattr(a, "numpy") else a) for a in arrays]
        v = arrays[0]
        if sparse:
            rows_of = arrays[1][:, 0] if axis == -1 else np.zeros(len(v), np.int64)
            nrows = int(arrays[2][0]) if axis == -1 else 1
        else:
            if axis == -1 and v.ndim != 2:
                raise ValueError(f"axis=-1 needs 2-D values, got shape {v.shape}")
            nrows = v.shape[0] if axis == -1 else 1
            rows_of = np.repeat(np.arange(nrows), v.shape[1]) if axis == -1 else np.zeros(v.size, np.int64)
            v = v.reshape(-1)
        w = arrays[-1].reshape(-1) if weights is not None else np.ones(len(v), out_dtype.as_numpy_dtype)
        size = max(int(v.max()) + 1 if v.size else 0, int(minlength or 0))
        if maxlength is not None:
            size = min(size, int(maxlength))
        totals = {}
        for row, value, weight in zip(rows_of.tolist(), v.tolist(), w.tolist()):
            if 0 <= value < size:
                key = (row, value) if axis == -1 else (value,)
                totals[key] = 1 if binary_output else totals.get(key, 0) + weight
        keys = sorted(totals)
        indices = np.asarray(keys, np.int64).reshape(-1, 2 if axis == -1 else 1)
        counts = np.asarray([totals[k] for k in keys], out_dtype.as_numpy_dtype)
        shape = np.asarray([nrows, size] if axis == -1 else [size], np.int64)
        return indices, counts, shape
    inputs = [vals] + ([values.indices, values.dense_shape] if sparse else []) + \
        ([weights] if weights is not None else [])
    if not _C.is_tracing() and not any(t._is_symbolic for t in inputs):
        indices, counts, shape = run(*inputs)
        return SparseTensor(constant(indices), constant(counts, dtype=out_dtype), constant(shape))
    from .function import py_function
    indices, counts, shape = py_function(run, inputs, [_dtypes.int64, out_dtype, _dtypes.int64])
    rank = 2 if axis == -1 else 1
    return SparseTensor(_C.reshape(indices, [-1, rank]), _C.reshape(counts, [-1]), _C.reshape(shape, [rank]))
