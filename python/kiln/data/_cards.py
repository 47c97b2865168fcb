"""Cardinality rules of tf.data's transformations, for datasets whose count only
Python knows (the engine reports a dataset made in Python as unknown). Each takes
the input's cardinality n: a count, INFINITE (-1) or UNKNOWN (-2)."""
INFINITE = -1
UNKNOWN = -2


def batch(n, batch_size, drop_remainder):
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


def repeat(n, count):
    if count < 0:
        return 0 if n == 0 else INFINITE
    if count == 0:
        return 0
    return n if n < 0 else n * count


def take(n, count):
    if n == UNKNOWN:
        return UNKNOWN
    if count < 0:
        return n
    return count if n == INFINITE else min(n, count)


def skip(n, count):
    if n < 0:
        return n
    return 0 if count < 0 else max(0, n - count)


def shard(n, num_shards, index):
    if n < 0:
        return n
    return n // num_shards + (1 if index < n % num_shards else 0)


def zip_(counts):
    """The shortest: unknown if any is, infinite only if all are."""
    if UNKNOWN in counts:
        return UNKNOWN
    finite = [c for c in counts if c >= 0]
    return min(finite) if finite else INFINITE


def concatenate(a, b):
    if INFINITE in (a, b):
        return INFINITE
    if UNKNOWN in (a, b):
        return UNKNOWN
    return a + b


def window(n, size, shift, stride, drop_remainder):
    if n < 0:
        return n
    if drop_remainder:
        rest = n - ((size - 1) * stride + 1)
        return 0 if rest < 0 else rest // shift + 1
    return -(-n // shift)
