"""The seeds' MNIST CNN training step as a Keras model, mixed_bfloat16 against float32, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/mixed_precision_mnist.py [--rounds 5] [--seconds 2]
        [--epochs 3] [--batch 50]

The model is bench/mnist_cnn.h's (bench/python_mnist_step.py builds it with kiln.keras), built twice: under
the float32 policy and under mixed_bfloat16, its softmax in float32 as TF's mixed precision guide says. The step
is bench/python_mnist_step.py's: tape, loss, Adam(1e-3), in one kiln.function. The two steps alternate, one
each in turn on the same random batch, so each pair sees the same machine; each of --rounds rounds prints both
medians and the median of the pairs' ratios, and the end the median of those. Under mixed_bfloat16 the
convolutions and matmuls (and their gradients) run on oneDNN's bf16 kernels where the CPU has AVX512_BF16 or AMX
(said on the first line).

Then each policy trains a fresh model for --epochs on MNIST (keras.datasets.mnist: data/mnist or $KILN_MNIST_DIR;
scripts/mnist_data.sh) and the test accuracies are compared: mixed_bfloat16 should be within 0.5 points of
float32. Threads: KILN_BENCH_THREADS (default 2, as the C++ benchmarks)."""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", os.environ.get("KILN_BENCH_THREADS", "2"))

import numpy as np  # noqa: E402

import kiln as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_mnist_step  # noqa: E402
from python_mnist_step import train_step  # noqa: E402

K = tf.keras
MP = K.mixed_precision


def mnist_cnn(policy):
    """bench/mnist_cnn.h's model under `policy`, the softmax in float32."""
    MP.set_global_policy(policy)
    try:
        return python_mnist_step.mnist_cnn(softmax_dtype="float32")
    finally:
        MP.set_global_policy(None)


def timing(args):
    """Steps of the two models in turn, one each per pair: each pair's ratio sees the machine as it is then (the
    guest's load moves within seconds); a round prints the medians of its pairs."""
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, (args.batch, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, args.batch).astype(np.int32)
    steps = {}
    for policy in ("float32", "mixed_bfloat16"):
        step = train_step(mnist_cnn(policy))
        float(step(images, labels))  # builds the layers and traces
        steps[policy] = step

    def one(policy):
        t0 = time.perf_counter()
        float(steps[policy](images, labels))
        return 1e3 * (time.perf_counter() - t0)

    ratios = []
    for r in range(args.rounds):
        pairs = []
        start = time.perf_counter()
        while len(pairs) < 10 or time.perf_counter() - start < 2 * args.seconds:
            pairs.append((one("float32"), one("mixed_bfloat16")))
        f32 = statistics.median(p[0] for p in pairs)
        bf16 = statistics.median(p[1] for p in pairs)
        ratios.append(statistics.median(p[0] / p[1] for p in pairs))
        print(f"round {r + 1}: float32 {f32:.2f} ms, mixed_bfloat16 {bf16:.2f} ms, speedup {ratios[-1]:.2f}x "
              f"({len(pairs)} pairs)", flush=True)
    print(f"median speedup of mixed_bfloat16 over float32: {statistics.median(ratios):.2f}x")


def accuracy(args):
    (x_train, y_train), (x_test, y_test) = K.datasets.mnist.load_data()
    x_train = (x_train[..., None] / 255.0).astype(np.float32)
    x_test = (x_test[..., None] / 255.0).astype(np.float32)
    scores = {}
    for policy in ("float32", "mixed_bfloat16"):
        tf.random.set_seed(0)
        np.random.seed(0)  # fit's shuffle draws from NumPy's generator: both policies see one order
        model = mnist_cnn(policy)
        model.compile(K.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
        t0 = time.perf_counter()
        model.fit(x_train, y_train, batch_size=args.batch, epochs=args.epochs, verbose=0, shuffle=True)
        scores[policy] = 100 * model.evaluate(x_test, y_test, batch_size=500, verbose=0)[1]
        print(f"{policy}: test accuracy {scores[policy]:.2f}% after {args.epochs} epochs on {len(x_train)} digits "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    gap = scores["float32"] - scores["mixed_bfloat16"]
    print(f"accuracy gap (float32 - mixed_bfloat16): {gap:+.2f} points ({'within' if abs(gap) <= 0.5 else 'OVER'} "
          "0.5)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    print(f"# threads: {os.environ['OMP_NUM_THREADS']}; batch {args.batch}; bf16 kernels: "
          f"{'yes' if MP.bfloat16_kernels_available() else 'no (float32 path)'}")
    timing(args)
    if not args.skip_accuracy:
        accuracy(args)


if __name__ == "__main__":
    main()
