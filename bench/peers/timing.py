"""Timing helpers for the PyTorch side of bench/compare.sh.

Variants of one workload are timed in alternation after a warm-up, so a load
change on the (shared) machine hits all of them alike; each figure is the
median of its samples.
"""
import contextlib
import os
import signal
import statistics
import time


def thread_count():
    """The thread count Kiln's benchmarks use too (bench_util.h reads the same variable)."""
    return max(1, int(os.environ.get("KILN_BENCH_THREADS", "2")))


def alternate(variants, rounds, calls=1, warmup=2):
    """variants: {name: fn}. Returns {name: median seconds per call}.

    Each round runs every variant once, `calls` times in a row; the order
    reverses every round (A B, B A, ...) so neither always runs first.
    """
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            variants[name]()
    samples = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else reversed(names)):
            fn = variants[name]
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls)
    return {name: statistics.median(s) for name, s in samples.items()}


def busy_core_count():
    """The busy processes of the contention workloads (bench/busy_cores.h reads the same variable)."""
    return max(0, int(os.environ.get("KILN_BENCH_BUSY", max(1, (os.cpu_count() or 2) // 2))))


@contextlib.contextmanager
def busy_cores(n):
    """n children that spin, stopped at first; yields set_busy(bool), which
    resumes or stops them (SIGCONT/SIGSTOP), as bench/busy_cores.h does."""
    children = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            while True:
                pass
        os.kill(pid, signal.SIGSTOP)
        children.append(pid)

    def set_busy(busy):
        for pid in children:
            os.kill(pid, signal.SIGCONT if busy else signal.SIGSTOP)
        if busy:
            time.sleep(0.004)
    try:
        yield set_busy
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def elapsed(fn):
    """Seconds one call of fn takes, and its result."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def loaded_blas():
    """Paths of the BLAS/LAPACK libraries mapped into this process (after one
    matmul has forced torch to load them): what actually ran, whatever the
    alternatives say."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and ("blas" in fields[5] or "lapack" in fields[5]):
                found.add(os.path.realpath(fields[5]))
    return sorted(found)
