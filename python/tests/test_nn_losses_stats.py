"""tf.nn's losses, activations, statistics and normalizations against NumPy float64 references, their edge
cases (huge and infinite logits, zeros, empty tensors), gradients against central differences, TF's errors,
and eager = traced."""
import numpy as np
import pytest

import kiln as tf
from kiln._nn_stats import fused_batch_norm  # tf.compat.v1.nn's: TF 2's tf.nn has none
from numeric_grad import check_gradients

RNG = np.random.default_rng(7)
LOGITS = np.array([-1e4, -30.0, -2.5, -1e-3, 0.0, 1e-3, 0.7, 30.0, 1e4])
LABELS = np.array([0.0, 1.0, 0.3, 1.0, 0.5, 0.0, 1.0, 0.0, 1.0])


def ref_sigmoid_xent(x, z):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def ref_weighted_xent(x, z, q):
    return (1 - z) * x + (1 + (q - 1) * z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))


def test_sigmoid_cross_entropy_values_and_huge_logits():
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(LABELS), logits=tf.constant(LOGITS)).numpy()
    np.testing.assert_allclose(got, ref_sigmoid_xent(LOGITS, LABELS), rtol=1e-12, atol=0)
    assert np.isfinite(got).all()
    # float32 keeps the tiny values of saturated logits (no log(1 - 1) = -inf)
    got32 = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant(LABELS, tf.float32),
                                                    logits=tf.constant(LOGITS, tf.float32)).numpy()
    np.testing.assert_allclose(got32, ref_sigmoid_xent(LOGITS, LABELS), rtol=1e-5, atol=1e-6)


def test_sigmoid_cross_entropy_infinite_logits_as_tf():
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([1.0, 0.0, 0.0, 1.0]),
                                                  logits=tf.constant([np.inf, -np.inf, np.inf, -np.inf])).numpy()
    # TF's formula, term by term: x * z is NaN for an infinite logit with label 0 (inf * 0), inf - inf is NaN for
    # +inf with label 1; only -inf with label 1 gives a number, +inf
    assert np.isnan(got[:3]).all() and got[3] == np.inf


def test_sigmoid_cross_entropy_errors():
    with pytest.raises(ValueError, match="logits and labels must have the same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2]), logits=tf.zeros([3]))
    with pytest.raises(ValueError, match="Both labels and logits must be provided"):
        tf.nn.sigmoid_cross_entropy_with_logits(logits=tf.zeros([3]))


def test_weighted_cross_entropy():
    for q in (0.3, 1.0, 4.0):
        got = tf.nn.weighted_cross_entropy_with_logits(tf.constant(LABELS), tf.constant(LOGITS), q).numpy()
        np.testing.assert_allclose(got, ref_weighted_xent(LOGITS, LABELS, q), rtol=1e-12)
    # pos_weight 1 is the sigmoid cross entropy
    np.testing.assert_allclose(
        tf.nn.weighted_cross_entropy_with_logits(tf.constant(LABELS), tf.constant(LOGITS), 1.0).numpy(),
        ref_sigmoid_xent(LOGITS, LABELS), rtol=1e-12)


def test_cross_entropy_gradients():
    x = tf.constant(RNG.normal(size=(3, 4)) * 3)
    z = tf.constant(RNG.uniform(size=(3, 4)))
    check_gradients(lambda a, b: tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=b, logits=a)), [x, z])
    check_gradients(lambda a, b: tf.reduce_sum(tf.nn.weighted_cross_entropy_with_logits(b, a, 2.5)), [x, z])
    # at a huge logit the gradient is sigmoid(x) - z, finite
    with tf.GradientTape() as tape:
        big = tf.constant([1e4, -1e4])
        tape.watch(big)
        loss = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([0.25, 0.25]), logits=big))
    np.testing.assert_allclose(tape.gradient(loss, big).numpy(), [0.75, -0.25], atol=1e-12)


def ref_log_poisson(t, x, full):
    loss = np.exp(x) - x * t
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss = loss + np.where(t > 1, stirling, 0.0)
    return loss


def test_log_poisson_loss():
    t = np.array([0.0, 0.5, 1.0, 2.0, 7.0, 100.0])
    x = np.array([0.1, -2.0, 0.0, 0.7, 2.0, 4.6])
    for full in (False, True):
        got = tf.nn.log_poisson_loss(tf.constant(t), tf.constant(x), compute_full_loss=full).numpy()
        np.testing.assert_allclose(got, ref_log_poisson(t, x, full), rtol=1e-12)
        assert np.isfinite(got).all()
    check_gradients(lambda a: tf.reduce_sum(tf.nn.log_poisson_loss(tf.constant(t), a, True)), [tf.constant(x)])
    with pytest.raises(ValueError, match="log_input and targets must have the same shape"):
        tf.nn.log_poisson_loss(tf.zeros([2]), tf.zeros([3]))


def test_compute_average_loss():
    losses = np.array([1.0, 2.0, 3.0, 6.0])
    assert tf.nn.compute_average_loss(tf.constant(losses)).numpy() == pytest.approx(3.0)
    assert tf.nn.compute_average_loss(tf.constant(losses), global_batch_size=8).numpy() == pytest.approx(1.5)
    w = np.array([1.0, 0.0, 2.0, 0.5])
    assert tf.nn.compute_average_loss(tf.constant(losses), sample_weight=tf.constant(w)).numpy() == \
        pytest.approx((losses * w).sum() / 4)
    assert tf.nn.compute_average_loss(tf.constant(losses), sample_weight=2.0).numpy() == pytest.approx(6.0)
    per_row = np.arange(6.0).reshape(2, 3)  # [batch, steps]: the sum over everything / batch
    assert tf.nn.compute_average_loss(tf.constant(per_row)).numpy() == pytest.approx(per_row.sum() / 2)
    assert tf.nn.compute_average_loss(tf.constant(losses, tf.float32)).dtype == tf.float32


def test_compute_average_loss_errors():
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.nn.compute_average_loss(tf.constant(1.0))
    with pytest.raises(TypeError, match="global_batch_size must be an integer"):
        tf.nn.compute_average_loss(tf.constant([1.0]), global_batch_size=2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="global_batch_size must be non-negative"):
        tf.nn.compute_average_loss(tf.constant([1.0]), global_batch_size=-1)
    # TF 2.13+: a global batch size of 0 (an empty batch too) gives 0, not NaN
    assert tf.nn.compute_average_loss(tf.constant([1.0]), global_batch_size=0).numpy() == 0.0
    assert tf.nn.compute_average_loss(tf.zeros([0])).numpy() == 0.0


def test_scale_regularization_loss():
    assert tf.nn.scale_regularization_loss(tf.constant(2.5)).numpy() == pytest.approx(2.5)
    assert tf.nn.scale_regularization_loss([tf.constant(1.0), tf.constant(2.0)]).numpy() == pytest.approx(3.0)
    assert tf.nn.scale_regularization_loss(tf.constant([1.0, 4.0])).numpy() == pytest.approx(5.0)


def test_relu6_crelu_swish():
    x = np.array([-3.0, -0.0, 0.5, 5.9, 6.0, 7.0, np.inf, -np.inf])
    np.testing.assert_array_equal(tf.nn.relu6(tf.constant(x)).numpy(), np.clip(x, 0, 6))
    m = RNG.normal(size=(2, 3))
    np.testing.assert_array_equal(tf.nn.crelu(tf.constant(m)).numpy(),
                                  np.maximum(np.concatenate([m, -m], -1), 0))
    assert tf.nn.crelu(tf.constant(m), axis=0).shape == (4, 3)
    np.testing.assert_allclose(tf.nn.swish(tf.constant(m)).numpy(), m / (1 + np.exp(-m)), rtol=1e-12)
    # relu6's gradient: 1 strictly inside (0, 6), 0 outside
    with tf.GradientTape() as tape:
        v = tf.constant([-1.0, 3.0, 7.0])
        tape.watch(v)
        y = tf.reduce_sum(tf.nn.relu6(v))
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [0.0, 1.0, 0.0])
    check_gradients(lambda a: tf.reduce_sum(tf.nn.crelu(a) * tf.constant(np.arange(12.0).reshape(2, 6))),
                    [tf.constant(m)])


def test_sufficient_statistics_and_normalize_moments():
    x = RNG.normal(size=(4, 3, 2)) + 5
    count, m_ss, v_ss, shift = tf.nn.sufficient_statistics(tf.constant(x), [0, 2])
    assert shift is None and count.numpy() == 8 and count.dtype == tf.float64
    np.testing.assert_allclose(m_ss.numpy(), x.sum(axis=(0, 2)))
    np.testing.assert_allclose(v_ss.numpy(), (x ** 2).sum(axis=(0, 2)))
    mean, var = tf.nn.normalize_moments(count, m_ss, v_ss, None)
    np.testing.assert_allclose(mean.numpy(), x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), x.var(axis=(0, 2)), rtol=1e-9)
    s = tf.constant([5.0, 5.0, 5.0], tf.float64)[None, :, None]
    count, m_ss, v_ss, shift = tf.nn.sufficient_statistics(tf.constant(x), [0, 2], shift=s, keepdims=True)
    assert m_ss.shape == (1, 3, 1)
    mean, var = tf.nn.normalize_moments(count, m_ss, v_ss, shift)
    np.testing.assert_allclose(mean.numpy().ravel(), x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var.numpy().ravel(), x.var(axis=(0, 2)), rtol=1e-9)


def test_weighted_moments():
    x = RNG.normal(size=(5, 3))
    w = RNG.uniform(size=(5, 1))
    mean, var = tf.nn.weighted_moments(tf.constant(x), [0], tf.constant(w))
    ref_mean = (w * x).sum(0) / (w.sum() * np.ones(3))
    ref_var = (w * (x - ref_mean) ** 2).sum(0) / w.sum()
    np.testing.assert_allclose(mean.numpy(), ref_mean, rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), ref_var, rtol=1e-12)
    mean, var = tf.nn.weighted_moments(tf.constant(x), [0], tf.zeros([5, 1], tf.float64), keepdims=True)
    assert mean.shape == (1, 3)
    np.testing.assert_array_equal(mean.numpy(), 0.0)  # all weights 0: 0, not NaN
    m16, _ = tf.nn.weighted_moments(tf.constant(x, tf.float16), [0], tf.constant(w, tf.float16))
    assert m16.dtype == tf.float16


def test_zero_fraction():
    assert tf.nn.zero_fraction(tf.constant([0.0, 1.0, -0.0, 2.0])).numpy() == pytest.approx(0.5)
    z = tf.nn.zero_fraction(tf.constant([[0, 3], [0, 0]]))
    assert z.dtype == tf.float32 and z.numpy() == pytest.approx(0.75)
    assert np.isnan(tf.nn.zero_fraction(tf.zeros([0])).numpy())


def test_batch_normalization_formula_and_gradient():
    x = RNG.normal(size=(4, 3))
    mean, var, off, sc = RNG.normal(size=3), RNG.uniform(0.5, 2, size=3), RNG.normal(size=3), RNG.normal(size=3)
    got = tf.nn.batch_normalization(tf.constant(x), tf.constant(mean), tf.constant(var), tf.constant(off),
                                    tf.constant(sc), 1e-3).numpy()
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3) * sc + off, rtol=1e-12)
    got = tf.nn.batch_normalization(tf.constant(x), tf.constant(mean), tf.constant(var), None, None, 1e-3).numpy()
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-12)
    check_gradients(lambda a, m, v, o, s: tf.reduce_sum(tf.nn.batch_normalization(a, m, v, o, s, 1e-3) ** 2),
                    [tf.constant(x), tf.constant(mean), tf.constant(var), tf.constant(off), tf.constant(sc)])


def test_fused_batch_norm():
    x = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
    scale, offset = RNG.uniform(0.5, 2, size=5).astype(np.float32), RNG.normal(size=5).astype(np.float32)
    y, mean, var = fused_batch_norm(tf.constant(x), tf.constant(scale), tf.constant(offset))
    xd = x.astype(np.float64)
    bm, bv = xd.mean(axis=(0, 1, 2)), xd.var(axis=(0, 1, 2))
    np.testing.assert_allclose(y.numpy(), (xd - bm) / np.sqrt(bv + 1e-3) * scale + offset, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean.numpy(), bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.numpy(), bv * 24 / 23, rtol=1e-5)  # the unbiased variance
    run_mean, run_var = np.zeros(5, np.float32), np.ones(5, np.float32)
    _, m2, v2 = fused_batch_norm(tf.constant(x), tf.constant(scale), tf.constant(offset),
                                       tf.constant(run_mean), tf.constant(run_var), exponential_avg_factor=0.1)
    np.testing.assert_allclose(m2.numpy(), 0.1 * bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v2.numpy(), 0.9 + 0.1 * bv * 24 / 23, rtol=1e-5)
    yi, mi, vi = fused_batch_norm(tf.constant(x), tf.constant(scale), tf.constant(offset),
                                        tf.constant(bm.astype(np.float32)), tf.constant(bv.astype(np.float32)),
                                        epsilon=1e-9, is_training=False)
    # epsilon below 1.001e-5 is raised to it, as TF
    np.testing.assert_allclose(yi.numpy(), (xd - bm) / np.sqrt(bv + 1.001e-5) * scale + offset, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="is_training is False"):
        fused_batch_norm(tf.constant(x), tf.constant(scale), tf.constant(offset), is_training=False)
    with pytest.raises(ValueError, match="not supported"):
        fused_batch_norm(tf.constant(x), tf.constant(scale), tf.constant(offset), data_format="NCHW")
    with pytest.raises(ValueError, match="rank 4 or 5"):
        fused_batch_norm(tf.zeros([3, 5]), tf.constant(scale), tf.constant(offset))


def ref_lrn(x, r, bias, alpha, beta):
    c = x.shape[-1]
    sq = np.zeros_like(x)
    for d in range(c):
        sq[..., d] = (x[..., max(0, d - r):min(c, d + r + 1)] ** 2).sum(-1)
    return x / (bias + alpha * sq) ** beta


def test_local_response_normalization():
    x = RNG.normal(size=(2, 2, 3, 7))
    for r, bias, alpha, beta in ((5, 1.0, 1.0, 0.5), (1, 2.0, 0.1, 0.75), (0, 1.0, 1.0, 1.0)):
        got = tf.nn.local_response_normalization(tf.constant(x), r, bias, alpha, beta).numpy()
        np.testing.assert_allclose(got, ref_lrn(x, r, bias, alpha, beta), rtol=1e-12)
    assert tf.nn.lrn is tf.nn.local_response_normalization
    check_gradients(lambda a: tf.reduce_sum(tf.nn.lrn(a, 2, 1.0, 0.5, 0.75) * tf.constant(x[:1, :1])),
                    [tf.constant(x[:1, :1])])
    with pytest.raises(tf.errors.InvalidArgumentError, match="4-dimensional"):
        tf.nn.lrn(tf.zeros([3, 4]))


def test_top_k_and_in_top_k_are_tf_math_s():
    assert tf.nn.top_k is tf.math.top_k and tf.nn.in_top_k is tf.math.in_top_k
    assert tf.nn.in_top_k(tf.constant([1, 0]), tf.constant([[0.1, 0.9], [0.2, 0.8]]), 1).numpy().tolist() == \
        [True, False]


def test_eager_equals_traced():
    x = tf.constant(RNG.normal(size=(2, 2, 3, 6)).astype(np.float32))
    z = tf.constant(RNG.uniform(size=(2, 2, 3, 6)).astype(np.float32))

    def everything(a, b):
        m, v = tf.nn.weighted_moments(a, [0, 1, 2], b)
        y, bm, bv = fused_batch_norm(a, tf.ones([6]), tf.zeros([6]))
        return [tf.nn.sigmoid_cross_entropy_with_logits(labels=b, logits=a),
                tf.nn.weighted_cross_entropy_with_logits(b, a, 3.0), tf.nn.log_poisson_loss(b * 5, a, True),
                tf.nn.compute_average_loss(tf.reshape(a, [2, -1])), tf.nn.relu6(a * 10), tf.nn.crelu(a),
                m, v, y, bm, bv, tf.nn.lrn(a, 2), tf.nn.zero_fraction(tf.nn.relu(a)),
                tf.nn.batch_normalization(a, m, v, None, None, 1e-3)]

    eager = everything(x, z)
    traced = tf.function(everything)(x, z)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


def test_sparse_softmax_cross_entropy_checks_as_tf():
    logits = RNG.normal(size=(2, 3))
    got = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([2, 0]), tf.constant(logits)).numpy()
    shifted = logits - logits.max(1, keepdims=True)
    ref = np.log(np.exp(shifted).sum(1)) - shifted[[0, 1], [2, 0]]
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    with pytest.raises(tf.errors.InvalidArgumentError, match="label value of 5 which is outside the valid range"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([5, 0]), tf.constant(logits))
    with pytest.raises(ValueError, match="Shape mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([[0], [1]]), tf.constant(logits))


def test_sigmoid_cross_entropy_tf_doc_example():
    # TF's documented example and its printed output
    logits = tf.constant([1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 0.0])
    labels = tf.constant([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5])
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits).numpy()
    np.testing.assert_allclose(got, [1.3132617, 0.3132617, 0.6931472, 0.3132617, 1.3132617, 0.6931472, 0.6931472],
                               rtol=1e-6)
