"""TensorFlow's tf.distribute tutorials and guide (examples/python/tutorials/distribute, guides/distributed_training.py:
the notebooks' code with only the import changed, data shrunk): "Distributed training with Keras" on a small synthetic
MNIST, "Custom training with tf.distribute.Strategy" on 2,000 Fashion-MNIST images, "Distributed input", the guide,
and the multi-worker tutorials' worker programs (Keras' fit, a custom loop) on two MPI ranks. They run to the end, learn, and print what
the notebooks print; figures that must agree between cells (or ranks) are checked to agree."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import kiln.distributed as kd
from keras_util import REPO, run_example, synthetic_mnist, without_progress


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


def test_distributed_input():
    out = run_example("tutorials", "distribute", "input.py")
    assert out.startswith("2.15.0\nAvailable devices:\n0) LogicalDevice(name='/device:CPU:0', device_type='CPU')\n"
                          "1) LogicalDevice(name='/device:CPU:1', device_type='CPU')\n")
    # MirroredStrategy() takes the CPU (no GPUs), as TF: one replica, so every value is a plain tensor.
    assert "PerReplica" not in out
    # 100 elements in batches of 16: 7 steps from the for loop, then 10 epochs of 5 steps from iterators.
    assert out.count("Loss is  kiln.Tensor(\n[[0.7]\n") == 7 + 50
    # get_next_as_optional inside a tf.function stops the tf.range loop at the end of the 9 elements.
    assert "\n([0 1 2 3],)\n([4 5 6 7],)\n([8],)\n" in out
    # tf.function(input_signature=[dist_dataset.element_spec]): 2 * (features, labels) is the tuple twice.
    assert out.count("\n([[1]\n [1]\n [1]\n ...\n [1]\n [1]\n [1]], [[1]\n") == 25
    # StringLookup(vocabulary=["a", "b", "c", "d", "f"]) over "a", "c", "e" repeated, 4 a batch ("e": OOV, 0).
    assert ("kiln.Tensor([1 3 0 1], shape=(4,), dtype=int64)\nkiln.Tensor([3 0 1 3], shape=(4,), dtype=int64)\n"
            "kiln.Tensor([0 1 3 0], shape=(4,), dtype=int64)\n") in out
    assert "{" + ", ".join(f"{i}: {2 * i}" for i in range(24)) + "}\n" in out
    assert out.count("kiln.Tensor(0, shape=(), dtype=int32)\n") == 4  # the values of replica 0
    assert len(re.findall(r"^kiln.Tensor\(\[[\d. ]+\], shape=\(4,\), dtype=float32\)$", out, re.M)) == 4


def test_distributed_training_guide():
    out = without_progress(run_example("guides", "distributed_training.py"))
    for device in ("/gpu:0", "/gpu:1"):
        assert f"Kiln runs on the CPU only; the replica for '{device}' runs there." in out
    # strategy.reduce("SUM", 1., axis=None) under the default strategy, and a variable made in its scope.
    assert "\n<kiln.Tensor: shape=(), dtype=float32, numpy=1.0>\n<kiln.Variable 'Variable:0' shape=() " \
           "dtype=float32, numpy=1.0>\n" in out
    fit = [float(v) for v in re.findall(r"^10/10 \[=+\] - \d+s \d+\w+/step - loss: ([\d.]+)$", out, re.M)]
    assert len(fit) == 5 and fit[0] > fit[1] > fit[2] > fit[3] > fit[4]  # fit, fit, evaluate, fit, fit
    assert abs(float(re.search(r"^([\d.]+)$", out, re.M).group(1)) - fit[2]) < 1e-4  # evaluate's value, shown
    assert "\n1\n" in out  # num_replicas_in_sync
    # The custom loop: 1,000 samples in global batches of 5, then ten steps more from an iterator.
    losses = [float(v) for v in re.findall(r"^kiln.Tensor\(([\d.]+), shape=\(\), dtype=float32\)$", out, re.M)]
    assert len(losses) == 210 and all(a > b for a, b in zip(losses, losses[1:]))


def _run_two_workers(tmp_path, folder, mnist):
    """examples/python/tutorials/distribute/<folder>/main.py as its tutorial's two workers: two MPI ranks, with
    TF_CONFIG naming the cluster as the notebook does (the program reads the worker count from it). Each rank's
    stdout, in rank order."""
    program = os.path.join(REPO, "examples", "python", "tutorials", "distribute", folder)
    tf_config = {"cluster": {"worker": ["localhost:12345", "localhost:23456"]}, "task": {"type": "worker", "index": 0}}
    env = dict(os.environ, TF_CONFIG=json.dumps(tf_config), KILN_MNIST_DIR=mnist, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive",
               KILN_DISTRIBUTED_TIMEOUT="120", PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(tmp_path))
    result = subprocess.run(["mpirun", "--oversubscribe", "--output-filename", str(tmp_path / "out"), "-np", "2",
                             sys.executable, "main.py"], cwd=program, env=env, capture_output=True, timeout=900)
    outputs = [open(path, errors="replace").read()
               for path in sorted(glob.glob(str(tmp_path / "out" / "*" / "rank.*" / "stdout")))]
    assert result.returncode == 0 and len(outputs) == 2, (result.stdout.decode()[-3000:],
                                                          result.stderr.decode()[-3000:])
    return outputs


_needs_mpi = pytest.mark.skipif(shutil.which("mpirun") is None or not kd.built_with_mpi(), reason="needs Open MPI")


@_needs_mpi
def test_multi_worker_training_with_keras_on_two_ranks(tmp_path):
    """"Multi-worker training with Keras": main.py's fit on two workers; both print the same global loss and
    accuracy at every step."""
    outputs = _run_two_workers(tmp_path, "multi_worker", synthetic_mnist(str(tmp_path / "mnist"), train=400, test=100))
    epochs = []
    for out in outputs:
        text = without_progress(out)
        assert [int(e) for e in re.findall(r"^Epoch (\d)/3$", text, re.M)] == [1, 2, 3]
        epochs.append(re.findall(r"70/70 \[=+\] - \d+s \d+\w+/step - loss: ([\d.]+) - accuracy: ([\d.]+)", text))
    assert len(epochs[0]) == 3 and epochs[0] == epochs[1]  # the global figures, the same on both ranks
    losses = [float(loss) for loss, _ in epochs[0]]
    assert losses[0] > losses[1] > losses[2]
    # The progress bar's updates are the machine's (time-based, per rank); where both ranks show a step, its
    # figures agree.
    shown = [{} for _ in outputs]
    for seen, out in zip(shown, outputs):
        epoch = 0
        for line in out.replace("\r", "\n").splitlines():
            if re.match(r"^Epoch \d/3$", line):
                epoch += 1
            step = re.match(r"^\s*(\d+)/70 \[.*loss: ([\d.]+) - accuracy: ([\d.]+)", line)
            if step:
                seen[(epoch, int(step.group(1)))] = step.groups()[1:]
    common = set(shown[0]) & set(shown[1])
    assert len(common) >= 3 and all(shown[0][k] == shown[1][k] for k in common)


@_needs_mpi
def test_multi_worker_custom_training_loop_on_two_ranks(tmp_path):
    """"Custom training loop with Keras and MultiWorkerMirroredStrategy": main.py's loop (datasets from a function
    of the InputContext, strategy.run, reduce, checkpoints by the chief) on two workers, 70 steps of 64 images
    each an epoch: both print the same global accuracy and loss."""
    outputs = _run_two_workers(tmp_path, "multi_worker_ctl", synthetic_mnist(str(tmp_path / "mnist"), train=9000,
                                                                             test=100))
    rows = [re.findall(r"^Epoch: (\d), accuracy: ([\d.]+), train_loss: ([\d.]+)\.$", out, re.M) for out in outputs]
    assert [int(r[0]) for r in rows[0]] == [0, 1, 2] and rows[0] == rows[1]
    # The synthetic digits are learnt within the first epoch (the loss starts near log(10) = 2.3).
    assert all(float(accuracy) > 0.9 and float(loss) < 0.5 for _, accuracy, loss in rows[0])
