"""An LSTM classifier over the rows of the MNIST digits, from Python with kiln.keras (the model of the C++
examples/lstm_mnist.cpp): each 28x28 digit is a sequence of 28 rows, read by LSTM(128), then Dense(10).
Trains with compile/fit (the training step one traced graph, the LSTM's time loop one While op over
TensorArrays), reports test accuracy, then times one training step three ways: traced with the While loop,
traced with the loop unrolled (unroll=True), and eager.

    bash scripts/mnist_data.sh                  # once: writes data/mnist (needs the network once)
    PYTHONPATH=build/python /usr/bin/python3 examples/python/lstm_mnist.py [--epochs 2] [--batch-size 128]

Flags: --epochs N, --batch-size N, --units N, --layers N (stacked LSTMs, all but the last with
return_sequences), --data-dir DIR, --seed N, --max-steps N (stop each epoch early), --timing-steps N (steps
per variant in the timing). Written as TF2 code: `import kiln as tf`."""
import argparse
import time

import numpy as np

import kiln as tf


def make_model(units, unroll=False, layers=1):
    recurrent = [tf.keras.layers.LSTM(units, unroll=unroll, return_sequences=i < layers - 1,
                                      **({"input_shape": (28, 28)} if i == 0 else {})) for i in range(layers)]
    return tf.keras.Sequential(recurrent + [tf.keras.layers.Dense(10)],
                               name="lstm_classifier_unrolled" if unroll else "lstm_classifier")


def training_step(model):
    """The step, written once: `step` runs it eagerly, `tf.function(step)` traces it."""
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


def main():
    parser = argparse.ArgumentParser(description="Train an LSTM over the rows of the MNIST digits with kiln.keras")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--timing-steps", type=int, default=15)
    args = parser.parse_args()
    # Before the data: a bad flag is reported even where data/mnist is not there yet.
    if args.layers < 1:
        parser.error(f"--layers must be at least 1, got {args.layers}")

    tf.random.set_seed(args.seed)
    np.random.seed(args.seed)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data(args.data_dir)
    x_train, x_test = x_train.astype(np.float32) / 255.0, x_test.astype(np.float32) / 255.0
    y_train, y_test = y_train.astype(np.int32), y_test.astype(np.int32)
    print(f"MNIST: {len(x_train)} training and {len(x_test)} test digits, each 28 steps of 28 features")

    model = make_model(args.units, layers=args.layers)
    model.summary()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs, shuffle=True,
              steps_per_epoch=args.max_steps, verbose=2)
    _, accuracy = model.evaluate(x_test, y_test, batch_size=500, verbose=0)
    print(f"test accuracy: {100 * accuracy:.2f}% on {len(x_test)} held-out digits")

    # One batch, the three steps alternated so they see the same machine; medians. The unrolled model
    # starts from the trained weights.
    unrolled = make_model(args.units, unroll=True, layers=args.layers)
    unrolled.set_weights(model.get_weights())
    images, labels = x_train[:args.batch_size], y_train[:args.batch_size]
    eager = training_step(model)
    variants = {"traced, while_loop + TensorArrays": tf.function(training_step(model)),
                "traced, unrolled": tf.function(training_step(unrolled)), "eager": eager}
    times = {name: [] for name in variants}
    for i in range(args.timing_steps + 1):
        for name, step in variants.items():
            t0 = time.perf_counter()
            float(step(images, labels))          # reading the loss waits for the step
            if i > 0:                            # the first call traces
                times[name].append(1e3 * (time.perf_counter() - t0))
    ms = {name: float(np.median(t)) for name, t in times.items()}
    loop, unroll, eager_ms = ms["traced, while_loop + TensorArrays"], ms["traced, unrolled"], ms["eager"]
    layers = f"{args.layers} x LSTM({args.units})" if args.layers > 1 else f"LSTM({args.units})"
    print(f"training step, batch {args.batch_size}, {layers} over 28 steps (medians of {args.timing_steps}):")
    print(f"  traced, while_loop + TensorArrays: {loop:7.2f} ms")
    print(f"  traced, unrolled:                  {unroll:7.2f} ms (loop / unrolled = {loop / unroll:.2f})")
    print(f"  eager:                             {eager_ms:7.2f} ms (eager / loop = {eager_ms / loop:.2f})")


if __name__ == "__main__":
    main()
