"""The rest of Keras 2.15's metrics: means of per-sample functions (the losses', top-k accuracy), the
confusion-count family (TruePositives ... AUC, PrecisionAtRecall ...; a prediction counts as positive when it is
strictly above a threshold, as Keras'), the IoU family, R2Score and F1Score / FBetaScore."""
import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from . import backend
from . import _losses_extra as _lx
from ._layer import _to_tensor
from .losses import _weights_for
from .metrics import Mean, MeanMetricWrapper, Metric


def _div_no_nan(a, b):
    zero = _C.equal(b, 0.0)
    return _C.where(zero, _C.multiply(a, 0.0), _C.divide(a, _C.where(zero, _C.add(_C.multiply(b, 0.0), 1.0), b)))


def _float(x, dtype):
    x = _to_tensor(x)
    return x if x.dtype == dtype else _C.cast(x, dtype._enum)


# ---- means of per-sample functions ----------------------------------------------------------------------------

class _Wrapped(MeanMetricWrapper):
    """A MeanMetricWrapper whose config lists the function's settings (Keras' get_config)."""

    _function = None
    _default_name = None

    def __init__(self, name=None, dtype=None, **kwargs):
        super().__init__(type(self)._function, name=name or self._default_name, dtype=dtype, **kwargs)

    def get_config(self):
        config = {"name": self.name, "dtype": self.dtype}
        config.update(self._fn_kwargs)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _metric_class(name, fn, default_name, doc, **settings):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        values = dict(settings)
        for key, value in kwargs.items():
            if key not in values:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{key}'")
            values[key] = value
        _Wrapped.__init__(self, name=name, dtype=dtype, **values)

    cls = type(name, (_Wrapped,), {"__init__": __init__, "__doc__": doc, "_function": staticmethod(fn),
                                   "_default_name": default_name})
    cls.__module__ = __name__
    return cls


def cosine_similarity(y_true, y_pred, axis=-1):
    """The metric: the cosine of the angle between y_true and y_pred along `axis` (1 is best)."""
    return _C.negative(_lx.cosine_similarity(y_true, y_pred, axis))


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the true class (the argmax of one-hot y_true) is among the k highest predictions."""
    return sparse_top_k_categorical_accuracy(_C.argmax(_to_tensor(y_true), -1, _dtypes.int64._enum), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the true class is among the k highest predictions (ties with the k-th count as in, as TF's
    in_top_k)."""
    y_pred = _to_tensor(y_pred)
    labels = _to_tensor(y_true)
    if labels.ndim == y_pred.ndim:
        labels = _C.squeeze(labels, [-1])
    labels = _C.cast(labels, _dtypes.int64._enum)
    classes = y_pred.shape[-1]
    target = _C.reduce_sum(_C.multiply(y_pred, _C.one_hot(labels, classes, 1.0, 0.0, -1, y_pred.dtype._enum)),
                           [-1], True)
    higher = _C.reduce_sum(_C.cast(_C.greater(y_pred, target), y_pred.dtype._enum), [-1], False)
    out_dtype = y_pred.dtype if y_pred.dtype.is_floating else _dtypes.float32
    return _C.cast(_C.less(higher, float(min(k, classes))), out_dtype._enum)


def _binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    from .losses import binary_crossentropy
    return binary_crossentropy(y_true, y_pred, from_logits=from_logits, label_smoothing=label_smoothing)


def _categorical_hinge_metric(y_true, y_pred):
    return _lx.categorical_hinge(y_true, y_pred)


BinaryCrossentropy = _metric_class("BinaryCrossentropy", _binary_crossentropy, "binary_crossentropy",
                                   "The mean binary crossentropy.", from_logits=False, label_smoothing=0.0)
CategoricalHinge = _metric_class("CategoricalHinge", _categorical_hinge_metric, "categorical_hinge",
                                 "The mean categorical hinge.")
CosineSimilarity = _metric_class("CosineSimilarity", cosine_similarity, "cosine_similarity",
                                 "The mean cosine similarity.", axis=-1)
Hinge = _metric_class("Hinge", _lx.hinge, "hinge", "The mean hinge loss.")
SquaredHinge = _metric_class("SquaredHinge", _lx.squared_hinge, "squared_hinge", "The mean squared hinge loss.")
KLDivergence = _metric_class("KLDivergence", _lx.kl_divergence, "kullback_leibler_divergence",
                             "The mean Kullback-Leibler divergence.")
LogCoshError = _metric_class("LogCoshError", _lx.log_cosh, "logcosh", "The mean log-cosh error.")
MeanAbsolutePercentageError = _metric_class("MeanAbsolutePercentageError", _lx.mean_absolute_percentage_error,
                                            "mean_absolute_percentage_error", "The mean absolute percentage error.")
MeanSquaredLogarithmicError = _metric_class("MeanSquaredLogarithmicError", _lx.mean_squared_logarithmic_error,
                                            "mean_squared_logarithmic_error", "The mean squared logarithmic error.")
Poisson = _metric_class("Poisson", _lx.poisson, "poisson", "The mean Poisson loss.")
TopKCategoricalAccuracy = _metric_class("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                        "top_k_categorical_accuracy",
                                        "How often the one-hot target is among the k highest predictions.", k=5)
SparseTopKCategoricalAccuracy = _metric_class("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                              "sparse_top_k_categorical_accuracy",
                                              "How often the integer target is among the k highest predictions.",
                                              k=5)


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean squared error over everything seen."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _float(y_pred, self._dtype)
        y_true = _float(y_true, self._dtype)
        super().update_state(_C.square(_C.subtract(y_pred, y_true)), sample_weight)

    def result(self):
        return _C.sqrt(super().result())


class MeanRelativeError(Mean):
    """The mean of |y_pred - y_true| / normalizer."""

    def __init__(self, normalizer, name=None, dtype=None):
        super().__init__(name=name or "mean_relative_error", dtype=dtype)
        self.normalizer = normalizer

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _float(y_pred, self._dtype)
        y_true = _float(y_true, self._dtype)
        normalizer = _float(self.normalizer, self._dtype)
        super().update_state(_div_no_nan(_C.abs(_C.subtract(y_pred, y_true)), normalizer), sample_weight)

    def get_config(self):
        config = super().get_config()
        config["normalizer"] = np.asarray(self.normalizer).tolist()
        return config


class MeanTensor(Metric):
    """The element-wise (weighted) mean of same-shaped tensors."""

    def __init__(self, name="mean_tensor", dtype=None, shape=None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None if shape is None else list(shape)
        self.total = self.count = None
        if shape is not None:
            self._build(self._shape)

    def _build(self, shape):
        self._shape = list(shape)
        self.total = self.add_weight("total", self._shape)
        self.count = self.add_weight("count", self._shape)

    def update_state(self, values, sample_weight=None):
        v = _float(values, self._dtype)
        if self.total is None:
            self._build(TensorShape(v.shape).as_list())
        elif TensorShape(v.shape).as_list() != self._shape:
            raise ValueError(f"MeanTensor input values must always have the same shape. Expected shape (set during "
                             f"the first call): {self._shape}. Got: {TensorShape(v.shape).as_list()}.")
        ones = _C.ones_like(v, None)
        if sample_weight is not None:
            w = _weights_for(sample_weight, v)
            v = _C.multiply(v, w)
            ones = _C.multiply(ones, w)
        self.total.assign_add(v)
        self.count.assign_add(ones)

    def result(self):
        if self.total is None:
            raise ValueError("MeanTensor does not have any value yet. Please call the MeanTensor instance or use "
                             "`.update_state(value)` before retrieving the result.")
        return _div_no_nan(self.total.read_value(), self.count.read_value())

    def reset_state(self):
        if self.total is not None:
            super().reset_state()


# ---- confusion counts ------------------------------------------------------------------------------------------

def _thresholds_list(thresholds, default=0.5):
    if thresholds is None:
        return [default], True
    if isinstance(thresholds, (list, tuple)):
        values = [float(t) for t in thresholds]
        single = False
    else:
        values, single = [float(thresholds)], True
    for t in values:
        if not 0.0 <= t <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {values}")
    return values, single


class _ConfusionCounts(Metric):
    """Weighted counts of true/false positives/negatives at each threshold, of predictions flattened (a class_id
    column first; top_k: only each row's k highest predictions may be positive)."""

    def __init__(self, thresholds, name, dtype, class_id=None, top_k=None, counts=("tp", "fp", "tn", "fn")):
        super().__init__(name=name, dtype=dtype)
        self._values = thresholds
        self.class_id = class_id
        self.top_k = top_k
        self._counts = {}
        for key in counts:
            self._counts[key] = self.add_weight(
                {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
                 "fn": "false_negatives"}[key], [len(thresholds)])

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _float(y_pred, self._dtype)
        y_true = _float(y_true, self._dtype)
        if self.top_k is not None:
            # Only each row's k highest (the first ones among ties, as tf.math.top_k) may be positive.
            indices = _C.top_k(y_pred, self.top_k)[1]
            chosen = _C.reduce_sum(_C.one_hot(indices, y_pred.shape[-1], 1.0, 0.0, -1, self._dtype._enum), [-2],
                                   False)
            y_pred = _C.where(_C.greater(chosen, 0.0), y_pred, float("-inf"))
        if self.class_id is not None:
            y_pred = _C.slice(y_pred, [0] * (y_pred.ndim - 1) + [self.class_id], [-1] * (y_pred.ndim - 1) + [1])
            y_true = _C.slice(y_true, [0] * (y_true.ndim - 1) + [self.class_id], [-1] * (y_true.ndim - 1) + [1])
        weights = _C.ones_like(y_pred, None)
        if sample_weight is not None:
            w = _float(sample_weight, self._dtype)
            if w.ndim < y_pred.ndim:
                w = _C.reshape(w, TensorShape(w.shape).as_list() + [1] * (y_pred.ndim - w.ndim))
            weights = _C.multiply(weights, w)
        pred = _C.reshape(y_pred, [1, -1])
        label = _C.reshape(_C.greater(_C.reshape(y_true, [1, -1]), 0.5), [1, -1])
        weights = _C.reshape(weights, [1, -1])
        thresholds = _C.cast(_C.constant(np.asarray(self._values, np.float64).reshape(-1, 1), None),
                             self._dtype._enum)
        above = _C.greater(pred, thresholds)
        zero = _C.multiply(weights, 0.0)
        cases = {"tp": _C.logical_and(above, label), "fp": _C.logical_and(above, _C.logical_not(label)),
                 "tn": _C.logical_and(_C.logical_not(above), _C.logical_not(label)),
                 "fn": _C.logical_and(_C.logical_not(above), label)}
        for key, var in self._counts.items():
            var.assign_add(_C.reduce_sum(_C.where(cases[key], weights, zero), [1], False))

    def _read(self, key):
        return self._counts[key].read_value()

    def reset_state(self):
        for v in self._counts.values():
            v.assign(_C.zeros_like(v.read_value(), None))


class _CountMetric(_ConfusionCounts):
    _key = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        values, self._single = _thresholds_list(thresholds)
        super().__init__(values, name, dtype, counts=(self._key,))
        self.init_thresholds = thresholds

    def result(self):
        out = self._read(self._key)
        return _C.reshape(out, []) if self._single else out

    def get_config(self):
        config = super().get_config()
        config["thresholds"] = self.init_thresholds
        return config


class TruePositives(_CountMetric):
    _key = "tp"


class FalsePositives(_CountMetric):
    _key = "fp"


class TrueNegatives(_CountMetric):
    _key = "tn"


class FalseNegatives(_CountMetric):
    _key = "fn"


class _PrecisionRecall(_ConfusionCounts):
    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        default = float("-inf") if top_k is not None else 0.5  # top_k alone: each of the k highest is positive
        values, self._single = _thresholds_list(thresholds, default)
        super().__init__(values, name, dtype, class_id=class_id, top_k=top_k, counts=("tp", "fp", "fn"))
        self.init_thresholds = thresholds

    def get_config(self):
        config = super().get_config()
        config.update(thresholds=self.init_thresholds, top_k=self.top_k, class_id=self.class_id)
        return config

    def _finish(self, value):
        return _C.reshape(value, []) if self._single else value


class Precision(_PrecisionRecall):
    """tp / (tp + fp) (0 when nothing was predicted positive)."""

    def result(self):
        tp = self._read("tp")
        return self._finish(_div_no_nan(tp, _C.add(tp, self._read("fp"))))


class Recall(_PrecisionRecall):
    """tp / (tp + fn) (0 when there were no positives)."""

    def result(self):
        tp = self._read("tp")
        return self._finish(_div_no_nan(tp, _C.add(tp, self._read("fn"))))


def _even_thresholds(num_thresholds, low, high):
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [low] + inner + [high]


class AUC(_ConfusionCounts):
    """The area under the ROC or PR curve from confusion counts at num_thresholds thresholds: Riemann sums with
    Keras' "interpolation" (trapezoids for ROC, Davis & Goadrich's interpolation for PR), "minoring" or
    "majoring"."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        if multi_label or label_weights is not None:
            raise NotImplementedError("kiln.keras.metrics.AUC: multi_label and label_weights are not supported")
        curve = curve.upper() if isinstance(curve, str) else curve
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["ROC", "PR"]')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". Expected values are '
                             '["interpolation", "majoring", "minoring"]')
        if thresholds is not None:
            values = [-backend.epsilon()] + sorted(float(t) for t in thresholds) + [1.0 + backend.epsilon()]
            num_thresholds = len(values)
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            values = _even_thresholds(num_thresholds, -backend.epsilon(), 1.0 + backend.epsilon())
        self.num_thresholds = num_thresholds
        self.curve = curve
        self.summation_method = summation_method
        self.multi_label = False
        self.from_logits = from_logits
        self._init_thresholds = thresholds is not None
        super().__init__(values, name or "auc", dtype)

    @property
    def thresholds(self):
        return list(self._values)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.from_logits:
            y_pred = _C.sigmoid(_float(y_pred, self._dtype))
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        tp, fp, tn, fn = (self._read(k) for k in ("tp", "fp", "tn", "fn"))
        n = self.num_thresholds

        def head(t):
            return _C.slice(t, [0], [n - 1])

        def tail(t):
            return _C.slice(t, [1], [n - 1])

        if self.curve == "PR" and self.summation_method == "interpolation":
            dtp = _C.subtract(head(tp), tail(tp))
            p = _C.add(tp, fp)
            dp = _C.subtract(head(p), tail(p))
            slope = _div_no_nan(dtp, _C.maximum(dp, 0.0))
            intercept = _C.subtract(tail(tp), _C.multiply(slope, tail(p)))
            both = _C.logical_and(_C.greater(head(p), 0.0), _C.greater(tail(p), 0.0))
            ratio = _C.where(both, _div_no_nan(head(p), _C.maximum(tail(p), 0.0)), _C.ones_like(tail(p), None))
            increments = _div_no_nan(_C.multiply(slope, _C.add(dtp, _C.multiply(intercept, _C.log(ratio)))),
                                     _C.maximum(_C.add(tail(tp), tail(fn)), 0.0))
            return _C.reduce_sum(increments, None, False)
        recall = _div_no_nan(tp, _C.add(tp, fn))
        if self.curve == "ROC":
            x, y = _div_no_nan(fp, _C.add(fp, tn)), recall
        else:
            x, y = recall, _div_no_nan(tp, _C.add(tp, fp))
        if self.summation_method == "interpolation":
            heights = _C.divide(_C.add(head(y), tail(y)), 2.0)
        elif self.summation_method == "minoring":
            heights = _C.minimum(head(y), tail(y))
        else:
            heights = _C.maximum(head(y), tail(y))
        return _C.reduce_sum(_C.multiply(_C.subtract(head(x), tail(x)), heights), None, False)

    def get_config(self):
        config = super().get_config()
        config.update(num_thresholds=self.num_thresholds, curve=self.curve, summation_method=self.summation_method,
                      multi_label=False, num_labels=None, label_weights=None, from_logits=self.from_logits)
        if self._init_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config


def _best_under_constraint(constraint, dependent, value):
    """The largest `dependent` where `constraint` >= value, 0 when there is none (Keras' _find_max_under_constraint)."""
    feasible = _C.greater_equal(constraint, float(value))
    best = _C.reduce_max(_C.where(feasible, dependent, -1.0), None, False)
    return _C.maximum(best, 0.0)


class _AtConstraint(_ConfusionCounts):
    _argument = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if not 0 <= value <= 1:
            raise ValueError(f"Argument `{self._argument}` must be in the range [0, 1]. Received: "
                             f"{self._argument}={value}")
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value = float(value)
        self.num_thresholds = num_thresholds
        values = [0.5] if num_thresholds == 1 else _even_thresholds(num_thresholds, 0.0, 1.0)
        super().__init__(values, name, dtype, class_id=class_id)

    def _rates(self):
        tp, fp, tn, fn = (self._read(k) for k in ("tp", "fp", "tn", "fn"))
        return {"sensitivity": _div_no_nan(tp, _C.add(tp, fn)), "specificity": _div_no_nan(tn, _C.add(tn, fp)),
                "precision": _div_no_nan(tp, _C.add(tp, fp))}

    def get_config(self):
        config = super().get_config()
        config.update({self._argument: self.value, "num_thresholds": self.num_thresholds, "class_id": self.class_id})
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class SensitivityAtSpecificity(_AtConstraint):
    _argument = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return _best_under_constraint(r["specificity"], r["sensitivity"], self.value)


class SpecificityAtSensitivity(_AtConstraint):
    _argument = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return _best_under_constraint(r["sensitivity"], r["specificity"], self.value)


class PrecisionAtRecall(_AtConstraint):
    _argument = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return _best_under_constraint(r["sensitivity"], r["precision"], self.value)


class RecallAtPrecision(_AtConstraint):
    _argument = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def result(self):
        r = self._rates()
        return _best_under_constraint(r["precision"], r["sensitivity"], self.value)


# ---- IoU -------------------------------------------------------------------------------------------------------

class _IoUBase(Metric):
    """A num_classes x num_classes confusion matrix (rows: true class, columns: predicted) accumulated over the
    updates; ignore_class entries are left out."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = int(num_classes)
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self.total_cm = self.add_weight("total_confusion_matrix", [self.num_classes, self.num_classes],
                                        dtype="float64")

    def _classes(self, y, sparse):
        y = _to_tensor(y)
        if not sparse:
            y = _C.argmax(y, self.axis, _dtypes.int64._enum)
        return _C.reshape(_C.cast(y, _dtypes.int64._enum), [-1])

    def update_state(self, y_true, y_pred, sample_weight=None):
        t = self._classes(y_true, self.sparse_y_true)
        p = self._classes(y_pred, self.sparse_y_pred)
        w = _C.ones_like(_C.cast(t, _dtypes.float64._enum), None)
        if sample_weight is not None:
            w = _C.multiply(w, _C.reshape(_float(sample_weight, _dtypes.float64), [-1]))
        if self.ignore_class is not None:
            w = _C.where(_C.equal(t, int(self.ignore_class)), _C.multiply(w, 0.0), w)
        n = self.num_classes
        index = _C.add(_C.multiply(t, n), p)
        cm = _C.unsorted_segment_sum(w, index, n * n)
        self.total_cm.assign_add(_C.reshape(cm, [n, n]))

    def _iou(self):
        cm = self.total_cm.read_value()
        rows = _C.reduce_sum(cm, [1], False)
        cols = _C.reduce_sum(cm, [0], False)
        tp = _C.reduce_sum(_C.multiply(cm, _C.constant(np.eye(self.num_classes), None)), [1], False)
        denominator = _C.subtract(_C.add(rows, cols), tp)
        return tp, denominator

    def _mean_over(self, ids):
        tp, denominator = self._iou()
        if ids is not None:
            index = _C.constant(np.asarray(ids, np.int64), None)
            tp, denominator = _C.gather(tp, index, 0), _C.gather(denominator, index, 0)
        valid = _C.reduce_sum(_C.cast(_C.not_equal(denominator, 0.0), _dtypes.float64._enum), None, False)
        iou = _div_no_nan(tp, denominator)
        return _C.cast(_div_no_nan(_C.reduce_sum(iou, None, False), valid), self._dtype._enum)

    def get_config(self):
        config = super().get_config()
        config.update(num_classes=self.num_classes, ignore_class=self.ignore_class, sparse_y_true=self.sparse_y_true,
                      sparse_y_pred=self.sparse_y_pred, axis=self.axis)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class IoU(_IoUBase):
    """The mean of tp / (tp + fp + fn) over target_class_ids (the classes that occurred)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, sparse_y_true, sparse_y_pred, axis)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is "
                             f"[{0}, {num_classes}).")
        self.target_class_ids = list(target_class_ids)

    def result(self):
        return self._mean_over(self.target_class_ids)

    def get_config(self):
        config = super().get_config()
        config["target_class_ids"] = self.target_class_ids
        return config


class MeanIoU(_IoUBase):
    """The mean IoU over the classes that occurred (as labels or predictions)."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, sparse_y_true, sparse_y_pred, axis)

    def result(self):
        return self._mean_over(None)


class BinaryIoU(IoU):
    """IoU of predictions thresholded at `threshold` (class 1 above it) against 0/1 labels."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(2, target_class_ids, name=name, dtype=dtype)
        self.threshold = float(threshold)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = _C.cast(_C.greater(_float(y_pred, self._dtype), self.threshold), _dtypes.int64._enum)
        y_true = _C.cast(_C.greater(_float(y_true, self._dtype), 0.5), _dtypes.int64._enum)
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "target_class_ids": self.target_class_ids,
                "threshold": self.threshold}


class OneHotIoU(IoU):
    """IoU with one-hot labels and per-class scores (argmax on both)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False, sparse_y_pred, axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]  # always one-hot
        return config


class OneHotMeanIoU(MeanIoU):
    """MeanIoU with one-hot labels and per-class scores (argmax on both)."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name, dtype, ignore_class, False, sparse_y_pred, axis)

    def get_config(self):
        config = super().get_config()
        del config["sparse_y_true"]  # always one-hot
        return config


# ---- R2Score, F1Score / FBetaScore ------------------------------------------------------------------------------

class R2Score(Metric):
    """1 - SS_res / SS_tot per output, then averaged ("uniform_average"), weighted by SS_tot
    ("variance_weighted") or kept (None); num_regressors > 0 gives the adjusted R^2."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in (None, "uniform_average", "variance_weighted"):
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of {{None, "
                             f"'uniform_average', 'variance_weighted'}}. Received: class_aggregation="
                             f"{class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value >= 0. Received: "
                             f"num_regressors={num_regressors}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_weight("num_samples", dtype="int32")
        self._built = False

    def _build(self, outputs):
        for name in ("squared_sum", "sum", "total_mse", "count"):
            setattr(self, name, self.add_weight(name, [outputs]))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _float(y_true, self._dtype)
        y_pred = _float(y_pred, self._dtype)
        if y_true.ndim == 1:
            y_true, y_pred = _C.expand_dims(y_true, 1), _C.expand_dims(y_pred, 1)
        if not self._built:
            self._build(TensorShape(y_true.shape)[-1])
        w = _C.ones_like(y_true, None)
        if sample_weight is not None:
            sw = _float(sample_weight, self._dtype)
            if sw.ndim == 1:
                sw = _C.expand_dims(sw, 1)
            w = _C.multiply(w, sw)
        wy = _C.multiply(y_true, w)
        self.sum.assign_add(_C.reduce_sum(wy, [0], False))
        self.squared_sum.assign_add(_C.reduce_sum(_C.multiply(y_true, wy), [0], False))
        self.total_mse.assign_add(_C.reduce_sum(_C.multiply(_C.square(_C.subtract(y_true, y_pred)), w), [0], False))
        self.count.assign_add(_C.reduce_sum(w, [0], False))
        rows = _C.slice(_C.shape(y_true), [0], [1])
        self.num_samples.assign_add(_C.reshape(_C.cast(rows, _dtypes.int32._enum), []))

    def result(self):
        mean = _C.divide(self.sum.read_value(), self.count.read_value())
        total = _C.subtract(self.squared_sum.read_value(), _C.multiply(self.sum.read_value(), mean))
        raw = _C.subtract(1.0, _C.divide(self.total_mse.read_value(), total))
        raw = _C.where(_C.equal(_C.abs(raw), float("inf")), _C.multiply(raw, 0.0), raw)
        if self.class_aggregation == "uniform_average":
            r2 = _C.reduce_mean(raw, None, False)
        elif self.class_aggregation == "variance_weighted":
            r2 = _div_no_nan(_C.reduce_sum(_C.multiply(total, raw), None, False),
                             _C.reduce_sum(total, None, False))
        else:
            r2 = raw
        if self.num_regressors:
            n = _C.cast(self.num_samples.read_value(), self._dtype._enum)
            p = float(self.num_regressors)
            adjusted = _C.subtract(1.0, _C.divide(_C.multiply(_C.subtract(1.0, r2), _C.subtract(n, 1.0)),
                                                  _C.subtract(_C.subtract(n, p), 1.0)))
            r2 = _C.where(_C.greater(n, p + 1.0), adjusted, r2)
        return r2

    def reset_state(self):
        for v in self._metric_vars:
            v.assign(_C.zeros_like(v.read_value(), None))

    def get_config(self):
        config = super().get_config()
        config.update(class_aggregation=self.class_aggregation, num_regressors=self.num_regressors)
        return config


class FBetaScore(Metric):
    """(1 + beta^2) precision recall / (beta^2 precision + recall) per class, from one-hot labels and scores
    (positive: above `threshold`, or each row's highest when threshold is None); average None, "micro", "macro"
    or "weighted"."""

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if not isinstance(beta, float) and not isinstance(beta, int) or beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None and not 0.0 < threshold <= 1.0:
            raise ValueError(f"Invalid `threshold` argument value. It should be a Python float in the range ]0, 1]. "
                             f"Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, float(beta), threshold
        self._built = False

    def _build(self, classes):
        shape = [] if self.average == "micro" else [classes]
        self.true_positives = self.add_weight("true_positives", shape)
        self.false_positives = self.add_weight("false_positives", shape)
        self.false_negatives = self.add_weight("false_negatives", shape)
        self.intermediate_weights = self.add_weight("intermediate_weights", [classes])
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = _float(y_true, self._dtype)
        y_pred = _float(y_pred, self._dtype)
        if not self._built:
            self._build(TensorShape(y_pred.shape)[-1])
        if self.threshold is None:
            hit = _C.equal(y_pred, _C.reduce_max(y_pred, [-1], True))
        else:
            hit = _C.greater(y_pred, self.threshold)
        y_pred = _C.cast(hit, self._dtype._enum)
        if sample_weight is not None:
            w = _float(sample_weight, self._dtype)
            if w.ndim < y_true.ndim:
                w = _C.expand_dims(w, -1)
        else:
            w = _C.ones_like(y_true, None)
        axes = None if self.average == "micro" else [0]

        def total(x):
            return _C.reduce_sum(_C.multiply(x, w), axes, False)

        self.true_positives.assign_add(total(_C.multiply(y_pred, y_true)))
        self.false_positives.assign_add(total(_C.multiply(y_pred, _C.subtract(1.0, y_true))))
        self.false_negatives.assign_add(total(_C.multiply(_C.subtract(1.0, y_pred), y_true)))
        self.intermediate_weights.assign_add(_C.reduce_sum(_C.multiply(y_true, w), [0], False))

    def result(self):
        eps = backend.epsilon()
        tp = self.true_positives.read_value()
        precision = _C.divide(tp, _C.add(_C.add(tp, self.false_positives.read_value()), eps))
        recall = _C.divide(tp, _C.add(_C.add(tp, self.false_negatives.read_value()), eps))
        b2 = self.beta ** 2
        score = _C.multiply(_div_no_nan(_C.multiply(precision, recall), _C.add(_C.multiply(precision, b2), recall)),
                            1.0 + b2)
        if self.average == "weighted":
            iw = self.intermediate_weights.read_value()
            weights = _div_no_nan(iw, _C.reduce_sum(iw, None, False))
            return _C.reduce_sum(_C.multiply(score, weights), None, False)
        if self.average is not None:
            return _C.reduce_mean(score, None, False)
        return score

    def reset_state(self):
        for v in self._metric_vars:
            v.assign(_C.zeros_like(v.read_value(), None))

    def get_config(self):
        config = super().get_config()
        config.update(average=self.average, beta=self.beta, threshold=self.threshold)
        return config


class F1Score(FBetaScore):
    """FBetaScore with beta = 1."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config
