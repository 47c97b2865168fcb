"""compile() for several outputs (losses and metrics as lists or dicts by output name, loss_weights), class_weight
and sample_weight, and custom train steps written as keras.io's "Customizing what happens in fit()" does
(self.compiled_loss, self.compiled_metrics, self.compute_loss, self.metrics): figures against NumPy."""
import numpy as np
import pytest

import kiln as tf
from kiln import keras as K

L = K.layers


def _two_heads():
    inputs = K.Input((4,), name="x")
    hidden = L.Dense(8, activation="relu", name="hidden")(inputs)
    score = L.Dense(1, name="score")(hidden)
    kind = L.Dense(3, activation="softmax", name="kind")(hidden)
    return K.Model(inputs, [score, kind])


def _data(n=12):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return x, (x.sum(1, keepdims=True) * 0.5).astype(np.float32), (np.arange(n) % 3).astype(np.int32)


def _numpy_figures(model, x, score_y, kind_y):
    score, kind = [o.numpy() for o in model(x)]
    mse = ((score - score_y) ** 2).mean()
    scce = -np.log(np.clip(kind[np.arange(len(kind_y)), kind_y], 1e-7, 1)).mean()
    return score, kind, mse, scce


def test_dict_losses_loss_weights_and_metrics_per_output():
    model = _two_heads()
    model.compile("sgd", loss={"score": "mse", "kind": "sparse_categorical_crossentropy"},
                  loss_weights={"score": 0.5, "kind": 2.0}, metrics={"score": ["mae"], "kind": ["accuracy"]})
    x, sy, ky = _data()
    result = model.evaluate(x, {"score": sy, "kind": ky}, batch_size=12, verbose=0, return_dict=True)
    assert model.metrics_names == ["loss", "score_loss", "kind_loss", "score_mae", "kind_accuracy"]
    score, kind, mse, scce = _numpy_figures(model, x, sy, ky)
    np.testing.assert_allclose(result["score_loss"], mse, rtol=1e-5)
    np.testing.assert_allclose(result["kind_loss"], scce, rtol=1e-5)
    np.testing.assert_allclose(result["loss"], 0.5 * mse + 2.0 * scce, rtol=1e-5)
    np.testing.assert_allclose(result["score_mae"], np.abs(score - sy).mean(), rtol=1e-5)
    np.testing.assert_allclose(result["kind_accuracy"], (kind.argmax(1) == ky).mean(), rtol=1e-6)
    # evaluate's list follows metrics_names.
    values = model.evaluate(x, [sy, ky], batch_size=12, verbose=0)
    np.testing.assert_allclose(values, [result[k] for k in model.metrics_names], rtol=1e-6)


def test_list_losses_and_a_metric_list_for_every_output_train():
    model = _two_heads()
    model.compile(K.optimizers.Adam(0.01), loss=["mse", "categorical_crossentropy"], loss_weights=[1.0, 0.1],
                  metrics=["mae"])
    x, sy, ky = _data(48)
    ky = K.utils.to_categorical(ky, 3)
    history = model.fit(x, [sy, ky], epochs=3, batch_size=16, verbose=0)
    assert sorted(history.history) == ["kind_loss", "kind_mae", "loss", "score_loss", "score_mae"]
    assert history.history["loss"][-1] < history.history["loss"][0]
    with pytest.raises(ValueError, match="one entry per model output"):
        other = _two_heads()
        other.compile("sgd", loss=["mse"] * 3)
        other.evaluate(x, [sy, ky], verbose=0)
    with pytest.raises(ValueError, match="unexpected loss key"):
        other = _two_heads()
        other.compile("sgd", loss={"nope": "mse"})
        other.evaluate(x, [sy, ky], verbose=0)


def test_one_loss_for_every_output_is_summed():
    inputs = K.Input((2,))
    a, b = L.Dense(1, name="a")(inputs), L.Dense(1, name="b")(inputs)
    model = K.Model(inputs, [a, b])
    model.compile("sgd", loss="mse")
    x = np.random.default_rng(1).normal(size=(6, 2)).astype(np.float32)
    ya, yb = np.ones((6, 1), np.float32), np.zeros((6, 1), np.float32)
    result = model.evaluate(x, [ya, yb], batch_size=6, verbose=0, return_dict=True)
    pa, pb = [o.numpy() for o in model(x)]
    np.testing.assert_allclose(result["loss"], ((pa - ya) ** 2).mean() + ((pb - yb) ** 2).mean(), rtol=1e-5)


def test_sample_weight_and_class_weight():
    x = np.random.default_rng(2).normal(size=(8, 3)).astype(np.float32)
    y = (np.arange(8) % 2).astype(np.float32).reshape(-1, 1)
    model = K.Sequential([K.Input((3,)), L.Dense(1, activation="sigmoid")])
    model.compile("sgd", loss="binary_crossentropy")
    w = np.array([1, 2, 0, 1, 3, 1, 1, 0.5], np.float32)
    p = np.clip(model.predict(x, verbose=0), 1e-7, 1 - 1e-7)
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p)).ravel()
    # Keras' sum-over-batch-size: the weighted sum over the number of samples.
    np.testing.assert_allclose(model.evaluate(x, y, sample_weight=w, batch_size=8, verbose=0), (bce * w).sum() / 8,
                               rtol=1e-5)
    # `metrics` see no sample weights (Keras 2), `weighted_metrics` do; a repeated name gets "weighted_".
    model.compile("sgd", loss="binary_crossentropy", metrics=["mae"], weighted_metrics=["mae", "mse"])
    result = model.evaluate(x, y, sample_weight=w, batch_size=8, verbose=0, return_dict=True)
    assert model.metrics_names == ["loss", "mae", "weighted_mae", "mse"]
    err = np.abs(model.predict(x, verbose=0) - y).ravel()
    np.testing.assert_allclose(result["mae"], err.mean(), rtol=1e-5)
    np.testing.assert_allclose(result["weighted_mae"], (err * w).sum() / w.sum(), rtol=1e-5)
    np.testing.assert_allclose(result["mse"], (err ** 2 * w).sum() / w.sum(), rtol=1e-5)
    # class_weight is sample weights by class: the same training as the weights it stands for.
    init = model.get_weights()
    model.fit(x, y, class_weight={0: 1.0, 1: 4.0}, epochs=2, batch_size=4, shuffle=False, verbose=0)
    by_class = model.get_weights()
    model.set_weights(init)
    model.compile("sgd", loss="binary_crossentropy")
    model.fit(x, y, sample_weight=np.where(y.ravel() == 1, 4.0, 1.0).astype(np.float32), epochs=2, batch_size=4,
              shuffle=False, verbose=0)
    for a, b in zip(by_class, model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="keys from 0 to one less than the number of classes"):
        model.fit(x, y, class_weight={0: 1.0, 2: 1.0}, verbose=0)
    # One-hot labels pick their class by argmax.
    onehot = K.Sequential([K.Input((3,)), L.Dense(2, activation="softmax")])
    onehot.compile("sgd", loss="categorical_crossentropy")
    onehot.fit(x, K.utils.to_categorical(y.ravel(), 2), class_weight={0: 1.0, 1: 2.0}, verbose=0)


class CompiledLossModel(K.Model):
    """keras.io's first custom train_step: compiled_loss and compiled_metrics."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class ComputeLossModel(K.Model):
    """The same step with compute_loss (which also updates the loss tracker)."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
        return self.compute_metrics(x, y, y_pred, None)


def _fit(cls, run_eagerly=False):
    tf.random.set_seed(5)
    K.backend.clear_session()
    inputs = K.Input((4,))
    outputs = L.Dense(1, kernel_regularizer="l2")(L.Dense(5, activation="relu")(inputs))
    model = cls(inputs, outputs)
    model.compile(K.optimizers.SGD(0.05), loss="mse", metrics=["mae"], run_eagerly=run_eagerly)
    x = np.random.default_rng(3).normal(size=(32, 4)).astype(np.float32)
    return model.fit(x, x[:, :1] * 2 - x[:, 1:2], epochs=3, batch_size=8, shuffle=False, verbose=0).history


def test_custom_train_steps_match_the_built_in_one():
    reference = _fit(K.Model)
    for cls in (CompiledLossModel, ComputeLossModel):
        for eager in (False, True):
            history = _fit(cls, eager)
            assert sorted(history) == ["loss", "mae"]
            for key in history:
                np.testing.assert_allclose(history[key], reference[key], rtol=1e-5)


def test_lower_level_train_step_with_its_own_trackers():
    loss_tracker = K.metrics.Mean(name="loss")
    mae_metric = K.metrics.MeanAbsoluteError(name="mae")

    class Manual(K.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = K.losses.mean_squared_error(y, y_pred)
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                               self.trainable_variables))
            loss_tracker.update_state(loss)
            mae_metric.update_state(y, y_pred)
            return {"loss": loss_tracker.result(), "mae": mae_metric.result()}

        @property
        def metrics(self):
            return [loss_tracker, mae_metric]  # reset by fit at each epoch

    inputs = K.Input((2,))
    model = Manual(inputs, L.Dense(1)(inputs))
    model.compile(optimizer="adam")  # no loss: the step computes its own
    x = np.random.default_rng(4).normal(size=(16, 2)).astype(np.float32)
    history = model.fit(x, x[:, :1], epochs=2, batch_size=16, verbose=0)
    assert sorted(history.history) == ["loss", "mae"] and len(history.history["loss"]) == 2
    # Reset each epoch: the second epoch's mean is its one batch's value, not a mean over both epochs.
    assert history.history["mae"][1] != pytest.approx(np.mean(history.history["mae"]))
