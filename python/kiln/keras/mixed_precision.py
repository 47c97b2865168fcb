"""kiln.keras.mixed_precision (tf.keras.mixed_precision): dtype policies and LossScaleOptimizer.

Kiln's Keras layers do not autocast float32 variables to float16 / bfloat16 yet (the engine has those dtypes),
so a "mixed_float16" or "mixed_bfloat16" policy keeps its name but computes (and stores variables) in float32: the first layer built under it warns once that the compute dtype
is not available. Models written for mixed precision run unchanged, at float32 speed and precision; the loss
scaling of LossScaleOptimizer is applied faithfully (scaling a float32 loss is harmless)."""
import warnings

from .. import _C
from .. import dtypes as _dtypes

_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}
_warned = set()


def _available(name):
    """Whether the layers can compute in dtype `name` (not the half types: no autocasting yet)."""
    try:
        return _dtypes.as_dtype(name).name not in ("float16", "bfloat16")
    except (TypeError, ValueError, KeyError):
        return False


class Policy:
    """A layer dtype policy: "float32", "float64", "mixed_float16" or "mixed_bfloat16". compute_dtype and
    variable_dtype are what the layers use; a mixed policy's compute dtype is float32 in Kiln (see the module)."""

    def __init__(self, name):
        if isinstance(name, _dtypes.DType):
            name = name.name
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, not a DType. Instead, pass DType.name. Got: {name!r}")
        if name in _MIXED:
            self._requested_compute = _MIXED[name]
            self._variable_dtype = "float32"
        elif name == "_infer":
            self._requested_compute = self._variable_dtype = None
        else:
            try:
                dtype = _dtypes.as_dtype(name)
            except (TypeError, ValueError, KeyError):
                raise ValueError(f"Cannot convert value {name} to a mixed precision Policy. Valid policies include "
                                 "'mixed_float16', 'mixed_bfloat16', and the name of any dtype such as 'float32'."
                                 ) from None
            self._requested_compute = self._variable_dtype = dtype.name
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def variable_dtype(self):
        return self._variable_dtype

    @property
    def compute_dtype(self):
        wanted = self._requested_compute
        if wanted is not None and not _available(wanted):
            if self._name not in _warned:
                _warned.add(self._name)
                warnings.warn(f"Mixed precision policy {self._name!r}: Kiln's layers have no {wanted} dtype support yet "
                              "(no autocasting), so they compute in float32 (the model runs unchanged, at float32 precision).",
                              stacklevel=3)
            return "float32"
        return wanted

    def __repr__(self):
        return f'<Policy "{self._name}">'

    def __eq__(self, other):
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


_global_policy = None


def global_policy():
    """The policy layers get when their dtype is not given: set_global_policy's, else floatx()'s."""
    if _global_policy is not None:
        return _global_policy
    from . import backend
    return Policy(backend.floatx())


def set_global_policy(policy):
    """Sets the global policy (a name or a Policy; None: back to floatx())."""
    global _global_policy
    if policy is None:
        _global_policy = None
        return
    if not isinstance(policy, Policy):
        policy = Policy(policy)
    if policy.compute_dtype is not None and not _dtypes.as_dtype(policy.variable_dtype).is_floating:
        raise ValueError(f"set_global_policy can only be used to set the global policy to floating-point policies, "
                         f"such as 'float32' and 'mixed_float16', but got policy: {policy.name}")
    _global_policy = policy


class LossScaleOptimizer:
    """Wraps an optimizer for loss scaling: get_scaled_loss(loss) = loss * loss_scale,
    get_unscaled_gradients(grads) = grads / loss_scale. Dynamic scaling halves the scale when a gradient is not
    finite (and skips that update) and doubles it after dynamic_growth_steps finite steps; the other attributes
    are the inner optimizer's."""

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None, dynamic_growth_steps=None):
        from . import optimizers
        self.inner_optimizer = optimizers.get(inner_optimizer)
        self.dynamic = bool(dynamic)
        if not dynamic and (initial_scale is None or dynamic_growth_steps is not None):
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            raise ValueError('"dynamic_growth_steps" must be None if "dynamic" is False, but got: '
                             f"{dynamic_growth_steps}")
        self.initial_scale = float(2 ** 15 if initial_scale is None else initial_scale)
        self.dynamic_growth_steps = int(2000 if dynamic_growth_steps is None else dynamic_growth_steps) \
            if dynamic else None
        with _C.init_scope():
            self._scale = _C.Variable(_C.constant(self.initial_scale, _dtypes.float32._enum), False,
                                      "loss_scale", None)
            self._good_steps = _C.Variable(_C.constant(0, _dtypes.int64._enum), False, "good_steps", None)

    @property
    def loss_scale(self):
        return self._scale.read_value()

    @property
    def dynamic_counter(self):
        return self._good_steps.read_value()

    def get_scaled_loss(self, loss):
        if callable(loss):
            return lambda: _C.multiply(loss(), _C.cast(self.loss_scale, loss().dtype._enum))
        return _C.multiply(loss, _C.cast(self.loss_scale, loss.dtype._enum))

    def get_unscaled_gradients(self, grads):
        return [None if g is None else _C.divide(g, _C.cast(self.loss_scale, g.dtype._enum)) for g in grads]

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        pairs = list(grads_and_vars)
        if not self.dynamic:
            return self.inner_optimizer.apply_gradients(pairs, *args, **kwargs)
        finite = None
        for g, _ in pairs:
            if g is None:
                continue
            ok = _C.reduce_all(_C.less(_C.abs(g), float("inf")), None, False)
            finite = ok if finite is None else _C.logical_and(finite, ok)
        if finite is None or not _C.is_tracing() and bool(finite.numpy()):
            result = self.inner_optimizer.apply_gradients(pairs, *args, **kwargs)
            self._grow()
            return result
        if not _C.is_tracing():
            self._scale.assign(_C.maximum(_C.divide(self._scale.read_value(), 2.0), 1.0))
            self._good_steps.assign(_C.constant(0, _dtypes.int64._enum))
            return self.inner_optimizer.iterations
        # Traced: skipping needs a conditional update, which the inner optimizer's loop does not offer; apply
        # the update with non-finite gradients zeroed and adjust the scale in the graph.
        zeroed = [(None if g is None else _C.where(_C.less(_C.abs(g), float("inf")), g, _C.multiply(g, 0.0)), v)
                  for g, v in pairs]
        result = self.inner_optimizer.apply_gradients(zeroed, *args, **kwargs)
        grown = _C.add(self._good_steps.read_value(), 1)
        double = _C.greater_equal(grown, self.dynamic_growth_steps)
        new_scale = _C.where(finite, _C.where(double, _C.multiply(self._scale.read_value(), 2.0),
                                              self._scale.read_value()),
                             _C.maximum(_C.divide(self._scale.read_value(), 2.0), 1.0))
        self._scale.assign(new_scale)
        self._good_steps.assign(_C.where(_C.logical_and(finite, _C.logical_not(double)), grown,
                                         _C.multiply(grown, 0)))
        return result

    def _grow(self):
        steps = int(self._good_steps.numpy()) + 1
        if steps >= self.dynamic_growth_steps:
            self._scale.assign(_C.multiply(self._scale.read_value(), 2.0))
            steps = 0
        self._good_steps.assign(_C.constant(steps, _dtypes.int64._enum))

    def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None):
        from ..gradient import GradientTape
        var_list = list(var_list() if callable(var_list) else var_list)
        if tape is None:
            with GradientTape() as tape:
                value = _C.multiply(loss(), self.loss_scale)
        else:
            value = self.get_scaled_loss(loss)
        grads = self.get_unscaled_gradients(tape.gradient(value, var_list, grad_loss))
        return self.apply_gradients(zip(grads, var_list))

    def __getattr__(self, name):
        if name in ("inner_optimizer", "_scale", "_good_steps"):
            raise AttributeError(name)
        return getattr(self.inner_optimizer, name)

    def get_config(self):
        from ._serialization import serialize_keras_object
        return {"inner_optimizer": serialize_keras_object(self.inner_optimizer), "dynamic": self.dynamic,
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from . import optimizers
        config = dict(config)
        config["inner_optimizer"] = optimizers.deserialize(config["inner_optimizer"], custom_objects)
        return cls(**config)


__all__ = ["Policy", "global_policy", "set_global_policy", "LossScaleOptimizer"]
