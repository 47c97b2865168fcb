"""Adagrad, AdamW, weight decay, gradient clipping and learning-rate schedules against TF's formulas,
computed by hand in float64 (eager and inside a traced step)."""
import math

import numpy as np
import pytest

import kiln as tf

K = tf.keras
GRADS = [np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -0.5]), np.array([0.0, 0.2, 0.1])]


def run(opt, grads=GRADS, start=(0.5, -1.0, 2.0), traced=False):
    var = tf.Variable(np.array(start, np.float32))

    def step(g):
        opt.apply_gradients([(g, var)])

    if traced:
        step = tf.function(step)
    for g in grads:
        step(tf.constant(np.asarray(g, np.float32)))
    return var.numpy()


@pytest.mark.parametrize("traced", [False, True])
def test_adagrad_matches_keras_formula(traced):
    x, acc = np.array([0.5, -1.0, 2.0]), np.full(3, 0.1)
    for g in GRADS:
        acc = acc + g * g
        x = x - 0.05 * g / np.sqrt(acc + 1e-7)
    np.testing.assert_allclose(run(K.optimizers.Adagrad(0.05), traced=traced), x, rtol=1e-5)


def adam_reference(lr_at, weight_decay=0.0, grads=GRADS):
    x, m, v = np.array([0.5, -1.0, 2.0]), np.zeros(3), np.zeros(3)
    for t, g in enumerate(grads, 1):
        lr = lr_at(t - 1)
        x = x - x * weight_decay * lr           # decoupled, before the step (Keras' _apply_weight_decay)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        x = x - lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m / (np.sqrt(v) + 1e-7)
    return x


@pytest.mark.parametrize("traced", [False, True])
def test_adamw_decays_the_weights_apart_from_the_gradient(traced):
    opt = K.optimizers.AdamW(learning_rate=0.01, weight_decay=0.1)
    np.testing.assert_allclose(run(opt, traced=traced), adam_reference(lambda t: 0.01, 0.1), rtol=1e-5)
    assert opt.get_config()["weight_decay"] == 0.1 and K.optimizers.AdamW().weight_decay == 0.004
    assert isinstance(K.optimizers.get("adamw"), K.optimizers.AdamW)
    # Any optimizer takes weight_decay (Keras 2.11): SGD's step is then var -= var * wd * lr + lr * g.
    x = np.array([0.5, -1.0, 2.0])
    for g in GRADS:
        x = x - x * 0.2 * 0.1 - 0.1 * g
    np.testing.assert_allclose(run(K.optimizers.SGD(0.1, weight_decay=0.2)), x, rtol=1e-5)


def test_schedules_follow_the_keras_formulas():
    s = K.optimizers.schedules.ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5)
    stair = K.optimizers.schedules.ExponentialDecay(0.1, 4, 0.5, staircase=True)
    cos = K.optimizers.schedules.CosineDecay(0.1, decay_steps=10, alpha=0.2)
    for step in (0, 3, 4, 9, 12, 30):
        assert float(s(step)) == pytest.approx(0.1 * 0.5 ** (step / 4), rel=1e-6)
        assert float(stair(step)) == pytest.approx(0.1 * 0.5 ** (step // 4), rel=1e-6)
        c = 0.5 * (1 + math.cos(math.pi * min(step, 10) / 10))
        assert float(cos(step)) == pytest.approx(0.1 * ((1 - 0.2) * c + 0.2), rel=1e-5, abs=1e-7)
    assert s.get_config()["decay_rate"] == 0.5
    with pytest.raises(ValueError, match="decay_steps"):
        K.optimizers.schedules.CosineDecay(0.1, 0)


@pytest.mark.parametrize("traced", [False, True])
def test_an_optimizer_with_a_schedule_uses_the_rate_at_its_iterations(traced):
    schedule = K.optimizers.schedules.ExponentialDecay(0.01, decay_steps=1, decay_rate=0.5)
    opt = K.optimizers.Adam(learning_rate=schedule)
    np.testing.assert_allclose(run(opt, traced=traced), adam_reference(lambda t: 0.01 * 0.5 ** t), rtol=1e-5)
    assert opt.learning_rate is schedule
    assert opt.get_config()["learning_rate"]["class_name"] == "ExponentialDecay"


def test_the_learning_rate_of_a_schedule_is_not_settable():
    schedule = K.optimizers.schedules.CosineDecay(0.1, decay_steps=10)
    opt = K.optimizers.SGD(learning_rate=schedule)
    with pytest.raises(TypeError, match="created with a `LearningRateSchedule`.*not settable"):
        opt.learning_rate = 0.5
    assert opt.learning_rate is schedule  # kept, as TF's
    run(opt, grads=GRADS[:1])
    assert opt.variables[1].numpy() == pytest.approx(0.1)  # the rate the step used: the schedule at 0


def test_the_learning_rate_variable_is_the_rate():
    opt = K.optimizers.SGD(learning_rate=0.5)
    opt.learning_rate = 0.125  # before the first step: the variable's initial value
    assert opt.get_config()["learning_rate"] == 0.125
    np.testing.assert_allclose(run(opt, grads=GRADS[:1]), [0.5 - 0.0125, -1.0 + 0.025, 2.0 - 0.0375], rtol=1e-6)
    opt.learning_rate.assign(0.25)  # as Keras' LearningRateScheduler does
    assert opt.learning_rate.numpy() == 0.25 and opt.get_config()["learning_rate"] == 0.25


def test_clipping_by_value_norm_and_global_norm():
    g = [np.array([3.0, -4.0, 0.5])]
    np.testing.assert_allclose(run(K.optimizers.SGD(1.0, clipvalue=1.0), g), [0.5 - 1, -1.0 + 1, 2.0 - 0.5],
                               rtol=1e-6)
    # Norm 5.0394: scaled to norm 1.
    norm = np.linalg.norm(g[0])
    np.testing.assert_allclose(run(K.optimizers.SGD(1.0, clipnorm=1.0), g),
                               np.array([0.5, -1.0, 2.0]) - g[0] / norm, rtol=1e-5)
    np.testing.assert_allclose(run(K.optimizers.SGD(1.0, clipnorm=10.0), g), np.array([0.5, -1.0, 2.0]) - g[0],
                               rtol=1e-6)
    # The global norm is over every gradient together: sqrt(5.0394^2 + 12^2) = 13.015.
    a, b = tf.Variable([0.0, 0.0, 0.0]), tf.Variable([0.0])
    opt = K.optimizers.SGD(1.0, global_clipnorm=2.0)
    step = tf.function(lambda ga, gb: opt.apply_gradients([(ga, a), (gb, b)]))
    step(tf.constant(g[0].astype(np.float32)), tf.constant([12.0]))
    total = math.sqrt(norm ** 2 + 144)
    np.testing.assert_allclose(a.numpy(), -g[0] * 2 / total, rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), [-12 * 2 / total], rtol=1e-5)
    with pytest.raises(ValueError, match="At most one of `clipnorm` and `global_clipnorm`"):
        K.optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="clipvalue must be >= 0"):
        K.optimizers.SGD(clipvalue=-1.0)


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("momentum, centered", [(0.0, False), (0.5, False), (0.0, True), (0.5, True)])
def test_rmsprop_matches_keras_formula(momentum, centered, traced):
    x, ms, mg, mom = np.array([0.5, -1.0, 2.0]), np.zeros(3), np.zeros(3), np.zeros(3)
    for g in GRADS:
        g = np.asarray(g, np.float64)
        ms = 0.9 * ms + 0.1 * g * g
        mg = 0.9 * mg + 0.1 * g
        denominator = ms - mg * mg if centered else ms
        if momentum:
            mom = momentum * mom + 0.01 * g / np.sqrt(denominator + 1e-7)
            x = x - mom
        else:
            x = x - 0.01 * g / (np.sqrt(denominator) + 1e-7)
    opt = K.optimizers.RMSprop(0.01, momentum=momentum, centered=centered)
    np.testing.assert_allclose(run(opt, traced=traced), x, rtol=1e-5)
    assert opt.get_config()["centered"] is centered
