"""Targets of shape (N,) against a model output of shape (N, 1), as Keras reconciles them
(losses_utils.squeeze_or_expand_dimensions in LossFunctionWrapper and MeanMetricWrapper): the output's last dim
is squeezed away, so the loss compares each sample with its own label (not every label with every prediction)."""
import numpy as np

from kiln import keras


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
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(0.05), metrics=["accuracy"])
    history = model.fit(x, y, epochs=5, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    p = model.predict(x, verbose=0)
    loss, _ = model.evaluate(x, y, batch_size=256, verbose=0)
    np.testing.assert_allclose(loss, _bce(y, np.clip(p[:, 0], 1e-7, 1 - 1e-7)), rtol=1e-4)
