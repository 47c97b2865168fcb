"""What compile() builds from its arguments, as Keras 2.15's compile_utils: `model.compiled_loss` (a
LossesContainer: one loss per output, weighted by loss_weights, plus the layers' regularization losses) and
`model.compiled_metrics` (a MetricsContainer: the metrics per output). With several outputs the logs name
each figure after its output: "dense_1_loss", "dense_1_accuracy"."""
from .. import _C
from ..tensor_shape import TensorShape
from . import losses as _losses
from . import metrics as _metrics
from ._layer import _flatten, _to_tensor
from . import _distribute_glue


def _batch_weight(y_pred, dtype):
    """The batch size, as the loss tracker's weight (Keras weighs each step's mean loss by its batch)."""
    first = _flatten(y_pred)[0]
    batch = TensorShape(first.shape)[0] if first.ndim else 1
    if batch is None:
        batch = _C.cast(_C.reduce_prod(_C.slice(_C.shape(first), [0], [1]), None, False), dtype)
    return batch


def _per_output(spec, output_names, what, broadcast):
    """spec (one thing, a list with one per output, or a dict by output name) -> a list with one per output.
    A single thing is used for every output when `broadcast`, else only with one output."""
    n = len(output_names)
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in output_names]
        if unknown:
            raise ValueError(f"Found unexpected {what} key(s) {unknown} in a dict given to compile(). Valid output "
                             f"names: {output_names}")
        return [spec.get(name) for name in output_names]
    if isinstance(spec, (list, tuple)) and (not broadcast or (spec and all(isinstance(s, (list, tuple)) or s is None
                                                                          for s in spec))):
        if len(spec) != n:
            raise ValueError(f"When passing a list as `{what}`, it should have one entry per model output. The model "
                             f"has {n} output(s), but you passed {what}={spec!r}")
        return list(spec)
    return [spec] * n


def _allowed_in_fit(loss):
    """A compiled Loss may reduce over the batch under a strategy: fit scales it for the replicas (Keras marks it
    so)."""
    if isinstance(loss, _losses.Loss):
        loss._allow_sum_over_batch_size = True
    return loss


class LossesContainer:
    """compiled_loss(y_true, y_pred, sample_weight=None, regularization_losses=None) -> the total loss; updates
    the "loss" tracker (and, with several outputs, one "<output>_loss" tracker each)."""

    def __init__(self, losses, loss_weights=None, output_names=None):
        self._user_losses = losses
        self._user_loss_weights = loss_weights
        self._output_names = output_names
        self._loss_metric = _metrics.Mean(name="loss")
        self._losses = None
        self._weights = None
        self._per_output_metrics = None

    def _build(self, y_pred):
        flat = _flatten(y_pred)
        names = self._output_names or [f"output_{i + 1}" for i in range(len(flat))]
        if len(names) != len(flat):
            names = [f"output_{i + 1}" for i in range(len(flat))]
        if isinstance(self._user_losses, dict) or (isinstance(self._user_losses, (list, tuple))
                                                   and len(self._user_losses) > 1) or len(flat) == 1:
            specs = _per_output(self._user_losses if not (isinstance(self._user_losses, (list, tuple))
                                                          and len(flat) == 1 and len(self._user_losses) == 1)
                                else self._user_losses[0], names, "loss", broadcast=False)
        else:
            one = self._user_losses[0] if isinstance(self._user_losses, (list, tuple)) else self._user_losses
            specs = [one] * len(flat)
        self._losses = [_allowed_in_fit(_losses.get(s)) for s in specs]
        weights = self._user_loss_weights
        self._weights = [None] * len(flat) if weights is None else _per_output(weights, names, "loss_weights", False)
        self._per_output_metrics = [_metrics.Mean(name=name + "_loss") if loss is not None else None
                                    for name, loss in zip(names, self._losses)] if len(flat) > 1 else []

    @property
    def metrics(self):
        if self._losses is None:
            return []
        return [self._loss_metric] + [m for m in self._per_output_metrics if m is not None]

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        if self._losses is None:
            self._build(y_pred)
        preds = _flatten(y_pred)
        if isinstance(y_true, dict) and self._output_names:
            trues = [y_true.get(name) for name in self._output_names]
        else:
            trues = _flatten(y_true) if y_true is not None else [None] * len(preds)
        if len(trues) == 1 and len(preds) > 1 and self._user_losses is not None:
            raise ValueError(f"The model has {len(preds)} outputs, but got one target: pass a list or dict of targets")
        weights = _flatten(sample_weight) if isinstance(sample_weight, (list, tuple, dict)) else \
            [sample_weight] * len(preds)
        dtype = preds[0].dtype._enum
        batch = _batch_weight(preds, dtype)
        total = []
        for i, (loss_fn, y_t, y_p) in enumerate(zip(self._losses, trues, preds)):
            if loss_fn is None:
                continue
            if y_t is None:
                raise ValueError(f"Target data is missing. Your model was compiled with loss={self._user_losses}, "
                                 "and therefore expects target data to be provided in `fit()`.")
            value = loss_fn(y_t, y_p, weights[i] if i < len(weights) else None)
            if self._per_output_metrics:
                self._per_output_metrics[i].update_state(value, sample_weight=batch)
            if self._weights[i] is not None:
                value = _C.multiply(value, _C.constant(float(self._weights[i]), value.dtype._enum))
            total.append(value)
        for reg in regularization_losses or []:
            total.append(_C.cast(reg, dtype) if reg.dtype._enum != dtype else reg)
        if not total:
            if self._user_losses is None and not regularization_losses:
                raise ValueError("No loss found. You may have forgotten to provide a `loss` argument in the "
                                 "`compile()` method.")
            loss = _C.constant(0.0, dtype)
        else:
            loss = total[0]
            for t in total[1:]:
                loss = _C.add(loss, t)
        self._loss_metric.update_state(loss, sample_weight=batch)
        return _distribute_glue.scale_loss(loss)


class MetricsContainer:
    """compiled_metrics.update_state(y_true, y_pred, sample_weight=None): each output's metrics; a plain list
    applies to every output."""

    def __init__(self, metrics=None, weighted_metrics=None, output_names=None, loss=None):
        self._user_metrics = metrics
        self._user_weighted = weighted_metrics
        self._output_names = output_names
        self._loss = loss
        self._metrics = None   # per output: [(metric, weighted)]

    @property
    def metrics(self):
        if self._metrics is None:
            return []
        return [m for per in self._metrics for m, _ in per]

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def _build(self, y_true, y_pred):
        preds = _flatten(y_pred)
        trues = _flatten(y_true) if y_true is not None else [None] * len(preds)
        n = len(preds)
        names = self._output_names if self._output_names and len(self._output_names) == n else \
            [f"output_{i + 1}" for i in range(n)]
        losses = self._loss if isinstance(self._loss, list) else [self._loss] * n
        self._metrics = [[] for _ in range(n)]
        for specs, weighted in ((self._user_metrics, False), (self._user_weighted, True)):
            if specs is None:
                continue
            per = _per_output(specs, names, "metrics", broadcast=True)
            for i, spec in enumerate(per):
                for s in (spec if isinstance(spec, (list, tuple)) else [spec] if spec is not None else []):
                    metric = _metrics.get(_allowed_in_fit(s), trues[i] if i < len(trues) else None, preds[i],
                                          losses[i] if i < len(losses) else None)
                    self._metrics[i].append((metric, weighted))
        self._set_names(names)

    def _set_names(self, names):
        """Keras' names: "<output>_<metric>" with several outputs; a weighted metric whose name is taken gets
        "weighted_" ("<output>_weighted_<metric>"); two metrics of one name are an error."""
        taken = set()
        multi = len(names) > 1
        for weighted_pass in (False, True):
            for name, per in zip(names, self._metrics):
                for metric, weighted in per:
                    if weighted != weighted_pass:
                        continue
                    base = metric.name
                    full = f"{name}_{base}" if multi else base
                    if weighted and full in taken:
                        full = f"{name}_weighted_{base}" if multi else f"weighted_{base}"
                    if full in taken:
                        raise ValueError(f"Found two metrics with the same name: {full}")
                    metric._name = full
                    taken.add(full)

    def update_state(self, y_true, y_pred, sample_weight=None, mask_weight=None):
        """`metrics` see only `mask_weight` (the output's mask as weights, or None); `weighted_metrics` see
        `sample_weight` (with the mask folded in), as Keras 2.15's container."""
        if self._metrics is None:
            self._build(y_true, y_pred)
        preds = _flatten(y_pred)
        if isinstance(y_true, dict) and self._output_names:
            trues = [y_true.get(name) for name in self._output_names]
        else:
            trues = _flatten(y_true)
        weights = _flatten(sample_weight) if isinstance(sample_weight, (list, tuple, dict)) else \
            [sample_weight] * len(preds)
        masks = _flatten(mask_weight) if isinstance(mask_weight, (list, tuple)) else [mask_weight] * len(preds)
        for i, per in enumerate(self._metrics):
            y_true = _match_rank(trues[i], preds[i])
            for metric, weighted in per:
                metric.update_state(y_true, preds[i], weights[i] if weighted else masks[i])


def _match_rank(y_true, y_pred):
    """Keras' match_dtype_and_rank: labels (N,) against predictions (N, k) become (N, 1), so a metric of the
    last axis (binary_accuracy) gives one value per sample and batches weigh by their samples."""
    true_shape = getattr(y_true, "shape", None)
    pred_shape = getattr(y_pred, "shape", None)
    if true_shape is None or pred_shape is None:
        return y_true
    if TensorShape(true_shape).rank == 1 and TensorShape(pred_shape).rank == 2:
        return _C.expand_dims(_to_tensor(y_true), -1)
    return y_true


# ---- compile()'s arguments in a saved model's compile_config ------------------------------------

def _serialize_losses(loss):
    from ._serialization import serialize_keras_object
    if isinstance(loss, dict):
        return {k: _serialize_losses(v) for k, v in loss.items()}
    if isinstance(loss, (list, tuple)):
        return [_serialize_losses(v) for v in loss]
    if loss is None or isinstance(loss, str):
        return loss
    if isinstance(loss, _losses.LossFunctionWrapper) and type(loss) is _losses.LossFunctionWrapper:
        return serialize_keras_object(loss.fn)
    return serialize_keras_object(loss)


def _deserialize_losses(loss):
    if isinstance(loss, dict) and "class_name" not in loss:
        return {k: _deserialize_losses(v) for k, v in loss.items()}
    if isinstance(loss, list):
        return [_deserialize_losses(v) for v in loss]
    if isinstance(loss, dict):
        return _losses.deserialize(loss)
    if isinstance(loss, str) and loss not in _losses._BY_NAME:
        from ._serialization import get_registered_object
        found = get_registered_object(loss)
        return found if found is not None else loss
    return loss


def _serialize_metrics(metrics):
    from ._serialization import serialize_keras_object
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        return {k: _serialize_metrics(v) for k, v in metrics.items()}
    if isinstance(metrics, (list, tuple)):
        return [_serialize_metrics(m) for m in metrics]
    if isinstance(metrics, str):
        return metrics
    if isinstance(metrics, _metrics.Metric):
        return metrics.name if type(metrics) in (_metrics.MeanMetricWrapper,) else serialize_keras_object(metrics)
    return serialize_keras_object(metrics)


def _deserialize_metrics(metrics):
    if metrics is None or isinstance(metrics, str):
        return metrics
    if isinstance(metrics, dict) and "class_name" not in metrics:
        return {k: _deserialize_metrics(v) for k, v in metrics.items()}
    if isinstance(metrics, list):
        return [_deserialize_metrics(m) for m in metrics]
    from ._serialization import deserialize_keras_object
    table = {k: v for k, v in vars(_metrics).items() if isinstance(v, type) and issubclass(v, _metrics.Metric)}
    return deserialize_keras_object(metrics, module_objects=table, printable_module_name="metric")
