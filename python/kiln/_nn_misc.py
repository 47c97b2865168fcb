"""tf.nn's approximate top-k (computed exactly: exact results satisfy any recall target), the old
batch_norm_with_global_normalization, and isotonic_regression (pool adjacent violators)."""
import collections

import numpy as np

from . import _ops, dtypes as _dtypes
from . import math as _math
from ._array_ops import _tensor
from ._nn_ctc import _host
from ._nn_stats import batch_normalization

_ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def _top_k_along(operand, k, axis, largest):
    x = _tensor(operand)
    rank = x.shape.rank
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise ValueError(f"reduction_dimension {axis} is out of range for an operand of rank {rank}")
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = _ops.transpose(x, perm) if axis != rank - 1 else x
    values, indices = _ops.top_k(moved if largest else _ops.negative(moved), k)
    if not largest:
        values = _ops.negative(values)
    if axis != rank - 1:
        back = [perm.index(d) for d in range(rank)]
        values, indices = _ops.transpose(values, back), _ops.transpose(indices, back)
    return _ApproxTopK(values, indices)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """The k largest entries along reduction_dimension and their int32 indices, sorted largest first."""
    return _top_k_along(operand, int(k), int(reduction_dimension), True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """The k smallest entries along reduction_dimension and their int32 indices, sorted smallest first."""
    return _top_k_along(operand, int(k), int(reduction_dimension), False)


def batch_norm_with_global_normalization(input, mean, variance, beta, gamma, variance_epsilon,  # noqa: A002
                                         scale_after_normalization, name=None):
    """batch_normalization with offset beta and, when scale_after_normalization, scale gamma."""
    return batch_normalization(input, mean, variance, beta, gamma if scale_after_normalization else None,
                               variance_epsilon)


def _pava_segments(rows):
    """Each row's pool-adjacent-violators blocks for a non-increasing fit: two neighbouring blocks merge while
    the later one's mean is above the earlier's (strictly, as TF's kernel), ids from 0 per row."""
    out = np.zeros(rows.shape, np.int32)
    for r, row in enumerate(rows):
        blocks = []  # [start, sum, count]
        for i, v in enumerate(row.tolist()):
            blocks.append([i, v, 1])
            while len(blocks) > 1 and blocks[-1][1] / blocks[-1][2] > blocks[-2][1] / blocks[-2][2]:
                _, s, c = blocks.pop()
                blocks[-1][1] += s
                blocks[-1][2] += c
        for k, (start, _, count) in enumerate(blocks):
            out[r, start:start + count] = k
    return (out,)


def isotonic_regression(inputs, decreasing=True, axis=-1):
    """(the least-squares non-increasing (non-decreasing unless `decreasing`) fit along `axis`, each element's
    int32 block id): every block holds its inputs' mean, so the gradient averages over each block, as TF's."""
    x = _tensor(inputs)
    if x.dtype in (_dtypes.int8, _dtypes.int16):
        x = _ops.cast(x, _dtypes.float32)
    elif not x.dtype.is_floating:
        x = _ops.cast(x, _dtypes.float64)
    dims = x.shape.as_list()
    if None in dims:
        raise ValueError(f"kiln.nn.isotonic_regression needs the inputs' shape known while tracing, got {x.shape}")
    rank = len(dims)
    axis = axis + rank if axis < 0 else axis
    perm = [d for d in range(rank) if d != axis] + [axis]
    back = [perm.index(d) for d in range(rank)]
    moved = _ops.transpose(x, perm)
    length = dims[axis]
    rows = int(np.prod([dims[d] for d in perm[:-1]]))
    matrix = _ops.reshape(moved if decreasing else _ops.negative(moved), [rows, length])
    (segments,) = _host(_pava_segments, [_ops.stop_gradient(matrix)], [_dtypes.int32], [[rows, length]])
    ids = _ops.add(segments, _ops.constant(np.arange(rows, dtype=np.int32)[:, None] * length))
    flat_ids = _ops.reshape(ids, [-1])
    means = _math.unsorted_segment_mean(_ops.reshape(matrix, [-1]), flat_ids, rows * length)
    fit = _ops.reshape(_ops.gather(means, flat_ids), [rows, length])
    if not decreasing:
        fit = _ops.negative(fit)
    shape_moved = [dims[d] for d in perm]
    return (_ops.transpose(_ops.reshape(fit, shape_moved), back),
            _ops.transpose(_ops.reshape(segments, shape_moved), back))
