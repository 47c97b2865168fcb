"""kiln.board: the HTML report of a log directory. The page is parsed strictly (well-formed XML),
must reference nothing outside itself, and must show every run, tag, step and value written."""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import kiln as tf
from kiln import board


def page_tree(page):
    assert page.startswith("<!DOCTYPE html>\n")
    return ET.fromstring(page.split("\n", 1)[1])


def cards(root, tag):
    return [c for c in root.iter("div") if c.get("data-tag") == tag]


def text_of(element):
    return "".join(element.itertext())


@pytest.fixture()
def logdir(tmp_path):
    """Two runs of scalars, a histogram over steps, a text summary, and a NaN loss."""
    root = tmp_path / "logs"
    for run, scale in (("train", 1.0), ("validation", 2.0)):
        writer = tf.summary.create_file_writer(str(root / run))
        with writer.as_default():
            for step in range(4):
                tf.summary.scalar("epoch_loss", scale / (step + 1), step=step)
        writer.close()
    writer = tf.summary.create_file_writer(str(root / "train"))
    with writer.as_default():
        for step in range(3):
            tf.summary.histogram("dense/kernel_0/histogram", np.arange(10.0) + step, step=step)
        tf.summary.text("notes", "lr = 0.1 <b>&</b>", step=0)
        tf.summary.scalar("odd", float("nan"), step=0)
        tf.summary.scalar("odd", 3.0, step=1)
    writer.close()
    return str(root)


def test_page_shows_every_run_tag_and_value(logdir):
    page = board.render_html(logdir)
    root = page_tree(page)
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert [text_of(h) for h in root.iter("h2")] == ["Scalars", "Histograms", "Text"]
    (loss,) = cards(root, "epoch_loss")
    svg = loss.find("svg")
    assert len(svg.findall("polyline")) == 2  # one line per run
    tips = [text_of(t) for t in svg.iter("title")]
    assert "train step 0: 1" in tips and "validation step 3: 0.5" in tips and "train step 3: 0.25" in tips
    rows = [[text_of(td) for td in tr.findall("td")] for tr in loss.find("table").findall("tr")[1:]]
    # run, points, last step, last, min, max
    assert rows == [["train", "4", "3", "0.25", "0.25", "1"], ["validation", "4", "3", "0.5", "0.5", "2"]]
    # A NaN is listed and left out of the line.
    (odd,) = cards(root, "odd")
    assert [text_of(td) for td in odd.find("table").findall("tr")[1].findall("td")] == \
        ["train", "2", "1", "3", "3", "3"]
    (hist,) = cards(root, "dense/kernel_0/histogram")
    assert hist.get("data-run") == "train"
    assert [text_of(t) for t in hist.iter("title")] == ["step 0: 10 values", "step 1: 10 values", "step 2: 10 values"]
    # values / min / max / mean of the last step (arange(10) + 2: 2..11, mean 6.5 from bucket midpoints).
    cells = [text_of(td) for td in hist.find("table").findall("tr")[1].findall("td")]
    assert cells[:6] == ["train", "3", "2", "10", "2", "11"]
    assert float(cells[6]) == pytest.approx(6.5, abs=0.2)
    (notes,) = cards(root, "notes")
    assert [text_of(td) for td in notes.iter("td")] == ["0", "lr = 0.1 <b>&</b>"]  # escaped, shown as written


def test_keras_run_and_command_line(tmp_path):
    x = np.random.RandomState(1).rand(16, 2).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    logdir = str(tmp_path / "logs")
    history = model.fit(x, y, epochs=2, validation_split=0.25, verbose=0,
                        callbacks=[tf.keras.callbacks.TensorBoard(logdir, histogram_freq=1)])
    out = str(tmp_path / "report.html")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-m", "kiln.board", logdir, "--out", out], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    root = page_tree(open(out, encoding="utf-8").read())
    (loss,) = cards(root, "epoch_loss")
    rows = {cells[0]: cells for cells in ([text_of(td) for td in tr.findall("td")]
                                          for tr in loss.find("table").findall("tr")[1:])}
    assert float(rows["train"][3]) == pytest.approx(history.history["loss"][-1], rel=1e-3)
    assert float(rows["validation"][3]) == pytest.approx(history.history["val_loss"][-1], rel=1e-3)
    assert cards(root, "evaluation_loss_vs_iterations")
    assert cards(root, model.layers[0].kernel.name.replace(":", "_") + "/histogram")
    assert [c.get("data-tag") for c in root.iter("div") if c.get("data-tag") == "keras"] == ["keras"]


def test_empty_and_missing_logdir(tmp_path):
    root = page_tree(board.render_html(str(tmp_path)))
    assert "No summaries found." in text_of(root)
    with pytest.raises(tf.errors.NotFoundError):
        board.render_html(str(tmp_path / "nowhere"))


# ---- kiln-cli board: the C++ command runs this package's board (design notes, "kiln-cli board") ----
from built_tools import REPO as _REPO, built_tool


def kiln_cli():
    return built_tool("kiln-cli", "KILN_CLI")


def without_timestamp(page):
    return re.sub(r"written \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "written (time)", page)


def test_kiln_cli_board_writes_the_page(logdir, tmp_path):
    out = str(tmp_path / "report.html")
    done = subprocess.run([kiln_cli(), "board", logdir, "--out", out, "--title", "Two runs"], capture_output=True,
                          text=True, timeout=120, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == out + "\n" and done.stderr == ""
    page = open(out, encoding="utf-8").read()
    root = page_tree(page)
    assert [text_of(h) for h in root.iter("h1")] == ["Two runs"]
    (loss,) = cards(root, "epoch_loss")
    assert len(loss.find("svg").findall("polyline")) == 2
    rows = [[text_of(td) for td in tr.findall("td")] for tr in loss.find("table").findall("tr")[1:]]
    assert rows == [["train", "4", "3", "0.25", "0.25", "1"], ["validation", "4", "3", "0.5", "0.5", "2"]]
    # The same page as the package renders in this process (the time it was written aside).
    assert without_timestamp(page) == without_timestamp(board.render_html(logdir, "Two runs"))


def test_kiln_cli_board_errors_name_what_is_missing(tmp_path):
    cli = kiln_cli()
    done = subprocess.run([cli, "board", str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "kiln-cli board: error: " in done.stderr and "nowhere: no such directory" in done.stderr
    env = dict(os.environ, KILN_PYTHON=str(tmp_path / "no-python"))
    done = subprocess.run([cli, "board", str(tmp_path)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert f"cannot run the Python interpreter {tmp_path / 'no-python'}" in done.stderr and "KILN_PYTHON" in done.stderr
    # A copy of kiln-cli with no package beside it, and none on the interpreter's path.
    lonely = tmp_path / "bin" / "kiln-cli"
    lonely.parent.mkdir()
    shutil.copy(cli, lonely)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KILN_PYTHON")}
    done = subprocess.run([str(lonely), "board", str(tmp_path)], capture_output=True, text=True, timeout=60, env=env,
                          cwd=os.path.join(_REPO, "python"))  # a `kiln` folder in the current one must not count
    assert done.returncode == 1
    assert "the Python package kiln cannot be imported by /usr/bin/python3 (No module named 'kiln')" in done.stderr
    assert "looked in (no folder beside kiln-cli)" in done.stderr
