"""How much map(num_parallel_calls=...) gains: the same traced map function over a dataset,
sequentially and on 2 and AUTOTUNE threads, with the seconds per element and how much CPU the
process got (CPU seconds / wall seconds: 2.0 is both cores busy). The engine runs each graph
without the GIL, so threads overlap as far as the graph's share of the work allows.

    OMP_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 examples/python/data_parallel_map.py \
        [--elements 300] [--size 50000] [--depth 10]
(OMP_NUM_THREADS=1 keeps each op on one core, so the gain is from the threads alone; pin to two
cores with `taskset -c 0,1` to measure on 2 cores of a larger machine.)
"""
import argparse
import time

import kiln as tf


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=300)
    parser.add_argument("--size", type=int, default=50000, help="floats per element")
    parser.add_argument("--depth", type=int, default=10, help="tanh layers per element")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    def work(x):
        y = tf.sin(tf.cast(tf.range(args.size), tf.float32) * 0.001 + tf.cast(x, tf.float32))
        for _ in range(args.depth):
            y = tf.tanh(y * 1.01 + 0.1)
        return tf.reduce_sum(y)

    source = tf.data.Dataset.range(args.elements)
    results = {}
    for label, calls in (("sequential", None), ("2 threads", 2), ("AUTOTUNE", tf.data.AUTOTUNE)):
        ds = source.map(work, num_parallel_calls=calls)
        values = [float(v) for v in ds.take(4)]  # traces, warms the pool's buffers
        best = None
        for _ in range(args.repeats):
            cpu, wall = time.process_time(), time.perf_counter()
            values = [float(v) for v in ds]
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best = min(best or (wall, cpu), (wall, cpu))
        results[label] = (best, sum(values))
        print(f"{label:>10}: {best[0] / args.elements * 1e3:7.3f} ms/element, CPU/wall {best[1] / best[0]:.2f}, "
              f"speedup {results['sequential'][0][0] / best[0]:.2f}x")
    sums = {round(total, 2) for _, total in results.values()}
    assert len(sums) == 1, f"the runs disagree: {sums}"


if __name__ == "__main__":
    main()
