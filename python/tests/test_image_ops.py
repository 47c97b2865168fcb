"""tf.image's composites: geometry, colour, dtype conversion, random augmentations and metrics, against NumPy
float64 references and TF's documented values."""
import colorsys

import numpy as np
import pytest

import kiln as tf

RNG = np.random.default_rng(11)
IMG = RNG.uniform(0, 1, (5, 6, 3)).astype(np.float32)
BATCH = RNG.uniform(0, 1, (2, 5, 6, 3)).astype(np.float32)


# ---- geometry ------------------------------------------------------------------------------------------------

def test_flips_rot90_transpose_match_numpy():
    np.testing.assert_array_equal(tf.image.flip_left_right(IMG).numpy(), IMG[:, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(BATCH).numpy(), BATCH[:, ::-1])
    np.testing.assert_array_equal(tf.image.transpose(BATCH).numpy(), BATCH.transpose(0, 2, 1, 3))
    for k in range(-1, 6):
        np.testing.assert_array_equal(tf.image.rot90(IMG, k).numpy(), np.rot90(IMG, k, axes=(0, 1)))
        np.testing.assert_array_equal(tf.image.rot90(BATCH, k).numpy(), np.rot90(BATCH, k, axes=(1, 2)))


def test_tf_documented_flip_and_rot90():
    x = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    np.testing.assert_array_equal(tf.image.flip_left_right(x).numpy(),
                                  [[[4, 5, 6], [1, 2, 3]], [[10, 11, 12], [7, 8, 9]]])
    a = np.array([[[1], [2]], [[3], [4]]])
    np.testing.assert_array_equal(tf.image.rot90(a).numpy()[..., 0], [[2, 4], [1, 3]])


def test_crop_pad_and_resize_with_crop_or_pad():
    np.testing.assert_array_equal(tf.image.crop_to_bounding_box(IMG, 1, 2, 3, 4).numpy(), IMG[1:4, 2:6])
    padded = tf.image.pad_to_bounding_box(BATCH, 1, 2, 8, 9).numpy()
    expect = np.zeros((2, 8, 9, 3), np.float32)
    expect[:, 1:6, 2:8] = BATCH
    np.testing.assert_array_equal(padded, expect)
    # crop rows (5 -> 3: offset 1), pad columns (6 -> 8: offset 1)
    out = tf.image.resize_with_crop_or_pad(IMG, 3, 8).numpy()
    expect = np.zeros((3, 8, 3), np.float32)
    expect[:, 1:7] = IMG[1:4]
    np.testing.assert_array_equal(out, expect)
    with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(IMG, 0, 3, 2, 4)
    with pytest.raises(ValueError, match="offset_height must be >= 0"):
        tf.image.pad_to_bounding_box(IMG, -1, 0, 9, 9)
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.flip_left_right(tf.zeros([3, 3]))


def test_central_crop():
    image = np.arange(8 * 8 * 1, dtype=np.float32).reshape(8, 8, 1)
    np.testing.assert_array_equal(tf.image.central_crop(image, 0.5).numpy(), image[2:6, 2:6])
    assert tf.image.central_crop(tf.zeros([2, 9, 7, 3]), 0.5).shape == (2, 5, 5, 3)
    with pytest.raises(ValueError, match="central_fraction must be within"):
        tf.image.central_crop(image, 0.0)


# ---- dtypes and colour -----------------------------------------------------------------------------------------

def test_convert_image_dtype_scales_and_saturates():
    u8 = tf.constant([0, 127, 255], tf.uint8)
    np.testing.assert_allclose(tf.image.convert_image_dtype(u8, tf.float32).numpy(), [0, 127 / 255, 1], rtol=1e-6)
    f = tf.constant([0.0, 0.5, 1.0, 1.5, -0.5])
    np.testing.assert_array_equal(tf.image.convert_image_dtype(f, tf.uint8, saturate=True).numpy(),
                                  [0, 127, 255, 255, 0])  # x * 255.5, truncated
    np.testing.assert_array_equal(tf.image.convert_image_dtype(u8, tf.int32).numpy(),
                                  np.array([0, 127, 255]) * 2 ** 23)
    np.testing.assert_array_equal(tf.image.convert_image_dtype(tf.constant([2 ** 31 - 1, 2 ** 24], tf.int32),
                                                               tf.uint8).numpy(), [255, 2])
    # TF's documented example
    x = [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]
    out = tf.image.convert_image_dtype(tf.constant(x, tf.float32) / 255.0, tf.uint8, saturate=False)
    np.testing.assert_array_equal(out.numpy(), x)


def test_brightness_contrast_gamma():
    np.testing.assert_allclose(tf.image.adjust_brightness(IMG, 0.1).numpy(), IMG + 0.1, rtol=1e-6)
    x = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    np.testing.assert_allclose(tf.image.adjust_contrast(x, 2.).numpy(),
                               [[[-3.5, -2.5, -1.5], [2.5, 3.5, 4.5]], [[8.5, 9.5, 10.5], [14.5, 15.5, 16.5]]])
    np.testing.assert_allclose(tf.image.adjust_brightness(x, delta=0.1).numpy(), np.array(x) + 0.1, rtol=1e-6)
    np.testing.assert_allclose(tf.image.adjust_gamma(IMG, 0.2, 1.5).numpy(), 1.5 * IMG.astype(np.float64) ** 0.2,
                               rtol=1e-5)
    u8 = tf.constant([[[250, 10, 0]]], tf.uint8)
    np.testing.assert_array_equal(tf.image.adjust_brightness(u8, 0.1).numpy(), [[[255, 35, 25]]])
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.adjust_gamma(IMG, -1)


def _hsv_reference(rgb):
    return np.array([colorsys.rgb_to_hsv(*p) for p in rgb.reshape(-1, 3).astype(np.float64)]).reshape(rgb.shape)


def test_hsv_round_trip_and_colorsys():
    hsv = tf.image.rgb_to_hsv(IMG).numpy()
    np.testing.assert_allclose(hsv, _hsv_reference(IMG), atol=1e-6)
    np.testing.assert_allclose(tf.image.hsv_to_rgb(hsv).numpy(), IMG, atol=1e-6)
    np.testing.assert_array_equal(tf.image.rgb_to_hsv([[0.5, 0.5, 0.5]]).numpy(), [[0, 0, 0.5]])


def test_saturation_and_hue_against_colorsys():
    ref = _hsv_reference(IMG)
    sat = ref.copy()
    sat[..., 1] = np.clip(sat[..., 1] * 1.7, 0, 1)
    expect = np.array([colorsys.hsv_to_rgb(*p) for p in sat.reshape(-1, 3)]).reshape(IMG.shape)
    np.testing.assert_allclose(tf.image.adjust_saturation(IMG, 1.7).numpy(), expect, atol=1e-5)
    hue = ref.copy()
    hue[..., 0] = np.mod(hue[..., 0] + 0.3, 1.0)
    expect = np.array([colorsys.hsv_to_rgb(*p) for p in hue.reshape(-1, 3)]).reshape(IMG.shape)
    np.testing.assert_allclose(tf.image.adjust_hue(IMG, 0.3).numpy(), expect, atol=1e-5)
    # TF's documented adjust_hue value
    x = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    np.testing.assert_allclose(tf.image.adjust_hue(x, 0.2).numpy()[0, 0], [2.3999996, 1.0, 3.0], rtol=1e-5)
    # uint8 images compute in float and come back saturated
    assert tf.image.adjust_saturation(tf.image.convert_image_dtype(IMG, tf.uint8), 3).dtype == tf.uint8


def test_grayscale_yuv_standardization():
    gray = tf.image.rgb_to_grayscale(BATCH).numpy()
    np.testing.assert_allclose(gray, (BATCH.astype(np.float64) @ [0.2989, 0.5870, 0.1140])[..., None], rtol=1e-5)
    assert tf.image.grayscale_to_rgb(gray).shape == (2, 5, 6, 3)
    np.testing.assert_allclose(tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(IMG)).numpy(), IMG, atol=1e-5)
    image = tf.constant(np.arange(1, 13, dtype=np.int32), shape=[2, 2, 3])
    np.testing.assert_allclose(tf.image.per_image_standardization(image).numpy(),
                               [[[-1.593255, -1.3035723, -1.0138896], [-0.7242068, -0.4345241, -0.1448414]],
                                [[0.1448414, 0.4345241, 0.7242068], [1.0138896, 1.3035723, 1.593255]]], rtol=1e-5)
    # a constant image: the stddev floor 1 / sqrt(N) keeps it finite
    np.testing.assert_array_equal(tf.image.per_image_standardization(tf.ones([2, 2, 1])).numpy(), np.zeros((2, 2, 1)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="3 channels"):
        tf.image.rgb_to_grayscale(tf.zeros([2, 2, 4]))


# ---- random -------------------------------------------------------------------------------------------------------

def test_random_augmentations_stay_in_range():
    tf.random.set_seed(3)
    flips = {tf.image.random_flip_left_right(IMG).numpy().tobytes() for _ in range(20)}
    assert flips == {IMG.tobytes(), IMG[:, ::-1].tobytes()}
    out = tf.image.random_flip_up_down(BATCH).numpy()
    for i in range(2):
        assert np.array_equal(out[i], BATCH[i]) or np.array_equal(out[i], BATCH[i, ::-1])
    d = tf.image.random_brightness(IMG, 0.2).numpy() - IMG
    assert np.allclose(d, d.flat[0], atol=1e-6) and abs(d.flat[0]) <= 0.2
    crop = tf.image.random_crop(IMG, [3, 4, 3]).numpy()
    assert any(np.array_equal(crop, IMG[i:i + 3, j:j + 4]) for i in range(3) for j in range(3))
    for fn, args in ((tf.image.random_contrast, (0.5, 1.5)), (tf.image.random_saturation, (0.5, 1.5)),
                     (tf.image.random_hue, (0.2,))):
        assert fn(IMG, *args).shape == IMG.shape
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(IMG, 1.0, 0.5)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(IMG, 0.7)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
        tf.image.random_crop(IMG, [6, 4, 3])


def test_stateless_augmentations_depend_on_the_seed_alone():
    for fn, args in ((tf.image.stateless_random_brightness, (0.95,)),
                     (tf.image.stateless_random_contrast, (0.1, 0.9)),
                     (tf.image.stateless_random_saturation, (0.5, 1.5)),
                     (tf.image.stateless_random_hue, (0.2,)),
                     (tf.image.stateless_random_flip_left_right, ()),
                     (tf.image.stateless_random_flip_up_down, ())):
        a = fn(IMG, *args, seed=(1, 2)).numpy()
        np.testing.assert_array_equal(a, fn(IMG, *args, seed=(1, 2)).numpy())
        np.testing.assert_array_equal(a, fn(IMG, *args, seed=tf.constant([1, 2])).numpy())
    crops = {tf.image.stateless_random_crop(IMG, [2, 2, 3], seed=(i, 0)).numpy().tobytes() for i in range(10)}
    assert len(crops) > 1
    # inside a traced function, the seed a tensor argument
    f = tf.function(lambda s: tf.image.stateless_random_crop(IMG, [2, 2, 3], seed=s))
    np.testing.assert_array_equal(f(tf.constant([4, 0])).numpy(),
                                  tf.image.stateless_random_crop(IMG, [2, 2, 3], seed=(4, 0)).numpy())


# ---- metrics and derivatives --------------------------------------------------------------------------------------

def test_psnr_and_ssim():
    a, b = BATCH, np.clip(BATCH + RNG.normal(0, 0.05, BATCH.shape), 0, 1).astype(np.float32)
    mse = ((a.astype(np.float64) - b) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(tf.image.psnr(a, b, 1.0).numpy(), 10 * np.log10(1 / mse), rtol=1e-5)
    assert np.isinf(tf.image.psnr(a, a, 1.0).numpy()).all()
    # SSIM of an image with itself is 1; against a NumPy float64 reference with a small window otherwise
    np.testing.assert_allclose(tf.image.ssim(a, a, 1.0, filter_size=3).numpy(), [1, 1], rtol=1e-6)
    got = tf.image.ssim(a, b, 1.0, filter_size=3, filter_sigma=1.0).numpy()
    np.testing.assert_allclose(got, _ssim_reference(a, b, 1.0, 3, 1.0), rtol=1e-4)
    assert tf.image.ssim(a, b, 1.0, filter_size=3, return_index_map=True).shape == (2, 3, 4)
    u8a, u8b = (tf.image.convert_image_dtype(t, tf.uint8, saturate=True) for t in (a, b))
    assert abs(float(tf.image.ssim(u8a, u8b, 255, filter_size=3)[0]) - got[0]) < 2e-2


def _ssim_reference(x, y, max_val, size, sigma):
    coords = np.arange(size) - (size - 1) / 2
    g = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()
    x, y = x.astype(np.float64), y.astype(np.float64)

    def filt(t):
        n, h, w, c = t.shape
        out = np.zeros((n, h - size + 1, w - size + 1, c))
        for i in range(size):
            for j in range(size):
                out += g[i, j] * t[:, i:i + h - size + 1, j:j + w - size + 1]
        return out
    c1, c2 = (0.01 * max_val) ** 2, (0.03 * max_val) ** 2
    mx, my = filt(x), filt(y)
    sxx, syy, sxy = filt(x * x) - mx ** 2, filt(y * y) - my ** 2, filt(x * y) - mx * my
    s = (2 * mx * my + c1) * (2 * sxy + c2) / ((mx ** 2 + my ** 2 + c1) * (sxx + syy + c2))
    return s.mean(axis=(1, 2, 3))


def test_image_gradients_sobel_total_variation():
    image = tf.reshape(tf.range(0, 1 * 5 * 5 * 1, dtype=tf.float32), [1, 5, 5, 1])
    dy, dx = tf.image.image_gradients(image)
    expect_dy = np.full((5, 5), 5.0)
    expect_dy[-1] = 0
    expect_dx = np.ones((5, 5))
    expect_dx[:, -1] = 0
    np.testing.assert_array_equal(dy.numpy()[0, ..., 0], expect_dy)
    np.testing.assert_array_equal(dx.numpy()[0, ..., 0], expect_dx)
    edges = tf.image.sobel_edges(BATCH).numpy()
    assert edges.shape == (2, 5, 6, 3, 2)
    p = np.pad(BATCH.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]])
    ref_y = sum(ky[i, j] * p[:, i:i + 5, j:j + 6] for i in range(3) for j in range(3))
    ref_x = sum(ky.T[i, j] * p[:, i:i + 5, j:j + 6] for i in range(3) for j in range(3))
    np.testing.assert_allclose(edges[..., 0], ref_y, atol=1e-5)
    np.testing.assert_allclose(edges[..., 1], ref_x, atol=1e-5)
    tv = np.abs(np.diff(BATCH, axis=1)).sum(axis=(1, 2, 3)) + np.abs(np.diff(BATCH, axis=2)).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(tf.image.total_variation(BATCH).numpy(), tv, rtol=1e-5)
    np.testing.assert_allclose(tf.image.total_variation(IMG).numpy(),
                               np.abs(np.diff(IMG, axis=0)).sum() + np.abs(np.diff(IMG, axis=1)).sum(), rtol=1e-5)


def _patches_reference(x, k, s, r, padding):
    n, h, w, c = x.shape
    eff = [k[i] + (k[i] - 1) * (r[i] - 1) for i in range(2)]
    if padding == "VALID":
        out = [-(-(dim - e + 1) // st) for dim, e, st in zip((h, w), eff, s)]
        pad = [0, 0]
    else:
        out = [-(-dim // st) for dim, st in zip((h, w), s)]
        pad = [max((o - 1) * st + e - dim, 0) // 2 for o, st, e, dim in zip(out, s, eff, (h, w))]
    result = np.zeros((n, out[0], out[1], k[0] * k[1] * c))
    for y in range(out[0]):
        for x_ in range(out[1]):
            vec = []
            for i in range(k[0]):
                for j in range(k[1]):
                    yy, xx = y * s[0] + i * r[0] - pad[0], x_ * s[1] + j * r[1] - pad[1]
                    inside = 0 <= yy < h and 0 <= xx < w
                    vec.append(x[:, yy, xx] if inside else np.zeros((n, c)))
            result[:, y, x_] = np.concatenate(vec, axis=1)
    return result


@pytest.mark.parametrize("k,s,r,padding", [((2, 3), (1, 2), (1, 1), "VALID"), ((3, 2), (2, 3), (2, 1), "SAME"),
                                           ((1, 1), (2, 2), (1, 1), "SAME"), ((2, 2), (3, 1), (1, 2), "VALID")])
def test_extract_patches_matches_numpy(k, s, r, padding):
    got = tf.image.extract_patches(BATCH, [1, *k, 1], [1, *s, 1], [1, *r, 1], padding).numpy()
    np.testing.assert_array_equal(got, _patches_reference(BATCH, k, s, r, padding))


def test_extract_patches_documented_example():
    n = 10
    images = [[[[x * n + y + 1] for y in range(n)] for x in range(n)]]
    patches = tf.image.extract_patches(images, [1, 3, 3, 1], [1, 5, 5, 1], [1, 1, 1, 1], "VALID")
    np.testing.assert_array_equal(patches.numpy()[0, 0, 0], [1, 2, 3, 11, 12, 13, 21, 22, 23])
    np.testing.assert_array_equal(patches.numpy()[0, 1, 1], [56, 57, 58, 66, 67, 68, 76, 77, 78])


def test_tf_documented_colour_values():
    x = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    np.testing.assert_allclose(tf.image.adjust_saturation(x, 0.5).numpy(),
                               [[[2, 2.5, 3], [5, 5.5, 6]], [[8, 8.5, 9], [11, 11.5, 12]]], rtol=1e-6)
    np.testing.assert_allclose(tf.image.rgb_to_grayscale(x).numpy(), [[[1.8149], [4.8146]], [[7.8143], [10.8140]]],
                               rtol=1e-5)
    np.testing.assert_allclose(tf.image.adjust_gamma(x, 0.2).numpy()[0],
                               [[1.0, 1.1486983, 1.2457309], [1.319508, 1.3797297, 1.4309691]], rtol=1e-6)
    blue = tf.stack([tf.zeros([5, 5]), tf.zeros([5, 5]), tf.ones([5, 5])], axis=-1)
    np.testing.assert_allclose(tf.image.rgb_to_hsv(blue).numpy()[0, 0], [0.6666667, 1, 1], rtol=1e-6)
    rows = [[[3 * (4 * r + c) + k + 1.0 for k in range(3)] for c in range(4)] for r in range(4)]
    np.testing.assert_array_equal(tf.image.central_crop(rows, 0.5).numpy(),
                                  [[[16, 17, 18], [19, 20, 21]], [[28, 29, 30], [31, 32, 33]]])
