"""kiln.keras.metrics: stateful metrics (a total and a count in non-trainable variables, updated by
graph ops inside a traced step) and the per-sample accuracy functions. The accuracy formulas are the
C++ kiln::nn ones (src/nn/metrics.cpp)."""
from .. import _C
from .. import dtypes as _dtypes
from ..module import Module
from ..tensor_shape import TensorShape
from . import backend
from ._layer import _to_tensor
from .losses import squeeze_or_expand_dimensions
from .losses import (_labels_like, _weights_for, binary_crossentropy, categorical_crossentropy, mean_absolute_error,  # noqa: F401
                     mean_squared_error, sparse_categorical_crossentropy)


# ---- per-sample functions ------------------------------------------------------------------

def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_pred) equals the integer label, else 0.0 (y_pred's dtype)."""
    fn = "sparse_categorical_accuracy"
    y_pred = _to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        raise ValueError(f"{fn}: y_pred must be float32 or float64, got {y_pred.dtype.name}")
    if y_pred.ndim == 0:
        raise ValueError(f"{fn}: y_pred must have a class dim, got a scalar")
    labels = _labels_like(fn, y_true, y_pred)
    if labels.dtype != _dtypes.int64:
        labels = _C.cast(labels, _dtypes.int64._enum)
    predicted = _C.argmax(y_pred, y_pred.ndim - 1, _dtypes.int64._enum)
    return _C.cast(_C.equal(predicted, labels), y_pred.dtype._enum)


def categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_pred) equals argmax(y_true), else 0.0."""
    y_pred, y_true = _to_tensor(y_pred), _to_tensor(y_true)
    axis = y_pred.ndim - 1
    return _C.cast(_C.equal(_C.argmax(y_pred, axis, _dtypes.int64._enum), _C.argmax(y_true, axis, _dtypes.int64._enum)),
                   y_pred.dtype._enum)


def _binary_matches(y_true, y_pred, threshold=0.5):
    """(y_pred > threshold) == y_true elementwise, as floats (Keras' metrics_utils.binary_matches)."""
    y_pred = _to_tensor(y_pred)
    y_true = _to_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = _C.cast(y_true, y_pred.dtype._enum)
    predicted = _C.cast(_C.greater(y_pred, threshold), y_pred.dtype._enum)
    return _C.cast(_C.equal(y_true, predicted), y_pred.dtype._enum)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Mean over the last axis of (y_pred > threshold) == y_true."""
    return _C.reduce_mean(_binary_matches(y_true, y_pred, threshold), -1, False)


def accuracy(y_true, y_pred):
    """1.0 where y_pred equals y_true elementwise (Keras' `Accuracy`)."""
    y_pred = _to_tensor(y_pred)
    y_true = _to_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = _C.cast(y_true, y_pred.dtype._enum)
    out_dtype = y_pred.dtype if y_pred.dtype.is_floating else _dtypes.float32
    return _C.cast(_C.equal(y_true, y_pred), out_dtype._enum)


# ---- stateful metrics -------------------------------------------------------------------------

class Metric(Module):
    """tf.keras.metrics.Metric: update_state(...), result(), reset_state(); calling it updates and returns
    the result."""

    def __init__(self, name=None, dtype=None, **kwargs):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Metric name must be a string, got {name!r}")
        self._set_name(name or backend.to_snake_case(type(self).__name__))
        self._dtype = _dtypes.as_dtype(dtype or backend.floatx())
        self._metric_vars = []
        from ._distribute_glue import creation_strategy
        self._distribution_strategy = creation_strategy()  # whose replicas' counts result() sums

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "result" in cls.__dict__:
            from ._distribute_glue import summed_over_replicas
            cls.result = summed_over_replicas(cls.__dict__["result"])

    @property
    def dtype(self):
        return self._dtype.name

    def add_weight(self, name, shape=(), dtype=None, initializer="zeros", **kwargs):
        dtype = _dtypes.as_dtype(dtype or self._dtype)
        with _C.init_scope():
            value = _C.zeros(list(shape), dtype._enum)
        v = _C.Variable(value, False, f"{self.name}/{name}", None)
        self._metric_vars.append(v)
        return v

    @property
    def variables(self):
        return tuple(self._metric_vars)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self):
        for v in self._metric_vars:
            v.assign(_C.zeros_like(v.read_value(), None))

    reset_states = reset_state

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object '{self.name}'>"


class Reduce(Metric):
    pass


class Mean(Metric):
    """The (weighted) mean of the values given: total / count, and 0 before any update."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight("total")
        self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        v = _to_tensor(values)
        if v.dtype != self._dtype:
            v = _C.cast(v, self._dtype._enum)
        if sample_weight is None:
            self.total.assign_add(_C.reduce_sum(v, None, False))
            shape = TensorShape(v.shape)
            if shape.is_fully_defined():
                self.count.assign_add(float(shape.num_elements()))
            else:
                self.count.assign_add(_C.reduce_sum(_C.ones_like(v, None), None, False))
            return
        w = _weights_for(sample_weight, v)
        weighted = _C.multiply(v, w)
        self.total.assign_add(_C.reduce_sum(weighted, None, False))
        self.count.assign_add(_C.reduce_sum(_C.multiply(_C.ones_like(v, None), w), None, False))

    def result(self):
        # Counts are whole numbers: this is total / count, and 0 / 1 before any update (as the C++ Mean).
        return _C.divide(self.total.read_value(), _C.maximum(self.count.read_value(), 1))


class Sum(Metric):
    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight("total")

    def update_state(self, values, sample_weight=None):
        v = _to_tensor(values)
        if v.dtype != self._dtype:
            v = _C.cast(v, self._dtype._enum)
        if sample_weight is not None:
            v = _C.multiply(v, _C.cast(_to_tensor(sample_weight), self._dtype._enum))
        self.total.assign_add(_C.reduce_sum(v, None, False))

    def result(self):
        return self.total.read_value()


class MeanMetricWrapper(Mean):
    """The mean of fn(y_true, y_pred) over every sample seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred, y_true = squeeze_or_expand_dimensions(_to_tensor(y_pred), _to_tensor(y_true))
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name, dtype=dtype)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """Keras 2.15's class counts each element (binary_matches); the function binary_accuracy (what the names
    "accuracy" and "binary_accuracy" give compile) means over the last axis first."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(_binary_matches, name, dtype=dtype, threshold=threshold)


class Accuracy(MeanMetricWrapper):
    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, name, dtype=dtype)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False):
        super().__init__(sparse_categorical_crossentropy, name, dtype=dtype, from_logits=from_logits)


class CategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False):
        super().__init__(categorical_crossentropy, name, dtype=dtype, from_logits=from_logits)


_FUNCTIONS = {
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "binary_accuracy": BinaryAccuracy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
}
_CLASSES = {cls.__name__: cls for cls in (Mean, Sum, SparseCategoricalAccuracy, CategoricalAccuracy, BinaryAccuracy,
                                          Accuracy, MeanSquaredError, MeanAbsoluteError,
                                          SparseCategoricalCrossentropy, CategoricalCrossentropy)}


from ._metrics_extra import (  # noqa: E402,F401
    AUC, BinaryCrossentropy, BinaryIoU, CategoricalHinge, CosineSimilarity, F1Score, FBetaScore, FalseNegatives,
    FalsePositives, Hinge, IoU, KLDivergence, LogCoshError, MeanAbsolutePercentageError, MeanIoU, MeanRelativeError,
    MeanSquaredLogarithmicError, MeanTensor, OneHotIoU, OneHotMeanIoU, Poisson, Precision, PrecisionAtRecall,
    R2Score, Recall, RecallAtPrecision, RootMeanSquaredError, SensitivityAtSpecificity, SparseTopKCategoricalAccuracy,
    SpecificityAtSensitivity, SquaredHinge, TopKCategoricalAccuracy, TrueNegatives, TruePositives,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy)
from ._losses_extra import (  # noqa: E402,F401
    binary_focal_crossentropy, categorical_focal_crossentropy, hinge, squared_hinge, kl_divergence, kld, KLD,
    kullback_leibler_divergence, log_cosh, logcosh, mean_absolute_percentage_error, mape, MAPE,
    mean_squared_logarithmic_error, msle, MSLE, poisson)
from .losses import MAE, MSE, mae, mse  # noqa: E402,F401
from . import _metrics_extra  # noqa: E402

_EXTRA_CLASSES = (AUC, BinaryCrossentropy, BinaryIoU, CategoricalHinge, CosineSimilarity, F1Score, FBetaScore,
                  FalseNegatives, FalsePositives, Hinge, IoU, KLDivergence, LogCoshError, MeanAbsolutePercentageError,
                  MeanIoU, MeanRelativeError, MeanSquaredLogarithmicError, MeanTensor, OneHotIoU, OneHotMeanIoU,
                  Poisson, Precision, PrecisionAtRecall, R2Score, Recall, RecallAtPrecision, RootMeanSquaredError,
                  SensitivityAtSpecificity, SparseTopKCategoricalAccuracy, SpecificityAtSensitivity, SquaredHinge,
                  TopKCategoricalAccuracy, TrueNegatives, TruePositives, MeanMetricWrapper, Accuracy)
_CLASSES.update({cls.__name__: cls for cls in _EXTRA_CLASSES})
_FUNCTIONS.update({
    "binary_crossentropy": BinaryCrossentropy, "categorical_hinge": CategoricalHinge,
    "cosine_similarity": CosineSimilarity, "hinge": Hinge, "squared_hinge": SquaredHinge,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "KLD": KLDivergence, "kullback_leibler_divergence": KLDivergence,
    "log_cosh": LogCoshError, "logcosh": LogCoshError, "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError, "msle": MeanSquaredLogarithmicError,
    "MSLE": MeanSquaredLogarithmicError, "poisson": Poisson, "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy, "MSE": MeanSquaredError,
    "MAE": MeanAbsoluteError})


def get(identifier, y_true=None, y_pred=None, loss=None):
    """A Metric from a name, a Metric, or a function (y_true, y_pred) -> per-sample values. "accuracy" / "acc"
    picks Keras' accuracy for the labels and predictions (binary, sparse categorical or categorical); for the
    others the shapes are not needed."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        if identifier in ("accuracy", "acc"):
            fn = _accuracy_for(y_true, y_pred, loss)
            return MeanMetricWrapper(fn, name=identifier)
        if identifier == "binary_accuracy":  # Keras: the function, wrapped
            return MeanMetricWrapper(binary_accuracy, name=identifier)
        if identifier in _FUNCTIONS:
            metric = _FUNCTIONS[identifier]()
            metric._name = identifier
            return metric
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        known = ", ".join(["accuracy", "acc"] + sorted(_FUNCTIONS))
        raise ValueError(f"Unknown metric function: '{identifier}'. Known metric names: {known}; or pass a "
                         "kiln.keras.metrics.Metric object or a function (y_true, y_pred) -> values.")
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def _accuracy_for(y_true, y_pred, loss=None):
    """Keras' choice for "accuracy": binary when predictions have one column, sparse categorical when the
    labels have one dim less than the predictions (or a last dim of 1 against several), else categorical."""
    from . import losses as _losses
    if isinstance(loss, _losses.SparseCategoricalCrossentropy) or getattr(loss, "fn", None) is \
            _losses.sparse_categorical_crossentropy:
        return sparse_categorical_accuracy
    if y_true is None or y_pred is None:
        return sparse_categorical_accuracy
    ts, ps = TensorShape(y_true.shape), TensorShape(y_pred.shape)
    if ts.rank is None or ps.rank is None:
        return sparse_categorical_accuracy
    t_last = ts[-1] if ts.rank else None
    p_last = ps[-1] if ps.rank else None
    if p_last == 1:
        return binary_accuracy
    if ts.rank < ps.rank or (t_last == 1 and p_last != 1):
        return sparse_categorical_accuracy
    return categorical_accuracy


def serialize(metric):
    return metric.name if isinstance(metric, Metric) else getattr(metric, "__name__", repr(metric))


def deserialize(config, custom_objects=None):
    """A metric from its serialized form (a name or {"class_name", "config"})."""
    from ._serialization import deserialize_keras_object
    if isinstance(config, str):
        return get(config)
    return deserialize_keras_object(config, module_objects=dict(_CLASSES), custom_objects=custom_objects,
                                    printable_module_name="metric function")
