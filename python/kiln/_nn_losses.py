"""tf.nn's losses beyond the softmax ones: the sigmoid cross entropies, the Poisson loss, and the two scalings a
custom training loop uses (compute_average_loss, scale_regularization_loss). Composites of differentiable ops, so
their gradients are the composites' (TF's are too: these are Python composites there as well)."""
import math as _math

from . import _ops
from . import errors as _errors
from ._array_ops import _tensor
from ._math_ops import divide_no_nan


def _same_shape(a, b, what):
    """ValueError, as TF's shape merge, when two static shapes cannot be the same."""
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"{what} must have the same shape ({a.shape} vs {b.shape})")


def _logits_and_labels(labels, logits):
    logits = _tensor(logits)
    labels = _ops.convert_to_tensor(labels, dtype_hint=logits.dtype)
    _same_shape(logits, labels, "logits and labels")
    return labels, logits


def _log1p_exp_neg_abs(x):
    """log(1 + exp(-|x|)): never overflows, and keeps its precision for large |x|."""
    return _ops.log1p(_ops.exp(_ops.negative(_ops.abs(x))))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)) computed as max(x, 0) - x z + log(1 + exp(-|x|))."""
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    labels, logits = _logits_and_labels(labels, logits)
    return _ops.add(_ops.subtract(_ops.relu(logits), _ops.multiply(logits, labels)), _log1p_exp_neg_abs(logits))


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """The sigmoid cross entropy with the positive term weighted by pos_weight:
    (1 - z) x + (1 + (q - 1) z) (log(1 + exp(-|x|)) + max(-x, 0))."""
    labels, logits = _logits_and_labels(labels, logits)
    pos_weight = _ops.convert_to_tensor(pos_weight, dtype_hint=logits.dtype)
    log_weight = _ops.add(1.0, _ops.multiply(_ops.subtract(pos_weight, 1.0), labels))
    tail = _ops.add(_log1p_exp_neg_abs(logits), _ops.relu(_ops.negative(logits)))
    return _ops.add(_ops.multiply(_ops.subtract(1.0, labels), logits), _ops.multiply(log_weight, tail))


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, the Poisson negative log likelihood up to log(targets!); with
    compute_full_loss, Stirling's approximation of log(targets!) is added where targets > 1 (TF's choice:
    0 elsewhere, where log(0!) = log(1!) = 0)."""
    log_input = _tensor(log_input)
    targets = _ops.convert_to_tensor(targets, dtype_hint=log_input.dtype)
    _same_shape(log_input, targets, "log_input and targets")
    result = _ops.subtract(_ops.exp(log_input), _ops.multiply(log_input, targets))
    if not compute_full_loss:
        return result
    above_one = _ops.greater(targets, 1.0)
    safe = _ops.where(above_one, targets, _ops.ones_like(targets))  # no log(0) in the branch left out
    stirling = _ops.add(_ops.subtract(_ops.multiply(safe, _ops.log(safe)), safe),
                        _ops.multiply(0.5, _ops.log(_ops.multiply(2 * _math.pi, safe))))
    return _ops.add(result, _ops.where(above_one, stirling, _ops.zeros_like(targets)))


def _num_replicas():
    from .distribute import get_strategy
    return get_strategy().num_replicas_in_sync


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size, 0 when global_batch_size is 0 (TF 2.13+);
    global_batch_size defaults to the batch (the first dimension) times the number of replicas."""
    per_example_loss = _tensor(per_example_loss)
    dtype = per_example_loss.dtype
    if per_example_loss.shape.rank == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         f"Received per_example_loss={per_example_loss} with rank 0")
    if sample_weight is not None:
        weight = _ops.cast(_ops.convert_to_tensor(sample_weight, dtype_hint=dtype), dtype)
        per_example_loss = _ops.multiply(per_example_loss, weight)
    if global_batch_size is None:
        global_batch_size = _ops.multiply(_ops.shape(per_example_loss)[0], _num_replicas())
    size = _ops.convert_to_tensor(global_batch_size)
    if size.shape.rank != 0:
        raise ValueError(f"global_batch_size must be scalar. Received: {global_batch_size}")
    if not size.dtype.is_integer:
        raise TypeError(f"global_batch_size must be an integer. Received: {global_batch_size} of dtype "
                        f"{size.dtype.name}")
    if not size._is_symbolic and int(size.numpy()) < 0:
        raise _errors.InvalidArgumentError(f"global_batch_size must be non-negative. Received: {int(size.numpy())}")
    return divide_no_nan(_ops.reduce_sum(per_example_loss), _ops.cast(size, dtype))


def scale_regularization_loss(regularization_loss):
    """The sum of the regularization losses (a tensor or a list of them) divided by the number of replicas."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = _ops.add_n([_tensor(t) for t in regularization_loss])
    total = _ops.reduce_sum(_tensor(regularization_loss))
    return _ops.divide(total, _ops.cast(_num_replicas(), total.dtype))


__all__ = ["sigmoid_cross_entropy_with_logits", "weighted_cross_entropy_with_logits", "log_poisson_loss",
           "compute_average_loss", "scale_regularization_loss"]
