"""Data in, state out, written as TF 2 code (`import kiln as tf`): variable-length sequences
written as tf.train.Example records to a TFRecord file, read back with TFRecordDataset,
parsed, padded and batched; a small Keras model trained on them in a tf.function step;
CheckpointManager keeping the newest checkpoints (TF's on-disk format) and tf.summary
writing the loss for TensorBoard. Running it again resumes from the last checkpoint.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/data_pipeline.py [--workdir DIR] [--epochs 3]
    tensorboard --logdir DIR/logs      # where TensorBoard is installed
"""
import argparse
import os
import tempfile

import numpy as np

import kiln as tf

MAX_LEN = 8


def write_records(path, count, seed):
    """Sequences of 1 to MAX_LEN floats; the label is their sum."""
    rng = np.random.default_rng(seed)
    with tf.io.TFRecordWriter(path, options="GZIP") as writer:
        for _ in range(count):
            seq = rng.uniform(-1, 1, size=rng.integers(1, MAX_LEN + 1)).astype(np.float32)
            example = tf.train.Example(features=tf.train.Features(feature={
                "seq": tf.train.Feature(float_list=tf.train.FloatList(value=seq)),
                "label": tf.train.Feature(float_list=tf.train.FloatList(value=[seq.sum()])),
            }))
            writer.write(example.SerializeToString())


def make_dataset(path, batch_size):
    features = {"seq": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True),
                "label": tf.io.FixedLenFeature([], tf.float32)}

    def parse(record):
        parsed = tf.io.parse_single_example(record, features)
        return parsed["seq"], parsed["label"]

    ds = tf.data.TFRecordDataset(path, compression_type="GZIP").map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache().shuffle(256, seed=0)
    return ds.padded_batch(batch_size, padded_shapes=([MAX_LEN], []), drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "kiln_data_pipeline"))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    records = os.path.join(args.workdir, "train.tfrecord.gz")
    if not os.path.exists(records):
        write_records(records, 1024, seed=0)
    ds = make_dataset(records, args.batch_size)

    model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu", input_shape=(MAX_LEN,)),
                                 tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.Adam(0.01)
    epoch = tf.Variable(0, dtype=tf.int64)
    ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(args.workdir, "ckpts"), max_to_keep=2)
    if manager.latest_checkpoint:
        ckpt.restore(manager.latest_checkpoint).assert_consumed()
        print(f"resumed from {manager.latest_checkpoint} (epoch {int(epoch)})")
    writer = tf.summary.create_file_writer(os.path.join(args.workdir, "logs"))

    @tf.function
    def train_step(seq, label):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(seq)[:, 0] - label) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(args.epochs):
        losses = [float(train_step(seq, label)) for seq, label in ds]
        epoch.assign_add(1)
        with writer.as_default(step=epoch):
            tf.summary.scalar("loss", np.mean(losses))
            tf.summary.histogram("kernel", model.layers[0].kernel)
        path = manager.save()
        print(f"epoch {int(epoch)}: loss {np.mean(losses):.4f}, saved {path}")
    writer.close()


if __name__ == "__main__":
    main()
