"""The progress bar prints the C++ kiln::nn::Progbar's text (the C++ tests' golden files), and fit's
verbose modes."""
import io
import re

import numpy as np
import pytest

import kiln as tf
from keras_util import golden
from kiln.keras import _progbar
from kiln.keras.utils import Progbar

K = tf.keras


class FakeClock:
    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now


def test_log_lines_at_quarters_and_at_the_end():   # C++ Progbar.LogLinesAtQuartersAndAtTheEnd
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(8, title="Epoch 1/3", out=out, clock=clock)
    for i in range(8):
        clock.now += 0.25
        bar.step(32, [("loss", 1.0 - 0.1 * i), ("accuracy", 0.1 * i)])
    assert bar.finished()
    assert out.getvalue() == golden("progbar_lines.txt")


def test_redraws_in_place_on_a_terminal():          # C++ Progbar.RedrawsInPlaceOnATerminal
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(40, title="Epoch 2/3", width=20, out=out, interactive=True, clock=clock)
    for i in range(40):
        clock.now += 1.0 if i == 20 else 0.02
        bar.step(50 if i < 30 else 1000, {"loss": 2.0 / (i + 1)})
    assert out.getvalue().replace("\r", "<CR>") == golden("progbar_terminal.txt")


def test_the_other_cpp_cases():
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(0, out=out, clock=clock)
    for _ in range(3):
        clock.now += 2.0
        bar.step(100, [("loss", 0.5)])
    assert out.getvalue() == ""
    bar.finish()
    bar.finish()
    assert out.getvalue() == "3 steps  loss 0.5000  50.0 samples/s  took 6.0s\n"

    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(4, width=20, out=out, interactive=True, columns=60, clock=clock)
    clock.now += 1
    bar.step(1, [("loss", 0.5)])
    clock.now += 1
    bar.step(1, [("loss", 0.5), ("a_long_metric_name", 0.25)])
    assert out.getvalue().replace("\r", "<CR>") == ("<CR>1/4 [===>...........]  loss 0.5000  1.0 samples/s  ETA 3.0s"
                                                    "<CR>2/4 [>]  loss 0.5000  a_long_metric_name 0.2500  1.0 sample")

    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(4, width=4, out=out, log_every_percent=25, clock=clock)
    clock.now += 65
    bar.step(1000)
    clock.now += 3600
    bar.step(1000)
    assert out.getvalue() == "1/4 [=>..]  15.4 samples/s  ETA 3:15\n2/4 [==>.]  0.5 samples/s  ETA 1:01:05\n"

    bar = Progbar(0, out=io.StringIO(), clock=FakeClock())
    bar.step(10, [("loss", 1.0)])
    bar.step(30, [("loss", 3.0), ("accuracy", 0.5)])
    bar.step(0, [("loss", 100.0)])
    assert bar.means() == [("loss", 2.5), ("accuracy", 0.5)]
    with pytest.raises(ValueError, match="width"):
        Progbar(3, width=0)
    with pytest.raises(ValueError, match="log_every_percent must be in 1..100"):
        Progbar(3, log_every_percent=0)
    done = Progbar(1, out=io.StringIO())
    done.step(1)
    with pytest.raises(RuntimeError, match="finished"):
        done.step(1)


def _fit_text(monkeypatch, capsys, verbose, epochs=2, validation=True):
    """fit's output on a 4-step epoch with a clock that moves 0.5 s per reading; figures masked."""
    clock = FakeClock(0.0)

    def tick():
        clock.now += 0.5
        return clock.now
    monkeypatch.setattr(_progbar.time, "monotonic", tick)
    tf.random.set_seed(1)
    x = np.random.default_rng(0).standard_normal((40, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    model = K.Sequential([K.layers.Dense(2, input_shape=(2,))])
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    capsys.readouterr()
    model.fit(x, y, batch_size=10, epochs=epochs, verbose=verbose, validation_data=(x, y) if validation else None)
    return re.sub(r"\d+\.\d{4}", "#.####", capsys.readouterr().out)


def test_fit_verbose_1_prints_a_bar_per_epoch_with_validation_on_the_last_line(monkeypatch, capsys):
    assert _fit_text(monkeypatch, capsys, 1) == golden("fit_verbose1.txt")


def test_fit_verbose_2_prints_one_line_per_epoch_and_0_nothing(monkeypatch, capsys):
    assert _fit_text(monkeypatch, capsys, 2, epochs=3, validation=False) == golden("fit_verbose2.txt")
    assert _fit_text(monkeypatch, capsys, 0) == ""


def test_evaluate_and_predict_bars(monkeypatch, capsys):
    x = np.zeros((30, 2), np.float32)
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    capsys.readouterr()
    model.evaluate(x, np.zeros((30, 1), np.float32), batch_size=10, verbose=1)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("1/3 [==========>...................]  loss 0.0000  ")
    assert lines[-1].startswith("3/3 [==============================]  loss 0.0000  ")
    model.predict(x, batch_size=10, verbose=2)
    assert capsys.readouterr().out.startswith("3/3 [==============================]  ")
