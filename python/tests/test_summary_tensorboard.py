"""tf.keras.callbacks.TensorBoard: the event files fit writes, decoded and compared with what
Keras 2.15 writes (train/ and validation/ runs, epoch_/batch_ scalars, evaluation_<m>_vs_iterations
at the optimizer's step, <weight>/histogram per epoch, the model's JSON under "keras"), and the
figures with fit's History."""
import json
import os

import numpy as np
import pytest

import kiln as tf
from kiln.summary._reader import read_logdir

K = tf.keras


def data():
    rng = np.random.RandomState(0)
    x = rng.rand(40, 3).astype("float32")
    y = (x.sum(axis=1, keepdims=True) > 1.5).astype("float32")
    return x, y


def model(optimizer=None):
    m = K.Sequential([K.layers.Dense(4, activation="relu", input_shape=(3,)), K.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer or K.optimizers.SGD(0.1), "binary_crossentropy", metrics=["accuracy"])
    return m


def scalars(series):
    return [(step, value) for step, _, value in series.points]


def test_epoch_scalars_and_layout(tmp_path):
    x, y = data()
    m = model()
    logdir = str(tmp_path / "logs")
    history = m.fit(x, y, batch_size=10, epochs=3, validation_split=0.25, verbose=0,
                    callbacks=[K.callbacks.TensorBoard(log_dir=logdir)])
    assert sorted(os.listdir(logdir)) == ["train", "validation"]
    for run in ("train", "validation"):
        (name,) = os.listdir(os.path.join(logdir, run))
        assert name.startswith("events.out.tfevents.") and name.endswith(".v2")
    runs = read_logdir(logdir)
    train, val = runs["train"], runs["validation"]
    # update_freq="epoch": no batch_ scalars; no histograms without histogram_freq.
    assert sorted(train) == ["epoch_accuracy", "epoch_loss", "keras"]
    assert sorted(val) == ["epoch_accuracy", "epoch_loss", "evaluation_accuracy_vs_iterations",
                           "evaluation_loss_vs_iterations"]
    assert train["epoch_loss"].kind == "scalars"
    np.testing.assert_allclose([v for _, v in scalars(train["epoch_loss"])], history.history["loss"], rtol=1e-6)
    assert [s for s, _ in scalars(train["epoch_loss"])] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in scalars(val["epoch_loss"])], history.history["val_loss"], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in scalars(val["epoch_accuracy"])], history.history["val_accuracy"],
                               rtol=1e-6)
    # 30 training samples in batches of 10: the optimizer has taken 3, 6, 9 steps at each validation.
    evaluation = scalars(val["evaluation_loss_vs_iterations"])
    assert [s for s, _ in evaluation] == [3, 6, 9]
    np.testing.assert_allclose([v for _, v in evaluation], history.history["val_loss"], rtol=1e-6)
    # write_graph=True (the default): the Sequential model's JSON, as Keras writes it.
    (step, _, config), = train["keras"].points
    assert train["keras"].kind == "graph_keras_model" and step == 0
    assert json.loads(config)["class_name"] == "Sequential"


@pytest.mark.parametrize("update_freq, steps", [("batch", list(range(1, 10))), (2, [2, 4, 6, 8]), (4, [4, 8])])
def test_batch_scalars_every_update_freq_batches(tmp_path, update_freq, steps):
    x, y = data()
    m = model()
    logged = []
    logger = K.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: logged.append(logs["loss"]))
    m.fit(x[:30], y[:30], batch_size=10, epochs=3, verbose=0, shuffle=False,
          callbacks=[logger, K.callbacks.TensorBoard(str(tmp_path), update_freq=update_freq, write_graph=False)])
    train = read_logdir(str(tmp_path))["train"]
    assert "keras" not in train
    batch_loss = scalars(train["batch_loss"])
    assert [s for s, _ in batch_loss] == steps
    # Keras' batch logs: the epoch's running mean so far, at step = batches run in this fit.
    np.testing.assert_allclose([v for _, v in batch_loss], [logged[s - 1] for s in steps], rtol=1e-6)
    assert [s for s, _ in scalars(train["batch_accuracy"])] == steps


def test_weight_histograms(tmp_path):
    x, y = data()
    K.backend.clear_session()  # layer names from dense, as in a fresh Keras process
    m = model()
    m.fit(x, y, batch_size=20, epochs=4, verbose=0,
          callbacks=[K.callbacks.TensorBoard(str(tmp_path), histogram_freq=2, write_graph=False)])
    train = read_logdir(str(tmp_path))["train"]
    names = [w.name for layer in m.layers for w in layer.weights]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    for name, weight in zip(names, m.weights):
        series = train[name.replace(":", "_") + "/histogram"]
        assert series.kind == "histograms"
        assert [p[0] for p in series.points] == [0, 2]  # epochs 0 and 2 with histogram_freq=2
        buckets = series.points[-1][2]
        assert buckets.shape == (30, 3) and buckets[:, 2].sum() == weight.numpy().size
    # The last histogram (epoch 2) is not the final weights: 2 more epochs trained after it; the bucket
    # edges span the weights then. Check against NumPy on a fresh run stopped at epoch 0.
    m2 = model()
    tb = str(tmp_path / "one")
    m2.fit(x, y, batch_size=20, epochs=1, verbose=0, callbacks=[K.callbacks.TensorBoard(tb, histogram_freq=1)])
    kernel = m2.layers[0].kernel.numpy().astype(np.float64).reshape(-1)
    tag = m2.layers[0].kernel.name.replace(":", "_") + "/histogram"
    buckets = read_logdir(tb)["train"][tag].points[0][2]
    counts, edges = np.histogram(kernel, bins=30)
    np.testing.assert_allclose(buckets[:, 0], edges[:-1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(buckets[:, 1], edges[1:], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(buckets[:, 2], counts)


def test_learning_rate_schedule_and_evaluate(tmp_path):
    x, y = data()
    schedule = K.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    m = model(K.optimizers.SGD(schedule))
    tb = K.callbacks.TensorBoard(str(tmp_path), write_graph=False)
    m.fit(x, y, batch_size=20, epochs=2, verbose=0, callbacks=[tb])
    train = read_logdir(str(tmp_path))["train"]
    # Keras logs the scheduled rate at the optimizer's step when each epoch ends: 2 then 4 steps.
    np.testing.assert_allclose([v for _, v in scalars(train["epoch_learning_rate"])],
                               [0.1 * 0.5 ** (2 / 2), 0.1 * 0.5 ** (4 / 2)], rtol=1e-6)
    # evaluate with the callback: evaluation_ scalars in validation/ at the optimizer's 4 steps.
    loss, _ = m.evaluate(x, y, verbose=0, callbacks=[tb])
    val = read_logdir(str(tmp_path))["validation"]
    assert scalars(val["evaluation_loss_vs_iterations"]) == [(4, pytest.approx(loss, rel=1e-6))]


def test_arguments():
    tb = K.callbacks.TensorBoard("logs", update_freq="batch", write_graph=False, profile_batch=0)
    assert tb.update_freq == 1 and tb.log_dir == "logs"
    K.callbacks.TensorBoard(batch_size=32)  # TF 1's argument: accepted, unused, as in Keras
    with pytest.raises(ValueError, match="Unrecognized arguments in `TensorBoard` Callback"):
        K.callbacks.TensorBoard(log_directory="logs")
    with pytest.raises(ValueError, match="update_freq"):
        K.callbacks.TensorBoard(update_freq="step")
