"""kiln.keras.optimizers.schedules: learning rates as functions of the optimizer's step, with Keras'
arguments and formulas (float32). An optimizer given a schedule calls it with its `iterations` (the
number of updates before this one) on every apply_gradients, inside the traced step when traced."""
import math

from .. import _C
from .. import dtypes as _dtypes


class LearningRateSchedule:
    def __call__(self, step):
        raise NotImplementedError

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _float_step(step):
    step = step if isinstance(step, _C.Tensor) else _C.constant(step, _dtypes.int64._enum)
    return _C.cast(step, _dtypes.float32._enum)


class _StepDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments and the progress step / decay_steps,
    floored when staircase."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), decay_steps
        self.decay_rate, self.staircase, self.name = float(decay_rate), bool(staircase), name

    def _progress(self, step):
        p = _C.divide(_float_step(step), float(self.decay_steps))
        return _C.floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StepDecay):
    """initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent floored when staircase."""

    def __call__(self, step):
        return _C.multiply(self.initial_learning_rate, _C.pow(self.decay_rate, self._progress(step)))


class CosineDecay(LearningRateSchedule):
    """initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)
    (Loshchilov & Hutter's SGDR without restarts). With a warmup_target (Keras 2.13's warmup), the rate first
    rises linearly from initial_learning_rate to warmup_target over warmup_steps, then decays from
    warmup_target."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None, warmup_target=None,
                 warmup_steps=0):
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        if warmup_steps < 0:
            raise ValueError(f"Argument `warmup_steps` must be >= 0. Received: warmup_steps={warmup_steps}")
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), decay_steps
        self.alpha, self.name = float(alpha), name
        self.warmup_target = None if warmup_target is None else float(warmup_target)
        self.warmup_steps = warmup_steps

    def _decayed(self, step, start):
        done = _C.divide(_C.minimum(step, float(self.decay_steps)), float(self.decay_steps))
        cosine = _C.multiply(0.5, _C.add(1.0, _C.cos(_C.multiply(math.pi, done))))
        return _C.multiply(start, _C.add(_C.multiply(1.0 - self.alpha, cosine), self.alpha))

    def __call__(self, step):
        step = _float_step(step)
        if self.warmup_target is None:
            return self._decayed(step, self.initial_learning_rate)
        warmup = float(self.warmup_steps)
        rise = _C.add(_C.multiply(self.warmup_target - self.initial_learning_rate,
                                  _C.divide(step, max(warmup, 1.0))), self.initial_learning_rate)
        decay = self._decayed(_C.maximum(_C.subtract(step, warmup), 0.0), self.warmup_target)
        return _C.where(_C.less(step, warmup), rise, decay)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


# The other schedules and serialize / deserialize live in their own module (defined after the base above).
from ._schedules_more import (CosineDecayRestarts, InverseTimeDecay, PiecewiseConstantDecay,  # noqa: E402,F401
                              PolynomialDecay, deserialize, serialize)
