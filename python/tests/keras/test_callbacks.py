"""Keras 2.15's callback protocol and built-in callbacks: the hooks fit / evaluate / predict call and their logs,
and each built-in's rules (EarlyStopping, ModelCheckpoint, CSVLogger, LearningRateScheduler, ReduceLROnPlateau,
TerminateOnNaN, LambdaCallback, History), checked against Keras' documented behaviour with small models and
with stub models that replay a chosen sequence of monitored values."""
import os

import numpy as np
import pytest

import kiln as tf
from kiln import keras as K


def _model(units=1, lr=0.01):
    model = K.Sequential([K.layers.Dense(units, input_shape=(3,))])
    model.compile(K.optimizers.SGD(lr), loss="mse", metrics=["mae"])
    return model


def _data(n=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return x, (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


class Plain(K.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None): self.calls.append(("train_begin", None, logs))
    def on_train_end(self, logs=None): self.calls.append(("train_end", None, logs))
    def on_epoch_begin(self, epoch, logs=None): self.calls.append(("epoch_begin", epoch, logs))
    def on_epoch_end(self, epoch, logs=None): self.calls.append(("epoch_end", epoch, dict(logs)))
    def on_train_batch_begin(self, batch, logs=None): self.calls.append(("batch_begin", batch, logs))
    def on_train_batch_end(self, batch, logs=None): self.calls.append(("batch_end", batch, dict(logs)))
    def on_test_begin(self, logs=None): self.calls.append(("test_begin", None, logs))
    def on_test_end(self, logs=None): self.calls.append(("test_end", None, dict(logs)))
    def on_test_batch_begin(self, batch, logs=None): self.calls.append(("test_batch_begin", batch, logs))
    def on_test_batch_end(self, batch, logs=None): self.calls.append(("test_batch_end", batch, dict(logs)))
    def on_predict_begin(self, logs=None): self.calls.append(("predict_begin", None, logs))
    def on_predict_end(self, logs=None): self.calls.append(("predict_end", None, logs))
    def on_predict_batch_begin(self, batch, logs=None): self.calls.append(("predict_batch_begin", batch, logs))
    def on_predict_batch_end(self, batch, logs=None): self.calls.append(("predict_batch_end", batch, logs))


def test_fit_calls_every_hook_in_keras_order_with_logs_model_and_params():
    model = _model()
    x, y = _data(8)
    cb = Plain()
    history = model.fit(x, y, batch_size=4, epochs=2, validation_data=(x[:4], y[:4]), callbacks=[cb], verbose=0)
    assert cb.model is model
    assert cb.params == {"verbose": 0, "epochs": 2, "steps": 2}
    names = [c[0] for c in cb.calls]
    epoch = ["epoch_begin", "batch_begin", "batch_end", "batch_begin", "batch_end", "test_begin", "test_batch_begin",
             "test_batch_end", "test_end", "epoch_end"]
    assert names == ["train_begin"] + epoch * 2 + ["train_end"]
    assert cb.calls[0][2] == {}  # Keras hands an empty dict where it has no logs
    batch_end = [c for c in cb.calls if c[0] == "batch_end"]
    assert [c[1] for c in batch_end] == [0, 1, 0, 1]
    assert set(batch_end[0][2]) == {"loss", "mae"}
    epoch_end = [c for c in cb.calls if c[0] == "epoch_end"]
    assert set(epoch_end[0][2]) == {"loss", "mae", "val_loss", "val_mae"}
    # The epoch's figures are the last batch's running means; History holds the same values.
    assert epoch_end[1][2]["loss"] == batch_end[-1][2]["loss"]
    assert history.history["val_loss"] == [c[2]["val_loss"] for c in epoch_end]
    assert cb.calls[-1][2] == epoch_end[-1][2]  # on_train_end gets the last epoch's logs
    assert model.history is history and history.epoch == [0, 1]


def test_evaluate_and_predict_call_their_callbacks():
    model = _model()
    x, y = _data(10)
    cb = Plain()
    result = model.evaluate(x, y, batch_size=4, callbacks=[cb], verbose=0, return_dict=True)
    assert [c[0] for c in cb.calls] == ["test_begin"] + ["test_batch_begin", "test_batch_end"] * 3 + ["test_end"]
    assert cb.calls[-1][2] == result
    assert cb.params == {"verbose": 0, "epochs": 1, "steps": 3}
    cb.calls.clear()
    out = model.predict(x, batch_size=4, callbacks=[cb], verbose=0)
    assert [c[0] for c in cb.calls] == ["predict_begin"] + ["predict_batch_begin", "predict_batch_end"] * 3 + \
        ["predict_end"]
    outputs = [c[2]["outputs"] for c in cb.calls if c[0] == "predict_batch_end"]
    np.testing.assert_array_equal(np.concatenate(outputs), out)


def test_stop_training_from_a_batch_hook_and_legacy_batch_hooks():
    model = _model()
    x, y = _data(16)

    class StopAtThirdBatch(K.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seen = []

        def on_batch_end(self, batch, logs=None):  # the older name, called by on_train_batch_end
            self.seen.append(batch)
            if len(self.seen) == 3:
                self.model.stop_training = True

    cb = StopAtThirdBatch()
    history = model.fit(x, y, batch_size=4, epochs=5, callbacks=[cb], verbose=0)
    assert cb.seen == [0, 1, 2]
    assert history.epoch == [0]


def test_lambda_callback_and_callback_list():
    model = _model()
    x, y = _data(8)
    seen = []
    cb = K.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append((epoch, sorted(logs))),
                                    on_train_end=lambda logs: seen.append("end"))
    model.fit(x, y, epochs=2, callbacks=[cb], verbose=0)
    assert seen == [(0, ["loss", "mae"]), (1, ["loss", "mae"]), "end"]
    cbs = K.callbacks.CallbackList([Plain()], add_history=True, model=model, epochs=1)
    assert isinstance(cbs.callbacks[-1], K.callbacks.History) and cbs.callbacks[0].params == {"epochs": 1}


# ---- EarlyStopping ---------------------------------------------------------------------------------

class StubModel:
    """What a callback reads of a model: stop_training, get/set_weights (a counter per epoch), an optimizer."""

    def __init__(self, lr=0.1):
        self.stop_training = False
        self.weights = 0
        self.optimizer = K.optimizers.SGD(lr)

    def get_weights(self):
        return self.weights

    def set_weights(self, w):
        self.weights = w


def _replay(callback, values, monitor="val_loss", model=None):
    """Runs callback's train hooks over epochs whose logs give `monitor` these values; returns the epochs run."""
    model = model or StubModel()
    callback.set_model(model)
    callback.on_train_begin({})
    epochs = 0
    for epoch, value in enumerate(values):
        callback.on_epoch_begin(epoch, {})
        model.weights = epoch
        callback.on_epoch_end(epoch, {monitor: value})
        epochs += 1
        if model.stop_training:
            break
    callback.on_train_end({})
    return epochs, model


def test_early_stopping_documented_example():
    # keras.io's EarlyStopping example: SGD diverges on this data, so loss stops improving and 4 epochs run.
    callback = K.callbacks.EarlyStopping(monitor="loss", patience=3)
    model = K.models.Sequential([K.layers.Dense(10)])
    model.compile(K.optimizers.SGD(), loss="mse")
    history = model.fit(np.arange(100).reshape(5, 20), np.zeros(5), epochs=10, batch_size=1, callbacks=[callback],
                        verbose=0)
    assert len(history.history["loss"]) == 4


def test_early_stopping_patience_min_delta_and_mode():
    # Best at epoch 1 (0.5); epochs 2-4 do not beat it: with patience 3 training stops at epoch 4.
    assert _replay(K.callbacks.EarlyStopping(patience=3), [1.0, 0.5, 0.6, 0.55, 0.7, 0.1])[0] == 5
    # min_delta: improvements smaller than 0.1 do not count.
    cb = K.callbacks.EarlyStopping(patience=1, min_delta=0.1)
    assert _replay(cb, [1.0, 0.95, 0.5])[0] == 2 and cb.stopped_epoch == 1
    # patience=0 never stops at epoch 0 (Keras' `epoch > 0` rule), stops at the first non-improvement after.
    assert _replay(K.callbacks.EarlyStopping(patience=0), [1.0, 2.0, 3.0])[0] == 2
    # mode='auto': names ending in accuracy grow; others shrink; 'max' and 'min' force it.
    assert _replay(K.callbacks.EarlyStopping(monitor="val_accuracy", patience=1), [0.5, 0.6, 0.7, 0.65],
                   monitor="val_accuracy")[0] == 4
    assert _replay(K.callbacks.EarlyStopping(monitor="val_loss", patience=1), [0.5, 0.6, 0.7])[0] == 2
    assert _replay(K.callbacks.EarlyStopping(monitor="score", mode="max", patience=1), [1, 2, 3, 4],
                   monitor="score")[0] == 4
    # start_from_epoch: the first epochs are not watched at all.
    assert _replay(K.callbacks.EarlyStopping(patience=1, start_from_epoch=3), [1, 2, 3, 4, 5])[0] == 5


def test_early_stopping_baseline_and_restore_best_weights(capsys):
    # An improvement that misses the baseline does not reset the wait (the first epoch counts), so training stops
    # one epoch earlier than without a baseline.
    assert _replay(K.callbacks.EarlyStopping(patience=2, baseline=0.1), [0.9, 0.95, 0.97])[0] == 2
    assert _replay(K.callbacks.EarlyStopping(patience=2), [0.9, 0.95, 0.97])[0] == 3
    cb = K.callbacks.EarlyStopping(patience=2, baseline=0.75, restore_best_weights=True, verbose=1)
    epochs, model = _replay(cb, [0.9, 0.7, 0.8, 0.85, 0.1])
    assert epochs == 4 and cb.best_epoch == 1 and model.weights == 1  # the weights of epoch 1 restored
    out = capsys.readouterr().out
    assert "Restoring model weights from the end of the best epoch: 2." in out
    assert "Epoch 4: early stopping" in out


def test_early_stopping_missing_monitor_warns_and_continues(caplog):
    cb = K.callbacks.EarlyStopping(monitor="val_auc", patience=0)
    assert _replay(cb, [1.0, 2.0], monitor="val_loss")[0] == 2
    assert "Early stopping conditioned on metric `val_auc` which is not available" in caplog.text


# ---- ModelCheckpoint -----------------------------------------------------------------------------

def test_model_checkpoint_epoch_paths_and_save_best_only(tmp_path, capsys):
    model = _model()
    x, y = _data(8)
    path = os.path.join(tmp_path, "w.{epoch:02d}-{loss:.2f}.weights.h5")
    model.fit(x, y, epochs=3, callbacks=[K.callbacks.ModelCheckpoint(path, monitor="loss", save_weights_only=True)],
              verbose=0)
    files = sorted(os.listdir(tmp_path))
    assert [f[:5] for f in files] == ["w.01-", "w.02-", "w.03-"] and all(f.endswith(".weights.h5") for f in files)
    # The last file holds the final weights.
    other = _model()
    other.load_weights(os.path.join(tmp_path, files[-1]))
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)

    saved = []

    class Spy(StubModel):
        def save_weights(self, filepath, overwrite=True):
            saved.append(filepath)

    cb = K.callbacks.ModelCheckpoint("best.{epoch}.h5", save_best_only=True, save_weights_only=True, verbose=1)
    _replay(cb, [0.5, 0.7, 0.4, 0.4], model=Spy())
    assert saved == ["best.1.h5", "best.3.h5"]
    out = capsys.readouterr().out
    assert "Epoch 1: val_loss improved from inf to 0.50000, saving model to best.1.h5" in out
    assert "Epoch 2: val_loss did not improve from 0.50000" in out
    # mode='auto' with "acc" in the name keeps the highest.
    saved.clear()
    _replay(K.callbacks.ModelCheckpoint("a{epoch}", monitor="val_acc", save_best_only=True, save_weights_only=True),
            [0.5, 0.7, 0.6], monitor="val_acc", model=Spy())
    assert saved == ["a1", "a2"]


def test_model_checkpoint_full_model_is_a_keras_file(tmp_path):
    model = _model()
    x, y = _data(8)
    path = os.path.join(tmp_path, "m.keras")
    model.fit(x, y, epochs=1, callbacks=[K.callbacks.ModelCheckpoint(path, monitor="loss")], verbose=0)
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


# ---- CSVLogger ----------------------------------------------------------------------------------

def test_csv_logger_writes_sorted_columns_and_appends(tmp_path):
    path = os.path.join(tmp_path, "log.csv")
    cb = K.callbacks.CSVLogger(path)
    _replay(cb, [0.5, 0.25])
    with open(path, newline="") as f:
        assert f.read() == "epoch,val_loss\r\n0,0.5\r\n1,0.25\r\n"
    cb = K.callbacks.CSVLogger(path, separator=";", append=True)
    cb.set_model(StubModel())
    cb.on_train_begin()
    cb.on_epoch_end(0, {"val_loss": 0.125, "b": np.array([1, 2])})
    cb.on_train_end()
    with open(path, newline="") as f:
        # No second header; the columns sorted; an array is written as Keras' "[1, 2]", which csv quotes again.
        assert f.read().endswith('1,0.25\r\n0;"""[1, 2]""";0.125\r\n')

    model = _model()
    x, y = _data(8)
    log = os.path.join(tmp_path, "fit.csv")
    history = model.fit(x, y, epochs=2, validation_data=(x, y), callbacks=[K.callbacks.CSVLogger(log)], verbose=0)
    with open(log) as f:
        lines = f.read().splitlines()
    assert lines[0] == "epoch,loss,mae,val_loss,val_mae"
    assert [float(v) for v in lines[2].split(",")[1:]] == [history.history[k][1] for k in
                                                            ("loss", "mae", "val_loss", "val_mae")]


# ---- learning rates ---------------------------------------------------------------------------

def test_learning_rate_scheduler_sets_the_rate_and_logs_it(capsys):
    model = _model(lr=0.1)
    x, y = _data(8)
    schedule = K.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * 0.5, verbose=1)
    history = model.fit(x, y, epochs=4, callbacks=[schedule], verbose=0)
    np.testing.assert_allclose(history.history["lr"], [0.1, 0.1, 0.05, 0.025], rtol=1e-6)
    np.testing.assert_allclose(float(model.optimizer.learning_rate.numpy()), 0.025, rtol=1e-6)
    assert "Epoch 3: LearningRateScheduler setting learning rate to 0.05" in capsys.readouterr().out
    # A schedule of the epoch alone.
    history = model.fit(x, y, epochs=2, callbacks=[K.callbacks.LearningRateScheduler(lambda e: 0.01 * (e + 1))],
                        verbose=0)
    np.testing.assert_allclose(history.history["lr"], [0.01, 0.02], rtol=1e-6)
    with pytest.raises(ValueError, match='The output of the "schedule" function should be float'):
        model.fit(x, y, epochs=1, callbacks=[K.callbacks.LearningRateScheduler(lambda e, lr: "fast")], verbose=0)


def test_learning_rate_scheduler_changes_the_traced_step():
    # The rate is the optimizer's variable: the traced train step sees a changed rate without retracing.
    model = _model(lr=0.0)
    x, y = _data(8)
    before = model.get_weights()
    model.fit(x, y, epochs=1, verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    model.fit(x, y, epochs=1, verbose=0, callbacks=[K.callbacks.LearningRateScheduler(lambda e: 0.1)])
    assert not np.array_equal(before[0], model.get_weights()[0])


def test_reduce_lr_on_plateau_follows_keras_rules(capsys):
    model = StubModel(lr=1.0)
    cb = K.callbacks.ReduceLROnPlateau(factor=0.5, patience=2, cooldown=1, min_lr=0.2, verbose=1)
    cb.set_model(model)
    cb.on_train_begin()
    lrs = []
    for epoch, value in enumerate([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]):
        logs = {"val_loss": value}
        cb.on_epoch_end(epoch, logs)
        lrs.append(logs["lr"])  # the rate during the epoch, as Keras logs it
    # No improvement after epoch 0: halved at epoch 2 (2 waits); the cooldown epoch after a cut resets the wait
    # but counts as a wait itself (Keras' order), so the next cuts come every 2 epochs, down to min_lr.
    assert lrs == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2])
    assert float(model.optimizer.learning_rate) == pytest.approx(0.2)
    assert "Epoch 3: ReduceLROnPlateau reducing learning rate to 0.5." in capsys.readouterr().out
    # min_delta: a gain smaller than it is no improvement; factor >= 1 is refused.
    model = StubModel(lr=1.0)
    cb = K.callbacks.ReduceLROnPlateau(factor=0.1, patience=1, min_delta=0.1)
    _replay(cb, [1.0, 0.95], model=model)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="does not support a factor >= 1.0"):
        K.callbacks.ReduceLROnPlateau(factor=1.0)


def test_terminate_on_nan_stops_at_the_first_bad_batch(capsys):
    model = _model()
    x, y = _data(12)
    y[5] = np.nan
    history = model.fit(x, y, batch_size=4, epochs=3, callbacks=[K.callbacks.TerminateOnNaN()], verbose=0,
                        shuffle=False)
    assert "Batch 1: Invalid loss, terminating training" in capsys.readouterr().out
    assert history.epoch == [0]


def test_unsupported_callbacks_say_so():
    with pytest.raises(NotImplementedError, match="is not supported"):
        K.callbacks.RemoteMonitor("logs")
    with pytest.raises(NotImplementedError, match="only save_freq='epoch'"):
        K.callbacks.BackupAndRestore("logs", save_freq=10)
