"""TensorFlow's tf.distribute tutorials (examples/python/tutorials/distribute, the notebooks' code with only the
import changed, data shrunk): "Distributed training with Keras" on a small synthetic MNIST and "Custom training
with tf.distribute.Strategy" on 2,000 Fashion-MNIST images. They run to the end, learn, and print what the
notebooks print; figures that must agree between cells are checked to agree."""
import re

from keras_util import run_example, synthetic_mnist, without_progress


def test_distributed_training_with_keras(tmp_path):
    mnist = synthetic_mnist(str(tmp_path / "mnist"), train=400, test=100)
    out = without_progress(run_example("tutorials", "distribute", "keras.py", env={"KILN_MNIST_DIR": mnist}))
    assert out.startswith("2.15.0\nNumber of devices: 1\n")
    losses = [float(v) for v in re.findall(r"^7/7 \[=+\] - \d+s \d+ms/step - loss: ([\d.]+) - accuracy", out, re.M)]
    assert len(losses) == 12 and losses[-1] < losses[0] / 5
    # LearningRateScheduler(decay) and PrintLR: the rate each epoch ran with, as float32.
    rates = [float(r) for r in re.findall(r"^Learning rate for epoch \d+ is ([\d.e-]+)$", out, re.M)]
    assert rates == [0.0010000000474974513] * 3 + [9.999999747378752e-05] * 4 + [9.999999747378752e-06] * 5
    # The latest checkpoint, the saved model unreplicated and the saved model under the strategy: one evaluation.
    evaluations = re.findall(r"^Eval loss: ([\d.e-]+), Eval [Aa]ccuracy: ([\d.]+)$", out, re.M)
    assert len(evaluations) == 3 and len(set(evaluations)) == 1, evaluations
    assert float(evaluations[0][1]) > 0.9


def test_custom_training_with_a_strategy():
    out = run_example("tutorials", "distribute", "custom_training.py")
    assert out.startswith("2.15.0\nNumber of devices: 1\n")
    rows = re.findall(r"^Epoch (\d+), Loss: ([\d.]+), Accuracy: ([\d.]+), Test Loss: ([\d.]+), Test Accuracy: "
                      r"([\d.]+)$", out, re.M)
    assert [int(r[0]) for r in rows] == list(range(1, 11))
    assert float(rows[-1][1]) < float(rows[0][1]) / 2 and float(rows[-1][4]) > 70
    # The checkpoint of epoch 9 (saved every other epoch from the first), restored without the strategy, gives
    # that epoch's test accuracy.
    restored = float(re.search(r"^Accuracy after restoring the saved model without strategy: ([\d.]+)$", out,
                               re.M).group(1))
    assert abs(restored - float(rows[8][4])) < 1e-4
    # Ten epochs of ten steps from an iterator (the notebook prints the stale "Epoch 10"), then ten epochs of one
    # tf.function each over the whole distributed dataset.
    iterated = re.findall(r"^Epoch 10, Loss: ([\d.]+), Accuracy: ([\d.]+)$", out, re.M)
    assert len(iterated) == 11  # and the last is the in-function loop's epoch 10
    in_function = re.findall(r"^Epoch (\d+), Loss: ([\d.]+), Accuracy: ([\d.]+)$", out, re.M)[-10:]
    assert [int(r[0]) for r in in_function] == list(range(1, 11))
    assert float(in_function[-1][1]) < float(rows[-1][1])
