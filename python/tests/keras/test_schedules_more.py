"""PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay and CosineDecayRestarts against Python references of
Keras' documented formulas (SGDR's periods walked one by one, not by Keras' closed form), traced = eager, in an
optimizer's steps, and schedules.serialize / deserialize."""
import math

import numpy as np
import pytest

import kiln as tf

S = tf.keras.optimizers.schedules
STEPS = [0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 17, 30]


def piecewise(step, boundaries, values):
    for boundary, value in zip(boundaries, values):
        if step <= boundary:
            return value
    return values[-1]


def polynomial(step, initial, decay_steps, end, power, cycle):
    if cycle:
        decay_steps = decay_steps * max(1, math.ceil(step / decay_steps))
    else:
        step = min(step, decay_steps)
    return (initial - end) * (1 - step / decay_steps) ** power + end


def sgdr(step, initial, first, t_mul, m_mul, alpha):
    """The period holding `step` found by walking the periods, then the cosine within it."""
    start, length, peak = 0.0, float(first), 1.0
    while step >= start + length:
        start, length, peak = start + length, length * t_mul, peak * m_mul
    fraction = (step - start) / length
    return initial * ((1 - alpha) * 0.5 * peak * (1 + math.cos(math.pi * fraction)) + alpha)


CASES = [
    (S.PiecewiseConstantDecay([3, 9], [1.0, 0.5, 0.1]), lambda s: piecewise(s, [3, 9], [1.0, 0.5, 0.1])),
    (S.PolynomialDecay(0.1, 10, 0.01, power=0.5), lambda s: polynomial(s, 0.1, 10, 0.01, 0.5, False)),
    (S.PolynomialDecay(0.1, 4, power=2.0, cycle=True), lambda s: polynomial(s, 0.1, 4, 0.0001, 2.0, True)),
    (S.InverseTimeDecay(0.1, 4, 0.5), lambda s: 0.1 / (1 + 0.5 * s / 4)),
    (S.InverseTimeDecay(0.1, 4, 0.5, staircase=True), lambda s: 0.1 / (1 + 0.5 * (s // 4))),
    (S.CosineDecayRestarts(0.1, 3), lambda s: sgdr(s, 0.1, 3, 2.0, 1.0, 0.0)),
    (S.CosineDecayRestarts(0.1, 2, t_mul=1.0, m_mul=0.5, alpha=0.1), lambda s: sgdr(s, 0.1, 2, 1.0, 0.5, 0.1)),
    (S.CosineDecayRestarts(0.1, 2, t_mul=3.0, m_mul=0.8), lambda s: sgdr(s, 0.1, 2, 3.0, 0.8, 0.0)),
]


@pytest.mark.parametrize("schedule, reference", CASES)
def test_values_follow_the_formulas_eager_and_traced(schedule, reference):
    traced = tf.function(lambda step: schedule(step))
    for step in STEPS:
        want = reference(step)
        assert float(schedule(step)) == pytest.approx(want, rel=1e-5, abs=1e-7), step
        assert float(traced(tf.constant(step, tf.int64))) == pytest.approx(want, rel=1e-5, abs=1e-7), step


def test_an_optimizer_steps_with_the_scheduled_rates():
    """SGD on loss = w (gradient 1): after n steps w = -sum of the rates at steps 0 .. n-1."""
    schedule = S.PiecewiseConstantDecay([1, 3], [0.5, 0.25, 0.125])
    w = tf.Variable(0.0)
    opt = tf.keras.optimizers.SGD(schedule)
    for _ in range(5):
        opt.apply_gradients([(tf.constant(1.0), w)])
    assert w.numpy() == pytest.approx(-(0.5 + 0.5 + 0.25 + 0.25 + 0.125))
    assert opt.get_config()["learning_rate"]["class_name"] == "PiecewiseConstantDecay"


@pytest.mark.parametrize("schedule", [case[0] for case in CASES])
def test_serialize_and_deserialize_round_trip(schedule):
    config = S.serialize(schedule)
    assert config["module"] == "keras.optimizers.schedules" and config["class_name"] == type(schedule).__name__
    again = S.deserialize(config)
    assert type(again) is type(schedule) and again.get_config() == schedule.get_config()
    legacy = S.serialize(schedule, use_legacy_format=True)
    assert set(legacy) == {"class_name", "config"}
    assert S.deserialize(legacy).get_config() == schedule.get_config()
    np.testing.assert_allclose([float(again(s)) for s in STEPS], [float(schedule(s)) for s in STEPS])


def test_bad_arguments():
    with pytest.raises(ValueError, match="The length of boundaries should be 1 less than the length of values"):
        S.PiecewiseConstantDecay([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="Unknown decay: 'NoSuchDecay'"):
        S.deserialize({"class_name": "NoSuchDecay", "config": {}})
