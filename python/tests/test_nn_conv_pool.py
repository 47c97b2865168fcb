"""tf.nn's 1-D and 3-D convolutions (and transposes), the N-D dispatchers, separable and atrous convolutions,
depth_to_space / space_to_depth, the 1-D / 3-D / N-D poolings and max_pool_with_argmax against direct NumPy
float64 loops; gradients against central differences; transposes as the adjoints of the convolutions; TF's
errors; eager = traced."""
import itertools

import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients

RNG = np.random.default_rng(11)


def geometry(size, k, stride, rate, padding):
    eff = (k - 1) * rate + 1
    if padding == "VALID":
        return max(0, (size - eff) // stride + 1), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + eff - size, 0) // 2


def ref_conv(x, f, strides, padding, dilations):
    """N-D correlation: x [n, *spatial, c], f [*window, c, o]."""
    nd = x.ndim - 2
    geo = [geometry(x.shape[1 + i], f.shape[i], strides[i], dilations[i], padding) for i in range(nd)]
    out = np.zeros((x.shape[0], *[g[0] for g in geo], f.shape[-1]))
    for pos in itertools.product(*[range(g[0]) for g in geo]):
        for tap in itertools.product(*[range(k) for k in f.shape[:nd]]):
            src = [pos[i] * strides[i] + tap[i] * dilations[i] - geo[i][1] for i in range(nd)]
            if all(0 <= s < x.shape[1 + i] for i, s in enumerate(src)):
                out[(slice(None), *pos)] += x[(slice(None), *src)] @ f[tap]
    return out


def ref_pool(x, k, strides, padding, is_max):
    nd = x.ndim - 2
    geo = [geometry(x.shape[1 + i], k[i], strides[i], 1, padding) for i in range(nd)]
    out = np.zeros((x.shape[0], *[g[0] for g in geo], x.shape[-1]))
    for pos in itertools.product(*[range(g[0]) for g in geo]):
        vals = []
        for tap in itertools.product(*[range(w) for w in k]):
            src = [pos[i] * strides[i] + tap[i] - geo[i][1] for i in range(nd)]
            if all(0 <= s < x.shape[1 + i] for i, s in enumerate(src)):
                vals.append(x[(slice(None), *src)])
        out[(slice(None), *pos)] = np.max(vals, 0) if is_max else np.mean(vals, 0)
    return out


@pytest.mark.parametrize("width, k, stride, padding, dilation", [
    (9, 3, 1, "SAME", 1), (10, 4, 3, "VALID", 1), (8, 3, 2, "SAME", 1), (11, 3, 1, "VALID", 2)])
def test_conv1d(width, k, stride, padding, dilation):
    x, f = RNG.normal(size=(2, width, 3)), RNG.normal(size=(k, 3, 4))
    got = tf.nn.conv1d(tf.constant(x), tf.constant(f), stride, padding, dilations=dilation).numpy()
    np.testing.assert_allclose(got, ref_conv(x, f, [stride], padding, [dilation]), rtol=1e-10, atol=1e-12)
    # TF's list forms of stride: [s] and [1, s, 1]
    np.testing.assert_allclose(tf.nn.conv1d(tf.constant(x), tf.constant(f), [1, stride, 1], padding,
                                            dilations=[dilation]).numpy(), got)


def test_conv1d_extra_batch_dims_and_gradient():
    x, f = RNG.normal(size=(2, 3, 7, 2)), RNG.normal(size=(3, 2, 2))
    got = tf.nn.conv1d(tf.constant(x), tf.constant(f), 1, "SAME").numpy()
    assert got.shape == (2, 3, 7, 2)
    np.testing.assert_allclose(got[1], ref_conv(x[1], f, [1], "SAME", [1]), rtol=1e-10, atol=1e-12)
    check_gradients(lambda a, b: tf.reduce_sum(tf.nn.conv1d(a, b, 2, "SAME") ** 2),
                    [tf.constant(x[0]), tf.constant(f)], rtol=1e-5, atol=1e-6)


def adjoint_check(forward, transpose, x_shape, y_shape):
    """<forward(x), y> == <x, transpose(y)>: a transpose convolution is the adjoint of its convolution."""
    x, y = RNG.normal(size=x_shape), RNG.normal(size=y_shape)
    lhs = np.sum(forward(tf.constant(x)).numpy() * y)
    rhs = np.sum(x * transpose(tf.constant(y)).numpy())
    assert lhs == pytest.approx(rhs, rel=1e-10)


@pytest.mark.parametrize("stride, padding", [(2, "SAME"), (3, "VALID"), (1, "SAME")])
def test_conv1d_transpose_is_adjoint(stride, padding):
    f = tf.constant(RNG.normal(size=(4, 3, 5)))  # [width, out=3, in=5] for the transpose
    out_w = geometry(12, 4, stride, 1, padding)[0]
    adjoint_check(lambda x: tf.nn.conv1d(x, f, stride, padding),
                  lambda y: tf.nn.conv1d_transpose(y, f, [2, 12, 3], stride, padding), (2, 12, 3), (2, out_w, 5))


@pytest.mark.parametrize("shape, kernel, strides, padding, dilations", [
    ((2, 5, 6, 4, 2), (3, 3, 2), (1, 1, 1), "SAME", (1, 1, 1)),
    ((1, 7, 5, 5, 3), (2, 3, 3), (2, 2, 1), "VALID", (1, 1, 1)),
    ((1, 6, 6, 6, 2), (3, 2, 3), (2, 1, 2), "SAME", (1, 1, 1)),
    ((1, 7, 5, 6, 1), (2, 2, 2), (1, 1, 1), "VALID", (2, 1, 2)),
])
def test_conv3d(shape, kernel, strides, padding, dilations):
    x, f = RNG.normal(size=shape), RNG.normal(size=(*kernel, shape[-1], 3))
    got = tf.nn.conv3d(tf.constant(x), tf.constant(f), [1, *strides, 1], padding, dilations=[1, *dilations, 1])
    np.testing.assert_allclose(got.numpy(), ref_conv(x, f, strides, padding, dilations), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tf.nn.convolution(tf.constant(x), tf.constant(f), strides, padding,
                                                 dilations=dilations).numpy(), got.numpy())


def test_conv3d_gradient_and_transpose():
    x, f = tf.constant(RNG.normal(size=(1, 4, 3, 3, 2))), tf.constant(RNG.normal(size=(2, 2, 2, 2, 2)))
    check_gradients(lambda a, b: tf.reduce_sum(tf.nn.conv3d(a, b, [1, 2, 1, 2, 1], "SAME") ** 2), [x, f],
                    rtol=1e-5, atol=1e-6)
    for strides, padding in (((2, 2, 2), "SAME"), ((1, 2, 1), "VALID"), ((3, 1, 2), "SAME")):
        ft = tf.constant(RNG.normal(size=(3, 2, 3, 2, 4)))  # [d, h, w, out=2, in=4]
        out = [geometry(n, k, s, 1, padding)[0] for n, k, s in zip((6, 5, 7), (3, 2, 3), strides)]
        adjoint_check(lambda a: tf.nn.conv3d(a, ft, [1, *strides, 1], padding),
                      lambda b: tf.nn.conv3d_transpose(b, ft, [2, 6, 5, 7, 2], [1, *strides, 1], padding),
                      (2, 6, 5, 7, 2), (2, *out, 4))
    y = tf.constant(RNG.normal(size=(1, 2, 2, 2, 3)))
    ft = tf.constant(RNG.normal(size=(2, 2, 2, 2, 3)))
    check_gradients(lambda a, b: tf.reduce_sum(tf.nn.conv3d_transpose(a, b, [1, 4, 4, 4, 2], 2, "SAME") ** 2),
                    [y, ft], rtol=1e-5, atol=1e-6)


def test_separable_and_atrous():
    x = RNG.normal(size=(1, 6, 7, 3))
    dw, pw = RNG.normal(size=(3, 3, 3, 2)), RNG.normal(size=(1, 1, 6, 4))
    depth = np.zeros((1, 6, 7, 6))
    for c in range(3):
        for m in range(2):
            one = ref_conv(x[..., c:c + 1], dw[:, :, c:c + 1, m:m + 1], [1, 1], "SAME", [1, 1])
            depth[..., c * 2 + m] = one[..., 0]
    got = tf.nn.separable_conv2d(tf.constant(x), tf.constant(dw), tf.constant(pw), [1, 1, 1, 1], "SAME").numpy()
    np.testing.assert_allclose(got, depth @ pw[0, 0], rtol=1e-10, atol=1e-12)
    f = RNG.normal(size=(2, 3, 3, 2))
    np.testing.assert_allclose(tf.nn.atrous_conv2d(tf.constant(x), tf.constant(f), 2, "VALID").numpy(),
                               ref_conv(x, f, [1, 1], "VALID", [2, 2]), rtol=1e-10, atol=1e-12)
    ft = tf.constant(RNG.normal(size=(3, 3, 2, 3)))
    adjoint_check(lambda a: tf.nn.atrous_conv2d(a, ft, 2, "SAME"),
                  lambda b: tf.nn.atrous_conv2d_transpose(b, ft, [1, 6, 7, 2], 2, "SAME"), (1, 6, 7, 2), (1, 6, 7, 3))
    with pytest.raises(ValueError, match="rate 0 cannot be less than one"):
        tf.nn.atrous_conv2d(tf.constant(x), tf.constant(f), 0, "SAME")


def test_depth_to_space_and_back():
    x = RNG.normal(size=(2, 2, 3, 12))
    got = tf.nn.depth_to_space(tf.constant(x), 2).numpy()
    ref = np.zeros((2, 4, 6, 3))
    for h, w, i, j in itertools.product(range(2), range(3), range(2), range(2)):
        ref[:, h * 2 + i, w * 2 + j, :] = x[:, h, w, (i * 2 + j) * 3:(i * 2 + j + 1) * 3]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(tf.nn.space_to_depth(tf.constant(got), 2).numpy(), x)
    check_gradients(lambda a: tf.reduce_sum(tf.nn.depth_to_space(a, 2) * tf.constant(ref)), [tf.constant(x)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="divisible by: 4"):
        tf.nn.depth_to_space(tf.zeros([1, 2, 2, 6]), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be divisible by block_size: 2"):
        tf.nn.space_to_depth(tf.zeros([1, 3, 4, 1]), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be at least minimum 2"):
        tf.nn.space_to_depth(tf.zeros([1, 4, 4, 1]), 1)


@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("k, s, padding", [(2, 2, "VALID"), (3, 2, "SAME"), (3, 1, "SAME"), (2, 3, "SAME")])
def test_pool_1d_and_3d(is_max, k, s, padding):
    x1 = RNG.normal(size=(2, 9, 3))
    f1 = tf.nn.max_pool1d if is_max else tf.nn.avg_pool1d
    np.testing.assert_allclose(f1(tf.constant(x1), k, s, padding).numpy(), ref_pool(x1, [k], [s], padding, is_max),
                               rtol=1e-12)
    x3 = RNG.normal(size=(2, 5, 4, 6, 2))
    f3 = tf.nn.max_pool3d if is_max else tf.nn.avg_pool3d
    ref3 = ref_pool(x3, [k, 2, k], [s, 1, s], padding, is_max)
    np.testing.assert_allclose(f3(tf.constant(x3), [1, k, 2, k, 1], [1, s, 1, s, 1], padding).numpy(), ref3, rtol=1e-12)
    # the N-D dispatchers and pool() give the same
    nd = tf.nn.max_pool if is_max else tf.nn.avg_pool
    np.testing.assert_allclose(nd(tf.constant(x3), [k, 2, k], [s, 1, s], padding).numpy(), ref3, rtol=1e-12)
    if s <= k:  # TF's pool refuses strides longer than the window
        np.testing.assert_allclose(tf.nn.pool(tf.constant(x1), [k], "MAX" if is_max else "AVG", [s],
                                              padding).numpy(), ref_pool(x1, [k], [s], padding, is_max), rtol=1e-12)


def test_pool_gradients_and_errors():
    x = tf.constant(RNG.normal(size=(1, 4, 3, 5, 2)))
    check_gradients(lambda a: tf.reduce_sum(tf.nn.avg_pool3d(a, 3, 2, "SAME") ** 2), [x], rtol=1e-5, atol=1e-6)
    check_gradients(lambda a: tf.reduce_sum(tf.nn.max_pool3d(a, 2, 2, "SAME") ** 2), [x], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="must be 3, 4 or 5"):
        tf.nn.max_pool(tf.zeros([2, 3]), 2, 2, "VALID")
    with pytest.raises(ValueError, match="not supported"):
        tf.nn.max_pool1d(tf.zeros([1, 4, 2]), 2, 2, "VALID", data_format="NCW")
    with pytest.raises(ValueError, match="not supported"):
        tf.nn.conv3d(tf.zeros([1, 2, 4, 4, 4]), tf.zeros([1, 1, 1, 2, 1]), 1, "VALID", data_format="NCDHW")
    with pytest.raises(ValueError, match="Invalid pooling_type"):
        tf.nn.pool(tf.zeros([1, 4, 2]), [2], "MIN")
    with pytest.raises(ValueError, match="padding must be 'SAME' or 'VALID'"):
        tf.nn.conv1d(tf.zeros([1, 4, 2]), tf.zeros([2, 2, 1]), 1, "CAUSAL")


def test_max_pool_with_argmax():
    x = RNG.normal(size=(2, 5, 4, 3))
    x[0, 0, 0, 0] = x[0, 0, 1, 0] = 10.0  # a tie: the first in row-major order wins
    for padding, k, s in (("VALID", 2, 2), ("SAME", 3, 2)):
        for with_batch in (False, True):
            out, arg = tf.nn.max_pool_with_argmax(tf.constant(x), k, s, padding, include_batch_in_index=with_batch)
            np.testing.assert_array_equal(out.numpy(), ref_pool(x, [k, k], [s, s], padding, True))
            flat = x.reshape(-1) if with_batch else x.reshape(2, -1)
            picked = flat[arg.numpy()] if with_batch else np.stack([flat[b][arg.numpy()[b]] for b in range(2)])
            np.testing.assert_array_equal(picked, out.numpy())
            assert arg.dtype == tf.int64
    _, arg = tf.nn.max_pool_with_argmax(tf.constant(x), 2, 2, "VALID")
    assert arg.numpy()[0, 0, 0, 0] == 0


def test_eager_equals_traced():
    x3 = tf.constant(RNG.normal(size=(1, 5, 4, 4, 2)).astype(np.float32))
    f3 = tf.constant(RNG.normal(size=(2, 2, 2, 2, 3)).astype(np.float32))
    x1 = tf.constant(RNG.normal(size=(2, 8, 2)).astype(np.float32))
    f1 = tf.constant(RNG.normal(size=(3, 2, 4)).astype(np.float32))

    def everything(a3, b3, a1, b1):
        y3 = tf.nn.conv3d(a3, b3, [1, 2, 1, 2, 1], "SAME")
        return [y3, tf.nn.conv3d_transpose(y3, b3, [1, 5, 4, 4, 2], [1, 2, 1, 2, 1], "SAME"),
                tf.nn.conv1d(a1, b1, 2, "SAME"), tf.nn.conv1d_transpose(tf.nn.conv1d(a1, b1, 2, "SAME"), b1,
                                                                        [2, 8, 2], 2),
                tf.nn.max_pool3d(a3, 2, 2, "SAME"), tf.nn.avg_pool3d(a3, 3, 2, "SAME"),
                tf.nn.avg_pool1d(a1, 3, 1, "SAME"),
                tf.nn.depth_to_space(tf.reshape(a3, [1, 5, 4, 8]), 2), tf.nn.max_pool_with_argmax(
                    tf.reshape(a3, [1, 5, 4, 8]), 2, 2, "SAME").argmax]

    eager = everything(x3, f3, x1, f1)
    traced = tf.function(everything)(x3, f3, x1, f1)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def ref_dilated_pool(x, k, rates, padding, is_max):
    """Stride-1 pooling of taps `rates` apart; "SAME" pads with zeros that count, as TF's space-to-batch form."""
    nd = x.ndim - 2
    pads = [((k[i] - 1) * rates[i] // 2, (k[i] - 1) * rates[i] - (k[i] - 1) * rates[i] // 2) if padding == "SAME"
            else (0, 0) for i in range(nd)]
    xp = np.pad(x, [(0, 0), *pads, (0, 0)])
    outs = [xp.shape[1 + i] - (k[i] - 1) * rates[i] for i in range(nd)]
    out = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for pos in itertools.product(*[range(o) for o in outs]):
        vals = [xp[(slice(None), *[pos[i] + tap[i] * rates[i] for i in range(nd)])]
                for tap in itertools.product(*[range(w) for w in k])]
        out[(slice(None), *pos)] = np.max(vals, 0) if is_max else np.mean(vals, 0)
    return out


@pytest.mark.parametrize("pooling_type", ["MAX", "AVG"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_dilated_pool(pooling_type, padding):
    x2 = RNG.normal(size=(2, 7, 8, 2))
    got = tf.nn.pool(tf.constant(x2), [3, 2], pooling_type, padding=padding, dilations=[2, 3]).numpy()
    np.testing.assert_allclose(got, ref_dilated_pool(x2, [3, 2], [2, 3], padding, pooling_type == "MAX"),
                               rtol=1e-12)
    x1 = RNG.normal(size=(2, 9, 3))
    got = tf.nn.pool(tf.constant(x1), [2], pooling_type, padding=padding, dilations=[3]).numpy()
    np.testing.assert_allclose(got, ref_dilated_pool(x1, [2], [3], padding, pooling_type == "MAX"), rtol=1e-12)
    with pytest.raises(ValueError, match="strides > 1 not supported in conjunction with dilation_rate > 1"):
        tf.nn.pool(tf.constant(x1), [2], pooling_type, strides=[2], dilations=[2])
    with pytest.raises(ValueError, match="strides > window_shape"):
        tf.nn.pool(tf.constant(x1), [2], pooling_type, strides=[3])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_with_space_to_batch_is_a_dilated_op(padding):
    # TF's docs: a convolution run through with_space_to_batch is the atrous convolution
    x, f = RNG.normal(size=(2, 9, 7, 2)), RNG.normal(size=(3, 2, 2, 3))

    def conv(v, num_spatial_dims, pad):
        assert num_spatial_dims == 2
        return tf.nn.conv2d(v, tf.constant(f), 1, pad)

    got = tf.nn.with_space_to_batch(tf.constant(x), [2, 3], padding, conv, filter_shape=[3, 2])
    np.testing.assert_allclose(got.numpy(), ref_conv(x, f, [1, 1], padding, [2, 3]), rtol=1e-10, atol=1e-12)
    # rate 1 calls the op as it is
    plain = tf.nn.with_space_to_batch(tf.constant(x), [1, 1], padding, conv, filter_shape=[3, 2])
    np.testing.assert_allclose(plain.numpy(), ref_conv(x, f, [1, 1], padding, [1, 1]), rtol=1e-10, atol=1e-12)
    x1, f1 = RNG.normal(size=(1, 11, 2)), RNG.normal(size=(3, 2, 1))
    got = tf.nn.with_space_to_batch(tf.constant(x1), [4], padding,
                                    lambda v, n, pad: tf.nn.conv1d(v, tf.constant(f1), 1, pad), filter_shape=[3])
    np.testing.assert_allclose(got.numpy(), ref_conv(x1, f1, [1], padding, [4]), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="filter_shape must be specified"):
        tf.nn.with_space_to_batch(tf.constant(x), [2, 2], "SAME", conv)


def ref_fractional(x, rows, cols, overlapping, is_max):
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]))
    for i, j in itertools.product(range(len(rows) - 1), range(len(cols) - 1)):
        r_end = min(rows[i + 1] + (1 if overlapping else 0), x.shape[1])
        c_end = min(cols[j + 1] + (1 if overlapping else 0), x.shape[2])
        region = x[:, rows[i]:r_end, cols[j]:c_end]
        out[:, i, j] = region.max(axis=(1, 2)) if is_max else region.mean(axis=(1, 2))
    return out


@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("pseudo_random, overlapping", [(False, False), (True, False), (False, True), (True, True)])
def test_fractional_pool(is_max, pseudo_random, overlapping):
    x = RNG.normal(size=(2, 10, 13, 3))
    fn = tf.nn.fractional_max_pool if is_max else tf.nn.fractional_avg_pool
    out, rows, cols = fn(tf.constant(x), [1.0, 1.4, 1.7, 1.0], pseudo_random=pseudo_random, overlapping=overlapping,
                         seed=7)
    rows, cols = rows.numpy(), cols.numpy()
    assert out.shape == (2, 7, 7, 3) and rows.dtype == np.int64
    assert rows[0] == 0 and rows[-1] == 10 and cols[0] == 0 and cols[-1] == 13
    assert np.all(np.diff(rows) >= 1) and np.all(np.diff(cols) >= 1)
    if not pseudo_random:  # steps of floor or ceil of in / out
        assert set(np.diff(rows)) <= {1, 2} and set(np.diff(cols)) <= {1, 2}
    np.testing.assert_allclose(out.numpy(), ref_fractional(x, rows, cols, overlapping, is_max), rtol=1e-12,
                               atol=1e-15)


def test_fractional_pool_seeds_gradient_and_errors():
    x = tf.constant(RNG.normal(size=(1, 9, 9, 1)))
    first = tf.nn.fractional_avg_pool(x, 1.5, seed=5)
    again = tf.nn.fractional_avg_pool(x, 1.5, seed=5)
    np.testing.assert_array_equal(first.row_pooling_sequence.numpy(), again.row_pooling_sequence.numpy())
    check_gradients(lambda a: tf.reduce_sum(tf.nn.fractional_avg_pool(a, 1.5, overlapping=True, seed=5)[0] ** 2),
                    [x])
    check_gradients(lambda a: tf.reduce_sum(tf.nn.fractional_max_pool(a, [1.0, 2.0, 1.5, 1.0], seed=9)[0] ** 2),
                    [x])
    with pytest.raises(tf.errors.UnimplementedError, match="batch nor channel"):
        tf.nn.fractional_max_pool(x, [2.0, 1.5, 1.5, 1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="outputsize must be positive"):
        tf.nn.fractional_max_pool(x, 10.0)


def test_run_time_batch_in_a_trace():
    f = tf.constant(RNG.normal(size=(3, 2, 2, 2, 4)).astype(np.float32))
    f1 = tf.constant(RNG.normal(size=(3, 2, 8)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 5, 4, 4, 2], tf.float32)])
    def run(x):
        y = tf.nn.conv3d(x, f, [1, 2, 1, 1, 1], "SAME")
        flat = tf.reshape(x, [-1, 20, 8])
        return (y, tf.nn.conv3d_transpose(y, f, [tf.shape(x)[0], 5, 4, 4, 2], [1, 2, 1, 1, 1], "SAME"),
                tf.nn.max_pool3d(x, 2, 2, "SAME"), tf.nn.conv1d_transpose(flat, f1, [tf.shape(x)[0], 40, 2], 2))

    x = RNG.normal(size=(3, 5, 4, 4, 2)).astype(np.float32)
    y, back, pooled, wide = run(x)
    np.testing.assert_allclose(y.numpy(), tf.nn.conv3d(x, f, [1, 2, 1, 1, 1], "SAME").numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(back.numpy(), tf.nn.conv3d_transpose(y, f, [3, 5, 4, 4, 2], [1, 2, 1, 1, 1],
                                                                    "SAME").numpy(), rtol=1e-5, atol=1e-5)
    assert pooled.shape == (3, 3, 2, 2, 2) and wide.shape == (3, 40, 2)


def test_conv2d_explicit_padding_and_stride_forms():
    x, f = RNG.normal(size=(1, 5, 6, 2)), RNG.normal(size=(3, 2, 2, 3))
    pads = [[0, 0], [2, 1], [0, 3], [0, 0]]
    padded = np.pad(x, pads)
    got = tf.nn.conv2d(tf.constant(x), tf.constant(f), [1, 2, 1, 1], pads).numpy()
    np.testing.assert_allclose(got, ref_conv(padded, f, [2, 1], "VALID", [1, 1]), rtol=1e-10, atol=1e-12)
    fd = RNG.normal(size=(2, 2, 2, 2))
    got = tf.nn.depthwise_conv2d(tf.constant(x), tf.constant(fd), [1, 1, 1, 1], pads).numpy()
    assert got.shape == (1, 7, 8, 4)
    np.testing.assert_allclose(got, tf.nn.depthwise_conv2d(tf.constant(padded), tf.constant(fd), [1, 1, 1, 1],
                                                           "VALID").numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="explicit padding must be"):
        tf.nn.conv2d(tf.constant(x), tf.constant(f), 1, [[1, 0], [0, 0], [0, 0], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch and depth dimensions must be 1"):
        tf.nn.conv2d(tf.constant(x), tf.constant(f), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="not supported"):
        tf.nn.conv2d(tf.constant(x), tf.constant(f), 1, "SAME", data_format="NCHW")


def test_bias_add_formats():
    np.testing.assert_array_equal(tf.nn.bias_add(tf.ones([2, 3]), tf.constant([1.0, 2.0, 3.0]),
                                                 data_format="N...C").numpy(), [[2, 3, 4]] * 2)
    with pytest.raises(ValueError, match="not supported"):
        tf.nn.bias_add(tf.ones([2, 3, 4, 5]), tf.ones([3]), data_format="NCHW")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.bias_add(tf.ones([2, 3]), tf.ones([2]))


def test_max_pools_take_explicit_padding():
    x2 = RNG.normal(size=(1, 5, 4, 2))
    pads = [[0, 0], [1, 1], [0, 1], [0, 0]]  # every window holds a pixel (the engine's empty max is not -inf)
    got = tf.nn.max_pool2d(tf.constant(x2), 2, 2, pads).numpy()
    np.testing.assert_array_equal(got, ref_pool(np.pad(x2, pads, constant_values=-np.inf), [2, 2], [2, 2], "VALID",
                                                True))
    x1 = RNG.normal(size=(2, 7, 3))
    got = tf.nn.max_pool1d(tf.constant(x1), 3, 2, [[0, 0], [2, 0], [0, 0]]).numpy()
    np.testing.assert_array_equal(got, ref_pool(np.pad(x1, [[0, 0], [2, 0], [0, 0]], constant_values=-np.inf), [3],
                                                [2], "VALID", True))
    x3 = RNG.normal(size=(1, 3, 4, 4, 1))
    pads3 = [[0, 0], [1, 0], [0, 0], [1, 1], [0, 0]]
    np.testing.assert_array_equal(tf.nn.max_pool3d(tf.constant(x3), 2, 2, pads3).numpy(),
                                  ref_pool(np.pad(x3, pads3, constant_values=-np.inf), [2, 2, 2], [2, 2, 2], "VALID",
                                           True))
    with pytest.raises(ValueError, match="padding must be 'SAME' or 'VALID'"):
        tf.nn.avg_pool2d(tf.constant(x2), 2, 2, pads)  # as TF: explicit padding is the max poolings' only
