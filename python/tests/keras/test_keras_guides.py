"""The keras.io guides under examples/python/keras (their code with only the import changed) run to the end and
print what the guides show: the callbacks' hooks and log keys in order, the custom steps' figures, the
functional models' summaries and a model reloaded from its .keras file scoring as before."""
import os
import re
import subprocess
import sys

from keras_util import REPO

GUIDES = os.path.join(REPO, "examples", "python", "keras")


def run_guide(name):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), PYTHONUNBUFFERED="1")
    result = subprocess.run([sys.executable, os.path.join(GUIDES, name)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stdout
    return result.stdout


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
    finals = re.findall(r"Epoch (\d)/(\d)\s+32/32 \[=+\]\s+loss ([\d.]+)\s+mae ([\d.]+)", out)
    assert [f"{a}/{b}" for a, b, _, _ in finals] == ["1/3", "2/3", "3/3", "1/5", "2/5", "3/5", "4/5", "5/5", "1/3",
                                                     "2/3", "3/3"]
    # Each fit learns: the last epoch's loss is below the first's.
    for first, last in ((0, 2), (3, 7), (8, 10)):
        assert float(finals[last][2]) < float(finals[first][2])
    assert re.search(r"^32/32 \[=+\]\s+loss [\d.]+\s+mae [\d.]+", out, re.M)  # the custom test_step's evaluate


def test_functional_api():
    out = run_guide("functional_api.py")
    for name in ("mnist_model", "encoder", "autoencoder", "toy_resnet"):
        assert f'Model: "{name}"' in out
    assert "Total params: 55,050" in out and "Total params: 223,242" in out
    test_accuracy = re.search(r"Test accuracy: ([\d.]+)", out).group(1)
    assert f"Reloaded test accuracy: {test_accuracy}" in out
    assert re.search(r"loss [\d.]+\s+priority_loss [\d.]+\s+department_loss [\d.]+", out)
    assert "Rebuilt from its config: ['InputLayer', 'CustomDense']" in out
