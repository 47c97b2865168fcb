"""tf.nn's candidate samplers (distributions, uniqueness, TF's expected-count formulas), compute_accidental_hits,
and nce_loss / sampled_softmax_loss against NumPy float64 references with given samples, the full softmax
through all_candidate_sampler, gradients and traces."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients

RNG = np.random.default_rng(17)
LABELS = np.array([[1], [5], [2]])


def test_uniform_sampler():
    out = tf.nn.uniform_candidate_sampler(tf.constant(LABELS), 1, 6, True, 10, seed=1)
    picked = out.sampled_candidates.numpy()
    assert picked.dtype == np.int64 and len(set(picked)) == 6 and picked.min() >= 0 and picked.max() < 10
    assert out.true_expected_count.shape == (3, 1)
    # repeated draws: p * num_sampled; unique draws after `tries` draws: 1 - (1 - p) ** tries, at least p * 6
    assert np.all(out.sampled_expected_count.numpy() >= 0.6 - 1e-6)
    plain = tf.nn.uniform_candidate_sampler(tf.constant(LABELS), 1, 6, False, 10, seed=1)
    np.testing.assert_allclose(plain.sampled_expected_count.numpy(), 0.6, rtol=1e-6)
    np.testing.assert_allclose(plain.true_expected_count.numpy(), 0.6, rtol=1e-6)
    with pytest.raises(ValueError, match="cannot exceed range_max"):
        tf.nn.uniform_candidate_sampler(tf.constant(LABELS), 1, 11, True, 10)


def test_log_uniform_sampler_distribution():
    out = tf.nn.log_uniform_candidate_sampler(tf.constant(LABELS), 1, 20000, False, 5, seed=2)
    counts = np.bincount(out.sampled_candidates.numpy(), minlength=5) / 20000
    p = (np.log(np.arange(5) + 2.0) - np.log(np.arange(5) + 1.0)) / np.log(6.0)
    np.testing.assert_allclose(counts, p, atol=0.015)
    p_true = (np.log(LABELS[:, 0] + 2.0) - np.log(LABELS[:, 0] + 1.0)) / np.log(6.0)  # label 5 is outside: still a p
    np.testing.assert_allclose(out.true_expected_count.numpy()[:, 0], 20000 * p_true, rtol=1e-5)


def test_unique_expected_count_formula():
    out = tf.nn.log_uniform_candidate_sampler(tf.constant(LABELS), 1, 3, True, 4, seed=7)
    p = (np.log(out.sampled_candidates.numpy() + 2.0) - np.log(out.sampled_candidates.numpy() + 1.0)) / np.log(5.0)
    counts = out.sampled_expected_count.numpy()
    # one unknown number of tries, the same for every class: solve it from the first and check the rest
    tries = np.log1p(-counts[0]) / np.log1p(-p[0]) if not np.isclose(counts[0], 3 * p[0]) else 3
    expected = 3 * p if tries == 3 else -np.expm1(tries * np.log1p(-p))
    np.testing.assert_allclose(counts, expected, rtol=1e-4)


def test_all_candidates_and_accidental_hits():
    out = tf.nn.all_candidate_sampler(tf.constant(LABELS), 1, 4, True)
    assert out.sampled_candidates.numpy().tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(out.true_expected_count.numpy(), 1.0)
    rows, ids, weights = tf.nn.compute_accidental_hits(tf.constant([[1, 3], [0, 2]]), tf.constant([3, 0, 1]), 2)
    assert sorted(zip(rows.numpy().tolist(), ids.numpy().tolist())) == [(0, 0), (0, 2), (1, 1)]
    assert np.all(weights.numpy() == -np.finfo(np.float32).max)


def ref_sampled(w, b, labels, x, sampled, true_count, sampled_count, remove_hits):
    true_logits = (x * w[labels[:, 0]]).sum(1, keepdims=True) + b[labels[:, 0]][:, None] - np.log(true_count)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_count)
    if remove_hits:
        sampled_logits = sampled_logits + np.where(sampled[None, :] == labels, -np.finfo(np.float32).max, 0.0)
    return np.concatenate([true_logits, sampled_logits], 1)


def test_losses_against_numpy():
    w, b, x = RNG.normal(size=(8, 3)), RNG.normal(size=8), RNG.normal(size=(3, 3))
    sampled = np.array([5, 0, 7, 2], np.int64)
    true_count, sampled_count = RNG.uniform(0.1, 1, size=(3, 1)), RNG.uniform(0.1, 1, size=4)
    values = (tf.constant(sampled), tf.constant(true_count), tf.constant(sampled_count))
    logits = ref_sampled(w, b, LABELS, x, sampled, true_count, sampled_count, False)
    targets = np.concatenate([np.ones((3, 1)), np.zeros((3, 4))], 1)
    ref_nce = (np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))).sum(1)
    got = tf.nn.nce_loss(tf.constant(w), tf.constant(b), tf.constant(LABELS), tf.constant(x), 4, 8,
                         sampled_values=values)
    np.testing.assert_allclose(got.numpy(), ref_nce, rtol=1e-12)
    logits = ref_sampled(w, b, LABELS, x, sampled, true_count, sampled_count, True)
    shifted = logits - logits.max(1, keepdims=True)
    ref_softmax = -(shifted[:, 0] - np.log(np.exp(shifted).sum(1)))
    got = tf.nn.sampled_softmax_loss(tf.constant(w), tf.constant(b), tf.constant(LABELS), tf.constant(x), 4, 8,
                                     sampled_values=values)
    np.testing.assert_allclose(got.numpy(), ref_softmax, rtol=1e-12)
    check_gradients(lambda ww, bb, xx: tf.reduce_sum(tf.nn.sampled_softmax_loss(
        ww, bb, tf.constant(LABELS), xx, 4, 8, sampled_values=values)),
        [tf.constant(w), tf.constant(b), tf.constant(x)], rtol=1e-5, atol=1e-7)
    check_gradients(lambda ww, xx: tf.reduce_sum(tf.nn.nce_loss(ww, tf.constant(b), tf.constant(LABELS), xx, 4, 8,
                                                                sampled_values=values)),
                    [tf.constant(w), tf.constant(x)], rtol=1e-5, atol=1e-7)


def test_sampled_softmax_over_every_class_is_the_softmax():
    w, b, x = RNG.normal(size=(6, 4)), RNG.normal(size=6), RNG.normal(size=(3, 4))
    every = tf.nn.all_candidate_sampler(tf.constant(LABELS), 1, 6, True)
    got = tf.nn.sampled_softmax_loss(tf.constant(w), tf.constant(b), tf.constant(LABELS), tf.constant(x), 6, 6,
                                     sampled_values=every).numpy()
    logits = x @ w.T + b
    full = -(logits[np.arange(3), LABELS[:, 0]] - np.log(np.exp(logits).sum(1)))
    np.testing.assert_allclose(got, full, rtol=1e-10)


def test_traced_losses_with_sharded_weights():
    w = RNG.normal(size=(9, 3)).astype(np.float32)
    shards = [tf.constant(w[:3]), tf.constant(w[3:6]), tf.constant(w[6:])]
    b, x = tf.zeros([9]), tf.constant(RNG.normal(size=(3, 3)).astype(np.float32))
    every = tf.nn.all_candidate_sampler(tf.constant(LABELS), 1, 9, True)

    @tf.function
    def loss(xx):
        return tf.nn.sampled_softmax_loss(shards, b, tf.constant(LABELS), xx, 9, 9, sampled_values=every), \
            tf.nn.nce_loss(shards, b, tf.constant(LABELS), xx, 5, 9)

    softmax, nce = loss(x)
    logits = x.numpy() @ w.T
    full = -(logits[np.arange(3), LABELS[:, 0]] - np.log(np.exp(logits).sum(1)))
    np.testing.assert_allclose(softmax.numpy(), full, rtol=1e-5)
    assert nce.shape == (3,) and np.all(np.isfinite(nce.numpy()))


def test_fixed_unigram_sampler(tmp_path):
    counts = [5.0, 1.0, 3.0, 1.0]
    out = tf.nn.fixed_unigram_candidate_sampler(tf.constant(LABELS), 1, 30000, False, 6, distortion=0.5,
                                                num_reserved_ids=2, unigrams=counts, seed=3)
    weights = np.concatenate([[0.0, 0.0], np.sqrt(counts)])
    p = weights / weights.sum()
    drawn = np.bincount(out.sampled_candidates.numpy(), minlength=6) / 30000
    np.testing.assert_allclose(drawn, p, atol=0.015)
    assert drawn[0] == 0 and drawn[1] == 0  # reserved ids are never drawn
    np.testing.assert_allclose(out.true_expected_count.numpy()[:, 0], 30000 * p[[1, 5, 2]], rtol=1e-5)
    # a vocabulary file (counts in the last field) and sharding: shard 1 of 2 draws odd ids only
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the,5\nof,1\nand,3\nto,1\n")
    out = tf.nn.fixed_unigram_candidate_sampler(tf.constant(LABELS), 1, 200, False, 4, vocab_file=str(vocab),
                                                num_shards=2, shard=1, seed=1)
    assert set(out.sampled_candidates.numpy().tolist()) <= {1, 3}
    with pytest.raises(tf.errors.InvalidArgumentError, match="range_max"):
        tf.nn.fixed_unigram_candidate_sampler(tf.constant(LABELS), 1, 2, False, 9, unigrams=counts)


def test_learned_unigram_sampler_learns_across_runs():
    sampler = tf.function(lambda t: tf.nn.learned_unigram_candidate_sampler(t, 1, 50, False, 10, seed=4))
    always_seven = tf.constant([[7]] * 20, tf.int64)
    first = sampler(always_seven)
    np.testing.assert_allclose(first.true_expected_count.numpy(), 5.0, rtol=1e-6)  # uniform to start: 50 / 10
    for _ in range(20):
        last = sampler(always_seven)
    # the 21st run draws after 20 updates of 20 sevens each: class 7 weighs 1 + 400 of 10 + 400
    np.testing.assert_allclose(last.true_expected_count.numpy(), 50 * 401 / 410, rtol=1e-5)
    assert np.mean(last.sampled_candidates.numpy() == 7) > 0.8
