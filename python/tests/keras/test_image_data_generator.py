"""keras.preprocessing.image.ImageDataGenerator: the affine transforms against NumPy references (exact on
integer moves and on linear images, where linear interpolation is exact), standardization and `fit`'s statistics
against NumPy, `flow` and `flow_from_directory` batches, and training from them."""
import os

import numpy as np
import pytest

import kiln as tf

K = tf.keras
image = K.preprocessing.image
ImageDataGenerator = image.ImageDataGenerator


def ramp(h=7, w=7, channels=2):
    """3 * row + 5 * col (+ 100 per channel): linear, so linear interpolation reproduces it exactly."""
    r, c = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return np.stack([3.0 * r + 5.0 * c + 100 * k for k in range(channels)], axis=-1)


def transform(x, **kwargs):
    return image.apply_affine_transform(x, row_axis=0, col_axis=1, channel_axis=2, **kwargs)


def test_rotation_by_90_degrees_is_rot90():
    x = np.random.default_rng(0).uniform(0, 1, (6, 6, 3))
    np.testing.assert_allclose(transform(x, theta=90), np.rot90(x, 1, axes=(0, 1)), atol=1e-9)
    np.testing.assert_allclose(transform(x, theta=-90), np.rot90(x, -1, axes=(0, 1)), atol=1e-9)


def test_shifts_and_fill_modes():
    x = ramp()
    cols = np.arange(7)
    # Keras' tx moves along the columns once its (x, y) matrix is applied to (row, col) arrays.
    for mode, shift, expected in (("nearest", 2, np.minimum(cols + 2, 6)), ("reflect", -2, [1, 0, 0, 1, 2, 3, 4]),
                                  ("wrap", 3, [3, 4, 5, 6, 1, 2, 3])):
        out = transform(x, tx=shift, fill_mode=mode)
        np.testing.assert_allclose(out, x[:, expected], err_msg=mode)
    out = transform(x, tx=3, fill_mode="constant", cval=-1.0)
    np.testing.assert_allclose(out[:, :4], x[:, 3:])
    assert np.all(out[:, 4:] == -1.0)
    np.testing.assert_allclose(transform(x, ty=1), x[np.minimum(np.arange(7) + 1, 6)])
    with pytest.raises(ValueError, match="boundary mode not supported"):
        transform(x, tx=1, fill_mode="mirror")


def test_zoom_and_shear_on_a_linear_image():
    x = ramp()
    o = 3.0  # the centre of 7 pixels
    r, c = np.meshgrid(np.arange(7.0), np.arange(7.0), indexing="ij")
    # zoom (zx, zy) reads the input at centre + z * (output - centre): zx along the columns, zy along the rows
    out = transform(x, zx=0.5, zy=0.8)
    expected = 3 * (o + 0.8 * (r - o)) + 5 * (o + 0.5 * (c - o))
    np.testing.assert_allclose(out[..., 0], expected, atol=1e-9)
    np.testing.assert_allclose(out[..., 1], expected + 100, atol=1e-9)
    # A shear keeps the centre row and moves the others along the columns, in proportion to their distance.
    sheared = transform(x, shear=10)
    np.testing.assert_allclose(sheared[3], x[3], atol=1e-9)
    assert not np.allclose(sheared, x)
    nearest = transform(x, zx=0.5, zy=0.5, order=0)
    assert set(np.unique(nearest)) <= set(np.unique(x))


def test_channel_shift_flip_and_brightness():
    x = ramp(4, 4, 3)
    shifted = image.apply_channel_shift(x, 10.0, channel_axis=2)
    np.testing.assert_allclose(shifted, np.clip(x + 10, x.min(), x.max()))
    gen = ImageDataGenerator()
    np.testing.assert_array_equal(gen.apply_transform(x, {"flip_horizontal": True}), x[:, ::-1])
    np.testing.assert_array_equal(gen.apply_transform(x, {"flip_vertical": True}), x[::-1])
    pixels = np.random.default_rng(1).integers(0, 200, (5, 5, 3)).astype("float32")
    np.testing.assert_allclose(image.apply_brightness_shift(pixels, 1.0, scale=False), pixels)
    darker = image.apply_brightness_shift(pixels, 0.5, scale=False)
    np.testing.assert_allclose(darker, np.round(pixels * 0.5), atol=1)


def test_random_transform_draws_keras_parameters():
    gen = ImageDataGenerator(rotation_range=30, width_shift_range=0.2, height_shift_range=[-2, 2], shear_range=5,
                             zoom_range=0.1, channel_shift_range=4.0, horizontal_flip=True, brightness_range=(0.9, 1.1))
    params = gen.get_random_transform((10, 20, 3), seed=3)
    assert params == gen.get_random_transform((10, 20, 3), seed=3)
    assert -30 <= params["theta"] <= 30 and abs(params["tx"]) == 2 and -4 <= params["ty"] <= 4
    assert 0.9 <= params["zx"] <= 1.1 and 0.9 <= params["brightness"] <= 1.1 and params["flip_vertical"] == 0
    assert ImageDataGenerator(zoom_range=[0.5, 2]).zoom_range == [0.5, 2]
    with pytest.raises(ValueError, match="`zoom_range` should be a float"):
        ImageDataGenerator(zoom_range=(1, 2, 3))
    with pytest.raises(ValueError, match="`validation_split` must be strictly between 0 and 1"):
        ImageDataGenerator(validation_split=1.5)
    with pytest.raises(ValueError, match="`brightness_range should be tuple or list of two floats"):
        ImageDataGenerator(brightness_range=0.5)


def test_fit_featurewise_statistics_and_standardize():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 255, (20, 4, 4, 3))
    gen = ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True, rescale=1 / 255.)
    gen.fit(x)
    scaled = x / 255.
    np.testing.assert_allclose(gen.mean.reshape(-1), scaled.mean(axis=(0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(gen.std.reshape(-1), scaled.std(axis=(0, 1, 2)), rtol=1e-4)
    one = gen.standardize(x[0].astype("float32").copy())
    np.testing.assert_allclose(one, (scaled[0] - gen.mean) / (gen.std + 1e-6), rtol=1e-4, atol=1e-5)
    sample = ImageDataGenerator(samplewise_center=True, samplewise_std_normalization=True).standardize(x[1].copy())
    np.testing.assert_allclose(sample, (x[1] - x[1].mean()) / (x[1].std() + 1e-6))
    with pytest.warns(UserWarning, match="overrides setting of `featurewise_center`"):
        zca = ImageDataGenerator(zca_whitening=True)
    data = rng.normal(size=(200, 2, 2, 1)) @ np.ones((1, 1)) + rng.normal(size=(200, 1, 1, 1))  # correlated pixels
    zca.fit(data)
    white = zca.standardize((data - zca.mean).astype("float32")).reshape(200, -1)
    np.testing.assert_allclose(np.cov(white.T, bias=True), np.eye(4), atol=0.05)
    with pytest.warns(UserWarning, match="hasn't been fit on any training data"):
        ImageDataGenerator(featurewise_center=True).standardize(x[0].copy())
    with pytest.raises(ValueError, match="should have rank 4"):
        gen.fit(x[0])


def test_flow_batches_labels_weights_and_subsets():
    x = np.arange(10 * 2 * 2 * 1, dtype="float32").reshape(10, 2, 2, 1)
    y = np.arange(10) % 2
    flow = ImageDataGenerator(rescale=0.5).flow(x, y, batch_size=4, shuffle=False)
    batches = [next(flow) for _ in range(4)]  # an endless iterator: the fourth batch starts over
    np.testing.assert_array_equal(batches[3][0], batches[0][0])
    assert [b[0].shape[0] for b in batches[:3]] == [4, 4, 2]
    np.testing.assert_array_equal(batches[0][0], x[:4] * 0.5)
    np.testing.assert_array_equal(batches[2][1], y[8:])
    it = ImageDataGenerator().flow(x, y, batch_size=3, sample_weight=np.linspace(0, 1, 10), seed=1)
    assert len(it) == 4 and len(it[0]) == 3
    xb, yb, wb = it[1]
    index = (xb[:, 0, 0, 0] / 4).astype(int)
    np.testing.assert_array_equal(yb, y[index])
    np.testing.assert_allclose(wb, np.linspace(0, 1, 10)[index])
    split = ImageDataGenerator(validation_split=0.2)
    assert split.flow(x, y, subset="validation").n == 2 and split.flow(x, y, subset="training").n == 8
    with pytest.raises(ValueError, match="different number of classes"):
        split.flow(x, np.sort(y), subset="training")
    seeded = [ImageDataGenerator(rotation_range=40).flow(x, batch_size=5, seed=7)[0] for _ in range(2)]
    np.testing.assert_array_equal(seeded[0], seeded[1])
    with pytest.raises(ValueError, match="should have the same length"):
        ImageDataGenerator().flow(x, y[:5])


@pytest.fixture
def image_folder(tmp_path):
    from PIL import Image
    rng = np.random.default_rng(4)
    for label, folder in enumerate(["cats", "dogs"]):
        os.makedirs(tmp_path / folder)
        for i in range(5):
            pixels = rng.integers(0, 100, (12, 10, 3)) + 150 * label
            Image.fromarray(pixels.astype("uint8")).save(tmp_path / folder / f"{i}.png")
    (tmp_path / "dogs" / "notes.txt").write_text("not an image")
    return str(tmp_path)


def test_flow_from_directory(image_folder, capsys):
    gen = ImageDataGenerator(rescale=1 / 255.)
    it = gen.flow_from_directory(image_folder, target_size=(8, 6), batch_size=4, shuffle=False)
    assert capsys.readouterr().out == "Found 10 images belonging to 2 classes.\n"
    assert it.class_indices == {"cats": 0, "dogs": 1} and it.filenames[0] == os.path.join("cats", "0.png")
    xb, yb = it[0]
    assert xb.shape == (4, 8, 6, 3) and 0 <= xb.min() and xb.max() <= 1
    np.testing.assert_array_equal(yb, [[1, 0]] * 4)
    np.testing.assert_array_equal(it.classes, [0] * 5 + [1] * 5)
    sparse = gen.flow_from_directory(image_folder, target_size=(8, 6), class_mode="sparse", color_mode="grayscale",
                                     batch_size=10, shuffle=False)
    xb, yb = sparse[0]
    assert xb.shape == (10, 8, 6, 1) and list(yb) == [0.0] * 5 + [1.0] * 5
    alone = gen.flow_from_directory(image_folder, target_size=(8, 6), class_mode=None, batch_size=2)[0]
    assert alone.shape == (2, 8, 6, 3)
    val = ImageDataGenerator(validation_split=0.4).flow_from_directory(image_folder, target_size=(8, 6),
                                                                       subset="validation", shuffle=False)
    assert val.samples == 4 and val.filenames == [os.path.join("cats", "0.png"), os.path.join("cats", "1.png"),
                                                  os.path.join("dogs", "0.png"), os.path.join("dogs", "1.png")]
    with pytest.raises(ValueError, match="Invalid class_mode"):
        gen.flow_from_directory(image_folder, class_mode="onehot")


def test_fit_trains_from_the_generators(image_folder):
    # The pattern of ImageDataGenerator's documentation: model.fit(datagen.flow(x, y, batch_size), epochs=...)
    K.utils.set_random_seed(5)
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 255, (64, 8, 8, 1)).astype("float32")
    y = (x[:, :, :4].mean(axis=(1, 2, 3)) > x[:, :, 4:].mean(axis=(1, 2, 3))).astype("float32")
    datagen = ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True, vertical_flip=True)
    datagen.fit(x)
    model = K.Sequential([K.Input((8, 8, 1)), K.layers.Flatten(), K.layers.Dense(1, activation="sigmoid")])
    model.compile(K.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(datagen.flow(x, y, batch_size=16), epochs=12, verbose=0)
    assert len(history.history["loss"]) == 12 and history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.7
    preds = model.predict(datagen.flow(x, batch_size=16, shuffle=False), verbose=0)
    assert preds.shape == (64, 1)
    folder = ImageDataGenerator(rescale=1 / 255.).flow_from_directory(image_folder, target_size=(8, 8),
                                                                      class_mode="binary", batch_size=5)
    net = K.Sequential([K.Input((8, 8, 3)), K.layers.GlobalAveragePooling2D(), K.layers.Dense(1)])
    net.compile(K.optimizers.Adam(0.1), K.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    net.fit(folder, epochs=15, verbose=0)
    assert net.evaluate(folder, verbose=0)[1] == 1.0  # dogs are the bright ones


def test_a_sequence_is_indexed_each_epoch_then_told():
    class Batches(K.utils.Sequence):
        def __init__(self):
            self.epochs = 0

        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.full((2, 1), float(i), "float32"), np.zeros((2, 1), "float32")

        def on_epoch_end(self):
            self.epochs += 1

    data = Batches()
    model = K.Sequential([K.Input((1,)), K.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(data, epochs=2, verbose=0)
    assert data.epochs == 2 and model.optimizer.iterations.numpy() == 6
