"""add_loss / layer.losses / model.losses / add_metric, weight and activity regularizers, and constraints: values
against NumPy and Keras' formulas (penalty factors stored as float32; activity penalties divided by the batch),
losses collected per call, the same in a traced step as eagerly."""
import numpy as np
import pytest

import kiln as tf
from kiln import keras as K

F32 = np.float32


def test_regularizer_values_names_and_configs():
    x = np.array([[1.0, -2.0], [3.0, -0.5]], np.float32)
    abs_sum, sq_sum = np.abs(x).sum(), (x ** 2).sum()
    cases = [(K.regularizers.L1(0.3), F32(0.3) * abs_sum), (K.regularizers.L2(0.2), F32(0.2) * sq_sum),
             (K.regularizers.L1L2(l1=0.1, l2=0.2), F32(0.1) * abs_sum + F32(0.2) * sq_sum),
             (K.regularizers.get("l1"), F32(0.01) * abs_sum), (K.regularizers.get("l2"), F32(0.01) * sq_sum),
             (K.regularizers.get("l1_l2"), F32(0.01) * abs_sum + F32(0.01) * sq_sum),
             (K.regularizers.L1L2(), 0.0)]
    for reg, expected in cases:
        np.testing.assert_allclose(float(reg(tf.constant(x))), expected, rtol=1e-6)
    assert K.regularizers.L2(0.01).get_config() == {"l2": 0.009999999776482582}  # float32, as Keras'
    assert K.regularizers.L1L2(l1=0.5).get_config() == {"l1": 0.5, "l2": 0.0}
    config = K.regularizers.serialize(K.regularizers.L1L2(l1=0.25, l2=0.5))
    assert config == {"module": "keras.regularizers", "class_name": "L1L2", "config": {"l1": 0.25, "l2": 0.5},
                      "registered_name": None}
    again = K.regularizers.get(config)
    assert isinstance(again, K.regularizers.L1L2) and again.get_config() == {"l1": 0.25, "l2": 0.5}
    with pytest.raises(ValueError, match="non-negative, finite"):
        K.regularizers.L2(-1.0)
    with pytest.raises(ValueError, match="Unknown regularizer: 'l3'"):
        K.regularizers.get("l3")


def test_kernel_and_bias_regularizers_enter_the_loss():
    dense = K.layers.Dense(3, kernel_regularizer=K.regularizers.L2(0.1), bias_regularizer="l1",
                           bias_initializer="ones")
    model = K.Sequential([K.Input((4,)), dense])
    kernel, bias = dense.get_weights()
    expected = [F32(0.1) * (kernel ** 2).sum(), F32(0.01) * np.abs(bias).sum()]
    np.testing.assert_allclose([float(v) for v in model.losses], expected, rtol=1e-6)
    # The gradient of the penalty is 2 * l2 * kernel.
    with tf.GradientTape() as tape:
        penalty = dense.losses[0]
    np.testing.assert_allclose(tape.gradient(penalty, dense.kernel).numpy(), 2 * F32(0.1) * kernel, rtol=1e-6)
    # evaluate's loss: the mse plus the penalties.
    x = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    y = np.zeros((6, 3), np.float32)
    model.compile("sgd", loss="mse")
    pred = x @ kernel + bias
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), (pred ** 2).mean() + sum(expected), rtol=1e-5)


def test_activity_regularizer_is_the_penalty_over_the_batch():
    layer = K.layers.Dense(2, activity_regularizer=K.regularizers.L1(0.5), kernel_initializer="ones")
    x = np.array([[1.0, 2.0], [-3.0, 1.0], [0.5, 0.5]], np.float32)
    out = layer(x).numpy()
    np.testing.assert_allclose([float(v) for v in layer.losses], [0.5 * np.abs(out).sum() / 3], rtol=1e-6)
    # ActivityRegularization: the identity plus the penalty.
    reg = K.layers.ActivityRegularization(l1=0.1, l2=0.2)
    np.testing.assert_array_equal(reg(x).numpy(), x)
    np.testing.assert_allclose(float(reg.losses[0]), (F32(0.1) * np.abs(x).sum() + F32(0.2) * (x ** 2).sum()) / 3,
                               rtol=1e-6)
    assert reg.get_config()["l2"] == 0.2 and "activity_regularizer" not in reg.get_config()


class ActivityRegularizationLayer(K.layers.Layer):
    """keras.io's add_loss example."""

    def __init__(self, rate=1e-2, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * tf.reduce_sum(inputs))
        return inputs


class MetricLoggingLayer(K.layers.Layer):
    def call(self, inputs):
        self.add_metric(tf.reduce_mean(inputs), name="mean_activation")
        return inputs


def test_add_loss_is_per_call_and_nested_layers_collect():
    layer = ActivityRegularizationLayer()
    x = np.ones((2, 3), np.float32)
    layer(x)
    layer(x)
    assert len(layer.losses) == 1  # a new call replaces the previous call's losses
    np.testing.assert_allclose(float(layer.losses[0]), 0.06, rtol=1e-6)

    class Outer(K.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = ActivityRegularizationLayer(rate=1.0)
            self.dense = K.layers.Dense(2, kernel_regularizer="l2")

        def call(self, inputs):
            self.add_loss(tf.constant(5.0))
            return self.dense(self.inner(inputs))

    outer = Outer()
    outer(x)
    values = sorted(float(v) for v in outer.losses)
    kernel = outer.dense.kernel.numpy()
    np.testing.assert_allclose(values, sorted([5.0, 6.0, F32(0.01) * (kernel ** 2).sum()]), rtol=1e-6)
    # Callable losses (a model-level lambda) are evaluated when read.
    inputs = K.Input((3,))
    d = K.layers.Dense(2)
    model = K.Model(inputs, d(inputs))
    model.add_loss(lambda: tf.reduce_mean(d.kernel))
    np.testing.assert_allclose(float(model.losses[0]), d.kernel.numpy().mean(), rtol=1e-6)


def _fit_losses(run_eagerly):
    tf.random.set_seed(1)
    K.backend.clear_session()
    inputs = K.Input((3,))
    x = K.layers.Dense(4, kernel_initializer="ones")(inputs)
    x = ActivityRegularizationLayer(rate=0.01)(x)
    x = MetricLoggingLayer()(x)
    outputs = K.layers.Dense(1, kernel_initializer="ones", kernel_regularizer=K.regularizers.L2(0.001))(x)
    model = K.Model(inputs, outputs)
    model.compile(K.optimizers.SGD(0.001), loss="mse", run_eagerly=run_eagerly)
    data = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    history = model.fit(data, data[:, :1], batch_size=4, epochs=2, verbose=0, shuffle=False)
    return model, history.history, data


def test_fit_minimizes_added_losses_traced_as_eagerly():
    model, traced, data = _fit_losses(False)
    _, eager, _ = _fit_losses(True)
    assert set(traced) == {"loss", "mean_activation"}
    for key in traced:
        np.testing.assert_allclose(traced[key], eager[key], rtol=1e-5)
    assert "mean_activation" in model.metrics_names
    # evaluate's loss (one batch of 8) from the trained weights: mse + the added loss + the weight penalty.
    k1, b1, k2, b2 = model.get_weights()
    h = data @ k1 + b1
    pred = h @ k2 + b2
    expected = ((pred - data[:, :1]) ** 2).mean() + 0.01 * h.sum() + F32(0.001) * (k2 ** 2).sum()
    result = model.evaluate(data, data[:, :1], batch_size=8, verbose=0, return_dict=True)
    np.testing.assert_allclose(result["loss"], expected, rtol=1e-5)
    np.testing.assert_allclose(result["mean_activation"], h.mean(), rtol=1e-5)


def test_constraints_values_and_projection_after_each_update():
    w = np.array([[3.0, -1.0], [4.0, 0.5]], np.float32)
    norms = np.sqrt((w ** 2).sum(axis=0, keepdims=True))
    eps = K.backend.epsilon()
    np.testing.assert_allclose(K.constraints.MaxNorm(2)(tf.constant(w)).numpy(),
                               w * np.clip(norms, 0, 2) / (eps + norms), rtol=1e-6)
    np.testing.assert_array_equal(K.constraints.NonNeg()(tf.constant(w)).numpy(), np.maximum(w, 0))
    np.testing.assert_allclose(K.constraints.UnitNorm()(tf.constant(w)).numpy(), w / (eps + norms), rtol=1e-6)
    mm = K.constraints.MinMaxNorm(min_value=1.0, max_value=2.0, rate=0.5)(tf.constant(w)).numpy()
    np.testing.assert_allclose(mm, w * (0.5 * np.clip(norms, 1, 2) + 0.5 * norms) / (eps + norms), rtol=1e-6)
    assert K.constraints.get("max_norm").get_config() == {"max_value": 2, "axis": 0}
    again = K.constraints.get(K.constraints.serialize(K.constraints.MaxNorm(3, axis=[0, 1])))
    assert again.get_config() == {"max_value": 3, "axis": [0, 1]}

    x = np.random.default_rng(1).normal(size=(16, 5)).astype(np.float32)
    y = np.random.default_rng(2).normal(size=(16, 3)).astype(np.float32) * 10
    for constraint, check in ((K.constraints.NonNeg(), lambda k: (k >= 0).all()),
                              (K.constraints.UnitNorm(), lambda k: np.allclose(np.linalg.norm(k, axis=0), 1, 1e-5)),
                              (K.constraints.MaxNorm(0.5), lambda k: (np.linalg.norm(k, axis=0) <= 0.5 + 1e-5).all())):
        dense = K.layers.Dense(3, kernel_constraint=constraint, bias_constraint=K.constraints.NonNeg())
        model = K.Sequential([K.Input((5,)), dense])
        model.compile(K.optimizers.SGD(0.5), loss="mse")
        model.fit(x, y, epochs=2, batch_size=4, verbose=0)
        assert check(dense.kernel.numpy()), constraint
        assert (dense.bias.numpy() >= 0).all()
    # A custom loop's apply_gradients projects too (Keras applies constraints in the optimizer).
    dense = K.layers.Dense(2, kernel_constraint="non_neg", kernel_initializer="ones")
    dense(x[:, :2])
    opt = K.optimizers.SGD(10.0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(dense(x[:, :2]))
    opt.apply_gradients(zip(tape.gradient(loss, [dense.kernel]), [dense.kernel]))
    assert (dense.kernel.numpy() >= 0).all()


def test_dense_and_conv_configs_carry_regularizers_and_constraints():
    dense = K.layers.Dense(2, kernel_regularizer=K.regularizers.L2(0.5), kernel_constraint=K.constraints.NonNeg(),
                           activity_regularizer="l1")
    config = dense.get_config()
    assert config["kernel_regularizer"]["class_name"] == "L2"
    assert config["kernel_constraint"]["class_name"] == "NonNeg"
    assert config["activity_regularizer"]["config"] == {"l1": 0.009999999776482582}
    again = K.layers.Dense.from_config(config)
    assert again.kernel_regularizer.get_config() == {"l2": 0.5} and isinstance(again.kernel_constraint,
                                                                                  K.constraints.NonNeg)
    conv = K.layers.Conv2D(2, 3, kernel_regularizer="l2", bias_constraint="non_neg")
    conv(np.ones((1, 5, 5, 1), np.float32))
    np.testing.assert_allclose(float(conv.losses[0]), F32(0.01) * (conv.kernel.numpy() ** 2).sum(), rtol=1e-6)
    embed = K.layers.Embedding(5, 2, embeddings_regularizer="l1")
    embed(np.array([[1, 2]]))
    np.testing.assert_allclose(float(embed.losses[0]), F32(0.01) * np.abs(embed.embeddings.numpy()).sum(), rtol=1e-6)


def test_a_model_trained_on_its_added_losses_alone():
    # compile without a loss: fit minimizes the layers' add_loss terms (keras.io's VAE-style models).
    class SquaredOutput(K.layers.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_mean(tf.square(inputs)))
            return inputs

    inputs = K.Input((3,))
    outputs = SquaredOutput()(K.layers.Dense(2, kernel_initializer="ones")(inputs))
    model = K.Model(inputs, outputs)
    model.compile(K.optimizers.SGD(0.1))
    x = np.random.default_rng(5).normal(size=(16, 3)).astype(np.float32)
    history = model.fit(x, epochs=3, batch_size=16, verbose=0)
    assert history.history["loss"][2] < history.history["loss"][0]
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(model.evaluate(x, batch_size=16, verbose=0), ((x @ kernel + bias) ** 2).mean(),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="No loss found. You may have forgotten to provide a `loss`"):
        plain = K.Sequential([K.Input((3,)), K.layers.Dense(1)])
        plain.compile("sgd")
        plain.fit(x, x[:, :1], verbose=0)


class LogisticEndpoint(K.layers.Layer):
    """keras.io's endpoint layer: a loss and a metric from targets given as a second input."""

    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = K.losses.BinaryCrossentropy(from_logits=True)
        self.accuracy_fn = K.metrics.BinaryAccuracy()

    def call(self, targets, logits, sample_weights=None):
        loss = self.loss_fn(targets, logits, sample_weights)
        self.add_loss(loss)
        acc = self.accuracy_fn(targets, logits, sample_weights)
        self.add_metric(acc, name="accuracy")
        return tf.nn.softmax(logits)


def test_endpoint_layer_with_targets_as_an_input():
    inputs = K.Input(shape=(3,), name="inputs")
    targets = K.Input(shape=(10,), name="targets")
    logits = K.layers.Dense(10)(inputs)
    predictions = LogisticEndpoint(name="predictions")(targets, logits)  # the output shape traced with both
    assert predictions.shape.as_list() == [None, 10]
    model = K.Model(inputs=[inputs, targets], outputs=predictions)
    model.compile(optimizer="adam")  # no loss argument
    rng = np.random.default_rng(6)
    data = {"inputs": rng.random((3, 3)).astype(np.float32), "targets": rng.random((3, 10)).astype(np.float32)}
    history = model.fit(data, verbose=0)
    assert sorted(history.history) == ["accuracy", "loss"]
    kernel, bias = model.get_weights()[:2]
    z = data["inputs"] @ kernel + bias
    t = data["targets"]
    bce = (np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))).mean()
    np.testing.assert_allclose(model.evaluate(data, verbose=0, return_dict=True)["loss"], bce, rtol=1e-5)
