"""The rest of Keras 2.15's learning-rate schedules: PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay and
CosineDecayRestarts (Keras' documented formulas, in float32 on the optimizer's step), and
schedules.serialize / deserialize."""
import math

from .. import _C
from .. import dtypes as _dtypes
from .schedules import LearningRateSchedule, _StepDecay, _float_step


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] while step <= boundaries[0], values[i] while boundaries[i - 1] < step <= boundaries[i], and
    values[-1] after the last boundary."""

    def __init__(self, boundaries, values, name=None):
        if len(boundaries) != len(values) - 1:
            raise ValueError("The length of boundaries should be 1 less than the length of values. Received: "
                             f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        step = _float_step(step)
        rate = _C.constant(float(self.values[-1]), _dtypes.float32._enum)
        # From the last interval back: each boundary replaces what lies after it when step <= boundary.
        for boundary, value in reversed(list(zip(self.boundaries, self.values[:-1]))):
            rate = _C.where(_C.less_equal(step, float(boundary)), _C.constant(float(value), rate.dtype._enum), rate)
        return rate

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """(initial_learning_rate - end_learning_rate) * (1 - step / decay_steps) ^ power + end_learning_rate, step held
    at decay_steps; with cycle, decay_steps grows to the next multiple of itself past step instead."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name=None):
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = float(end_learning_rate), float(power), \
            bool(cycle), name

    def __call__(self, step):
        step = _float_step(step)
        steps = float(self.decay_steps)
        if self.cycle:
            # Keras: at step 0 the multiplier is 1, not 0.
            multiplier = _C.where(_C.equal(step, 0.0), _C.add(_C.multiply(step, 0.0), 1.0),
                                  _C.ceil(_C.divide(step, steps)))
            decay_steps = _C.multiply(multiplier, steps)
        else:
            decay_steps = _C.add(_C.multiply(step, 0.0), steps)
            step = _C.minimum(step, steps)
        remaining = _C.pow(_C.subtract(1.0, _C.divide(step, decay_steps)), self.power)
        return _C.add(_C.multiply(self.initial_learning_rate - self.end_learning_rate, remaining),
                      self.end_learning_rate)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(_StepDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps), step / decay_steps floored when staircase."""

    def __call__(self, step):
        return _C.divide(self.initial_learning_rate, _C.add(1.0, _C.multiply(self.decay_rate, self._progress(step))))


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR (Loshchilov & Hutter): cosine decays to alpha * initial_learning_rate over periods that start at
    first_decay_steps and grow by t_mul, each restarting from m_mul times the previous period's peak."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name=None):
        self.initial_learning_rate, self.first_decay_steps = float(initial_learning_rate), first_decay_steps
        self.t_mul, self.m_mul, self.alpha, self.name = float(t_mul), float(m_mul), float(alpha), name

    def __call__(self, step):
        fraction = _C.divide(_float_step(step), float(self.first_decay_steps))
        t_mul = self.t_mul
        if t_mul == 1.0:
            restart = _C.floor(fraction)
            fraction = _C.subtract(fraction, restart)
        else:
            # The period index i with sum_{k<i} t_mul^k <= fraction, and the fraction of period i done.
            restart = _C.floor(_C.divide(_C.log(_C.subtract(1.0, _C.multiply(fraction, 1.0 - t_mul))),
                                         math.log(t_mul)))
            periods_before = _C.divide(_C.subtract(1.0, _C.pow(t_mul, restart)), 1.0 - t_mul)
            fraction = _C.divide(_C.subtract(fraction, periods_before), _C.pow(t_mul, restart))
        peak = _C.pow(self.m_mul, restart)
        cosine = _C.multiply(_C.multiply(0.5, peak), _C.add(1.0, _C.cos(_C.multiply(math.pi, fraction))))
        return _C.multiply(self.initial_learning_rate, _C.add(_C.multiply(1.0 - self.alpha, cosine), self.alpha))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self.t_mul, "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}


def serialize(learning_rate_schedule, use_legacy_format=False):
    """Keras' dict for a schedule ({"class_name", "config"} in the legacy format)."""
    from ._serialization import serialize_keras_object
    if use_legacy_format:
        return {"class_name": type(learning_rate_schedule).__name__,
                "config": learning_rate_schedule.get_config()}
    return serialize_keras_object(learning_rate_schedule)


def deserialize(config, custom_objects=None, use_legacy_format=False):
    """The schedule a serialize() dict describes (Keras' classes, or custom_objects' and registered ones)."""
    from . import schedules
    from ._serialization import deserialize_keras_object
    classes = {k: v for k, v in vars(schedules).items() if isinstance(v, type)}
    return deserialize_keras_object(config, module_objects=classes, custom_objects=custom_objects,
                                    printable_module_name="decay")
