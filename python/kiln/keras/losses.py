"""kiln.keras.losses: Keras' loss functions and loss objects. The per-sample formulas are the C++
kiln::nn ones (src/nn/losses.cpp), op for op: crossentropy from probabilities clips them to
[1e-7, 1 - 1e-7] and takes logs, sparse labels may have a trailing dim of 1, and the default
reduction is the mean over every element ("sum_over_batch_size")."""
from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from . import backend
from ._layer import _to_tensor
from ._masking import get_mask, masked_weights, weights_from_mask


def _float_pred(fn, y_pred):
    y_pred = _to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        raise ValueError(f"{fn}: y_pred must be float32 or float64, got {y_pred.dtype.name}")
    return y_pred


def _labels_like(fn, y_true, y_pred):
    """y_true as labels for y_pred [..., classes]: a trailing dim of 1 squeezed away, shapes checked."""
    labels = _to_tensor(y_true)
    ps = TensorShape(y_pred.shape)
    ls = TensorShape(labels.shape)
    if ls.rank is not None and ps.rank is not None and ls.rank == ps.rank and ls.rank > 0 and ls[-1] == 1:
        labels = _C.squeeze(labels, [-1])
        ls = TensorShape(labels.shape)
    if ps.rank is not None:
        expected = TensorShape(ps.as_list()[:-1])
        if not ls.is_compatible_with(expected):
            raise ValueError(f"{fn}: y_true has shape {TensorShape(y_true.shape)} but y_pred of shape {ps} needs "
                             f"labels of shape {expected}")
    return labels


def _num_classes(fn, y_pred):
    s = TensorShape(y_pred.shape)
    if s.rank is None or s.rank < 1 or s[-1] is None:
        raise ValueError(f"{fn}: y_pred must have a known last dim (the classes), got shape {s}")
    return s[-1]


def _same_dtype(y_true, y_pred):
    y_true = _to_tensor(y_true)
    return y_true if y_true.dtype == y_pred.dtype else _C.cast(y_true, y_pred.dtype._enum)


def _broadcastable(a, b):
    """NumPy's rule on the known dims (TF's squared_difference broadcasts the same way)."""
    if a.rank is None or b.rank is None:
        return True
    for x, y in zip(reversed(a.as_list()), reversed(b.as_list())):
        if x is not None and y is not None and x != y and x != 1 and y != 1:
            return False
    return True


def _check_same_shape(fn, y_true, y_pred):
    if not _broadcastable(TensorShape(y_true.shape), TensorShape(y_pred.shape)):
        raise ValueError(f"{fn}: y_true has shape {TensorShape(y_true.shape)} but y_pred has shape "
                         f"{TensorShape(y_pred.shape)}")


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1, ignore_class=None):
    """Per-sample crossentropy of integer labels against class probabilities (or logits)."""
    fn = "sparse_categorical_crossentropy"
    if axis != -1 or ignore_class is not None:
        raise NotImplementedError(f"{fn}: only axis=-1 and ignore_class=None are supported")
    y_pred = _float_pred(fn, y_pred)
    classes = _num_classes(fn, y_pred)
    labels = _labels_like(fn, y_true, y_pred)
    if labels.dtype.is_bool or labels.dtype.name == "string":
        raise ValueError(f"{fn}: y_true must hold class numbers, got {labels.dtype.name}")
    if labels.dtype.is_floating:
        labels = _C.cast(labels, _dtypes.int64._enum)
    if labels.dtype != _dtypes.int64:
        labels = _C.cast(labels, _dtypes.int64._enum)
    # Labels with values are checked at once; while tracing (even labels that are constants of the graph) the
    # check would be graph ops whose values Python cannot read.
    if not labels._is_symbolic and not _C.is_tracing() and labels.shape.num_elements():
        lo, hi = int(_C.reduce_min(labels, None, False)), int(_C.reduce_max(labels, None, False))
        if lo < 0 or hi >= classes:
            raise ValueError(f"{fn}: labels must be in [0, {classes}) (y_pred has {classes} classes), got a label "
                             f"{lo if lo < 0 else hi}")
    eps = backend.epsilon()
    logits = y_pred if from_logits else _C.log(_C.clip(y_pred, eps, 1 - eps))
    picked = _C.multiply(_C.one_hot(labels, classes, 1, 0, -1, y_pred.dtype._enum), _C.log_softmax(logits, -1))
    return _C.negative(_C.reduce_sum(picked, -1, False))


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample crossentropy of one-hot (or soft) targets against probabilities (or logits)."""
    fn = "categorical_crossentropy"
    if axis != -1:
        raise NotImplementedError(f"{fn}: only axis=-1 is supported")
    y_pred = _float_pred(fn, y_pred)
    target = _same_dtype(y_true, y_pred)
    _check_same_shape(fn, target, y_pred)
    if label_smoothing:
        classes = _num_classes(fn, y_pred)
        target = _C.add(_C.multiply(target, 1.0 - label_smoothing), label_smoothing / classes)
    if from_logits:
        log_p = _C.log_softmax(y_pred, -1)
    else:
        eps = backend.epsilon()
        p = _C.divide(y_pred, _C.reduce_sum(y_pred, -1, True))
        log_p = _C.log(_C.clip(p, eps, 1 - eps))
    return _C.negative(_C.reduce_sum(_C.multiply(target, log_p), -1, False))


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample mean (over the last axis) of binary crossentropy."""
    fn = "binary_crossentropy"
    y_pred = _float_pred(fn, y_pred)
    target = _same_dtype(y_true, y_pred)
    _check_same_shape(fn, target, y_pred)
    if label_smoothing:
        target = _C.add(_C.multiply(target, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        # max(x, 0) - x * z + log(1 + exp(-|x|)), as tf.nn.sigmoid_cross_entropy_with_logits.
        x = y_pred
        per = _C.add(_C.subtract(_C.relu(x), _C.multiply(x, target)), _C.log1p(_C.exp(_C.negative(_C.abs(x)))))
    else:
        eps = backend.epsilon()
        p = _C.clip(y_pred, eps, 1 - eps)
        per = _C.negative(_C.add(_C.multiply(target, _C.log(p)),
                                 _C.multiply(_C.subtract(1, target), _C.log(_C.subtract(1, p)))))
    return _C.reduce_mean(per, axis, False)


def mean_squared_error(y_true, y_pred):
    fn = "mean_squared_error"
    y_pred = _float_pred(fn, y_pred)
    target = _same_dtype(y_true, y_pred)
    _check_same_shape(fn, target, y_pred)
    return _C.reduce_mean(_C.square(_C.subtract(y_pred, target)), -1, False)


def mean_absolute_error(y_true, y_pred):
    fn = "mean_absolute_error"
    y_pred = _float_pred(fn, y_pred)
    target = _same_dtype(y_true, y_pred)
    _check_same_shape(fn, target, y_pred)
    return _C.reduce_mean(_C.abs(_C.subtract(y_pred, target)), -1, False)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


def _weights_for(sample_weight, values):
    """Sample weights in the values' dtype, a trailing dim of 1 squeezed when the values lack it."""
    w = _to_tensor(sample_weight)
    if w.dtype != values.dtype:
        w = _C.cast(w, values.dtype._enum)
    if w.ndim is not None and values.ndim is not None and w.ndim > values.ndim and w.shape[-1] == 1:
        w = _C.squeeze(w, [-1])
    return w


class Reduction:
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


def squeeze_or_expand_dimensions(y_pred, y_true):
    """Keras' reconciliation of targets with predictions (losses_utils.squeeze_or_expand_dimensions, static
    ranks): when the ranks differ by one other than as labels for a last axis of classes (y_true (N,) against
    y_pred (N, 1)), the size-1 last dim of the longer one is squeezed away."""
    pred_shape, true_shape = TensorShape(y_pred.shape), TensorShape(y_true.shape)
    if pred_shape.rank is None or true_shape.rank is None:
        return y_pred, y_true
    diff = pred_shape.rank - true_shape.rank
    if diff == 1 and pred_shape[-1] == 1:
        y_pred = _C.squeeze(y_pred, [-1])
    elif diff == -1 and true_shape[-1] == 1:
        y_true = _C.squeeze(y_true, [-1])
    return y_pred, y_true


class Loss:
    """tf.keras.losses.Loss: `call(y_true, y_pred)` gives per-sample losses; calling the object weights and
    reduces them."""

    def __init__(self, reduction=Reduction.AUTO, name=None):
        if reduction not in Reduction.all():
            raise ValueError(f"Invalid Reduction Key: {reduction}. Expected keys are \"{Reduction.all()}\"")
        self.reduction = reduction
        self.name = name

    def call(self, y_true, y_pred):
        raise NotImplementedError("Must be implemented in subclasses.")

    def __call__(self, y_true, y_pred, sample_weight=None):
        self._check_distributed_reduction()
        mask = get_mask(y_pred)
        losses = self.call(y_true, y_pred)
        if mask is not None:
            # Keras' masked loss: masked elements weigh 0, and the mean is over the kept ones.
            weights = masked_weights(mask, sample_weight, losses)
            losses = _C.multiply(losses, weights)
            if self.reduction in (Reduction.AUTO, Reduction.SUM_OVER_BATCH_SIZE):
                kept = _C.reduce_sum(_C.multiply(_C.ones_like(losses, None), weights_from_mask(mask, losses)), None,
                                     False)
                return _C.divide(_C.reduce_sum(losses, None, False), kept)
        elif sample_weight is not None:
            losses = _C.multiply(losses, _weights_for(sample_weight, losses))
        if self.reduction == Reduction.NONE:
            return losses
        if self.reduction == Reduction.SUM:
            return _C.reduce_sum(losses, None, False)
        return _C.reduce_mean(losses, None, False)

    def _check_distributed_reduction(self):
        """Keras: under a tf.distribute strategy a per-replica mean would be averaged again over the replicas, so
        a loss reducing over the batch is refused outside compile (which marks its losses as allowed)."""
        if self.reduction in (Reduction.AUTO, Reduction.SUM_OVER_BATCH_SIZE) and \
                not getattr(self, "_allow_sum_over_batch_size", False):
            from ..distribute import has_strategy
            if has_strategy():
                raise ValueError(
                    "Please use `tf.keras.losses.Reduction.SUM` or `tf.keras.losses.Reduction.NONE` for loss "
                    "reduction when losses are used with `tf.distribute.Strategy`, except for specifying losses in "
                    "`Model.compile()` for use by the built-in training looop `Model.fit()`.\nPlease see "
                    "https://www.tensorflow.org/tutorials/distribute/custom_training for more details.")

    def get_config(self):
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    def __init__(self, fn, reduction=Reduction.AUTO, name=None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_pred, y_true = squeeze_or_expand_dimensions(_to_tensor(y_pred), _to_tensor(y_true))
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        return config


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, ignore_class=None, reduction=Reduction.AUTO,
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name, from_logits=from_logits)
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction=Reduction.AUTO,
                 name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, from_logits=from_logits,
                         label_smoothing=label_smoothing)
        self.from_logits = from_logits


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction=Reduction.AUTO,
                 name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction=reduction, name=name, from_logits=from_logits,
                         label_smoothing=label_smoothing)
        self.from_logits = from_logits


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction=reduction, name=name)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction=Reduction.AUTO, name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction=reduction, name=name)


_BY_NAME = {
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "MSE": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "MAE": MeanAbsoluteError,
}
for _cls in (SparseCategoricalCrossentropy, CategoricalCrossentropy, BinaryCrossentropy, MeanSquaredError,
             MeanAbsoluteError):
    _BY_NAME[_cls.__name__] = _cls

from ._losses_extra import (  # noqa: E402,F401
    MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Hinge, SquaredHinge, CategoricalHinge, Huber, LogCosh,
    KLDivergence, Poisson, CosineSimilarity, BinaryFocalCrossentropy, CategoricalFocalCrossentropy,
    mean_absolute_percentage_error, mean_squared_logarithmic_error, hinge, squared_hinge, categorical_hinge, huber,
    log_cosh, logcosh, kl_divergence, kld, KLD, kullback_leibler_divergence, poisson, cosine_similarity,
    binary_focal_crossentropy, categorical_focal_crossentropy, mape, MAPE, msle, MSLE)
from . import _losses_extra  # noqa: E402

_BY_NAME.update(_losses_extra.FUNCTIONS)
for _cls in _losses_extra.CLASSES:
    _BY_NAME[_cls.__name__] = _cls


def get(identifier):
    """A Loss from a name ("sparse_categorical_crossentropy", "mse", ...), a Loss object, or a function
    (y_true, y_pred) -> per-sample losses."""
    if identifier is None:
        return None
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            known = ", ".join(sorted(k for k in _BY_NAME if not k[0].isupper()))
            raise ValueError(f"Unknown loss function: '{identifier}'. Known loss names: {known}; or pass a "
                             "kiln.keras.losses.Loss object or a function (y_true, y_pred) -> losses.")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return LossFunctionWrapper(identifier, name=getattr(identifier, "__name__", None))
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")


def serialize(loss):
    return loss.name if isinstance(loss, Loss) else getattr(loss, "__name__", repr(loss))


def deserialize(config, custom_objects=None):
    from ._serialization import deserialize_keras_object
    table = {k: v for k, v in _BY_NAME.items()}
    obj = deserialize_keras_object(config, module_objects=table, custom_objects=custom_objects,
                                   printable_module_name="loss function")
    return obj() if isinstance(obj, type) else obj
