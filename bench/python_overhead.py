"""Python-side overhead of Kiln against PyTorch's Python API, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py

Prints the median of several timeit repeats per workload, in microseconds per call, and the
Kiln/PyTorch ratio when torch is installed (bench/compare.sh installs Debian's)."""
import platform
import statistics
import timeit

import kiln as tf


def per_call_us(stmt, number=20000, repeat=7):
    return statistics.median(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def main():
    print(f"# machine: {platform.machine()}, {platform.processor() or 'cpu'}; python {platform.python_version()}")
    a, b = tf.constant([1.0, 2.0, 3.0, 4.0]), tf.constant([5.0, 6.0, 7.0, 8.0])
    f = tf.function(lambda x, y: x + y)
    f(a, b)
    rows = [("eager a + b, [4] float32", per_call_us(lambda: a + b)),
            ("traced 1-op function call", per_call_us(lambda: f(a, b)))]
    try:
        import torch
        torch.set_num_threads(1)
        ta, tb = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([5.0, 6.0, 7.0, 8.0])
        peer = [per_call_us(lambda: ta + tb), None]
    except ImportError:
        peer = [None, None]
    print(f"{'workload':32} {'kiln us':>9} {'torch us':>9} {'ratio':>7}")
    for (name, k), p in zip(rows, peer):
        ratio = f"{k / p:7.2f}" if p else "      -"
        print(f"{name:32} {k:9.3f} {p if p is None else round(p, 3)!s:>9} {ratio}")


if __name__ == "__main__":
    main()
