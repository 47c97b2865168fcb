"""tf.keras.mixed_precision.LossScaleOptimizer as Keras 2.15's: dynamic scale 2**15, doubled after
dynamic_growth_steps finite steps, halved (and the step skipped, iterations still counted) on a non-finite
gradient, eagerly and inside tf.function; compile wraps the optimizer under mixed_float16."""
import numpy as np
import pytest
from test_mixed_precision import _reset_policy  # noqa: F401 (autouse: the global policy back to floatx)

import kiln as tf

K = tf.keras
MP = tf.keras.mixed_precision


def test_defaults_and_properties():
    opt = MP.LossScaleOptimizer(K.optimizers.SGD(0.1))
    assert opt.dynamic and opt.initial_scale == 2 ** 15 and opt.dynamic_growth_steps == 2000
    assert float(opt.loss_scale.numpy()) == 32768.0 and opt.loss_scale.dtype == tf.float32
    assert int(opt.dynamic_counter.numpy()) == 0
    assert isinstance(opt.inner_optimizer, K.optimizers.SGD) and float(opt.learning_rate) == pytest.approx(0.1)
    fixed = MP.LossScaleOptimizer(K.optimizers.Adam(), dynamic=False, initial_scale=4.0)
    assert not fixed.dynamic and fixed.dynamic_counter is None and fixed.dynamic_growth_steps is None
    assert float(fixed.loss_scale.numpy()) == 4.0
    assert MP.LossScaleOptimizer.from_config(fixed.get_config()).get_config() == fixed.get_config()
    with pytest.raises(ValueError, match='"initial_scale" must be specified'):
        MP.LossScaleOptimizer(K.optimizers.Adam(), dynamic=False)
    with pytest.raises(ValueError, match='"dynamic_growth_steps" must be None'):
        MP.LossScaleOptimizer(K.optimizers.Adam(), dynamic=False, initial_scale=2.0, dynamic_growth_steps=3)
    with pytest.raises(ValueError, match="already wrapped"):
        MP.LossScaleOptimizer(opt.inner_optimizer)


def test_scaled_loss_and_unscaled_gradients():
    opt = MP.LossScaleOptimizer(K.optimizers.SGD(0.1), initial_scale=8.0)
    var = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(var * var)
        scaled = opt.get_scaled_loss(loss)
    assert float(scaled.numpy()) == 40.0
    scaled_grads = tape.gradient(scaled, [var])
    np.testing.assert_array_equal(scaled_grads[0].numpy(), [16.0, 32.0])
    np.testing.assert_array_equal(opt.get_unscaled_gradients(scaled_grads + [None])[0].numpy(), [2.0, 4.0])
    assert opt.get_unscaled_gradients([None]) == [None]
    assert float(opt.get_scaled_loss(lambda: tf.constant(3.0))().numpy()) == 24.0


def _run_steps(opt, var, grads, traced):
    def step(g):
        opt.apply_gradients([(g, var)])
    run = tf.function(step) if traced else step
    history = []
    for g in grads:
        run(tf.constant(g))
        history.append((float(opt.loss_scale.numpy()), int(opt.dynamic_counter.numpy()),
                        int(opt.iterations.numpy()), var.numpy().copy()))
    return history


@pytest.mark.parametrize("traced", [False, True])
def test_dynamic_scale_grows_halves_and_skips(traced):
    opt = MP.LossScaleOptimizer(K.optimizers.SGD(0.5), initial_scale=4.0, dynamic_growth_steps=2)
    var = tf.Variable([1.0, 1.0])
    inf, nan = float("inf"), float("nan")
    history = _run_steps(opt, var, [[1.0, 1.0], [1.0, 1.0], [inf, 1.0], [nan, 0.0], [1.0, 2.0]], traced)
    scales = [h[0] for h in history]
    counters = [h[1] for h in history]
    assert scales == [4.0, 8.0, 4.0, 2.0, 2.0]
    assert counters == [1, 0, 0, 0, 1]
    assert [h[2] for h in history] == [1, 2, 3, 4, 5]  # a skipped step still counts (Keras)
    np.testing.assert_array_equal(history[1][3], [0.0, 0.0])
    np.testing.assert_array_equal(history[3][3], [0.0, 0.0])  # two skipped steps left it alone
    np.testing.assert_array_equal(history[4][3], [-0.5, -1.0])


@pytest.mark.parametrize("traced", [False, True])
def test_a_skipped_step_leaves_adam_slots_alone(traced):
    opt = MP.LossScaleOptimizer(K.optimizers.Adam(0.1))
    var = tf.Variable([1.0, -1.0])
    _run_steps(opt, var, [[0.5, 0.5]], traced)
    slots = [v.numpy().copy() for v in opt.inner_optimizer.variables[2:]]
    value = var.numpy().copy()
    _run_steps(opt, var, [[float("nan"), 1.0]], traced)
    np.testing.assert_array_equal(var.numpy(), value)
    for before, after in zip(slots, opt.inner_optimizer.variables[2:]):
        np.testing.assert_array_equal(after.numpy(), before)
    assert float(opt.loss_scale.numpy()) == 2.0 ** 14


def test_scale_floor_is_one_and_growth_stays_finite():
    opt = MP.LossScaleOptimizer(K.optimizers.SGD(0.0), initial_scale=2.0, dynamic_growth_steps=1)
    var = tf.Variable([0.0])
    history = _run_steps(opt, var, [[float("inf")]] * 3, traced=False)
    assert [h[0] for h in history] == [1.0, 1.0, 1.0]
    big = MP.LossScaleOptimizer(K.optimizers.SGD(0.0), initial_scale=3e38, dynamic_growth_steps=1)
    _run_steps(big, var, [[1.0]], traced=True)
    assert float(big.loss_scale.numpy()) == pytest.approx(3e38)  # 6e38 overflows float32: kept


def test_minimize_scales_on_the_tape():
    opt = MP.LossScaleOptimizer(K.optimizers.SGD(1.0), initial_scale=1024.0)
    var = tf.Variable(3.0)
    opt.minimize(lambda: var * var, [var])
    assert float(var.numpy()) == pytest.approx(-3.0)
    with tf.GradientTape() as tape:
        loss = var * 2.0
    opt.minimize(loss, [var], tape=tape)
    assert float(var.numpy()) == pytest.approx(-5.0)


def test_compile_wraps_under_mixed_float16_and_fit_trains():
    MP.set_global_policy("mixed_float16")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 4)).astype(np.float32)
    y = x @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    model = K.Sequential([K.Input((4,)), K.layers.Dense(8, activation="relu"),
                          K.layers.Dense(1, dtype="float32")])
    model.compile(K.optimizers.SGD(0.05), "mse")
    assert isinstance(model.optimizer, MP.LossScaleOptimizer)
    assert model.layers[0].compute_dtype == "float16" and model(x[:2]).dtype == tf.float32
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < 0.5 * first
    # 40 steps, skipped ones included; where float16 gradients at 2**15 overflow the scale halved (and
    # never grew back: that takes 2000 finite steps), and the counter counts the steps since the last halving.
    scale = float(model.optimizer.loss_scale.numpy())
    halvings = int(np.log2(32768.0 / scale))
    assert scale == 2.0 ** (15 - halvings) and 0 <= halvings < 10
    assert halvings + int(model.optimizer.dynamic_counter.numpy()) <= 40
    assert int(model.optimizer.iterations.numpy()) == 40


def test_saving_a_model_with_a_loss_scale_optimizer(tmp_path):
    MP.set_global_policy("mixed_float16")
    x = np.random.default_rng(1).normal(size=(64, 4)).astype(np.float32)
    y = x.sum(1, keepdims=True)
    model = K.Sequential([K.Input((4,)), K.layers.Dense(8, activation="relu"), K.layers.Dense(1, dtype="float32")])
    model.compile(K.optimizers.Adam(0.01), "mse")
    model.fit(x, y, epochs=2, verbose=0)
    path = str(tmp_path / "model.keras")
    model.save(path)
    MP.set_global_policy(None)
    loaded = K.models.load_model(path)
    assert isinstance(loaded.optimizer, MP.LossScaleOptimizer) and loaded.optimizer.get_config() == \
        model.optimizer.get_config()
    assert loaded.layers[0].dtype_policy.name == "mixed_float16" and loaded.layers[1].dtype_policy.name == "float32"
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    # The inner optimizer's state came back (iterations and moments).
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy()) == 4


def test_checkpoint_keeps_tf_layout_and_restores_the_scale(tmp_path):
    var = tf.Variable([1.0, 2.0])
    opt = MP.LossScaleOptimizer(K.optimizers.Adam(0.1), initial_scale=8.0, dynamic_growth_steps=1)
    opt.apply_gradients([(tf.constant([1.0, 1.0]), var)])
    path = tf.train.Checkpoint(optimizer=opt, var=var).save(str(tmp_path / "ckpt"))
    names = [n for n, _ in tf.train.list_variables(path)]
    assert "optimizer/loss_scale/current_loss_scale/.ATTRIBUTES/VARIABLE_VALUE" in names
    assert "optimizer/loss_scale/good_steps/.ATTRIBUTES/VARIABLE_VALUE" in names
    assert "var/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE" in names
    var2 = tf.Variable([0.0, 0.0])
    opt2 = MP.LossScaleOptimizer(K.optimizers.Adam(0.1), initial_scale=8.0, dynamic_growth_steps=1)
    opt2.build([var2])
    tf.train.Checkpoint(optimizer=opt2, var=var2).restore(path)
    assert float(opt2.loss_scale.numpy()) == 16.0 and int(opt2.iterations.numpy()) == 1
    np.testing.assert_array_equal(var2.numpy(), var.numpy())
    np.testing.assert_array_equal(opt2.inner_optimizer.variables[2].numpy(), opt.inner_optimizer.variables[2].numpy())
