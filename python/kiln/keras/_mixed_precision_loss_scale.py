"""tf.keras.mixed_precision.LossScaleOptimizer (Keras 2.15's, for the Keras 2.11+ optimizers).

Dynamic scaling: the scale starts at 2**15; a step whose gradients are all finite counts, and after
`dynamic_growth_steps` such steps in a row the scale doubles (when the doubled scale is finite) and the count
restarts; a step with a NaN or Inf gradient is skipped (the inner optimizer's `iterations` still counts it, as
Keras'), halves the scale (never below 1) and restarts the count. Eagerly that is a Python branch; traced it is
a `kiln.cond` whose branches update the variables, so a skipped step leaves the weights and the slots (Adam's
moments) as they were."""
from .. import _C
from .. import dtypes as _dtypes

_DEFAULT_INITIAL_SCALE = 2 ** 15
_DEFAULT_GROWTH_STEPS = 2000


def _finite(x):
    """Whether every element of x is finite, a bool scalar."""
    from .._math_ops import is_finite
    return _C.reduce_all(is_finite(x), None, False)


def _all_finite(grads):
    """A bool scalar: every element of every gradient is finite (Keras' _is_all_finite)."""
    checks = [_finite(g) for g in grads if g is not None]
    if not checks:
        return _C.constant(True, _dtypes.bool._enum)
    result = checks[0]
    for c in checks[1:]:
        result = _C.logical_and(result, c)
    return result


class _DynamicLossScaleState:
    """The checkpoint node of a dynamic loss scale: TF's "loss_scale/current_loss_scale" and ".../good_steps"."""

    def __init__(self, scale, counter):
        self._scale, self._counter = scale, counter

    def _checkpoint_children(self):
        return [("current_loss_scale", self._scale), ("good_steps", self._counter)]


class LossScaleOptimizer:
    """Wraps an optimizer for loss scaling: get_scaled_loss(loss) is loss * loss_scale and
    get_unscaled_gradients(grads) each gradient * (1 / loss_scale); apply_gradients updates the dynamic scale
    and skips steps with non-finite gradients. Other attributes are the inner optimizer's."""

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None, dynamic_growth_steps=None):
        from . import optimizers
        if isinstance(inner_optimizer, LossScaleOptimizer) or \
                getattr(inner_optimizer, "_is_wrapped_by_loss_scale_optimizer", False):
            raise ValueError('"inner_optimizer" is already wrapped by a LossScaleOptimizer. An optimizer can only be '
                             "wrapped by a single LossScaleOptimizer")
        if not isinstance(inner_optimizer, optimizers.Optimizer):
            raise TypeError("LossScaleOptimizer's inner_optimizer must be an instance of "
                            f"`tf.keras.optimizers.Optimizer`, but got: {inner_optimizer}")
        self._optimizer = inner_optimizer
        inner_optimizer._is_wrapped_by_loss_scale_optimizer = True
        self._dynamic = bool(dynamic)
        if dynamic:
            self._initial_scale = float(_DEFAULT_INITIAL_SCALE if initial_scale is None else initial_scale)
            self._growth_steps = int(_DEFAULT_GROWTH_STEPS if dynamic_growth_steps is None else dynamic_growth_steps)
            with _C.init_scope():
                # Keras' names: "current_loss_scale" and "good_steps" (checkpoints).
                self._scale = _C.Variable(_C.constant(self._initial_scale, _dtypes.float32._enum), False,
                                          "current_loss_scale", None)
                self._counter = _C.Variable(_C.constant(0, _dtypes.int64._enum), False, "good_steps", None)
        else:
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            if dynamic_growth_steps is not None:
                raise ValueError('"dynamic_growth_steps" must be None if "dynamic" is False, but got: '
                                 f"{dynamic_growth_steps}")
            self._initial_scale = float(initial_scale)
            self._growth_steps = None
            self._scale = self._counter = None

    # ---- Keras' properties -------------------------------------------------------------------

    @property
    def dynamic(self):
        return self._dynamic

    @property
    def loss_scale(self):
        """The current scale, a float32 scalar tensor."""
        if self._scale is None:
            return _C.constant(self._initial_scale, _dtypes.float32._enum)
        return self._scale.read_value()

    @property
    def dynamic_counter(self):
        """The int64 variable counting finite steps since the scale last changed (None when not dynamic)."""
        return self._counter

    @property
    def initial_scale(self):
        return self._initial_scale

    @property
    def dynamic_growth_steps(self):
        return self._growth_steps

    @property
    def inner_optimizer(self):
        return self._optimizer

    @property
    def iterations(self):
        return self._optimizer.iterations

    @property
    def variables(self):
        return self._optimizer.variables

    def build(self, var_list):
        return self._optimizer.build(var_list)

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._optimizer.learning_rate = value

    lr = learning_rate

    # ---- scaling -------------------------------------------------------------------------------

    def get_scaled_loss(self, loss):
        if callable(loss):
            def scaled():
                value = loss()
                return _C.multiply(value, _C.cast(self.loss_scale, value.dtype._enum))
            return scaled
        return _C.multiply(loss, _C.cast(self.loss_scale, loss.dtype._enum))

    def get_unscaled_gradients(self, grads):
        reciprocal = _C.divide(_C.constant(1.0, _dtypes.float32._enum), self.loss_scale)
        return [None if g is None else _C.multiply(g, _C.cast(reciprocal, g.dtype._enum)) for g in grads]

    def compute_gradients(self, loss, var_list, tape=None):
        from ..gradient import GradientTape
        var_list = list(var_list() if callable(var_list) else var_list)
        if tape is None:
            with GradientTape() as tape:
                scaled = self.get_scaled_loss(loss)()
        else:
            with tape:
                scaled = self.get_scaled_loss(loss() if callable(loss) else loss)
        grads = tape.gradient(scaled, var_list)
        return list(zip(self.get_unscaled_gradients(grads), var_list))

    def minimize(self, loss, var_list, tape=None):
        if tape is None and not callable(loss):
            raise ValueError(f"`tape` is required when a `Tensor` loss is passed. Received: loss={loss!r}, "
                             "tape=None.")
        return self.apply_gradients(self.compute_gradients(loss, var_list, tape))

    # ---- the update ----------------------------------------------------------------------------

    def apply_gradients(self, grads_and_vars, skip_gradients_aggregation=False, **kwargs):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            return self._optimizer.apply_gradients(pairs, **kwargs)
        with _C.init_scope():
            self._optimizer.build([v for _, v in pairs])  # slots made outside any branch
        if not skip_gradients_aggregation and kwargs.get("experimental_aggregate_gradients", True):
            # Summed over the replicas before the finite check, so every replica skips or applies alike.
            from ._distribute_glue import aggregate_gradients
            pairs = list(zip(aggregate_gradients([g for g, _ in pairs]), [v for _, v in pairs]))
            kwargs["skip_gradients_aggregation"] = True
        if not self._dynamic:
            return self._optimizer.apply_gradients(pairs, **kwargs)
        finite = _all_finite([g for g, _ in pairs])
        if not _C.is_tracing():
            if bool(finite.numpy()):
                self._optimizer.apply_gradients(pairs, **kwargs)
                self._on_finite()
            else:
                self._skip()
            return self.iterations
        from ..control_flow import cond

        def apply():
            self._optimizer.apply_gradients(pairs, **kwargs)
            self._on_finite()
            return _C.constant(True, _dtypes.bool._enum)

        def skip():
            self._skip()
            return _C.constant(False, _dtypes.bool._enum)

        cond(finite, apply, skip)
        return self.iterations

    def _on_finite(self):
        """Keras' update_if_finite_grads: count the step; after growth_steps of them double the scale (kept only
        when finite) and restart the count."""
        counted = _C.add(self._counter.read_value(), 1)
        grow = _C.greater_equal(counted, self._growth_steps)
        scale = self._scale.read_value()
        doubled = _C.multiply(scale, 2.0)
        keep_doubled = _C.logical_and(grow, _finite(doubled))
        self._scale.assign(_C.where(keep_doubled, doubled, scale))
        self._counter.assign(_C.where(grow, _C.multiply(counted, 0), counted))

    def _skip(self):
        """Keras' update_if_not_finite_grads, and the skipped step counted in iterations."""
        self._counter.assign(_C.constant(0, _dtypes.int64._enum))
        self._scale.assign(_C.maximum(_C.divide(self._scale.read_value(), 2.0), 1.0))
        self._optimizer._iterations.assign_add(_C.constant(1, _dtypes.int64._enum))

    # ---- config and delegation ----------------------------------------------------------------

    def _checkpoint_children(self):
        """TF's layout: the inner optimizer's children (the wrapper delegates to it, so its slots are this node's
        too), then "loss_scale" when dynamic."""
        from ..train._checkpoint import children
        out = children(self._optimizer)
        if self._dynamic:
            out.append(("loss_scale", _DynamicLossScaleState(self._scale, self._counter)))
        return out

    def _serialized_module(self):
        return "keras.mixed_precision"

    def get_config(self):
        from ._serialization import serialize_keras_object
        return {"inner_optimizer": serialize_keras_object(self._optimizer), "dynamic": self._dynamic,
                "initial_scale": self._initial_scale, "dynamic_growth_steps": self._growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from . import optimizers
        config = dict(config)
        inner = config.pop("inner_optimizer")
        if not isinstance(inner, optimizers.Optimizer):
            inner = optimizers.deserialize(inner, custom_objects)
        return cls(inner, **config)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_optimizer", "_scale", "_counter", "_checkpoint_children"):
            raise AttributeError(name)
        return getattr(self._optimizer, name)
