"""The keras.io guides under examples/python/keras (their code with only the import changed) run to the end and
print what the guides show: the callbacks' hooks and log keys in order, the custom steps' figures, the
functional models' summaries and a model reloaded from its .keras file scoring as before."""
import re

from keras_util import run_example


def run_guide(name):
    return run_example("keras", name, timeout=120)


def test_writing_your_own_callbacks():
    out = run_guide("writing_your_own_callbacks.py")
    lines = [line for line in out.splitlines() if not re.match(r"\s*\d+/\d+ \[", line)]
    # The first fit (validation_split=0.5: 500 samples, 4 batches of 128) as the guide prints it.
    assert lines[:4] == ["Starting training; got log keys: []", "Start epoch 0 of training; got log keys: []",
                         "...Training: start of batch 0; got log keys: []",
                         "...Training: end of batch 0; got log keys: ['loss', 'mean_absolute_error']"]
    assert "Start testing; got log keys: []" in lines
    assert ("End epoch 0 of training; got log keys: ['loss', 'mean_absolute_error', 'val_loss', "
            "'val_mean_absolute_error']") in lines
    assert "...Predicting: end of batch 7; got log keys: ['outputs']" in lines
    assert "Stop predicting; got log keys: []" in lines
    assert sum(line.startswith("The average loss for epoch") for line in lines) >= 2 + 2
    # EarlyStoppingAtMinLoss (patience 0) stops at the first epoch whose loss does not improve.
    stop = lines.index("Restoring model weights from the end of the best epoch.")
    assert re.fullmatch(r"Epoch \d{5}: early stopping", lines[stop + 1])
    for epoch, rate in ((0, 0.1), (3, 0.05), (6, 0.01), (9, 0.005), (12, 0.001), (14, 0.001)):
        assert f"Epoch {epoch:05d}: Learning rate is {rate:6.4f}." in lines


def test_customizing_what_happens_in_fit():
    out = run_guide("customizing_what_happens_in_fit.py")
    finals = re.findall(r"Epoch (\d)/(\d)\n.*32/32 \[=+\] - \d+s \d+\w+/step - loss: ([\d.]+) - mae: ([\d.]+)\n",
                        out)
    assert [f"{a}/{b}" for a, b, _, _ in finals] == ["1/3", "2/3", "3/3", "1/5", "2/5", "3/5", "4/5", "5/5", "1/3",
                                                     "2/3", "3/3"]
    # Each fit learns: the last epoch's loss is below the first's.
    for first, last in ((0, 2), (3, 7), (8, 10)):
        assert float(finals[last][2]) < float(finals[first][2])
    # the custom test_step's evaluate
    assert re.search(r"\r32/32 \[=+\] - \d+s \d+\w+/step - loss: [\d.]+ - mae: [\d.]+\n", out)


def test_functional_api():
    out = run_guide("functional_api.py")
    for name in ("mnist_model", "encoder", "autoencoder", "toy_resnet"):
        assert f'Model: "{name}"' in out
    assert "Total params: 55050 (215.04 KB)" in out and "Total params: 223242 (872.04 KB)" in out
    test_accuracy = re.search(r"Test accuracy: ([\d.]+)", out).group(1)
    assert f"Reloaded test accuracy: {test_accuracy}" in out
    assert re.search(r"loss: [\d.]+ - priority_loss: [\d.]+ - department_loss: [\d.]+", out)
    assert "Rebuilt from its config: ['InputLayer', 'CustomDense']" in out


def test_working_with_preprocessing_layers():
    out = run_guide("preprocessing_layers.py")
    # The values keras.io's guide prints (TF 2.x): vocabularies ordered by count, ties by the token (descending).
    assert "Features std: 1.00" in out
    assert ("[[37 12 25  5  9 20 21  0  0]\n [51 34 27 33 29 18  0  0  0]\n [49 52 30 31 19 46 10  0  0]\n"
            " [ 7  5 50 43 28  7 47 17  0]\n [24 35 39 40  3  6 32 16  0]\n [ 4  2 15 14 22 23  0  0  0]\n"
            " [36 48  6 38 42  3 45  0  0]\n [ 4  2 13 41 53  8 44 26 11]], shape=(8, 9), dtype=int64)") in out
    assert "[[1 3 4]\n [4 0 2]], shape=(2, 3), dtype=int64)" in out
    assert ("[[0. 0. 0. 1.]\n [0. 0. 1. 0.]\n [0. 1. 0. 0.]\n [1. 0. 0. 0.]\n [1. 0. 0. 0.]\n [1. 0. 0. 0.]], "
            "shape=(6, 4)") in out
    assert ("[[0. 0. 1. 0. 0.]\n [0. 0. 1. 0. 0.]\n [0. 1. 0. 0. 0.]\n [1. 0. 0. 0. 0.]\n [1. 0. 0. 0. 0.]\n"
            " [0. 0. 0. 0. 1.]], shape=(6, 5)") in out
    assert "(10000, 64)" in out
    assert "Encoded text:\n [[ 2 19 14  1  9  2  1]]" in out
    assert ("[[1. 1. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 1. 1. 1. 0. 0. 0. 0. 0.\n"
            "  0. 0. 0. 0. 1. 0. 0. 0. 0. 0. 0. 0. 1. 1. 0. 0. 0.]]") in out
    assert "[[5.461647  1.6945957 0.        0." in out
    assert out.count("Model output:") == 3
