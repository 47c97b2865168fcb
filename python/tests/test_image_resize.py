"""tf.image.resize and the ResizeImage op: every method against NumPy float64 references of TF's sampling rules
(half-pixel centers, ResizeArea's box average, ScaleAndTranslate's kernels), TF's documented values, dtype rules,
preserve_aspect_ratio, resize_with_pad, and gradients against central differences."""
import math

import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients

# ---- NumPy references: a [out, in] weight matrix per axis -------------------------------------------------------


def _keys(t):
    t = abs(t)
    if t >= 2:
        return 0.0
    if t >= 1:
        return -0.5 * t ** 3 + 2.5 * t ** 2 - 4 * t + 2
    return 1.5 * t ** 3 - 2.5 * t ** 2 + 1


_KERNELS = {
    "bilinear": (1.0, lambda x: max(0.0, 1 - x)),
    "bicubic": (2.0, _keys),
    "lanczos3": (3.0, lambda x: 1.0 if x <= 1e-3 else (0.0 if x > 3 else
                 3 * math.sin(math.pi * x) * math.sin(math.pi * x / 3) / (math.pi * x) ** 2)),
    "lanczos5": (5.0, lambda x: 1.0 if x <= 1e-3 else (0.0 if x > 5 else
                 5 * math.sin(math.pi * x) * math.sin(math.pi * x / 5) / (math.pi * x) ** 2)),
    "gaussian": (1.5, lambda x: math.exp(-2 * x * x) if x < 1.5 else 0.0),
    "mitchellcubic": (2.0, lambda x: 0.0 if x >= 2 else (
        (-7 / 18) * x ** 3 + 2 * x ** 2 - 10 / 3 * x + 16 / 9 if x >= 1 else 7 / 6 * x ** 3 - 2 * x ** 2 + 8 / 9)),
}


def _weights(n_in, n_out, method, antialias):
    w = np.zeros((n_out, n_in))
    scale = n_in / n_out
    for o in range(n_out):
        if method == "nearest":
            w[o, min(int(math.floor((o + 0.5) * scale)), n_in - 1)] = 1
        elif method == "area":
            a, b = o * scale, (o + 1) * scale
            for i in range(int(math.floor(a)), int(math.ceil(b))):
                w[o, min(i, n_in - 1)] += (min(i + 1, b) - max(i, a)) / scale
        elif method == "bilinear" and not antialias:
            f = (o + 0.5) * scale - 0.5
            lo = math.floor(f)
            w[o, max(lo, 0)] += 1 - (f - lo)
            w[o, min(lo + 1, n_in - 1)] += f - lo
        elif method == "bicubic" and not antialias:
            f = (o + 0.5) * scale - 0.5
            lo = math.floor(f)
            taps = {i: _keys(f - i) for i in range(lo - 1, lo + 3) if 0 <= i < n_in}
            total = sum(taps.values())
            for i, v in taps.items():
                w[o, i] = v / total
        else:
            radius, kernel = _KERNELS[method]
            stretch = max(scale, 1.0) if antialias else 1.0
            centre = (o + 0.5) * scale
            taps = {i: kernel(abs(i + 0.5 - centre) / stretch) for i in range(n_in)
                    if abs(i + 0.5 - centre) <= radius * stretch}
            total = sum(taps.values())
            for i, v in taps.items():
                w[o, i] = v / total
    return w


def _reference(x, size, method, antialias=False):
    wy = _weights(x.shape[1], size[0], method, antialias)
    wx = _weights(x.shape[2], size[1], method, antialias)
    return np.einsum("ph,nhwc,qw->npqc", wy, x.astype(np.float64), wx)


_METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]
_SIZES = [(3, 7), (9, 2), (5, 5), (12, 13)]


@pytest.mark.parametrize("method", _METHODS)
@pytest.mark.parametrize("antialias", [False, True])
def test_every_method_matches_the_numpy_reference(method, antialias):
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 6, 5, 3)).astype(np.float32)
    for size in _SIZES:
        got = tf.image.resize(x, size, method=method, antialias=antialias)
        expect = _reference(x, size, method, antialias and method not in ("nearest", "area"))
        assert got.dtype == tf.float32 and got.shape == (2, *size, 3)
        # bicubic reads TF's 1024-step kernel table: its weights are within ~1e-3 of the exact kernel's.
        tol = 2e-3 if method == "bicubic" and not antialias else 2e-5
        np.testing.assert_allclose(got.numpy(), expect, atol=tol, err_msg=f"{method} {size}")


def test_tf_documented_values():
    image = tf.constant([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]])
    image = image[tf.newaxis, ..., tf.newaxis]
    out = tf.image.resize(image, [3, 5])[0, ..., 0].numpy()
    np.testing.assert_allclose(out, [[0.6666667, 0.3333333, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0.3333335, 0.6666665]],
                               atol=1e-6)
    assert tf.image.resize(image[0], [3, 5]).shape.as_list() == [3, 5, 1]
    # antialias has no effect when upsampling
    a = tf.image.resize(image, [5, 10])
    b = tf.image.resize(image, [5, 10], antialias=True)
    assert float(tf.reduce_max(abs(a - b))) == 0.0
    # preserve_aspect_ratio: the docs' 100x100 to [10, 20] (fits in 10x10) and 3-D [10, 20] to [20, 20]
    assert tf.image.resize(tf.zeros([1, 100, 100, 1]), [10, 20], preserve_aspect_ratio=True).shape == (1, 10, 10, 1)
    assert tf.image.resize(tf.zeros([10, 20, 1]), [20, 20], preserve_aspect_ratio=True).shape == (10, 20, 1)


def test_dtypes_follow_tf():
    u8 = tf.constant(np.arange(24, dtype=np.uint8).reshape(2, 4, 3))
    near = tf.image.resize(u8, [4, 6], method="nearest")
    assert near.dtype == tf.uint8
    np.testing.assert_array_equal(near.numpy()[..., 0], u8.numpy()[[0, 0, 1, 1]][:, [0, 1, 1, 2, 3, 3]][..., 0])
    assert tf.image.resize(u8, [4, 6]).dtype == tf.float32
    assert tf.image.resize(tf.zeros([4, 4, 1], tf.float64), [2, 2]).dtype == tf.float32
    assert tf.image.resize(tf.zeros([4, 4, 1], tf.int32), [2, 2], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR).dtype \
        == tf.int32
    # same size still resizes (to float32), as TF 2's resize
    assert tf.image.resize(u8, [2, 4]).dtype == tf.float32


def test_bad_arguments():
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.resize(tf.zeros([4, 4]), [2, 2])
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        tf.image.resize(tf.zeros([4, 4, 1]), [2, 2, 2])
    with pytest.raises(ValueError, match="not implemented"):
        tf.image.resize(tf.zeros([4, 4, 1]), [2, 2], method="cubic")
    with pytest.raises(tf.errors.InvalidArgumentError, match="positive"):
        tf.image.resize(tf.zeros([4, 4, 1]), [0, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-zero size"):
        tf.image.resize(tf.zeros([1, 0, 4, 1]), [2, 2])


def test_resize_traces_and_matches_eager():
    x = np.random.default_rng(1).uniform(0, 1, (1, 7, 5, 2)).astype(np.float32)
    for method in _METHODS:
        f = tf.function(lambda t, m=method: tf.image.resize(t, [4, 9], method=m, antialias=True))
        np.testing.assert_allclose(f(x).numpy(), tf.image.resize(x, [4, 9], method=method, antialias=True).numpy(),
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "area", "lanczos3"])
@pytest.mark.parametrize("size", [(3, 2), (7, 9)])
def test_gradients_against_central_differences(method, size):
    x = tf.constant(np.random.default_rng(3).uniform(-1, 1, (1, 5, 4, 2)))
    weights = tf.constant(np.random.default_rng(4).uniform(-1, 1, (1, *size, 2)))

    def loss(t):
        return tf.reduce_sum(tf._C.resize_image(t, list(size), method, True) * weights)
    check_gradients(loss, [x], rtol=1e-6, atol=1e-7)


def test_second_order_gradient_is_the_resize_again():
    x = tf.constant(np.random.default_rng(5).uniform(-1, 1, (1, 4, 4, 1)))
    w = tf.constant(np.random.default_rng(6).uniform(-1, 1, (1, 6, 3, 1)))

    def first(t):
        with tf.GradientTape() as inner:
            inner.watch(t)
            y = tf.reduce_sum(tf.square(tf._C.resize_image(t, [6, 3], "bilinear", False)) * w)
        return inner.gradient(y, t)

    with tf.GradientTape() as outer:
        outer.watch(x)
        s = tf.reduce_sum(first(x))
    got = outer.gradient(s, x).numpy()
    eps, numeric = 1e-6, np.zeros_like(x.numpy())
    for idx in np.ndindex(*x.numpy().shape):
        d = np.zeros_like(x.numpy())
        d[idx] = eps
        numeric[idx] = (float(tf.reduce_sum(first(tf.constant(x.numpy() + d)))) -
                        float(tf.reduce_sum(first(tf.constant(x.numpy() - d))))) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-7)


def test_resize_with_pad():
    image = tf.ones([4, 8, 1])
    out = tf.image.resize_with_pad(image, 8, 8)
    assert out.shape == (8, 8, 1)
    # 4x8 scaled to 4x8 inside 8x8: two zero rows above and below
    np.testing.assert_allclose(out.numpy()[:, :, 0].sum(axis=1), [0, 0, 8, 8, 8, 8, 0, 0])
    out = tf.image.resize_with_pad(tf.ones([2, 6, 3, 1]), 4, 4, method="nearest")
    assert out.shape == (2, 4, 4, 1)
    np.testing.assert_allclose(out.numpy()[0, :, :, 0].sum(axis=0), [0, 4, 4, 0])
