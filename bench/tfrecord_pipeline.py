"""A TFRecord input pipeline (tf.data) against plain Python and protobuf reading the same records, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/tfrecord_pipeline.py [--mb 100] [--rounds 3] [--batch 50]

Setup: a TFRecord file of about --mb MB of tf.train.Example records, MNIST-shaped (an "image"
float_list of 784 pixels in [0, 1], an int64 "label"), written with tf.io.TFRecordWriter under
build/bench_tfrecord/ (kept between runs when its size and record count match).

Timed, alternated for --rounds rounds so that all see the same machine (each figure is the median
over rounds of records per second over the whole file):
  - "python + protobuf": the file read with open() and struct (TF's framing, checksums not checked),
    each record parsed with Example.FromString (the protos kiln.io builds from TF's .proto), the
    image by np.array(feature.float_list.value), batches by np.stack: what one writes without tf.data;
  - "tf.data, per record": TFRecordDataset -> map(parse_single_example) -> map(reshape, cast) ->
    batch -> prefetch(AUTOTUNE), the pipeline in the order the issue names;
  - "tf.data, vectorized": TFRecordDataset -> batch -> map(parse_example) -> map(reshape, cast) ->
    prefetch(AUTOTUNE), the order TF's performance guide recommends (one parse call per batch);
  - the two tf.data forms without the prefetch (its thread and the loop's share Python's GIL).
Each pass is consumed by a Python loop taking every batch, as a training loop does. The last lines
give each tf.data form's ratio to the plain reading (above 1: faster) and the ms one batch costs.
With --train STEPS it then runs the MNIST CNN's training step fed by the vectorized pipeline, each
fed step followed by the step on a batch in memory: the wait for each batch, the fed step against
the step alone, and the pipeline's share of the loop."""
import argparse
import os
import statistics
import struct
import sys
import time

import numpy as np

import kiln as tf
from kiln.io._messages import Example

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIXELS = 784
FEATURES = {"image": tf.io.FixedLenFeature([PIXELS], tf.float32), "label": tf.io.FixedLenFeature([], tf.int64)}


def example_bytes(image, label):
    return tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(float_list=tf.train.FloatList(value=image)),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
    })).SerializeToString()


def write_file(path, megabytes):
    """About `megabytes` MB of MNIST-shaped Examples (the same file for the same size); their count."""
    record_size = len(example_bytes(np.zeros(PIXELS, np.float32), 0)) + 16
    count = int(megabytes * 1e6) // record_size
    if os.path.exists(path) and os.path.getsize(path) == count * record_size:
        return count
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = np.random.RandomState(0)
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(count):
            # Pixels as MNIST's after scaling: k / 255.
            image = rng.randint(0, 256, PIXELS).astype(np.float32) / 255.0
            writer.write(example_bytes(image, i % 10))
    return count


# ---- the three readers: each takes the whole file once and returns the records it took ----------
def python_protobuf(path, batch):
    taken = 0
    images, labels = [], []
    with open(path, "rb") as f:
        while True:
            header = f.read(12)
            if not header:
                break
            (length,) = struct.unpack("<Q", header[:8])
            record = f.read(length)
            f.read(4)
            example = Example.FromString(record)
            feature = example.features.feature
            images.append(np.array(feature["image"].float_list.value, np.float32).reshape(28, 28, 1))
            labels.append(feature["label"].int64_list.value[0])
            if len(images) == batch:
                x, y = np.stack(images), np.array(labels, np.int32)
                taken += len(x)
                images, labels = [], []
    if images:
        taken += len(np.stack(images))
    return taken


def per_record(path, batch, prefetch=True):
    def parse(record):
        return tf.io.parse_single_example(record, FEATURES)

    def shape(features):
        return tf.reshape(features["image"], [28, 28, 1]), tf.cast(features["label"], tf.int32)

    dataset = tf.data.TFRecordDataset(path).map(parse).map(shape).batch(batch)
    if prefetch:
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    return sum(int(x.shape[0]) for x, y in dataset)


def vectorized(path, batch, prefetch=True):
    def parse(records):
        return tf.io.parse_example(records, FEATURES)

    def shape(features):
        return tf.reshape(features["image"], [-1, 28, 28, 1]), tf.cast(features["label"], tf.int32)

    dataset = tf.data.TFRecordDataset(path).batch(batch).map(parse).map(shape)
    if prefetch:
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    return sum(int(x.shape[0]) for x, y in dataset)


READERS = [("python + protobuf", python_protobuf), ("tf.data, per record", per_record),
           ("tf.data, vectorized", vectorized),
           ("per record, no prefetch", lambda path, batch: per_record(path, batch, prefetch=False)),
           ("vectorized, no prefetch", lambda path, batch: vectorized(path, batch, prefetch=False))]


def training_loop_split(path, batch, steps):
    """The MNIST CNN's training step (bench/python_mnist_step.py's: tape, loss, Adam in one
    kiln.function) fed by the vectorized pipeline, each fed step followed by the same step on a batch
    already in memory, so both see the same machine. Returns per-step lists: the wait for the next
    batch, the fed step, the step alone (seconds)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from python_mnist_step import mnist_cnn, train_step
    step = train_step(mnist_cnn())

    def parse(records):
        return tf.io.parse_example(records, FEATURES)

    def shape(features):
        return tf.reshape(features["image"], [-1, 28, 28, 1]), tf.cast(features["label"], tf.int32)

    dataset = (tf.data.TFRecordDataset(path).batch(batch, drop_remainder=True).map(parse).map(shape)
               .prefetch(tf.data.AUTOTUNE))
    batches = iter(dataset)
    x, y = next(batches)
    float(step(x, y))  # traces
    waits, fed, alone = [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        xb, yb = next(batches)
        t1 = time.perf_counter()
        float(step(xb, yb))
        t2 = time.perf_counter()
        float(step(x, y))
        t3 = time.perf_counter()
        waits.append(t1 - t0), fed.append(t2 - t1), alone.append(t3 - t2)
    return waits, fed, alone


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100, help="the file's size in MB (default 100)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--path", default=os.path.join(REPO, "build", "bench_tfrecord", "mnist_like.tfrecord"))
    parser.add_argument("--only", default=None, help="run only the readers whose name contains this")
    parser.add_argument("--train", type=int, default=0, metavar="STEPS",
                        help="also time STEPS MNIST CNN training steps fed by the vectorized pipeline "
                             "against the step alone")
    args = parser.parse_args()
    t0 = time.perf_counter()
    count = write_file(args.path, args.mb)
    size = os.path.getsize(args.path)
    print(f"{args.path}: {count} records, {size / 1e6:.1f} MB (ready in {time.perf_counter() - t0:.1f} s)")
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {os.cpu_count()} CPUs; "
          f"batch {args.batch}")
    readers = [r for r in READERS if args.only is None or args.only in r[0]]
    rates = {name: [] for name, _ in readers}
    for round_ in range(args.rounds):
        for name, read in readers:
            start = time.perf_counter()
            taken = read(args.path, args.batch)
            seconds = time.perf_counter() - start
            if taken != count:
                sys.exit(f"{name} took {taken} records of {count}")
            rates[name].append(count / seconds)
            print(f"  round {round_ + 1}: {name:24s} {count / seconds:9.0f} records/s ({seconds:.2f} s)", flush=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    base = statistics.median(rates[READERS[0][0]]) if READERS[0][0] in rates else None
    print(f"\n| reader | records/s | vs python + protobuf | ms per batch of {args.batch} |")
    print("|---|---:|---:|---:|")
    for name, _ in readers:
        rate = statistics.median(rates[name])
        ratio = f"{rate / base:.2f}x" if base else "-"
        print(f"| {name} | {rate:.0f} | {ratio} | {1e3 * args.batch / rate:.2f} |")
    if args.train:
        waits, fed, alone = training_loop_split(args.path, args.batch, args.train)
        loop = [w + f for w, f in zip(waits, fed)]
        ms = lambda values: 1e3 * statistics.median(values)  # noqa: E731
        print(f"\nMNIST CNN step fed by the vectorized pipeline, {args.train} steps, each followed by the step "
              f"on a batch in memory (medians): waiting for the batch {ms(waits):.2f} ms, the fed step "
              f"{ms(fed):.2f} ms, the step alone {ms(alone):.2f} ms; waiting is {100 * sum(waits) / sum(loop):.2f}% "
              f"of the loop; loop / step alone {statistics.median(l / a for l, a in zip(loop, alone)):.3f} "
              f"(median of pairs; load after: {' '.join(f'{v:.2f}' for v in os.getloadavg())})")

if __name__ == "__main__":
    main()
