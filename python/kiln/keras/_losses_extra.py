"""The rest of Keras 2.15's losses: the per-sample functions (reduced over the last axis, as Keras') and their Loss
classes. Hinge losses take labels in {-1, 1}, or {0, 1}, which they map to {-1, 1} as Keras does."""
import math

from .. import _C
from . import backend
from .losses import LossFunctionWrapper, Reduction, _float_pred, _same_dtype


def _pair(y_true, y_pred, fn):
    y_pred = _float_pred(fn, y_pred)
    return _same_dtype(y_true, y_pred), y_pred


def _mean_last(x):
    return _C.reduce_mean(x, [-1], False)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "mean_absolute_percentage_error")
    diff = _C.divide(_C.abs(_C.subtract(y_true, y_pred)), _C.maximum(_C.abs(y_true), backend.epsilon()))
    return _C.multiply(_mean_last(diff), 100.0)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "mean_squared_logarithmic_error")
    eps = backend.epsilon()
    first = _C.log(_C.add(_C.maximum(y_pred, eps), 1.0))
    second = _C.log(_C.add(_C.maximum(y_true, eps), 1.0))
    return _mean_last(_C.square(_C.subtract(first, second)))


def _signed_labels(y_true):
    """Keras' _maybe_convert_labels: labels that are all 0 or 1 become -1 / 1."""
    binary = _C.reduce_all(_C.logical_or(_C.equal(y_true, 0.0), _C.equal(y_true, 1.0)), None, False)
    return _C.where(binary, _C.subtract(_C.multiply(y_true, 2.0), 1.0), y_true)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "hinge")
    return _mean_last(_C.maximum(_C.subtract(1.0, _C.multiply(_signed_labels(y_true), y_pred)), 0.0))


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "squared_hinge")
    return _mean_last(_C.square(_C.maximum(_C.subtract(1.0, _C.multiply(_signed_labels(y_true), y_pred)), 0.0)))


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "categorical_hinge")
    pos = _C.reduce_sum(_C.multiply(y_true, y_pred), [-1], False)
    neg = _C.reduce_max(_C.multiply(_C.subtract(1.0, y_true), y_pred), [-1], False)
    return _C.maximum(_C.add(_C.subtract(neg, pos), 1.0), 0.0)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred, "huber")
    error = _C.subtract(y_pred, y_true)
    absolute = _C.abs(error)
    quadratic = _C.multiply(_C.square(error), 0.5)
    linear = _C.subtract(_C.multiply(absolute, float(delta)), 0.5 * float(delta) ** 2)
    return _mean_last(_C.where(_C.less_equal(absolute, float(delta)), quadratic, linear))


def log_cosh(y_true, y_pred):
    """log(cosh(x)) = x + softplus(-2x) - log 2, which does not overflow for large |x|."""
    y_true, y_pred = _pair(y_true, y_pred, "log_cosh")
    x = _C.subtract(y_pred, y_true)
    return _mean_last(_C.subtract(_C.add(x, _C.softplus(_C.multiply(x, -2.0))), math.log(2.0)))


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "kl_divergence")
    eps = backend.epsilon()
    y_true = _C.clip(y_true, eps, 1.0)
    y_pred = _C.clip(y_pred, eps, 1.0)
    return _C.reduce_sum(_C.multiply(y_true, _C.log(_C.divide(y_true, y_pred))), [-1], False)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred, "poisson")
    return _mean_last(_C.subtract(y_pred, _C.multiply(y_true, _C.log(_C.add(y_pred, backend.epsilon())))))


def cosine_similarity(y_true, y_pred, axis=-1):
    """The loss: minus the cosine of the angle between y_true and y_pred along `axis` (-1 is best)."""
    y_true, y_pred = _pair(y_true, y_pred, "cosine_similarity")
    return _C.negative(_C.reduce_sum(_C.multiply(_C.l2_normalize(y_true, [axis], 1e-12),
                                                 _C.l2_normalize(y_pred, [axis], 1e-12)), [axis], False))


def _binary_crossentropy_elements(target, output, from_logits):
    if from_logits:
        # max(x, 0) - x z + log(1 + exp(-|x|)), TF's sigmoid_cross_entropy_with_logits.
        return _C.add(_C.subtract(_C.relu(output), _C.multiply(output, target)),
                      _C.log1p(_C.exp(_C.negative(_C.abs(output)))))
    eps = backend.epsilon()
    output = _C.clip(output, eps, 1.0 - eps)
    bce = _C.add(_C.multiply(target, _C.log(_C.add(output, eps))),
                 _C.multiply(_C.subtract(1.0, target), _C.log(_C.add(_C.subtract(1.0, output), eps))))
    return _C.negative(bce)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    """(1 - p_t)^gamma times the binary crossentropy (Lin et al., 2017), optionally weighted alpha / 1 - alpha."""
    y_true, y_pred = _pair(y_true, y_pred, "binary_focal_crossentropy")
    if label_smoothing:
        y_true = _C.add(_C.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    bce = _binary_crossentropy_elements(y_true, y_pred, from_logits)
    prob = _C.sigmoid(y_pred) if from_logits else y_pred
    p_t = _C.add(_C.multiply(y_true, prob), _C.multiply(_C.subtract(1.0, y_true), _C.subtract(1.0, prob)))
    focal = _C.multiply(_C.pow(_C.subtract(1.0, p_t), float(gamma)), bce)
    if apply_class_balancing:
        weight = _C.add(_C.multiply(y_true, float(alpha)), _C.multiply(_C.subtract(1.0, y_true), 1.0 - alpha))
        focal = _C.multiply(weight, focal)
    return _C.reduce_mean(focal, [axis], False)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    """alpha (1 - p)^gamma times -y log p, summed over the classes."""
    y_true, y_pred = _pair(y_true, y_pred, "categorical_focal_crossentropy")
    if label_smoothing:
        classes = y_pred.shape[-1]
        y_true = _C.add(_C.multiply(y_true, 1.0 - label_smoothing), label_smoothing / float(classes))
    output = _C.softmax(y_pred, axis) if from_logits else y_pred
    output = _C.divide(output, _C.reduce_sum(output, [axis], True))
    eps = backend.epsilon()
    output = _C.clip(output, eps, 1.0 - eps)
    cce = _C.negative(_C.multiply(y_true, _C.log(output)))
    weight = _C.multiply(_C.pow(_C.subtract(1.0, output), float(gamma)), float(alpha))
    return _C.reduce_sum(_C.multiply(weight, cce), [axis], False)


mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


def _wrapper(fn, default_name, doc, **defaults):
    """A LossFunctionWrapper subclass with Keras' constructor: the function's keyword settings, reduction, name."""
    def __init__(self, reduction=Reduction.AUTO, name=default_name, **kwargs):
        settings = dict(defaults)
        for key, value in kwargs.items():
            if key not in settings:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{key}'")
            settings[key] = value
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **settings)
        for key, value in settings.items():
            setattr(self, key, value)

    return type("", (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc})


def _named(cls, name):
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = __name__
    return cls


MeanAbsolutePercentageError = _named(_wrapper(mean_absolute_percentage_error, "mean_absolute_percentage_error",
                                              "100 * mean(|y_true - y_pred| / max(|y_true|, eps))."),
                                     "MeanAbsolutePercentageError")
MeanSquaredLogarithmicError = _named(_wrapper(mean_squared_logarithmic_error, "mean_squared_logarithmic_error",
                                              "mean((log(1 + y_pred) - log(1 + y_true))^2)."),
                                     "MeanSquaredLogarithmicError")
Hinge = _named(_wrapper(hinge, "hinge", "mean(max(1 - y_true y_pred, 0))."), "Hinge")
SquaredHinge = _named(_wrapper(squared_hinge, "squared_hinge", "mean(max(1 - y_true y_pred, 0)^2)."), "SquaredHinge")
CategoricalHinge = _named(_wrapper(categorical_hinge, "categorical_hinge", "max(neg - pos + 1, 0)."),
                          "CategoricalHinge")
Huber = _named(_wrapper(huber, "huber_loss", "Quadratic within delta of the target, linear beyond.", delta=1.0),
               "Huber")
LogCosh = _named(_wrapper(log_cosh, "log_cosh", "mean(log(cosh(y_pred - y_true)))."), "LogCosh")
KLDivergence = _named(_wrapper(kl_divergence, "kl_divergence", "sum(y_true log(y_true / y_pred))."), "KLDivergence")
Poisson = _named(_wrapper(poisson, "poisson", "mean(y_pred - y_true log(y_pred + eps))."), "Poisson")
CosineSimilarity = _named(_wrapper(cosine_similarity, "cosine_similarity", "-cos(y_true, y_pred) along axis.",
                                   axis=-1), "CosineSimilarity")
BinaryFocalCrossentropy = _named(_wrapper(binary_focal_crossentropy, "binary_focal_crossentropy",
                                          "The focal binary crossentropy.", apply_class_balancing=False, alpha=0.25,
                                          gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1),
                                 "BinaryFocalCrossentropy")
CategoricalFocalCrossentropy = _named(_wrapper(categorical_focal_crossentropy, "categorical_focal_crossentropy",
                                               "The focal categorical crossentropy.", alpha=0.25, gamma=2.0,
                                               from_logits=False, label_smoothing=0.0, axis=-1),
                                      "CategoricalFocalCrossentropy")

CLASSES = (MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Hinge, SquaredHinge, CategoricalHinge, Huber,
           LogCosh, KLDivergence, Poisson, CosineSimilarity, BinaryFocalCrossentropy, CategoricalFocalCrossentropy)
FUNCTIONS = {"mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
             "MAPE": MeanAbsolutePercentageError, "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
             "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError, "hinge": Hinge,
             "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge, "huber": Huber,
             "huber_loss": Huber, "log_cosh": LogCosh, "logcosh": LogCosh, "kl_divergence": KLDivergence,
             "kld": KLDivergence, "KLD": KLDivergence, "kullback_leibler_divergence": KLDivergence,
             "poisson": Poisson, "cosine_similarity": CosineSimilarity,
             "binary_focal_crossentropy": BinaryFocalCrossentropy,
             "categorical_focal_crossentropy": CategoricalFocalCrossentropy}
