"""tf.nn.embedding_lookup, embedding_lookup_sparse and safe_embedding_lookup_sparse as gathers and segment
sums. A list of params is TF 2's "div" sharding: ids assigned to shards in contiguous blocks (the first
total % shards shards one id longer), each id's row found in the concatenation of the shards."""
import numpy as np

from . import _ops, dtypes as _dtypes
from . import math as _math
from ._array_ops import _tensor
from ._math_ops import divide_no_nan
from ._nn_conv import static_dims
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor


def _shards(params, what="params"):
    if params is None:
        raise ValueError(f"{what} must be specified")
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Length of params is currently 0. Need at least one param.")
        return [_tensor(p) for p in params]
    return [_tensor(params)]


def _div_rows(shards, flat_ids):
    """Each id's row in the concatenated shards under the "div" strategy."""
    sizes = [s.shape[0] for s in shards]
    if None in sizes:
        raise ValueError("kiln.nn.embedding_lookup needs every shard's first dimension known")
    n, total = len(shards), sum(sizes)
    per, extras = total // n, total % n
    ids = _ops.cast(flat_ids, _dtypes.int64)
    longer = _ops.floordiv(ids, per + 1)
    shard = longer if per == 0 else _ops.maximum(longer, _ops.floordiv(_ops.subtract(ids, extras), per))
    within = _ops.where(_ops.less(shard, extras), _ops.floormod(ids, per + 1),
                        _ops.floormod(_ops.subtract(ids, extras), max(per, 1)))
    starts = [0]
    for s in sizes[:-1]:
        starts.append(starts[-1] + s)
    return _ops.add(_ops.gather(_ops.constant(starts, _dtypes.int64), shard), within)


def _lookup(shards, ids, max_norm):
    ids = _tensor(ids)
    if len(shards) == 1:
        rows = _ops.gather(shards[0], ids)
    else:
        flat = _ops.reshape(ids, [-1])
        rows = _ops.gather(_ops.concat(shards, 0), _div_rows(shards, flat))
        rows = _ops.reshape(rows, static_dims(ids.shape.as_list(), shards[0].shape.as_list()[1:]))
    if max_norm is None:
        return rows
    # Each looked-up embedding (the axes params adds after the ids' axes) scaled to an L2 norm of at most max_norm.
    return _ops.clip_by_norm(rows, max_norm, axes=list(range(ids.shape.rank, rows.shape.rank)))


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of params (a tensor, or a list of "div" shards) at ids; a RaggedTensor of ids gives a
    RaggedTensor of embeddings. max_norm clips each embedding's L2 norm."""
    shards = _shards(params)
    if isinstance(ids, RaggedTensor):
        return ids.with_flat_values(_lookup(shards, ids.flat_values, max_norm))
    return _lookup(shards, ids, max_norm)


def _check_combiner(combiner):
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")


def _combine(rows, weights, segments, num_segments, combiner):
    """Weighted rows combined per segment: sum, mean (/ sum of weights) or sqrtn (/ sqrt of the sum of
    squared weights); a segment without rows (or whose weights sum to 0) gives 0."""
    low = rows.dtype in (_dtypes.float16, _dtypes.bfloat16)
    dtype = rows.dtype
    if low:
        rows = _ops.cast(rows, _dtypes.float32)
    weights = _ops.cast(weights, rows.dtype)
    w = _ops.reshape(weights, [-1] + [1] * (rows.shape.rank - 1))

    def total(x):
        if num_segments is None:
            return _math.segment_sum(x, segments)
        return _math.unsorted_segment_sum(x, segments, num_segments)

    summed = total(_ops.multiply(rows, w))
    if combiner == "mean":
        summed = divide_no_nan(summed, total(w))
    elif combiner == "sqrtn":
        summed = divide_no_nan(summed, _ops.sqrt(total(_ops.square(w))))
    return _ops.cast(summed, dtype) if low else summed


def _ids_and_rows(sp_ids, what):
    """(ids, the segment (output row) of each, the number of rows or None for TF's segment_sum count)."""
    if isinstance(sp_ids, SparseTensor):
        return sp_ids.values, _ops.slice(sp_ids.indices, [0, 0], [-1, 1])[:, 0], None
    if isinstance(sp_ids, RaggedTensor):
        if sp_ids.ragged_rank != 1 or sp_ids.flat_values.shape.rank != 1:
            raise ValueError(f"{what} must be a RaggedTensor of rank 2")
        return sp_ids.flat_values, sp_ids.value_rowids(), _static_rows(sp_ids.row_splits.shape[0], sp_ids.nrows())
    raise TypeError(f"{what} must be SparseTensor, got {type(sp_ids)}")


def _static_rows(splits, nrows):
    """The number of rows as a Python int (segment sums take one): from the static shape, else the value."""
    if splits is not None:
        return splits - 1
    if nrows._is_symbolic:
        raise ValueError("kiln.nn: the number of rows of the ids must be known while tracing")
    return int(nrows.numpy())


def _weight_values(sp_ids, sp_weights, ids):
    if sp_weights is None:
        return None
    if type(sp_weights) is not type(sp_ids):
        raise TypeError(f"sp_weights must be either None or SparseTensor,got {type(sp_weights)}")
    weights = sp_weights.values if isinstance(sp_weights, SparseTensor) else sp_weights.flat_values
    if not weights.shape.is_compatible_with(ids.shape):
        raise ValueError(f"Shapes {ids.shape} and {weights.shape} are incompatible")
    return weights


def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None, name=None,
                            allow_fast_lookup=False):
    """Per row of sp_ids (a 2-D SparseTensor or RaggedTensor of ids), its embeddings weighted by sp_weights
    (or 1) and combined by `combiner` ("mean" by default). For a SparseTensor the rows are counted as TF's
    segment_sum counts them: up to the last row holding an id."""
    combiner = "mean" if combiner is None else combiner
    _check_combiner(combiner)
    shards = _shards(params)
    ids, segments, num_rows = _ids_and_rows(sp_ids, "sp_ids")
    weights = _weight_values(sp_ids, sp_weights, ids)
    rows = _lookup(shards, ids, max_norm)
    if weights is None:
        weights = _ops.ones_like(ids, dtype=rows.dtype)
    return _combine(rows, weights, _ops.cast(segments, _dtypes.int32), num_rows, combiner)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean",
                                 default_id=None, max_norm=None, name=None, allow_fast_lookup=False):
    """embedding_lookup_sparse over sparse_ids of any rank >= 2 (output [d0, ..., dn-1, embedding dims]) that
    leaves out ids < 0 (and, unless combiner is "sum", weights <= 0); a row left with no ids gives the
    embedding of default_id, or zeros without one."""
    _check_combiner(combiner)
    if embedding_weights is None or (isinstance(embedding_weights, (list, tuple)) and not embedding_weights):
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    shards = _shards(embedding_weights)
    if isinstance(sparse_ids, RaggedTensor):
        ids, segments, num_rows = _ids_and_rows(sparse_ids, "sparse_ids")
        out_dims = [None]
    elif isinstance(sparse_ids, SparseTensor):
        ids = sparse_ids.values
        outer = sparse_ids.dense_shape[:-1]
        # Each id's row: its index without the last coordinate, flattened row-major over dense_shape[:-1].
        strides = _ops.cast(_math.cumprod(outer, exclusive=True, reverse=True), _dtypes.int64)
        coords = _ops.slice(sparse_ids.indices, [0, 0], [-1, sparse_ids.indices.shape[1] - 1])
        segments = _ops.reduce_sum(_ops.multiply(coords, strides), axis=1)
        if None in sparse_ids.shape.as_list():
            raise ValueError(f"kiln.nn.safe_embedding_lookup_sparse: the dense shape of sparse_ids must be known "
                             f"while tracing, got {sparse_ids.shape}")
        num_rows = int(np.prod(sparse_ids.shape.as_list()[:-1]))
        out_dims = sparse_ids.shape.as_list()[:-1]
    else:
        raise TypeError(f"sparse_ids must be SparseTensor or RaggedTensor, got {type(sparse_ids)}")
    weights = _weight_values(sparse_ids, sparse_weights, ids)
    valid = _ops.greater_equal(ids, 0)
    if weights is not None and combiner != "sum":
        valid = _ops.logical_and(valid, _ops.greater(weights, 0))
    safe_ids = _ops.where(valid, ids, _ops.zeros_like(ids))
    rows = _lookup(shards, safe_ids, max_norm)
    if weights is None:
        weights = _ops.ones_like(ids, dtype=rows.dtype)
    weights = _ops.cast(weights, rows.dtype)
    weights = _ops.where(valid, weights, _ops.zeros_like(weights))
    # Left-out ids take no part at all: their (stand-in) rows are zeroed, not weighted by 0 (no 0 * inf).
    mask = _ops.reshape(valid, [-1] + [1] * (rows.shape.rank - 1))
    rows = _ops.where(mask, rows, _ops.zeros_like(rows))
    segments = _ops.cast(segments, _dtypes.int32)
    result = _combine(rows, weights, segments, num_rows, combiner)
    present = _math.unsorted_segment_sum(_ops.cast(valid, _dtypes.int32), segments, num_rows)
    empty = _ops.reshape(_ops.equal(present, 0), [-1] + [1] * (result.shape.rank - 1))
    filler = _ops.zeros_like(result) if default_id is None else _lookup(
        shards, _ops.cast(_ops.constant([int(default_id)]), ids.dtype), max_norm)
    result = _ops.where(empty, _ops.cast(filler, result.dtype), result)
    return _ops.reshape(result, static_dims(out_dims, result.shape.as_list()[1:]))
