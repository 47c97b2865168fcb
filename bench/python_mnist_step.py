"""The seeds' MNIST CNN training step (batch 50) from Python against the same step in C++, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_mnist_step.py [--rounds 3] [--seconds 2]

Python side: the model of bench/mnist_cnn.h (same layers, same Glorot seeds) built with kiln.keras,
on random data like bench_mnist's, timed three ways:
  - "step": the C++ bench's step written in Python (GradientTape, loss, Adam) in one kiln.function;
  - "train_function": Keras' model.train_function (the traced step fit runs: the step above plus the
    loss tracker's and accuracy's updates);
  - "fit": model.fit over 20 batches, per step (the whole loop: slicing, the call, the progress
    figures; verbose=0).
C++ side: build/bench/bench_mnist --benchmark_filter=BM_MnistStep/50/1 (traced step), when built.
The two sides alternate for --rounds rounds, so both see the same machine; each figure is the median
over rounds of per-round medians. Threads: KILN_BENCH_THREADS (default 2, as the C++ benchmarks)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", os.environ.get("KILN_BENCH_THREADS", "2"))

import numpy as np  # noqa: E402

import kiln as tf  # noqa: E402

K = tf.keras
BATCH = 50
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mnist_cnn(softmax_dtype=None):
    """bench/mnist_cnn.h's model (3,274,634 parameters, kernels seeded 1..4); `softmax_dtype` overrides the
    softmax layer's dtype policy (mixed_precision_mnist.py: float32 under a mixed policy)."""
    init = K.initializers.GlorotUniform
    return K.Sequential([
        K.layers.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1),
                        kernel_initializer=init(seed=1)),
        K.layers.MaxPool2D(2),
        K.layers.Conv2D(64, 5, padding="same", activation="relu", kernel_initializer=init(seed=2)),
        K.layers.MaxPool2D(2),
        K.layers.Flatten(),
        K.layers.Dense(1024, activation="relu", kernel_initializer=init(seed=3)),
        K.layers.Dense(10, kernel_initializer=init(seed=4)),
        K.layers.Softmax(dtype=softmax_dtype),
    ], name="cnn")


def median_ms(fn, seconds, min_runs=10):
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def train_step(model):
    """The C++ bench's Trainer::step, in Python: tape, loss, Adam(1e-3), in one kiln.function of
    (images, labels) returning the loss."""
    optimizer = K.optimizers.Adam(1e-3)
    loss_fn = K.losses.SparseCategoricalCrossentropy()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    return step


class PythonSide:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.images = rng.uniform(0, 1, (BATCH, 28, 28, 1)).astype(np.float32)
        self.labels = rng.integers(0, 10, BATCH).astype(np.int32)

        self.model = mnist_cnn()
        self.step = train_step(self.model)
        float(self.step(self.images, self.labels))  # builds the layers and traces

        self.keras_model = mnist_cnn()
        self.keras_model.compile(optimizer=K.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                                 metrics=["accuracy"])
        self.train_function = self.keras_model.make_train_function()
        self.data = (self.images, self.labels)
        self._keras_step()
        n = 20 * BATCH
        self.fit_x = rng.uniform(0, 1, (n, 28, 28, 1)).astype(np.float32)
        self.fit_y = rng.integers(0, 10, n).astype(np.int32)
        self.keras_model.fit(self.fit_x[:BATCH], self.fit_y[:BATCH], batch_size=BATCH, verbose=0)

    def _step(self):
        float(self.step(self.images, self.labels))

    def _keras_step(self):
        logs = self.train_function(self.data)
        float(logs["loss"])

    def _fit_per_step(self):
        t0 = time.perf_counter()
        self.keras_model.fit(self.fit_x, self.fit_y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
        return 1e3 * (time.perf_counter() - t0) / 20

    def measure(self, seconds):
        fit = statistics.median(self._fit_per_step() for _ in range(3))
        return {"step": median_ms(self._step, seconds), "train_function": median_ms(self._keras_step, seconds),
                "fit": fit}


def cpp_step_ms(seconds):
    binary = os.path.join(REPO, "build", "bench", "bench_mnist")
    if not os.path.exists(binary):
        return None
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        run = subprocess.run([binary, "--benchmark_filter=BM_MnistStep/50/1/", f"--benchmark_min_time={seconds}",
                              f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
                             capture_output=True, text=True, env=dict(os.environ))
        if run.returncode != 0:
            sys.stderr.write(run.stdout + run.stderr)
            run.check_returncode()
        report = json.load(open(out.name))
    for b in report["benchmarks"]:
        if b["name"].startswith("BM_MnistStep/50/1"):
            unit = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b.get("time_unit", "ms")]
            return b["real_time"] * unit
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    print(f"# threads: {os.environ['OMP_NUM_THREADS']}; python {sys.version.split()[0]}; batch {BATCH}")
    py = PythonSide()
    rounds = []
    for r in range(args.rounds):
        row = py.measure(args.seconds)
        row["cpp"] = cpp_step_ms(args.seconds)
        rounds.append(row)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in row.items() if v is not None), flush=True)
    med = {k: statistics.median(row[k] for row in rounds) if all(row[k] is not None for row in rounds) else None
           for k in rounds[0]}
    print(f"\n{'MNIST training step, batch 50':48} {'ms':>8} {'vs C++':>8}")
    labels = {"cpp": "C++ traced step (bench_mnist BM_MnistStep/50/1)",
              "step": "Python: the same step in a kiln.function",
              "train_function": "Python: keras model.train_function",
              "fit": "Python: keras fit, per step"}
    for key in ("cpp", "step", "train_function", "fit"):
        if med[key] is None:
            print(f"{labels[key]:48} {'n/a':>8}")
            continue
        ratio = f"{med[key] / med['cpp']:8.3f}" if med["cpp"] else "       -"
        print(f"{labels[key]:48} {med[key]:8.2f} {ratio}")


if __name__ == "__main__":
    main()
