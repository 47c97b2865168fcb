"""tf.nn's approximate top-k (computed exactly: exact results satisfy any recall target) and the old
batch_norm_with_global_normalization."""
import collections

from . import _ops
from ._array_ops import _tensor
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
