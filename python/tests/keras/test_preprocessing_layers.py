"""Keras 2.15's preprocessing layers: Resizing (tf.image.resize's half-pixel rules), the augmentation layers
(against a float64 NumPy model of TF's ImageProjectiveTransformV3), and the lookup / text / bucketing layers
(against the examples of Keras' documentation)."""
import math

import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers


# ---- references ---------------------------------------------------------------------------------------------------

def resize_reference(img, out_h, out_w, method):
    """Half-pixel-centre resize of one [h, w, c] image, pixel by pixel in float64."""
    h, w, _ = img.shape
    sy, sx = h / out_h, w / out_w
    out = np.zeros((out_h, out_w, img.shape[2]))
    for i in range(out_h):
        for j in range(out_w):
            if method == "nearest":
                y = min(int(math.floor((i + 0.5) * sy)), h - 1)
                x = min(int(math.floor((j + 0.5) * sx)), w - 1)
                out[i, j] = img[y, x]
                continue
            fy, fx = (i + 0.5) * sy - 0.5, (j + 0.5) * sx - 0.5
            y0, x0 = math.floor(fy), math.floor(fx)
            dy, dx = fy - y0, fx - x0
            y0c, y1c = max(y0, 0), min(y0 + 1, h - 1)
            x0c, x1c = max(x0, 0), min(x0 + 1, w - 1)
            top = img[y0c, x0c] * (1 - dx) + img[y0c, x1c] * dx
            bottom = img[y1c, x0c] * (1 - dx) + img[y1c, x1c] * dx
            out[i, j] = top * (1 - dy) + bottom * dy
    return out


def map_reference(c, n, mode):
    if mode == "constant":
        return c
    if mode == "nearest":
        return min(max(c, 0.0), n - 1.0)
    if mode == "reflect":
        if c < 0:
            s2 = 2.0 * n
            c = s2 * int(-c / s2) + c
            c = c + s2 if c < -n else -c - 1
        elif c > n - 1:
            s2 = 2.0 * n
            c -= s2 * int(c / s2)
            if c >= n:
                c = s2 - c - 1
    elif mode == "wrap":
        if c < 0:
            c += n * (int(-c / (n - 1)) + 1)
        elif c > n - 1:
            c -= n * int(c / (n - 1))
    return min(max(c, 0.0), n - 1.0)


def transform_reference(img, t, interpolation, fill_mode, fill_value=0.0):
    h, w, ch = img.shape
    out = np.zeros_like(img, dtype=np.float64)

    def read(y, x):
        if 0 <= y <= h - 1 and 0 <= x <= w - 1:
            return img[int(y), int(x)]
        return np.full(ch, fill_value)

    for y in range(h):
        for x in range(w):
            xi = map_reference(t[0] * x + t[1] * y + t[2], w, fill_mode)
            yi = map_reference(t[3] * x + t[4] * y + t[5], h, fill_mode)
            if interpolation == "nearest":
                out[y, x] = read(math.floor(yi + 0.5), math.floor(xi + 0.5))
                continue
            y0, x0 = math.floor(yi), math.floor(xi)
            top = (x0 + 1 - xi) * read(y0, x0) + (xi - x0) * read(y0, x0 + 1)
            bottom = (x0 + 1 - xi) * read(y0 + 1, x0) + (xi - x0) * read(y0 + 1, x0 + 1)
            out[y, x] = (y0 + 1 - yi) * top + (yi - y0) * bottom
    return out


def round_trip(layer):
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config() == config
    return again


IMAGES = np.random.default_rng(0).uniform(0, 255, (2, 5, 7, 3)).astype(np.float32)


# ---- Resizing -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [(2, 3), (8, 11), (5, 7), (3, 14), (1, 1)])
@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_resizing_matches_half_pixel_reference(size, method):
    layer = L.Resizing(*size, interpolation=method)
    got = layer(IMAGES).numpy()
    assert got.shape == (2,) + size + (3,)
    for b in range(2):
        np.testing.assert_allclose(got[b], resize_reference(IMAGES[b].astype(np.float64), *size, method),
                                   rtol=1e-5, atol=1e-3)
    traced = tf.function(lambda x: layer(x))(tf.constant(IMAGES)).numpy()
    np.testing.assert_allclose(traced, got, rtol=1e-6)


def test_resizing_documented_values():
    img = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    # Halving averages each 2x2 block under half-pixel centres.
    np.testing.assert_allclose(L.Resizing(2, 2)(img).numpy()[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    up = L.Resizing(4, 4, interpolation="nearest")(np.array([[[[1], [2]], [[3], [4]]]], np.uint8)).numpy()
    np.testing.assert_array_equal(up[0, :, :, 0], [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    assert up.dtype == np.float32
    single = L.Resizing(2, 2)(img[0])
    assert single.shape == (2, 2, 1)


def test_resizing_crop_to_aspect_ratio():
    img = np.arange(4 * 8, dtype=np.float32).reshape(1, 4, 8, 1)
    got = L.Resizing(2, 2, crop_to_aspect_ratio=True)(img).numpy()[0, :, :, 0]
    centre = img[0, :, 2:6, 0].astype(np.float64)  # the central 4x4 window
    np.testing.assert_allclose(got, resize_reference(centre[..., None], 2, 2, "bilinear")[..., 0], rtol=1e-6)
    x = tf.keras.Input((4, 8, 1))
    assert L.Resizing(3, 5, crop_to_aspect_ratio=True)(x).shape.as_list() == [None, 3, 5, 1]


def test_resizing_config_and_bad_arguments():
    layer = round_trip(L.Resizing(3, 4, interpolation="nearest", crop_to_aspect_ratio=True))
    assert (layer.height, layer.width, layer.interpolation) == (3, 4, "nearest")
    # every tf.image.resize method, through the same engine op
    image = np.random.default_rng(0).uniform(0, 1, (1, 5, 6, 2)).astype(np.float32)
    for method in ("bicubic", "area", "lanczos3"):
        np.testing.assert_allclose(L.Resizing(3, 4, interpolation=method)(image).numpy(),
                                   tf.image.resize(image, [3, 4], method=method).numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="cubic"):
        L.Resizing(3, 3, interpolation="cubic")
    with pytest.raises(ValueError, match="rank"):
        L.Resizing(3, 3)(np.zeros((4, 4), np.float32))


# ---- the affine sampler and the augmentation layers --------------------------------------------------------------

@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "constant", "nearest"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_transform_matches_reference(fill_mode, interpolation):
    from kiln.keras._image_preprocessing import transform_images
    rng = np.random.default_rng(1)
    img = rng.uniform(0, 1, (2, 6, 5, 2)).astype(np.float32)
    # Rotations, shears and shifts reaching well outside the image (drawn, so no position lands on an integer,
    # where float32 and float64 could pick different neighbours).
    t = np.zeros((2, 8), np.float32)
    t[:, [0, 4]] = rng.uniform(0.6, 1.8, (2, 2))
    t[:, [1, 3]] = rng.uniform(-0.7, 0.7, (2, 2))
    t[:, [2, 5]] = rng.uniform(-4, 4, (2, 2))
    got = transform_images(tf.constant(img), tf.constant(t), interpolation, fill_mode, 0.5).numpy()
    for b in range(2):
        np.testing.assert_allclose(got[b], transform_reference(img[b], t[b].astype(np.float64), interpolation,
                                                               fill_mode, 0.5), atol=2e-5)


def test_rotation_by_fixed_angles():
    img = np.random.default_rng(2).uniform(0, 1, (3, 5, 5, 2)).astype(np.float32)
    half = L.RandomRotation((0.5, 0.5))(img, training=True).numpy()
    np.testing.assert_allclose(half, img[:, ::-1, ::-1], atol=1e-4)
    quarter = L.RandomRotation((0.25, 0.25), interpolation="nearest")(img, training=True).numpy()
    np.testing.assert_allclose(quarter, np.rot90(img, 1, axes=(1, 2)), atol=1e-5)  # counter-clockwise
    np.testing.assert_array_equal(L.RandomRotation(0.3)(img, training=False).numpy(), img)


def test_translation_and_zoom_fixed_factors():
    img = np.random.default_rng(3).uniform(1, 2, (2, 4, 6, 1)).astype(np.float32)
    moved = L.RandomTranslation((0.25, 0.25), (-1 / 6, -1 / 6), fill_mode="constant")(img, training=True).numpy()
    expected = np.zeros_like(img)
    expected[:, 1:, :-1] = img[:, :-1, 1:]  # one row down, one column left
    np.testing.assert_allclose(moved, expected, atol=1e-5)
    zoom = L.RandomZoom((-0.5, -0.5), (0.25, 0.25), fill_mode="nearest")(img, training=True).numpy()
    t = [1.25, 0, (6 - 1) / 2 * (1 - 1.25), 0, 0.5, (4 - 1) / 2 * 0.5, 0, 0]
    for b in range(2):
        np.testing.assert_allclose(zoom[b], transform_reference(img[b], t, "bilinear", "nearest"), atol=1e-5)


def test_random_layers_draw_per_image_and_trace():
    tf.random.set_seed(5)
    img = np.random.default_rng(4).uniform(0, 1, (64, 3, 4, 1)).astype(np.float32)
    flipped = L.RandomFlip("horizontal")(img, training=True).numpy()
    same = [np.array_equal(f, i) for f, i in zip(flipped, img)]
    mirrored = [np.array_equal(f, i[:, ::-1]) for f, i in zip(flipped, img)]
    assert all(s or m for s, m in zip(same, mirrored)) and 10 < sum(mirrored) < 54
    layer = L.RandomRotation(0.2, fill_mode="constant")
    step = tf.function(lambda x: layer(x, training=True))
    a, b = step(tf.constant(img)).numpy(), step(tf.constant(img)).numpy()
    assert not np.array_equal(a, b)  # a new draw on every run of the traced step
    angles = set()
    for k in range(4):
        assert not np.array_equal(a[k], a[k + 1])
        angles.add(float(a[k].sum()))
    assert len(angles) == 4
    x = tf.keras.Input((3, 4, 1))
    model = tf.keras.Sequential([x, L.RandomFlip(), L.RandomZoom(0.1), L.RandomTranslation(0.1, 0.1),
                                 L.RandomContrast(0.2), L.RandomRotation(0.1)])
    np.testing.assert_allclose(model.predict(img, verbose=0), img)  # inference: unchanged


def test_random_contrast_formula():
    img = np.random.default_rng(6).uniform(0, 200, (8, 4, 4, 3)).astype(np.float32)
    out = L.RandomContrast((0.3, 0.6))(img, training=True).numpy()
    mean = img.mean(axis=(1, 2), keepdims=True)
    for b in range(8):
        dev = (img[b] - mean[b]).ravel()
        unclipped = (out[b].ravel() > 1) & (out[b].ravel() < 254)
        pick = np.argmax(np.abs(dev) * unclipped)
        f = (out[b].ravel()[pick] - mean[b].ravel()[pick % 3]) / dev[pick]
        assert 0.7 - 1e-4 <= f <= 1.6 + 1e-4
        np.testing.assert_allclose(out[b], np.clip((img[b] - mean[b]) * f + mean[b], 0, 255), rtol=1e-4, atol=1e-2)
    with pytest.raises(ValueError, match="factor"):
        L.RandomContrast(-0.1)


def test_augmentation_configs_and_errors():
    for layer in (L.RandomFlip("vertical", seed=3), L.RandomRotation((-0.1, 0.2), fill_mode="wrap", fill_value=1.0),
                  L.RandomZoom(0.2, (-0.1, 0.3), interpolation="nearest"), L.RandomTranslation(0.1, (0.0, 0.2)),
                  L.RandomContrast(0.4, seed=1)):
        round_trip(layer)
    assert L.RandomFlip(seed=7).get_config()["seed"] == 7
    with pytest.raises(ValueError, match="unknown mode"):
        L.RandomFlip("diagonal")
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="height_factor"):
        L.RandomTranslation(1.5, 0.1)
    with pytest.raises(ValueError, match="larger than -1"):
        L.RandomZoom((-1.5, 0.0))


# ---- CategoryEncoding / Discretization ---------------------------------------------------------------------------

def test_category_encoding_documented_examples():
    one_hot = L.CategoryEncoding(num_tokens=4, output_mode="one_hot")(tf.constant([3, 2, 0, 1])).numpy()
    np.testing.assert_array_equal(one_hot, np.eye(4)[[3, 2, 0, 1]])
    data = tf.constant([[0, 1], [0, 0], [1, 2], [3, 1]])
    multi = L.CategoryEncoding(num_tokens=4, output_mode="multi_hot")(data).numpy()
    np.testing.assert_array_equal(multi, [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]])
    weights = tf.constant([[.1, .2], [.1, .1], [.2, .3], [.4, .2]])
    counts = L.CategoryEncoding(num_tokens=4, output_mode="count")(data, count_weights=weights).numpy()
    np.testing.assert_allclose(counts, [[.1, .2, 0, 0], [.2, 0, 0, 0], [0, .2, .3, 0], [0, .2, 0, .4]], rtol=1e-6)
    assert L.CategoryEncoding(3, "count")(tf.constant([[2, 2, 0]])).numpy().tolist() == [[1, 0, 2]]
    traced = tf.function(lambda x: L.CategoryEncoding(4, "multi_hot")(x))(data).numpy()
    np.testing.assert_array_equal(traced, multi)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_tokens=4"):
        L.CategoryEncoding(4)(tf.constant([[4]]))
    with pytest.raises(ValueError, match="num_tokens must be set"):
        L.CategoryEncoding()
    round_trip(L.CategoryEncoding(5, "one_hot"))


def test_discretization_documented_examples():
    data = np.array([[-1.5, 1.0, 3.4, .5], [0.0, 3.0, 1.3, 0.0]])
    layer = L.Discretization(bin_boundaries=[0., 1., 2.])
    np.testing.assert_array_equal(layer(data).numpy(), [[0, 2, 3, 1], [1, 3, 2, 1]])
    assert layer(data).dtype == tf.int64
    adapted = L.Discretization(num_bins=4, epsilon=0.01)
    adapted.adapt(data)
    np.testing.assert_allclose(adapted.bin_boundaries, [0.0, 0.5, 1.3], rtol=1e-6)
    np.testing.assert_array_equal(adapted(data).numpy(), [[0, 2, 3, 2], [1, 3, 3, 1]])
    again = round_trip(adapted)
    np.testing.assert_array_equal(again(data).numpy(), adapted(data).numpy())
    hot = L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="one_hot")(tf.constant([-1.0, 0.5, 7.0]))
    np.testing.assert_array_equal(hot.numpy(), np.eye(3))
    x = tf.keras.Input((4,))
    assert L.Discretization(bin_boundaries=[0.0])(x).dtype == tf.int64
    with pytest.raises(ValueError, match="Both `num_bins` and `bin_boundaries`"):
        L.Discretization(bin_boundaries=[0.0], num_bins=3)


def test_discretization_adapt_in_batches_is_close_to_quantiles():
    values = np.random.default_rng(7).normal(size=4000)
    layer = L.Discretization(num_bins=4)
    layer.adapt(tf.data.Dataset.from_tensor_slices(values).batch(500))
    np.testing.assert_allclose(layer.bin_boundaries, np.quantile(values, [0.25, 0.5, 0.75]), atol=0.05)


# ---- StringLookup / IntegerLookup ---------------------------------------------------------------------------------

VOCAB = ["a", "b", "c", "d"]
DATA = [["a", "c", "d"], ["d", "z", "b"]]


def test_string_lookup_documented_examples():
    layer = L.StringLookup(vocabulary=VOCAB)
    out = layer(tf.constant(DATA))
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), [[1, 3, 4], [4, 0, 2]])
    assert layer.get_vocabulary() == ["[UNK]", "a", "b", "c", "d"] and layer.vocabulary_size() == 5
    adapted = L.StringLookup()
    adapted.adapt(tf.constant(DATA))
    assert adapted.get_vocabulary() == ["[UNK]", "d", "z", "c", "b", "a"]  # by count, ties by token, descending
    masked = L.StringLookup(vocabulary=VOCAB, mask_token="")
    np.testing.assert_array_equal(masked(tf.constant([["a", ""], ["z", "d"]])).numpy(), [[2, 0], [1, 5]])
    one_hot = L.StringLookup(vocabulary=VOCAB, output_mode="one_hot")(tf.constant(["a", "b", "c", "d", "z"]))
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(5)[[1, 2, 3, 4, 0]])
    multi = L.StringLookup(vocabulary=VOCAB, output_mode="multi_hot")(tf.constant([["a", "c", "d", "d"],
                                                                                   ["d", "z", "b", "z"]]))
    np.testing.assert_array_equal(multi.numpy(), [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])
    count = L.StringLookup(vocabulary=VOCAB, output_mode="count")(tf.constant([["a", "c", "d", "d"],
                                                                               ["d", "z", "b", "z"]]))
    np.testing.assert_array_equal(count.numpy(), [[0, 1, 0, 1, 2], [2, 0, 1, 0, 1]])
    tfidf = L.StringLookup(vocabulary=VOCAB, idf_weights=[0.25, 0.75, 0.6, 0.4], output_mode="tf_idf")
    np.testing.assert_allclose(tfidf(tf.constant([["a", "c", "d", "d"], ["d", "z", "b", "z"]])).numpy(),
                               [[0, 0.25, 0, 0.6, 0.8], [1.0, 0, 0.75, 0, 0.4]], rtol=1e-6)
    inverse = L.StringLookup(vocabulary=VOCAB, invert=True)(tf.constant([[1, 3, 4], [4, 0, 2]]))
    assert inverse.numpy().tolist() == [[b"a", b"c", b"d"], [b"d", b"[UNK]", b"b"]]


def test_string_lookup_adapt_max_tokens_tf_idf_and_oov():
    layer = L.StringLookup(max_tokens=3)
    layer.adapt(["x", "y", "y", "z", "z", "z"])
    assert layer.get_vocabulary() == ["[UNK]", "z", "y"]
    docs = [["a", "b"], ["a", "a"], ["c", "a"]]
    tfidf = L.StringLookup(output_mode="tf_idf")
    tfidf.adapt(docs)
    vocab = tfidf.get_vocabulary()
    assert vocab == ["[UNK]", "a", "c", "b"]
    idf = np.log(1 + 3 / (1 + np.array([3, 1, 1])))
    got = tfidf(tf.constant([["a", "a"], ["q", "b"]])).numpy()
    np.testing.assert_allclose(got, [[0, 2 * idf[0], 0, 0], [idf.mean(), 0, 0, idf[2]]], rtol=1e-6)
    strict = L.StringLookup(vocabulary=VOCAB, num_oov_indices=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_oov_indices=0"):
        strict(tf.constant(["q"]))
    two = L.StringLookup(vocabulary=VOCAB, num_oov_indices=2)
    out = two(tf.constant(["a", "A", "B", "C", "D"])).numpy()
    np.testing.assert_array_equal(out, [2, 0, 0, 1, 1])  # FarmHash buckets, as to_hash_bucket_fast(x, 2)
    with pytest.raises(ValueError, match="repeated"):
        L.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(RuntimeError, match="vocabulary before calling"):
        L.StringLookup(output_mode="multi_hot")(tf.constant(["a"]))


def test_integer_lookup_documented_examples():
    vocab = [12, 36, 1138, 42]
    data = tf.constant([[12, 1138, 42], [42, 1000, 36]])
    np.testing.assert_array_equal(L.IntegerLookup(vocabulary=vocab)(data).numpy(), [[1, 3, 4], [4, 0, 2]])
    adapted = L.IntegerLookup()
    adapted.adapt(data)
    assert adapted.get_vocabulary() == [-1, 42, 1138, 1000, 36, 12]
    masked = L.IntegerLookup(vocabulary=vocab, mask_token=0)
    np.testing.assert_array_equal(masked(tf.constant([[12, 1138, 42], [42, 1000, 36], [0, 0, 0]])).numpy(),
                                  [[2, 4, 5], [5, 1, 3], [0, 0, 0]])
    two = L.IntegerLookup(vocabulary=vocab, num_oov_indices=2)
    np.testing.assert_array_equal(two(tf.constant([[12, 1138, 42], [37, 1000, 36]])).numpy(),
                                  [[2, 4, 5], [1, 0, 3]])  # OOV: value mod 2
    multi = L.IntegerLookup(vocabulary=vocab, output_mode="multi_hot")(tf.constant([[12, 1138, 42, 42],
                                                                                    [42, 7, 36, 7]]))
    np.testing.assert_array_equal(multi.numpy(), [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])
    inverse = L.IntegerLookup(vocabulary=vocab, invert=True)(tf.constant([[1, 3, 4], [4, 0, 2]]))
    np.testing.assert_array_equal(inverse.numpy(), [[12, 1138, 42], [42, -1, 36]])


def test_lookups_trace_and_round_trip():
    layer = L.StringLookup(vocabulary=VOCAB, mask_token="")
    step = tf.function(lambda x: layer(x))
    eager = layer(tf.constant(DATA)).numpy()
    np.testing.assert_array_equal(step(tf.constant(DATA)).numpy(), eager)
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(DATA)).batch(2).map(layer)
    np.testing.assert_array_equal(next(iter(ds)).numpy(), eager)
    again = round_trip(layer)
    np.testing.assert_array_equal(again(tf.constant(DATA)).numpy(), eager)
    hot = L.IntegerLookup(vocabulary=[5, 6], output_mode="count")
    assert round_trip(hot)(tf.constant([[5, 5, 9]])).numpy().tolist() == [[1, 2, 0]]
    x = tf.keras.Input((3,), dtype="string")
    y = layer(x)
    assert y.dtype == tf.int64 and y.shape.as_list() == [None, 3]
    z = L.StringLookup(vocabulary=VOCAB, output_mode="multi_hot")(x)
    assert z.shape.as_list() == [None, 5] and z.dtype == tf.float32


# ---- TextVectorization --------------------------------------------------------------------------------------------

def test_text_vectorization_documented_examples():
    layer = L.TextVectorization(max_tokens=5000, output_mode="int", output_sequence_length=4,
                                vocabulary=["earth", "wind", "and", "fire"])
    np.testing.assert_array_equal(layer(tf.constant(["earth wind and also fire"])).numpy(), [[2, 3, 4, 1]])
    adapted = L.TextVectorization(max_tokens=5000, output_mode="int", output_sequence_length=4)
    adapted.adapt(["foo", "bar", "baz"])
    assert adapted.get_vocabulary() == ["", "[UNK]", "foo", "baz", "bar"]
    model = tf.keras.Sequential([tf.keras.Input(shape=(1,), dtype=tf.string), adapted])
    np.testing.assert_array_equal(model.predict(np.array([["foo qux bar"], ["qux baz"]]), verbose=0),
                                  [[2, 1, 4, 0], [1, 3, 0, 0]])


def test_text_vectorization_standardize_split_and_modes():
    texts = ["The Cat, the HAT!", "a cat's tale", "The end."]
    layer = L.TextVectorization()
    layer.adapt(tf.constant(texts))
    # "cat's" loses its apostrophe; ties are ordered by the token, descending.
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "tale", "hat", "end", "cats", "cat", "a"]
    out = layer(tf.constant(["THE cat... and", "hat"])).numpy()  # padded to the longest in the batch
    np.testing.assert_array_equal(out, [[2, 7, 1], [4, 0, 0]])
    capped = L.TextVectorization(max_tokens=4)
    capped.adapt(texts)
    assert capped.get_vocabulary() == ["", "[UNK]", "the", "tale"]
    multi = L.TextVectorization(output_mode="multi_hot", max_tokens=4)
    multi.adapt(texts)
    assert multi.get_vocabulary() == ["[UNK]", "the", "tale", "hat"]
    np.testing.assert_array_equal(multi(tf.constant(["the the dog", "tale"])).numpy(), [[1, 1, 0, 0], [0, 0, 1, 0]])
    count = L.TextVectorization(output_mode="count", vocabulary=["the", "cat"])
    np.testing.assert_array_equal(count(tf.constant(["the the dog"])).numpy(), [[1, 2, 0]])
    tfidf = L.TextVectorization(output_mode="tf_idf")
    tfidf.adapt(texts)
    idf_the = np.log(1 + 3 / (1 + 2))
    assert tfidf(tf.constant(["the the"])).numpy()[0, 1] == pytest.approx(2 * idf_the, rel=1e-6)
    raw = L.TextVectorization(standardize=None, split="character", output_sequence_length=3, vocabulary=["A", "b"])
    np.testing.assert_array_equal(raw(tf.constant(["Abab"])).numpy(), [[2, 3, 1]])
    grams = L.TextVectorization(ngrams=2, vocabulary=["a", "b", "a b"])
    np.testing.assert_array_equal(grams(tf.constant(["a b c"])).numpy(), [[2, 3, 1, 4, 1]])


def test_text_vectorization_traced_functional_and_config():
    layer = L.TextVectorization(output_sequence_length=3)
    layer.adapt(["x y z", "y z", "z"])
    eager = layer(tf.constant(["z y q", "x"])).numpy()
    np.testing.assert_array_equal(eager, [[2, 3, 1], [4, 0, 0]])
    np.testing.assert_array_equal(tf.function(lambda t: layer(t))(tf.constant(["z y q", "x"])).numpy(), eager)
    x = tf.keras.Input((1,), dtype="string")
    y = L.Embedding(8, 2)(layer(x))
    assert y.shape.as_list() == [None, 3, 2]
    config = layer.get_config()
    assert config["vocabulary"] == ["", "[UNK]", "z", "y", "x"] and config["output_sequence_length"] == 3
    again = L.TextVectorization.from_config(config)
    np.testing.assert_array_equal(again(tf.constant(["z y q", "x"])).numpy(), eager)
    with pytest.raises(ValueError, match="output_sequence_length"):
        L.TextVectorization(output_mode="count", output_sequence_length=3)


# ---- Hashing --------------------------------------------------------------------------------------------------------

def test_farmhash_fingerprint_and_hashing_documented_examples():
    from kiln.keras._hashing import fingerprint64
    assert fingerprint64(b"CVCtrl_BHB42XXX") == 0x883b7c5d69fe738b  # a published FarmHash Fingerprint64 value
    assert fingerprint64(b"") == 0x9ae16a3b2f90404f  # k2, the empty string's fingerprint
    np.testing.assert_array_equal(L.Hashing(num_bins=3)(tf.constant([["A"], ["B"], ["C"], ["D"], ["E"]])).numpy(),
                                  [[1], [0], [1], [1], [2]])
    masked = L.Hashing(num_bins=3, mask_value="")
    np.testing.assert_array_equal(masked(tf.constant([["A"], ["B"], [""], ["C"], ["D"]])).numpy(),
                                  [[1], [1], [0], [2], [2]])
    ints = L.Hashing(num_bins=5)
    np.testing.assert_array_equal(ints(tf.constant([[12], [7]])).numpy(),
                                  L.Hashing(num_bins=5)(tf.constant([["12"], ["7"]])).numpy())  # as their text
    hot = L.Hashing(num_bins=3, output_mode="multi_hot")(tf.constant([["A", "B"], ["E", "E"]])).numpy()
    np.testing.assert_array_equal(hot, [[1, 1, 0], [0, 0, 1]])
    layer = L.Hashing(num_bins=4)
    data = tf.constant([["x", "yy"], ["a much longer string than sixty-four bytes, to take the long path!", "q"]])
    np.testing.assert_array_equal(tf.function(lambda t: layer(t))(data).numpy(), layer(data).numpy())
    assert L.Hashing.from_config(layer.get_config()).get_config() == layer.get_config()
    with pytest.raises(NotImplementedError, match="salt"):
        L.Hashing(num_bins=3, salt=7)


def test_models_with_preprocessing_layers_save_and_load(tmp_path):
    vectorizer = L.TextVectorization(output_sequence_length=4)
    vectorizer.adapt(["a b c", "b c", "c"])
    inputs = tf.keras.Input((1,), dtype="string")
    x = L.GlobalAveragePooling1D()(L.Embedding(10, 3)(vectorizer(inputs)))
    model = tf.keras.Model(inputs, L.Dense(1)(x))
    text = np.array([["a c"], ["b"]])
    path = str(tmp_path / "text.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(text, verbose=0), model.predict(text, verbose=0), rtol=1e-6)
    images = tf.keras.Sequential([tf.keras.Input((6, 6, 1)), L.Resizing(3, 3), L.RandomFlip(), L.Flatten(),
                                  L.Dense(2)])
    path = str(tmp_path / "images.keras")
    images.save(path)
    again = tf.keras.models.load_model(path)
    x = np.random.default_rng(2).uniform(size=(2, 6, 6, 1)).astype(np.float32)
    np.testing.assert_allclose(again.predict(x, verbose=0), images.predict(x, verbose=0), rtol=1e-6)
