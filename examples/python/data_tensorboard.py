"""Watching training without TensorBoard, written as TF 2 code (`import kiln as tf`): a small
Keras classifier trained with tf.keras.callbacks.TensorBoard (epoch and batch scalars, weight
histograms and images, validation), a text summary of its settings, then `kiln.board` drawing the log
directory as one HTML page (open it in any browser; it needs no network).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/data_tensorboard.py [--workdir DIR] [--epochs 8]
    # the same page from any log directory:
    PYTHONPATH=build/python /usr/bin/python3 -m kiln.board DIR/logs --out DIR/report.html
"""
import argparse
import os
import tempfile

import numpy as np

import kiln as tf
from kiln import board


def two_moons(count, seed):
    """Two interleaved half circles with noise: a problem a line cannot separate."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, np.pi, count)
    label = rng.integers(0, 2, count)
    x = np.where(label == 0, np.cos(angle), 1 - np.cos(angle))
    y = np.where(label == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + rng.normal(0, 0.1, (count, 2))
    return points.astype(np.float32), label.astype(np.float32)[:, None]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default=None, help="where logs/ and report.html go (default: a temp dir)")
    parser.add_argument("--epochs", type=int, default=8)
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="kiln_board_")
    logdir = os.path.join(workdir, "logs")

    x, y = two_moons(512, seed=0)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(2,)),
        tf.keras.layers.Dense(16, activation="relu"),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=50, decay_rate=0.7)
    model.compile(tf.keras.optimizers.Adam(schedule), "binary_crossentropy", metrics=["accuracy"])

    settings = tf.summary.create_file_writer(os.path.join(logdir, "settings"))
    with settings.as_default():
        tf.summary.text("hyperparameters", f"Adam, ExponentialDecay(0.05, 50, 0.7), epochs={args.epochs}, "
                        "batch_size=32, layers 16-16-1", step=0)
    settings.close()

    tensorboard = tf.keras.callbacks.TensorBoard(logdir, histogram_freq=1, update_freq=4, write_images=True)
    history = model.fit(x, y, batch_size=32, epochs=args.epochs, validation_split=0.25, verbose=0,
                        callbacks=[tensorboard])
    out = board.write_report(logdir, os.path.join(workdir, "report.html"), title="Two moons")
    print(f"final loss {history.history['loss'][-1]:.4f}, val_accuracy {history.history['val_accuracy'][-1]:.4f}")
    print(f"logs: {logdir}")
    print(f"report: {out}")


if __name__ == "__main__":
    main()
