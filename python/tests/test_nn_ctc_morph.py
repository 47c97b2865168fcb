"""tf.nn.ctc_loss against a brute-force sum over every alignment (float64), its gradient against central
differences, TF's label forms (dense, SparseTensor, batch-major, blank_index); ctc_greedy_decoder,
collapse_repeated, ctc_unique_labels against TF's documented outputs; dilation2d / erosion2d against NumPy
loops; approx_max_k / approx_min_k; batch_norm_with_global_normalization; tf.nn.experimental's dropouts."""
import itertools

import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients

RNG = np.random.default_rng(5)


def brute_ctc(x, labels, frames, blank):
    """-log of the summed probability of every path over `frames` frames that collapses to labels."""
    z = x[:frames] - x[:frames].max(-1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(x.shape[-1]), repeat=frames):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in merged if k != blank] == list(labels):
            total += np.prod([p[t, path[t]] for t in range(frames)])
    return -np.log(total) if total > 0 else np.inf


CASES = [  # labels (padded with 0), label lengths, frame counts
    (np.array([[1, 2, 0], [2, 2, 1], [1, 0, 0]]), np.array([2, 3, 1]), np.array([4, 5, 3])),
    (np.array([[1, 1, 1], [2, 0, 0], [0, 0, 0]]), np.array([3, 1, 0]), np.array([5, 2, 4])),
]


@pytest.mark.parametrize("labels, label_length, frames", CASES)
def test_ctc_loss_against_every_alignment(labels, label_length, frames):
    x = RNG.normal(size=(5, 3, 3)) * 2
    got = tf.nn.ctc_loss(tf.constant(labels), tf.constant(x), tf.constant(label_length), tf.constant(frames))
    ref = [brute_ctc(x[:, b], labels[b, :label_length[b]], frames[b], 0) for b in range(3)]
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10)
    assert got.shape == (3,)


def test_ctc_loss_forms_agree():
    labels, label_length, frames = CASES[0]
    x = RNG.normal(size=(5, 3, 4))
    base = tf.nn.ctc_loss(tf.constant(labels + 1), tf.constant(x), tf.constant(label_length), tf.constant(frames),
                          blank_index=0).numpy()
    # batch-major logits
    np.testing.assert_allclose(tf.nn.ctc_loss(tf.constant(labels + 1), tf.constant(x.transpose(1, 0, 2)),
                                              tf.constant(label_length), tf.constant(frames),
                                              logits_time_major=False).numpy(), base, rtol=1e-12)
    # the blank moved to the last class, labels and logits moved with it
    moved = np.concatenate([x[..., 1:], x[..., :1]], -1)
    np.testing.assert_allclose(tf.nn.ctc_loss(tf.constant(labels), tf.constant(moved), tf.constant(label_length),
                                              tf.constant(frames), blank_index=-1).numpy(), base, rtol=1e-12)
    # a SparseTensor of the same labels
    idx = [[b, i] for b in range(3) for i in range(label_length[b])]
    sp = tf.SparseTensor(idx, tf.constant([labels[b, i] + 1 for b, i in idx], tf.int32), [3, 3])
    np.testing.assert_allclose(tf.nn.ctc_loss(sp, tf.constant(x), None, tf.constant(frames), blank_index=0).numpy(),
                               base, rtol=1e-12)
    with pytest.raises(ValueError, match="`blank_index` must be provided"):
        tf.nn.ctc_loss(sp, tf.constant(x), None, tf.constant(frames))


def test_ctc_loss_impossible_and_extreme():
    x = RNG.normal(size=(2, 1, 3))
    # three labels (two of them equal, needing a blank between) cannot fit in two frames
    got = tf.nn.ctc_loss(tf.constant([[1, 1, 2]]), tf.constant(x), tf.constant([3]), tf.constant([2])).numpy()
    assert got[0] == np.inf
    big = np.array([[[50.0, -50.0, 0.0]], [[-50.0, 60.0, 0.0]]])  # near-certain path blank, 1
    got = tf.nn.ctc_loss(tf.constant([[1]]), tf.constant(big), tf.constant([1]), tf.constant([2])).numpy()
    assert np.isfinite(got).all() and got[0] == pytest.approx(brute_ctc(big[:, 0], [1], 2, 0), rel=1e-9, abs=1e-12)


def test_ctc_loss_gradient():
    labels, label_length, frames = CASES[1]
    x = tf.constant(RNG.normal(size=(5, 3, 3)))
    check_gradients(lambda a: tf.reduce_sum(tf.nn.ctc_loss(tf.constant(labels), a, tf.constant(label_length),
                                                           tf.constant(frames))), [x], rtol=1e-6, atol=1e-8)
    # the frames past a sequence's length get no gradient
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.nn.ctc_loss(tf.constant(labels), x, tf.constant(label_length), tf.constant(frames)))
    grad = tape.gradient(loss, x).numpy()
    assert np.all(grad[2:, 1] == 0) and np.all(np.isfinite(grad))
    # TF's closed form of the gradient: each frame's row sums to zero (softmax minus a distribution)
    np.testing.assert_allclose(grad[:2, 1].sum(-1), 0, atol=1e-12)


def test_ctc_loss_traced_equals_eager():
    labels, label_length, frames = CASES[0]
    x = tf.constant(RNG.normal(size=(5, 3, 3)).astype(np.float32))
    fn = tf.function(lambda a: tf.nn.ctc_loss(tf.constant(labels), a, tf.constant(label_length), tf.constant(frames)))
    np.testing.assert_allclose(fn(x).numpy(), tf.nn.ctc_loss(tf.constant(labels), x, tf.constant(label_length),
                                                             tf.constant(frames)).numpy(), rtol=1e-6)


def test_ctc_greedy_decoder():
    # frames' best classes per sequence: [1, 1, 2, 2(blank), 1] and [0, 2(blank), 0, 0, x]; blank = last class
    best = np.array([[1, 0], [1, 2], [2, 0], [3, 0], [1, 1]])
    x = np.full((5, 2, 4), -1.0)
    for t, b in itertools.product(range(5), range(2)):
        x[t, b, best[t, b]] = 2.0 + t
    x[..., 3] = np.where(best == 3, x[..., 3], -1.0)
    decoded, neg_sum = tf.nn.ctc_greedy_decoder(tf.constant(x), tf.constant([5, 4]), blank_index=3)
    dense = tf.sparse.to_dense(decoded[0]).numpy()
    np.testing.assert_array_equal(dense, [[1, 2, 1], [0, 2, 0]])
    assert decoded[0].values.dtype == tf.int64
    np.testing.assert_allclose(neg_sum.numpy()[:, 0], [-(2 + 3 + 4 + 5 + 6), -(2 + 3 + 4 + 5)])
    decoded, _ = tf.nn.ctc_greedy_decoder(tf.constant(x), tf.constant([5, 4]), merge_repeated=False, blank_index=3)
    np.testing.assert_array_equal(tf.sparse.to_dense(decoded[0]).numpy(), [[1, 1, 2, 1], [0, 2, 0, 0]])
    # the default blank is the last class: classes 2 and 3 swapped, the old 2 is the blank and the old blank is 2
    decoded, _ = tf.nn.ctc_greedy_decoder(tf.constant(x[..., [0, 1, 3, 2]]), tf.constant([5, 4]))
    np.testing.assert_array_equal(tf.sparse.to_dense(decoded[0]).numpy(), [[1, 2, 1], [0, 0, 0]])


def test_collapse_repeated_and_unique_labels():
    labels, lengths = tf.nn.collapse_repeated(tf.constant([[1, 1, 2, 2, 2, 3], [4, 4, 4, 5, 5, 0]]),
                                              tf.constant([6, 4]))
    assert labels.numpy().tolist() == [[1, 2, 3], [4, 5, 0]] and lengths.numpy().tolist() == [3, 2]
    uniq, idx = tf.nn.ctc_unique_labels(tf.constant([[3, 4, 4, 3]]))  # TF's documented example
    assert uniq.numpy().tolist() == [[3, 4, 0, 0]] and idx.numpy().tolist() == [[0, 1, 1, 0]]
    assert uniq.dtype == tf.int64 and idx.dtype == tf.int32


def ref_dilation(x, f, strides, rates, padding):
    n, h, w, c = x.shape
    kh, kw, _ = f.shape
    geo = []
    for size, k, s, r in ((h, kh, strides[0], rates[0]), (w, kw, strides[1], rates[1])):
        eff = (k - 1) * r + 1
        if padding == "VALID":
            geo.append(((size - eff) // s + 1, 0))
        else:
            out = -(-size // s)
            geo.append((out, max((out - 1) * s + eff - size, 0) // 2))
    out = np.full((n, geo[0][0], geo[1][0], c), -np.inf)
    for y, xx, i, j in itertools.product(range(geo[0][0]), range(geo[1][0]), range(kh), range(kw)):
        yy, xj = y * strides[0] + i * rates[0] - geo[0][1], xx * strides[1] + j * rates[1] - geo[1][1]
        if 0 <= yy < h and 0 <= xj < w:
            out[:, y, xx] = np.maximum(out[:, y, xx], x[:, yy, xj] + f[i, j])
    return out


@pytest.mark.parametrize("strides, rates, padding", [((1, 1), (1, 1), "SAME"), ((2, 1), (1, 2), "VALID"),
                                                     ((2, 2), (2, 1), "SAME")])
def test_dilation_and_erosion(strides, rates, padding):
    x, f = RNG.normal(size=(2, 6, 7, 3)), RNG.normal(size=(3, 2, 3))
    got = tf.nn.dilation2d(tf.constant(x), tf.constant(f), [1, *strides, 1], padding, "NHWC", [1, *rates, 1])
    np.testing.assert_allclose(got.numpy(), ref_dilation(x, f, strides, rates, padding), rtol=1e-12)
    eroded = tf.nn.erosion2d(tf.constant(x), tf.constant(f), [1, *strides, 1], padding, "NHWC", [1, *rates, 1])
    np.testing.assert_allclose(eroded.numpy(), -ref_dilation(-x, f[::-1, ::-1], strides, rates, padding), rtol=1e-12)


def test_dilation_gradient_and_errors():
    x, f = tf.constant(RNG.normal(size=(1, 4, 4, 2))), tf.constant(RNG.normal(size=(2, 2, 2)))
    check_gradients(lambda a, b: tf.reduce_sum(tf.nn.dilation2d(a, b, [1, 1, 1, 1], "SAME", "NHWC",
                                                                [1, 1, 1, 1]) ** 2), [x, f])
    with pytest.raises(ValueError, match="not supported"):
        tf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NCHW", [1, 1, 1, 1])
    with pytest.raises(ValueError, match="filters must be 3-D"):
        tf.nn.dilation2d(x, tf.zeros([2, 2, 2, 1], tf.float64), [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])


def test_approx_top_k_is_exact():
    x = RNG.normal(size=(3, 8))
    values, indices = tf.nn.approx_max_k(tf.constant(x), 3)
    np.testing.assert_array_equal(values.numpy(), -np.sort(-x, axis=1)[:, :3])
    np.testing.assert_array_equal(np.take_along_axis(x, indices.numpy(), 1), values.numpy())
    values, indices = tf.nn.approx_min_k(tf.constant(x), 2, reduction_dimension=0)
    np.testing.assert_array_equal(values.numpy(), np.sort(x, axis=0)[:2])
    np.testing.assert_array_equal(np.take_along_axis(x, indices.numpy(), 0), values.numpy())
    assert indices.dtype == tf.int32


def test_batch_norm_with_global_normalization():
    x, m, v = RNG.normal(size=(4, 3)), RNG.normal(size=3), RNG.uniform(0.5, 1.5, size=3)
    beta, gamma = RNG.normal(size=3), RNG.normal(size=3)
    args = [tf.constant(a) for a in (x, m, v, beta, gamma)]
    np.testing.assert_allclose(tf.nn.batch_norm_with_global_normalization(*args, 1e-3, True).numpy(),
                               (x - m) / np.sqrt(v + 1e-3) * gamma + beta, rtol=1e-12)
    np.testing.assert_allclose(tf.nn.batch_norm_with_global_normalization(*args, 1e-3, False).numpy(),
                               (x - m) / np.sqrt(v + 1e-3) + beta, rtol=1e-12)


def test_experimental_dropouts():
    x = tf.ones([200, 50])
    a = tf.nn.experimental.stateless_dropout(x, 0.3, seed=[1, 2]).numpy()
    b = tf.nn.experimental.stateless_dropout(x, 0.3, seed=[1, 2]).numpy()
    c = tf.nn.experimental.stateless_dropout(x, 0.3, seed=[1, 3]).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((a == 0).mean() - 0.3) < 0.03
    fixed = tf.nn.experimental.general_dropout(
        tf.constant([1.0, 2.0, 3.0]), 0.5, lambda shape, dtype: tf.constant([0.1, 0.5, 0.9], dtype))
    np.testing.assert_array_equal(fixed.numpy(), [0.0, 4.0, 6.0])
    rows = tf.nn.experimental.stateless_dropout(x, 0.5, seed=[4, 4], noise_shape=[200, 1]).numpy()
    assert all(len(set(r)) == 1 for r in rows)
    with pytest.raises(ValueError, match="range \\[0, 1\\)"):
        tf.nn.experimental.stateless_dropout(x, 1.0, seed=[1, 2])


def test_host_ops_inside_a_trace():
    x = tf.constant(RNG.normal(size=(5, 2, 4)).astype(np.float32))

    @tf.function
    def decode(a, labels):
        (decoded,), neg = tf.nn.ctc_greedy_decoder(a, tf.constant([5, 3]))
        return decoded.indices, decoded.values, neg, tf.nn.collapse_repeated(labels, tf.constant([3, 2]))[0]

    (eager,), eager_neg = tf.nn.ctc_greedy_decoder(x, tf.constant([5, 3]))
    indices, values, neg, collapsed = decode(x, tf.constant([[1, 1, 2], [3, 3, 3]]))
    np.testing.assert_array_equal(indices.numpy(), eager.indices.numpy())
    np.testing.assert_array_equal(values.numpy(), eager.values.numpy())
    np.testing.assert_allclose(neg.numpy(), eager_neg.numpy())
    assert collapsed.numpy().tolist() == [[1, 2], [3, 0]]


def test_isotonic_regression():
    # TF's documented example
    y, segments = tf.nn.isotonic_regression(tf.constant([[3.0, 1.0, 2.0], [1.0, 3.0, 4.0]]), axis=1)
    np.testing.assert_allclose(y.numpy(), [[3.0, 1.5, 1.5], [8 / 3] * 3], rtol=1e-6)
    assert segments.numpy().tolist() == [[0, 1, 1], [0, 0, 0]] and segments.dtype == tf.int32
    x = RNG.normal(size=(4, 7))
    for decreasing in (True, False):
        y, seg = tf.nn.isotonic_regression(tf.constant(x), decreasing=decreasing, axis=0)
        fit = y.numpy()
        step = np.diff(fit, axis=0)
        assert np.all(step <= 1e-12) if decreasing else np.all(step >= -1e-12)
        for col in range(7):  # each block holds the mean of its inputs
            for k in np.unique(seg.numpy()[:, col]):
                block = seg.numpy()[:, col] == k
                np.testing.assert_allclose(fit[block, col], x[block, col].mean(), rtol=1e-12)
    assert tf.nn.isotonic_regression(tf.constant([[1, 2]]))[0].dtype == tf.float64  # int32 -> float64, as TF
    weights = tf.constant(RNG.normal(size=(4, 7)))
    check_gradients(lambda a: tf.reduce_sum(tf.nn.isotonic_regression(a)[0] * weights), [tf.constant(x)])
    traced = tf.function(lambda a: tf.nn.isotonic_regression(a, axis=0))(tf.constant(x))
    np.testing.assert_allclose(traced[0].numpy(), tf.nn.isotonic_regression(tf.constant(x), axis=0)[0].numpy())


def test_depthwise_backprops_are_the_gradients():
    x, f = tf.constant(RNG.normal(size=(2, 6, 5, 3))), tf.constant(RNG.normal(size=(3, 2, 3, 2)))
    for strides, padding, dilations in (([1, 2, 2, 1], "SAME", [1, 1, 1, 1]), ([1, 1, 1, 1], "VALID", [1, 2, 1, 1])):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, f])
            y = tf.nn.depthwise_conv2d(x, f, strides, padding, dilations=dilations[1:3])
            dy = tf.constant(RNG.normal(size=y.shape))
            total = tf.reduce_sum(y * dy)
        gx, gf = tape.gradient(total, [x, f])
        np.testing.assert_allclose(tf.nn.depthwise_conv2d_backprop_input(
            [2, 6, 5, 3], f, dy, strides, padding, dilations=dilations).numpy(), gx.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tf.nn.depthwise_conv2d_backprop_filter(
            x, [3, 2, 3, 2], dy, strides, padding, dilations=dilations).numpy(), gf.numpy(), rtol=1e-12, atol=1e-12)


def test_space_to_batch():
    # TF's SpaceToBatchND examples: a 2x2 block of a [1, 2, 2, 1] image becomes a batch of 4 pixels
    x = tf.constant([[[[1.0], [2.0]], [[3.0], [4.0]]]])
    assert tf.nn.space_to_batch(x, [2, 2], [[0, 0], [0, 0]]).numpy().ravel().tolist() == [1.0, 2.0, 3.0, 4.0]
    x = np.arange(1, 17, dtype=np.float64).reshape(1, 4, 4, 1)
    got = tf.nn.space_to_batch(tf.constant(x), [2, 2], [[0, 0], [0, 0]]).numpy()
    assert got[..., 0].tolist() == [[[1, 3], [9, 11]], [[2, 4], [10, 12]], [[5, 7], [13, 15]], [[6, 8], [14, 16]]]
    # padding, batch 2, extra channels: the reference by definition
    x = RNG.normal(size=(2, 3, 5, 2))
    got = tf.nn.space_to_batch(tf.constant(x), [2, 3], [[1, 0], [0, 1]]).numpy()
    padded = np.pad(x, [[0, 0], [1, 0], [0, 1], [0, 0]])
    for i, j, b in itertools.product(range(2), range(3), range(2)):
        np.testing.assert_array_equal(got[(i * 3 + j) * 2 + b], padded[b, i::2, j::3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="divisible by block_shape"):
        tf.nn.space_to_batch(tf.constant(x), [2, 2], [[0, 0], [0, 0]])


def test_ctc_beam_search_finds_the_likeliest_labelings():
    x = RNG.normal(size=(4, 2, 3)) * 1.5  # blank = class 2
    lengths = np.array([4, 3])
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(tf.constant(x), tf.constant(lengths), beam_width=50,
                                                       top_paths=3)
    assert len(decoded) == 3 and log_probs.shape == (2, 3)
    for b in range(2):
        # every labeling a path of that many frames can give, with its probability summed over alignments
        labelings = {tuple(k for k in (p[i] for i in range(len(p)) if i == 0 or p[i] != p[i - 1]) if k != 2)
                     for p in itertools.product(range(3), repeat=int(lengths[b]))}
        scored = sorted(((-brute_ctc(x[:, b], lab, lengths[b], 2), lab) for lab in labelings), reverse=True)
        for k in range(3):
            row = decoded[k].indices.numpy()[:, 0] == b
            assert tuple(decoded[k].values.numpy()[row]) == scored[k][1]
            assert log_probs.numpy()[b, k] == pytest.approx(scored[k][0], rel=1e-6)
    # a narrow beam still returns sorted, finite scores
    _, narrow = tf.nn.ctc_beam_search_decoder(tf.constant(x), tf.constant(lengths), beam_width=2, top_paths=2)
    assert np.all(np.diff(narrow.numpy(), axis=1) <= 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="top_paths"):
        tf.nn.ctc_beam_search_decoder(tf.constant(x), tf.constant(lengths), beam_width=2, top_paths=3)
