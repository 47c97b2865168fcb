"""The seeds' MNIST CNN, trained from Python with kiln.keras compile/fit on the real digits the C++
main job uses (examples/mnist_train.cpp: the same architecture, optimizer, batch size and epochs).

    bash scripts/mnist_data.sh                  # once: writes data/mnist (needs the network once)
    PYTHONPATH=build/python /usr/bin/python3 examples/python/mnist_cnn.py [--epochs 5] [--batch-size 50]

Flags: --epochs N, --batch-size N, --data-dir DIR (default: data/mnist in the repository),
--seed N, --max-steps N (stop each epoch early; for smoke tests), --verbose 0|1|2.
The training step -- forward pass, loss, gradients and the Adam update -- is one traced graph
(`model.train_function`); fit runs it on every batch. Written as TF2 code: `import kiln as tf`."""
import argparse
import time

import numpy as np

import kiln as tf


def make_model(seed):
    """The seeds' CNN: conv5x5x32 same relu, maxpool 2, conv5x5x64 same relu, maxpool 2, flatten,
    dense 1024 relu, dense 10, softmax (3,274,634 parameters), kernels seeded as the C++ example's."""
    init = tf.keras.initializers.GlorotUniform
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1),
                               kernel_initializer=init(seed=seed)),
        tf.keras.layers.MaxPool2D(2),
        tf.keras.layers.Conv2D(64, 5, padding="same", activation="relu", kernel_initializer=init(seed=seed + 1)),
        tf.keras.layers.MaxPool2D(2),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(1024, activation="relu", kernel_initializer=init(seed=seed + 2)),
        tf.keras.layers.Dense(10, kernel_initializer=init(seed=seed + 3)),
        tf.keras.layers.Softmax(),
    ], name="cnn")


class StepTimer(tf.keras.callbacks.Callback):
    """Wall time per training step, after the first (which traces)."""

    def __init__(self):
        super().__init__()
        self.seconds, self.steps, self._t0, self._first = 0.0, 0, 0.0, True

    def on_train_batch_begin(self, batch, logs=None):
        self._t0 = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if self._first:
            self._first = False
            return
        self.seconds += time.perf_counter() - self._t0
        self.steps += 1


def main():
    parser = argparse.ArgumentParser(description="Train the seeds' MNIST CNN with kiln.keras")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    args = parser.parse_args()

    tf.random.set_seed(args.seed)
    np.random.seed(args.seed)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data(args.data_dir)
    # uint8 [N, 28, 28] -> float32 [N, 28, 28, 1] in [0, 1], as the seeds' MNISTLoader does.
    x_train = np.expand_dims(x_train.astype(np.float32) / 255.0, axis=-1)
    x_test = np.expand_dims(x_test.astype(np.float32) / 255.0, axis=-1)
    y_train, y_test = y_train.astype(np.int32), y_test.astype(np.int32)
    print(f"MNIST: {len(x_train)} training and {len(x_test)} test digits")

    model = make_model(args.seed)
    model.summary()
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
    timer = StepTimer()
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, shuffle=True,
              steps_per_epoch=args.max_steps, verbose=args.verbose, callbacks=[timer])

    loss, accuracy = model.evaluate(x_test, y_test, batch_size=500, verbose=0)
    print(f"test accuracy: {100 * accuracy:.2f}% on {len(x_test)} held-out digits (loss {loss:.4f})")
    print(f"train_function traced {model.train_function.experimental_get_tracing_count()} time(s)")
    if timer.steps:
        ms = 1e3 * timer.seconds / timer.steps
        print(f"training: {ms:.1f} ms per step, {args.batch_size * 1e3 / ms:.0f} digits/s (traced)")


if __name__ == "__main__":
    main()
