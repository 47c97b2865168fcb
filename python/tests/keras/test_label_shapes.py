"""Targets of shape (N,) against a model output of shape (N, 1), as Keras reconciles them
(losses_utils.squeeze_or_expand_dimensions in LossFunctionWrapper and MeanMetricWrapper): the output's last dim
is squeezed away, so the loss compares each sample with its own label (not every label with every prediction)."""
import numpy as np
import pytest

import kiln as tf
from kiln import keras

K = keras


def _bce(y, p):
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def test_binary_crossentropy_of_flat_labels_against_one_column():
    y = np.array([1, 0, 1, 1], "int32")
    p = np.array([[0.9], [0.2], [0.6], [0.3]], "float32")
    np.testing.assert_allclose(keras.losses.BinaryCrossentropy()(y, p).numpy(), _bce(y, p[:, 0]), rtol=1e-6)
    np.testing.assert_allclose(keras.losses.MeanSquaredError()(y.astype("float32"), p).numpy(),
                               np.mean((y - p[:, 0]) ** 2), rtol=1e-6)
    # Labels with the extra dim and predictions without it: the labels' dim goes.
    np.testing.assert_allclose(keras.losses.BinaryCrossentropy()(y[:, None], p[:, 0]).numpy(), _bce(y, p[:, 0]),
                               rtol=1e-6)


def test_accuracy_metrics_of_flat_labels():
    y = np.array([1, 0, 1, 1], "int32")
    p = np.array([[0.9], [0.2], [0.6], [0.3]], "float32")
    assert keras.metrics.BinaryAccuracy()(y, p).numpy() == 0.75
    m = keras.metrics.BinaryAccuracy()
    m.update_state(y, p)
    m.update_state(y[:1], p[:1])  # the class counts samples: 4 of 5
    assert abs(m.result().numpy() - 0.8) < 1e-7


def test_a_binary_classifier_learns_from_flat_labels():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    keras.utils.set_random_seed(0)  # the initial weights: some draws need more than 5 epochs to pass 0.9
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(0.05), metrics=["accuracy"])
    history = model.fit(x, y, epochs=5, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    p = model.predict(x, verbose=0)
    loss, _ = model.evaluate(x, y, batch_size=256, verbose=0)
    np.testing.assert_allclose(loss, _bce(y, np.clip(p[:, 0], 1e-7, 1 - 1e-7)), rtol=1e-4)


def test_accuracy_of_flat_labels_weighs_each_sample_not_each_batch():
    # Keras' MetricsContainer turns labels (N,) into (N, 1) against an (N, 1) output (match_dtype_and_rank), so
    # binary_accuracy gives one value per sample: 2 right of 100 in batches of 32, 32, 32, 4 is 0.02 (the mean of
    # the batches' means would be 0.0703).
    inputs = K.Input((3,))
    model = K.Model(inputs, K.layers.Dense(1, activation="sigmoid")(inputs))
    model.compile(loss="binary_crossentropy", metrics=["accuracy"])
    model.layers[1].set_weights([np.zeros((3, 1), "float32"), np.array([0.4], "float32")])  # predicts 0.6
    x, y = np.zeros((100, 3), "float32"), np.zeros(100, "int32")
    y[[0, 99]] = 1
    assert model.evaluate(x, y, batch_size=32, verbose=0, return_dict=True)["accuracy"] == pytest.approx(0.02)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
    assert model.evaluate(data, verbose=0, return_dict=True)["accuracy"] == pytest.approx(0.02)
