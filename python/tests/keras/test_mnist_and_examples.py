"""kiln.keras.datasets.mnist, a short MNIST fit of the seeds' CNN (the real digits when
scripts/mnist_data.sh has fetched them, else synthetic digits; nothing is downloaded), and the
examples under examples/python."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kiln as tf
from keras_util import REPO, golden, synthetic_mnist

K = tf.keras
EXAMPLES = os.path.join(REPO, "examples", "python")


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    return synthetic_mnist(str(tmp_path_factory.mktemp("mnist")), train=500, test=200)


def test_load_data_reads_idx_files_as_tf_does(synthetic_dir):
    (x, y), (xt, yt) = K.datasets.mnist.load_data(synthetic_dir)
    assert x.shape == (500, 28, 28) and x.dtype == np.uint8 and x.flags.writeable
    assert y.shape == (500,) and y.dtype == np.uint8 and sorted(set(y.tolist())) == list(range(10))
    assert xt.shape == (200, 28, 28) and yt.shape == (200,)
    assert (x[np.arange(500), 2 + 2 * y.astype(int), :] == 255).all()


def test_load_data_without_the_files_says_which_script_fetches_them(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"not found in: .*Run `bash scripts/mnist_data.sh`"):
        K.datasets.mnist.load_data(str(tmp_path))


def test_the_real_digits_when_present():
    directory = K.datasets.mnist.data_dir()
    if directory is None:
        pytest.skip("data/mnist is absent (bash scripts/mnist_data.sh fetches it)")
    (x, y), (xt, yt) = K.datasets.mnist.load_data()
    assert x.shape == (8000, 28, 28) and xt.shape == (2000, 28, 28)
    assert y.max() == 9 and x.max() == 255


def mnist_cnn():
    """The C++ main job's CNN (examples/mnist_train.cpp)."""
    return K.Sequential([
        K.layers.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1)),
        K.layers.MaxPool2D(2),
        K.layers.Conv2D(64, 5, padding="same", activation="relu"),
        K.layers.MaxPool2D(2),
        K.layers.Flatten(),
        K.layers.Dense(1024, activation="relu"),
        K.layers.Dense(10),
        K.layers.Softmax(),
    ])


def test_a_short_mnist_fit(synthetic_dir):
    real = K.datasets.mnist.data_dir() is not None
    (x, y), (xt, yt) = K.datasets.mnist.load_data(None if real else synthetic_dir)
    n = 1500 if real else 500
    x = np.expand_dims(x[:n].astype(np.float32) / 255.0, -1)
    xt = np.expand_dims(xt[:500].astype(np.float32) / 255.0, -1)
    tf.random.set_seed(1)
    model = mnist_cnn()
    model.compile(optimizer=K.optimizers.Adam(1e-3), loss=K.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"])
    history = model.fit(x, y[:n], batch_size=50, epochs=1, verbose=0)
    loss, accuracy = model.evaluate(xt, yt[:500], batch_size=250, verbose=0)
    assert history.history["loss"][0] < 2.0
    assert accuracy > (0.85 if real else 0.9), (real, accuracy)
    assert model.train_function.experimental_get_tracing_count() == 1
    assert model.predict(xt[:7], verbose=0).shape == (7, 10)


def run_example(*args, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), PYTHONUNBUFFERED="1")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *args], capture_output=False, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env, timeout=300, cwd=REPO)


def test_walkthrough_example_prints_the_golden_text():
    result = run_example(os.path.join(EXAMPLES, "walkthrough.py"))
    assert result.returncode == 0, result.stdout
    text = re.sub(r"eager [\d.]+ ms, traced [\d.]+ ms per call \(\d+x\)", "eager # ms, traced # ms per call (#x)",
                  result.stdout)
    assert text == golden("walkthrough.txt")


def test_mnist_cnn_example_trains_and_reports(synthetic_dir):
    result = run_example(os.path.join(EXAMPLES, "mnist_cnn.py"), "--data-dir", synthetic_dir, "--epochs", "2",
                         "--max-steps", "4", "--verbose", "2")
    assert result.returncode == 0, result.stdout
    out = result.stdout
    assert "MNIST: 500 training and 200 test digits" in out
    assert "Total params: 3274634 (12.49 MB)" in out
    assert re.search(r"Epoch 2/2\n4/4 - \d+s - loss: \d\.\d{4} - accuracy: \d\.\d{4} - \d+\w+/epoch - \d+\w+/step\n",
                     out), out
    assert re.search(r"test accuracy: \d+\.\d\d% on 200 held-out digits", out), out
    assert "train_function traced 1 time(s)" in out
    assert re.search(r"training: [\d.]+ ms per step", out), out
    bad = run_example(os.path.join(EXAMPLES, "mnist_cnn.py"), "--data-dir", os.path.join(synthetic_dir, "missing"))
    assert bad.returncode != 0 and "scripts/mnist_data.sh" in bad.stdout


def test_lstm_mnist_example_trains_and_times_the_three_steps(synthetic_dir):
    result = run_example(os.path.join(EXAMPLES, "lstm_mnist.py"), "--data-dir", synthetic_dir, "--epochs", "2",
                         "--max-steps", "3", "--units", "16", "--timing-steps", "2")
    assert result.returncode == 0, result.stdout
    out = result.stdout
    assert "MNIST: 500 training and 200 test digits, each 28 steps of 28 features" in out
    assert " lstm (LSTM)                 (None, 16)                2880" in out
    assert re.search(r"Epoch 2/2\n3/3 - \d+s - loss: \d\.\d{4} - accuracy: \d\.\d{4} - \d+\w+/epoch - \d+\w+/step\n",
                     out), out
    assert re.search(r"test accuracy: \d+\.\d\d% on 200 held-out digits", out), out
    for line in ("traced, while_loop + TensorArrays: ", "traced, unrolled: ", "eager: "):
        assert re.search(re.escape(line) + r"\s*[\d.]+ ms", out), out


def test_lstm_mnist_example_stacks_layers(synthetic_dir):
    result = run_example(os.path.join(EXAMPLES, "lstm_mnist.py"), "--data-dir", synthetic_dir, "--epochs", "1",
                         "--max-steps", "2", "--units", "8", "--layers", "2", "--timing-steps", "2")
    assert result.returncode == 0, result.stdout
    out = result.stdout
    assert " lstm (LSTM)                 (None, 28, 8)             1184" in out
    assert " lstm_1 (LSTM)               (None, 8)                 544" in out
    assert "training step, batch 128, 2 x LSTM(8) over 28 steps (medians of 2):" in out
    bad = run_example(os.path.join(EXAMPLES, "lstm_mnist.py"), "--layers", "0")
    assert bad.returncode != 0 and "--layers must be at least 1, got 0" in bad.stdout
