"""TensorFlow's quickstart tutorials (examples/python/tutorials, the notebooks' code with only the import
changed) on small synthetic MNIST files: they run to the end, learn, and print what the notebooks print."""
import re

import pytest

from keras_util import run_example, synthetic_mnist, without_progress


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("mnist"))
    synthetic_mnist(directory, train=400, test=100)
    return directory


def run_tutorial(name, mnist_dir):
    return without_progress(run_example("tutorials", name, env={"KILN_MNIST_DIR": mnist_dir}))


def test_quickstart_beginner(mnist_dir):
    out = run_tutorial("quickstart_beginner.py", mnist_dir)
    assert out.startswith("TensorFlow version: 2.15.0\narray([[")
    assert re.search(r"^\d\.\d+$", out, re.M)  # the untrained loss, about log(10) = 2.3
    untrained = float(re.search(r"^(\d\.\d+)$", out, re.M).group(1))
    assert 1.0 < untrained < 4.0
    losses = [float(v) for v in
              re.findall(r"Epoch \d/5\n13/13 \[=+\] - \d+s \d+\w+/step - loss: ([\d.]+) - accuracy", out)]
    assert len(losses) == 5 and losses[-1] < losses[0]
    evaluation = re.search(r"^\[([\d.e-]+), ([\d.]+)\]$", out, re.M)
    assert float(evaluation.group(2)) > 0.8
    assert "shape=(5, 10), dtype=float32)" in out  # probability_model(x_test[:5])


def test_quickstart_advanced(mnist_dir):
    out = run_tutorial("quickstart_advanced.py", mnist_dir)
    rows = re.findall(r"^Epoch (\d), Loss: ([\d.]+), Accuracy: ([\d.]+), Test Loss: ([\d.]+), Test Accuracy: "
                      r"([\d.]+)$", out, re.M)
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    assert float(rows[-1][1]) < float(rows[0][1]) and float(rows[-1][4]) > 80
