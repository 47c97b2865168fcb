"""Run time of AutoGraph-converted functions against the same control flow written by hand
with kiln.cond / kiln.while_loop (issue #16: conversion must cost nothing per step).

    PYTHONPATH=build/python /usr/bin/python3 bench/autograph_runtime.py [samples]

Both versions are traced once, then called alternately (converted, hand-written, ...), so
both see the same machine load; it prints the min and median per call in microseconds, the
converted/hand-written ratio of the medians, and the graphs' op counts (branches and loop
bodies included), which are equal."""
import collections
import re
import statistics
import sys
import time

import kiln as tf


@tf.function
def auto_nested(n):
    s = tf.constant(0)
    for i in tf.range(n):
        if i % 2 == 0:
            s = s + i
        else:
            s = s - 1
    return s


@tf.function(autograph=False)
def manual_nested(n):
    def body(i, s):
        s = tf.cond(i % 2 == 0, lambda: s + i, lambda: s - 1)
        return i + 1, s
    return tf.while_loop(lambda i, s: i < n, body, (tf.constant(0), tf.constant(0)))[1]


@tf.function
def auto_mixed(x, n):
    if x > 0:
        x = x * x
    else:
        x = -x
    for i in tf.range(n):
        x = x + i
    while x > 100:
        x = x // 2
    return x


@tf.function(autograph=False)
def manual_mixed(x, n):
    def body(i, x):
        x = x + i
        return i + 1, x
    x = tf.cond(x > 0, lambda: x * x, lambda: -x)
    _, x = tf.while_loop(lambda i, x: i < n, body, (tf.constant(0), x))
    return tf.while_loop(lambda x: x > 100, lambda x: (x // 2,), (x,))[0]


@tf.function
def auto_vector(x):
    while tf.reduce_sum(x) > 1.0:
        x = x / 2.0
    return x


@tf.function(autograph=False)
def manual_vector(x):
    return tf.while_loop(lambda x: tf.reduce_sum(x) > 1.0, lambda x: (x / 2.0,), (x,))[0]


# (what, converted, hand-written, arguments); python/tests/autograph/test_dispatch.py
# checks that each pair traces to the same graph.
CASES = [
    ("for over range(1000) with an if inside", auto_nested, manual_nested, (tf.constant(1000),)),
    ("if, for over range(10), while", auto_mixed, manual_mixed, (tf.constant(30), tf.constant(10))),
    ("while reduce_sum(x) > 1, x [1024] float32", auto_vector, manual_vector, (tf.fill([1024], 1000.0),)),
]


def ops(f, args):
    text = f.get_concrete_function(*args).graph.to_string()
    return sum(collections.Counter(re.findall(r"^\s*\w+ = (\w+)\(", text, re.M)).values())


def main(samples=2000):
    print(f"AutoGraph-converted vs hand-written control flow, {samples} alternating calls each")
    print(f"{'function':44} {'conv min':>9} {'hand min':>9} {'conv med':>9} {'hand med':>9} {'med ratio':>9} {'ops':>7}")
    for name, auto, manual, args in CASES:
        a, m = auto(*args), manual(*args)  # traces
        assert (a.numpy() == m.numpy()).all(), name
        times = {auto: [], manual: []}
        for _ in range(samples):
            for f in (auto, manual):
                start = time.perf_counter()
                f(*args)
                times[f].append((time.perf_counter() - start) * 1e6)
        ta, tm = times[auto], times[manual]
        print(f"{name:44} {min(ta):9.1f} {min(tm):9.1f} {statistics.median(ta):9.1f} {statistics.median(tm):9.1f} "
              f"{statistics.median(ta) / statistics.median(tm):9.3f} {ops(auto, args):>3}/{ops(manual, args):<3}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
