"""tf.keras.mixed_precision (policies run in float32 in Kiln, with one warning) and Keras 2's backend functions."""
import warnings

import numpy as np
import pytest

import kiln as tf

K = tf.keras
MP = tf.keras.mixed_precision


@pytest.fixture(autouse=True)
def _reset_policy():
    yield
    MP.set_global_policy(None)


def test_policy_api():
    policy = MP.Policy("mixed_float16")
    assert policy.name == "mixed_float16" and policy.variable_dtype == "float32"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MP._warned.discard("mixed_float16")
        assert policy.compute_dtype == "float32"
        assert policy.compute_dtype == "float32"
    assert len([w for w in caught if "no float16 dtype" in str(w.message)]) == 1  # once
    assert MP.Policy("float64").compute_dtype == "float64"
    assert repr(MP.Policy("mixed_bfloat16")) == '<Policy "mixed_bfloat16">'
    with pytest.raises(ValueError, match="Cannot convert value mixed_float8"):
        MP.Policy("mixed_float8")
    assert MP.global_policy().name == "float32"


def test_global_policy_reaches_layers_and_configs():
    MP.set_global_policy("mixed_bfloat16")
    assert MP.global_policy().name == "mixed_bfloat16"
    layer = K.layers.Dense(2)
    assert layer.dtype_policy.name == "mixed_bfloat16" and layer.compute_dtype == "float32"
    config = layer.get_config()
    assert config["dtype"]["class_name"] == "Policy" and config["dtype"]["config"]["name"] == "mixed_bfloat16"
    again = K.layers.Dense.from_config(config)
    assert again.dtype_policy.name == "mixed_bfloat16"
    explicit = K.layers.Dense(2, dtype="float64")
    assert explicit.dtype == "float64"
    MP.set_global_policy(None)
    assert K.layers.Dense(1).dtype_policy.name == "float32"


def test_mixed_precision_model_trains_like_float32():
    x = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
    y = x @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)

    def train(policy):
        MP.set_global_policy(policy)
        tf.random.set_seed(1)
        model = K.Sequential([K.Input((4,)), K.layers.Dense(8, activation="relu"),
                              K.layers.Dense(1, dtype="float32")])
        model.compile(K.optimizers.SGD(0.05), "mse")
        model.fit(x, y, epochs=3, batch_size=8, verbose=0, shuffle=False)
        return model.predict(x, verbose=0)

    np.testing.assert_allclose(train("mixed_float16"), train("float32"), rtol=1e-5, atol=1e-6)


def test_loss_scale_optimizer():
    opt = MP.LossScaleOptimizer(K.optimizers.SGD(0.1), initial_scale=8.0, dynamic_growth_steps=2)
    var = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(var * var)
        scaled = opt.get_scaled_loss(loss)
    assert float(scaled.numpy()) == pytest.approx(8.0 * 5.0)
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, [var]))
    np.testing.assert_allclose(grads[0].numpy(), [2.0, 4.0])
    opt.apply_gradients(zip(grads, [var]))
    np.testing.assert_allclose(var.numpy(), [0.8, 1.6], rtol=1e-6)
    opt.apply_gradients([(tf.constant([1.0, 1.0]), var)])
    assert float(opt.loss_scale.numpy()) == 16.0  # doubled after 2 finite steps
    opt.apply_gradients([(tf.constant([float("inf"), 1.0]), var)])
    assert float(opt.loss_scale.numpy()) == 8.0  # halved, and the update skipped
    np.testing.assert_allclose(var.numpy(), [0.7, 1.5], rtol=1e-6)
    assert opt.learning_rate is not None and int(opt.iterations.numpy()) == 2
    fixed = MP.LossScaleOptimizer(K.optimizers.Adam(), dynamic=False, initial_scale=4.0)
    assert MP.LossScaleOptimizer.from_config(fixed.get_config()).get_config() == fixed.get_config()
    with pytest.raises(ValueError, match="initial_scale"):
        MP.LossScaleOptimizer(K.optimizers.Adam(), dynamic=False)


def test_backend_functions():
    B = K.backend
    x = tf.constant([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    a = x.numpy().astype(np.float64)
    assert B.int_shape(x) == (2, 3) and B.ndim(x) == 2 and B.int_shape(K.Input((3,))) == (None, 3)
    np.testing.assert_allclose(B.std(x).numpy(), a.std(), rtol=1e-6)
    np.testing.assert_allclose(B.std(x, axis=0).numpy(), a.std(0), rtol=1e-6)
    np.testing.assert_allclose(B.var(x, axis=1, keepdims=True).numpy(), a.var(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(B.mean(x, axis=-1).numpy(), a.mean(-1), rtol=1e-6)
    assert B.epsilon() == 1e-7 and B.floatx() == "float32" and B.image_data_format() == "channels_last"
    sample = B.random_normal((4000,), mean=2.0, stddev=0.5, seed=3).numpy()
    assert sample.mean() == pytest.approx(2.0, abs=0.05) and sample.std() == pytest.approx(0.5, abs=0.03)
    assert B.random_uniform((3, 2)).shape == (3, 2)
    assert B.is_keras_tensor(K.Input((2,))) and not B.is_keras_tensor(x)
    assert B.count_params(tf.Variable(np.zeros((3, 4), np.float32))) == 12
    B.set_floatx("float64")
    try:
        assert K.layers.Dense(1).dtype == "float64"
    finally:
        B.set_floatx("float32")
    K.layers.Dense(1, name=None)
    B.clear_session()
    assert K.layers.Dense(1).name == "dense"
    with pytest.raises(ValueError, match="channels_first"):
        B.set_image_data_format("channels_first")
