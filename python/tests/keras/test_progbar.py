"""tf.keras.utils.Progbar and fit / evaluate / predict print Keras 2.15's text. The references are lines
TensorFlow's and Keras' documentation print (times fixed by a fake clock so the text is exact)."""
import re

import numpy as np
import pytest

import kiln as tf
from kiln.keras import _progbar
from kiln.keras.utils import Progbar

K = tf.keras


class FakeClock:
    """Time moves only when a test says so."""

    def __init__(self, monkeypatch, now=1000.0):
        self.now = now
        monkeypatch.setattr(_progbar, "_now", lambda: self.now)


def _last_line(text):
    """What a terminal shows: the text after the last carriage return of each line, backspaces dropped."""
    return [line.split("\r")[-1] for line in text.replace("\b", "").split("\n") if line]


def test_verbose_2_is_tfs_evaluate_line(monkeypatch, capsys):
    # TF's quickstart for beginners: model.evaluate(x_test, y_test, verbose=2)
    clock = FakeClock(monkeypatch)
    bar = Progbar(313, verbose=2, stateful_metrics=["loss", "accuracy"])
    clock.now += 0.588
    bar.update(313, [("loss", 0.0750), ("accuracy", 0.9763)])
    assert capsys.readouterr().out == "313/313 - 1s - loss: 0.0750 - accuracy: 0.9763 - 588ms/epoch - 2ms/step\n"


def test_verbose_1_bar_eta_and_final_line(monkeypatch, capsys):
    # The final line of an epoch of TF's quickstart: "1875/1875 [====...] - 4s 2ms/step - loss: ... - accuracy: ..."
    clock = FakeClock(monkeypatch)
    bar = Progbar(1875, stateful_metrics=["loss", "accuracy"])
    clock.now += 0.5                       # the first step (tracing) is left out of the per-step time
    bar.update(1, [("loss", 2.3), ("accuracy", 0.1)])
    clock.now += 0.002 * 937
    bar.update(938, [("loss", 0.4), ("accuracy", 0.88)])
    clock.now += 0.002 * 937
    bar.update(1875, [("loss", 0.2962), ("accuracy", 0.9134)])
    out = capsys.readouterr().out
    first = "   1/1875 [..............................] - ETA: 15:37 - loss: 2.3000 - accuracy: 0.1000"
    middle = " 938/1875 [==============>...............] - ETA: 1s - loss: 0.4000 - accuracy: 0.8800"
    final = "1875/1875 [==============================] - 4s 2ms/step - loss: 0.2962 - accuracy: 0.9134"
    # Each redraw backs over the previous text (Keras writes backspaces, then a carriage return) and pads a shorter
    # line with spaces to cover the longer one before it.
    padded = middle + " " * (len(first) - len(middle))
    assert out == "\r" + first + "\b" * len(first) + "\r" + padded + "\b" * len(middle) + "\r" + final + "\n"
    assert _last_line(out) == [final]


def test_averages_unless_stateful_small_figures_and_unknown_target(monkeypatch, capsys):
    clock = FakeClock(monkeypatch)
    bar = Progbar(None, verbose=1)
    bar.update(1, [("loss", 1.0), ("lr", 0.0001)])
    clock.now += 0.1
    bar.update(3, [("loss", 4.0), ("lr", 0.0001)])        # loss over 3 steps: (1 + 4 * 2) / 3
    text = capsys.readouterr().out
    assert _last_line(text)[-1] == "      3/Unknown - 0s 50ms/step - loss: 3.0000 - lr: 1.0000e-04"
    assert "\n" not in text                                 # never finalized without a target

    bar = Progbar(4, width=10, verbose=1, stateful_metrics=["acc"])
    bar.update(2, [("acc", 0.5)])
    bar.update(4, [("acc", 0.75)])
    assert _last_line(capsys.readouterr().out) == ["4/4 [==========] - 0s 0s/step - acc: 0.7500"]

    quiet = Progbar(3, verbose=0)
    quiet.add(3, [("loss", 1.0)])
    assert capsys.readouterr().out == ""


def test_interval_skips_redraws_but_not_the_last(monkeypatch, capsys):
    clock = FakeClock(monkeypatch)
    bar = Progbar(10, interval=1.0)
    for step in range(1, 11):
        clock.now += 0.3
        bar.update(step)
    out = capsys.readouterr().out
    assert out.count("\r") == 4                             # steps 1, 5, 9 (a second apart) and the final 10
    assert out.endswith("10/10 [==============================] - 3s 300ms/step\n")


def _fit_output(monkeypatch, capsys, **kwargs):
    FakeClock(monkeypatch)
    tf.random.set_seed(1)
    x = np.random.default_rng(0).standard_normal((40, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    model = K.Sequential([K.layers.Dense(2, input_shape=(2,))])
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    capsys.readouterr()
    history = model.fit(x, y, batch_size=10, **kwargs)
    return capsys.readouterr().out, history.history, model, x, y


def test_fit_verbose_1_one_bar_per_epoch_and_validation_on_its_final_line(monkeypatch, capsys):
    out, h, *_ = _fit_output(monkeypatch, capsys, epochs=2, validation_split=0.5)
    lines = _last_line(out)
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    expected = (f"2/2 [==============================] - 0s 0s/step - loss: {h['loss'][1]:.4f} - accuracy: "
                f"{h['accuracy'][1]:.4f} - val_loss: {h['val_loss'][1]:.4f} - val_accuracy: {h['val_accuracy'][1]:.4f}")
    assert lines[3] == expected and len(lines) == 4
    assert out.startswith("Epoch 1/2\n\r1/2 [==============>...............] - ETA: 0s - loss: ")


def test_fit_one_epoch_has_no_epoch_header_and_verbose_2_one_line_per_epoch(monkeypatch, capsys):
    out, h, *_ = _fit_output(monkeypatch, capsys, epochs=1)
    assert not out.replace("\b", "").lstrip("\r").startswith("Epoch")
    out, h, model, x, y = _fit_output(monkeypatch, capsys, epochs=2, verbose=2)
    assert out == "".join(f"Epoch {e + 1}/2\n4/4 - 0s - loss: {h['loss'][e]:.4f} - accuracy: {h['accuracy'][e]:.4f}"
                          " - 0s/epoch - 0s/step\n" for e in range(2))
    model.evaluate(x, y, batch_size=10, verbose=2)
    assert re.fullmatch(r"4/4 - 0s - loss: \d\.\d{4} - accuracy: \d\.\d{4} - 0s/epoch - 0s/step\n",
                        capsys.readouterr().out)
    loss, accuracy = model.evaluate(x, y, batch_size=10, verbose=1)
    # (padded with spaces where the ETA line before it was longer, as Keras pads it)
    assert [line.rstrip() for line in _last_line(capsys.readouterr().out)] == [
        f"4/4 [==============================] - 0s 0s/step - loss: {loss:.4f} - accuracy: {accuracy:.4f}"]
    model.predict(x, batch_size=10)
    assert _last_line(capsys.readouterr().out) == ["4/4 [==============================] - 0s 0s/step"]
    _fit_output(monkeypatch, capsys, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""


def test_progbar_logger_arguments():
    with pytest.raises(ValueError, match="Unknown `count_mode`"):
        K.callbacks.ProgbarLogger(count_mode="batches")
    assert K.callbacks.ProgbarLogger().use_steps is False
