"""tf.random's candidate samplers (sampled softmax/NCE negatives): each returns (sampled_candidates int64
[num_sampled], true_expected_count float32 [batch, num_true], sampled_expected_count float32 [num_sampled]).
Without `unique`, the expected count of a class is p * num_sampled; with it, samples are drawn until
num_sampled distinct ones are found and the count is 1 - (1 - p) ** tries, as TF computes them. The draws use
a stateless seed taken from the engine's generator (op seeds as tf.random.uniform's)."""
import numpy as np

from . import _random_draws as _draws
from . import dtypes as _dtypes
from . import errors as _errors


class _Distribution:
    """probs(ids) and draw(generator, n) of a distribution over [0, range_max)."""

    def __init__(self, range_max, probs=None):
        self.range_max = int(range_max)
        self.table = probs

    def probs(self, ids):
        return self.table[np.asarray(ids, np.int64)]

    def draw(self, g, n):
        return g.choice(self.range_max, size=n, p=self.table)


class _Uniform(_Distribution):
    def probs(self, ids):
        return np.full(np.shape(ids), 1.0 / self.range_max)

    def draw(self, g, n):
        return g.integers(0, self.range_max, size=n)


class _LogUniform(_Distribution):
    """Zipfian: P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)."""

    def probs(self, ids):
        k = np.asarray(ids, np.float64)
        return np.log((k + 2.0) / (k + 1.0)) / np.log(self.range_max + 1.0)

    def draw(self, g, n):
        k = np.floor(np.exp(g.random(n) * np.log(self.range_max + 1.0))) - 1
        return np.clip(k, 0, self.range_max - 1).astype(np.int64)


def _sample(dist, g, num_sampled, unique):
    if not unique:
        return dist.draw(g, num_sampled), num_sampled
    picked, seen, tries = [], set(), 0
    while len(picked) < num_sampled:
        for c in dist.draw(g, max(num_sampled, 16)):
            tries += 1
            if int(c) not in seen:
                seen.add(int(c))
                picked.append(int(c))
                if len(picked) == num_sampled:
                    break
    return np.asarray(picked, np.int64), tries


def _expected(p, tries, num_sampled, unique):
    p = np.asarray(p, np.float64)
    if unique:
        return -np.expm1(tries * np.log1p(-np.minimum(p, 1.0 - 1e-16)))
    return p * num_sampled


def _run(make_dist, true_classes, num_true, num_sampled, unique, range_max, seed):
    true_classes = _draws.as_tensor(true_classes, _dtypes.int64)
    if true_classes.shape.rank is not None and true_classes.shape.rank != 2:
        raise ValueError(f"true_classes must be a matrix [batch_size, num_true], got shape {true_classes.shape}")
    dims = true_classes.shape.as_list()
    if dims[1] is not None and dims[1] != int(num_true):
        raise _errors.InvalidArgumentError(f"true_classes has {dims[1]} columns, expected num_true = {num_true}")
    num_sampled, unique = int(num_sampled), bool(unique)
    if unique and num_sampled > int(range_max):
        raise _errors.InvalidArgumentError("Sampler's range is too small.")
    from . import random
    seed_pair = random.uniform([2], 0, 2 ** 31 - 1, dtype=_dtypes.int64, seed=seed)

    def sample(s, classes):
        dist = make_dist(classes)
        sampled, tries = _sample(dist, _draws.seed_generator(s), num_sampled, unique)
        return (sampled.astype(np.int64),
                _expected(dist.probs(classes), tries, num_sampled, unique).astype(np.float32),
                _expected(dist.probs(sampled), tries, num_sampled, unique).astype(np.float32))

    if _draws.is_eager(seed_pair, true_classes):
        from ._ops import constant
        out = sample(seed_pair.numpy(), true_classes.numpy())
        return tuple(constant(v) for v in out)
    from .function import py_function
    from ._ops import reshape
    out = py_function(lambda s, c: sample(s.numpy(), c.numpy()), [seed_pair, true_classes],
                      [_dtypes.int64, _dtypes.float32, _dtypes.float32])
    return (reshape(out[0], [num_sampled]), reshape(out[1], [-1, int(num_true)]), reshape(out[2], [num_sampled]))


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    return _run(lambda _: _Uniform(range_max), true_classes, num_true, num_sampled, unique, range_max, seed)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    return _run(lambda _: _LogUniform(range_max), true_classes, num_true, num_sampled, unique, range_max, seed)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                                      name=None):
    """Unigram counts learned from the true classes seen by this call (plus one for every class, so that
    unseen classes stay possible); TF's kernel keeps learning across calls."""
    def make(classes):
        counts = np.bincount(np.clip(classes.reshape(-1), 0, int(range_max) - 1), minlength=int(range_max)) + 1.0
        return _Distribution(range_max, counts / counts.sum())
    return _run(make, true_classes, num_true, num_sampled, unique, range_max, seed)


def _unigram_table(range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams):
    if vocab_file:
        with open(vocab_file) as f:
            counts = [float(line.strip().split(",")[-1]) for line in f if line.strip()]
    else:
        counts = [float(u) for u in unigrams]
    if not counts:
        raise ValueError("fixed_unigram_candidate_sampler needs `unigrams` or `vocab_file`")
    weights = np.concatenate([np.zeros(int(num_reserved_ids)), np.power(np.asarray(counts), float(distortion))])
    if weights.size != int(range_max):
        raise _errors.InvalidArgumentError(
            f"range_max ({range_max}) must be the number of unigrams plus num_reserved_ids ({weights.size})")
    ids = np.arange(weights.size)
    weights = np.where(ids % int(num_shards) == int(shard), weights, 0.0)
    return weights / weights.sum()


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    table = _unigram_table(range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams)
    return _run(lambda _: _Distribution(range_max, table), true_classes, num_true, num_sampled, unique, range_max,
                seed)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class in [0, num_sampled), each expected once."""
    from ._ops import constant, ones
    true_classes = _draws.as_tensor(true_classes, _dtypes.int64)
    num_sampled = int(num_sampled)
    batch = true_classes.shape.as_list()[0]
    return (constant(np.arange(num_sampled, dtype=np.int64)),
            ones([batch, int(num_true)], _dtypes.float32) if batch is not None else
            _ones_like_float(true_classes), ones([num_sampled], _dtypes.float32))


def _ones_like_float(x):
    from ._ops import cast, ones_like
    return cast(ones_like(x), _dtypes.float32)
