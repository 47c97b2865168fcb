"""tf.nn's candidate sampling and the losses over it (nce_loss, sampled_softmax_loss). The samplers draw on the
host (NumPy's generator: TF's distributions and expected counts, not TF's numbers); the losses are differentiable
composites of embedding lookups and matmuls, the sampled candidates and their counts held constant, as TF."""
import collections

import numpy as np

from . import _ops, dtypes as _dtypes
from . import errors as _errors
from ._array_ops import _tensor
from ._nn_ctc import _host
from ._nn_embedding import embedding_lookup
from ._nn_losses import sigmoid_cross_entropy_with_logits

Candidates = collections.namedtuple("CandidateSamplerOutput",
                                    ["sampled_candidates", "true_expected_count", "sampled_expected_count"])


def _expected(p, num_sampled, tries, unique):
    """How many times a class of probability p is expected among the draws: p * num_sampled, or, when draws were
    repeated until num_sampled distinct classes came (`tries` draws), 1 - (1 - p) ** tries."""
    if not unique or tries == num_sampled:
        return p * num_sampled
    return -np.expm1(tries * np.log1p(-p))


def _sampler(draw, probability, true_classes, num_true, num_sampled, unique, range_max, seed, after=None):
    num_sampled, range_max = int(num_sampled), int(range_max)
    if unique and num_sampled > range_max:
        raise ValueError(f"num_sampled ({num_sampled}) cannot exceed range_max ({range_max}) when unique=True")
    true_classes = _ops.cast(_tensor(true_classes), _dtypes.int64)
    if true_classes.shape.rank != 2 or true_classes.shape[1] not in (None, int(num_true)):
        raise ValueError(f"true_classes must be [batch_size, num_true={num_true}], got {true_classes.shape}")
    rng = np.random.default_rng(seed)  # a seed repeats its sequence of draws, advancing at each call

    def sample(true):
        picked, tries = [], 0
        seen = set()
        while len(picked) < num_sampled:
            tries += 1
            c = int(draw(rng))
            if unique:
                if c in seen:
                    continue
                seen.add(c)
            picked.append(c)
        picked = np.array(picked, np.int64)
        counts = (_expected(probability(true), num_sampled, tries, unique).astype(np.float32),
                  _expected(probability(picked), num_sampled, tries, unique).astype(np.float32))
        if after is not None:
            after(true)
        return (picked, *counts)

    out = _host(sample, [true_classes], [_dtypes.int64, _dtypes.float32, _dtypes.float32],
                [[num_sampled], [-1, int(num_true)], [num_sampled]])
    return Candidates(*out)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """num_sampled classes drawn uniformly from [0, range_max) (distinct when unique), with the expected counts
    of the true and the sampled classes."""
    return _sampler(lambda g: g.integers(0, int(range_max)), lambda c: np.full(np.shape(c), 1.0 / int(range_max)),
                    true_classes, num_true, num_sampled, unique, range_max, seed)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """num_sampled classes from the log-uniform (Zipfian) distribution P(c) = log((c + 2) / (c + 1)) /
    log(range_max + 1) over [0, range_max): small ids, the frequent words of a sorted vocabulary, come often."""
    log_range = np.log(int(range_max) + 1.0)

    def draw(g):
        return min(int(np.exp(g.random() * log_range)) - 1, int(range_max) - 1)

    def probability(c):
        c = np.asarray(c, np.float64)
        return (np.log(c + 2.0) - np.log(c + 1.0)) / log_range

    return _sampler(draw, probability, true_classes, num_true, num_sampled, unique, range_max, seed)


def _unigram_weights(range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams):
    """TF's fixed unigram table: num_reserved_ids zero weights, then the counts (of `unigrams`, or the last
    comma-separated field of each line of vocab_file) raised to `distortion`; ids of other shards weigh 0."""
    if vocab_file:
        with open(vocab_file, encoding="utf-8") as f:
            counts = [float(line.rstrip("\n").split(",")[-1]) for line in f if line.strip()]
    else:
        counts = [float(u) for u in unigrams]
    weights = np.concatenate([np.zeros(int(num_reserved_ids)), np.power(np.asarray(counts, np.float64),
                                                                        float(distortion))])
    if len(weights) != int(range_max):
        raise _errors.InvalidArgumentError(f"range_max must be the number of ids ({len(weights)}: "
                                           f"{num_reserved_ids} reserved and {len(counts)} counts), got {range_max}")
    ids = np.arange(len(weights))
    weights = np.where(ids % int(num_shards) == int(shard), weights, 0.0)
    if weights.sum() <= 0:
        raise _errors.InvalidArgumentError("the unigram weights sum to 0")
    return weights


def _table_sampler(weights, true_classes, num_true, num_sampled, unique, range_max, seed, learn=False):
    """Draws by weight; with `learn`, each true class seen adds 1 to its weight after the draws (TF's learned
    unigram sampler), the table living as long as the sampler (a traced function's, across its runs)."""
    def draw(g):
        return g.choice(len(weights), p=weights / weights.sum())

    def probability(c):
        return weights[np.asarray(c, np.int64).clip(0, len(weights) - 1)] / weights.sum()

    def learn_from(true):
        np.add.at(weights, true.reshape(-1).clip(0, len(weights) - 1), 1.0)

    return _sampler(draw, probability, true_classes, num_true, num_sampled, unique, range_max, seed,
                    after=learn_from if learn else None)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    """num_sampled classes drawn in proportion to a fixed unigram table (vocab_file or unigrams), each count
    raised to `distortion`, with num_reserved_ids never-drawn ids first and only this shard's ids drawn."""
    weights = _unigram_weights(range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams)
    return _table_sampler(weights, true_classes, num_true, num_sampled, unique, range_max, seed)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                                      name=None):
    """num_sampled classes drawn in proportion to 1 + how often each was a true class before (the counts of a
    traced function's sampler carry over its runs; an eager call starts from the uniform table)."""
    return _table_sampler(np.ones(int(range_max)), true_classes, num_true, num_sampled, unique, range_max, seed,
                          learn=True)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """The classes 0 .. num_sampled - 1, each expected once: the full softmax through the sampled losses."""
    true_classes = _ops.cast(_tensor(true_classes), _dtypes.int64)
    return Candidates(_ops.range(int(num_sampled), dtype=_dtypes.int64),
                      _ops.ones_like(true_classes, dtype=_dtypes.float32), _ops.ones([int(num_sampled)]))


def _hits(true, sampled):
    rows, cols = np.nonzero((true[:, :, None] == sampled[None, None, :]).any(axis=1))
    return (rows.astype(np.int32), cols.astype(np.int64),
            np.full(len(rows), -np.finfo(np.float32).max, np.float32))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(row, position in sampled_candidates, -FLT_MAX) for every sampled candidate that is one of the row's true
    classes: added to the sampled logits, the weights take those candidates out of the softmax."""
    true_classes = _ops.cast(_tensor(true_classes), _dtypes.int64)
    sampled = _ops.cast(_tensor(sampled_candidates), _dtypes.int64)
    return tuple(_host(_hits, [true_classes, sampled], [_dtypes.int32, _dtypes.int64, _dtypes.float32],
                       [[-1], [-1], [-1]]))


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                    subtract_log_q, remove_accidental_hits, seed):
    """(logits [batch, num_true + num_sampled], labels: 1 / num_true for the true classes, 0 for the sampled)."""
    labels = _ops.cast(_tensor(labels), _dtypes.int64)
    inputs = _tensor(inputs)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed)
    sampled, true_expected, sampled_expected = (_ops.stop_gradient(_tensor(v)) for v in sampled_values)
    sampled = _ops.cast(sampled, _dtypes.int64)
    flat_labels = _ops.reshape(labels, [-1])
    all_ids = _ops.concat([flat_labels, sampled], 0)
    rows = embedding_lookup(weights, all_ids)
    bias = embedding_lookup(biases, all_ids)
    n_true = flat_labels.shape[0]
    if n_true is None:
        raise ValueError("kiln.nn: the labels' shape must be known while tracing")
    dim = rows.shape[-1]
    true_w, sampled_w = rows[:n_true], rows[n_true:]
    true_b, sampled_b = bias[:n_true], bias[n_true:]
    true_logits = _ops.reduce_sum(_ops.multiply(_ops.expand_dims(inputs, 1),
                                                _ops.reshape(true_w, [-1, int(num_true), dim])), axis=2)
    true_logits = _ops.add(true_logits, _ops.reshape(true_b, [-1, int(num_true)]))
    sampled_logits = _ops.add(_ops.matmul(inputs, sampled_w, transpose_b=True), sampled_b)
    if remove_accidental_hits:
        # compute_accidental_hits' -FLT_MAX added where a sampled class is one of the row's true classes (found
        # in the graph, so the batch may be known only at run time)
        hit = _ops.reduce_any(_ops.equal(_ops.expand_dims(labels, 2), _ops.reshape(sampled, [1, 1, -1])), axis=1)
        penalty = _ops.cast(-np.finfo(np.float32).max, sampled_logits.dtype)
        sampled_logits = _ops.add(sampled_logits, _ops.where(hit, penalty, _ops.zeros_like(penalty)))
    if subtract_log_q:
        true_logits = _ops.subtract(true_logits, _ops.log(_ops.cast(true_expected, true_logits.dtype)))
        sampled_logits = _ops.subtract(sampled_logits, _ops.log(_ops.cast(sampled_expected, sampled_logits.dtype)))
    logits = _ops.concat([true_logits, sampled_logits], 1)
    targets = _ops.concat([_ops.divide(_ops.ones_like(true_logits), float(num_true)), _ops.zeros_like(sampled_logits)],
                          1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, name="nce_loss"):
    """Noise-contrastive estimation, [batch]: the sigmoid cross entropy of the true classes against
    num_sampled classes drawn (log-uniformly unless sampled_values), each logit less the log of its expected
    count, summed per row."""
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, True, remove_accidental_hits, None)
    return _ops.reduce_sum(sigmoid_cross_entropy_with_logits(labels=targets, logits=logits), axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                         remove_accidental_hits=True, seed=None, name="sampled_softmax_loss"):
    """The softmax cross entropy over the true classes and num_sampled drawn ones, [batch]; sampled classes
    equal to a true one are taken out (remove_accidental_hits)."""
    from .nn import softmax_cross_entropy_with_logits

    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, True, remove_accidental_hits, seed)
    return softmax_cross_entropy_with_logits(_ops.stop_gradient(targets), logits)
