"""ImageDataGenerator.flow_from_dataframe (Keras 2.15's DataFrameIterator) on small generated PNGs listed by a
pandas data frame: the pixels and labels of each class_mode, sample weights, `classes`, multi-label rows,
validate_filenames, subsets, seeded shuffling, training from it, Keras' printed counts, warnings and errors."""
import os

import numpy as np
import pytest

import kiln as tf

pd = pytest.importorskip("pandas")
Image = pytest.importorskip("PIL.Image")
pytestmark = pytest.mark.filterwarnings("ignore:Found 2 invalid image filename")

K = tf.keras
ImageDataGenerator = K.preprocessing.image.ImageDataGenerator
H, W = 8, 6
LABELS = ["cat", "dog", "cat", "bird", "dog", "cat"]


def pixels(i):
    """Image i: a distinct pattern, its class's colour in channel 0 (what the fit test learns from)."""
    rng = np.random.default_rng(i)
    x = rng.integers(0, 256, (H, W, 3))
    x[..., 0] = {"cat": 20, "dog": 120, "bird": 220}[LABELS[i]]
    return x.astype(np.uint8)


@pytest.fixture
def frame(tmp_path):
    """Six PNGs in tmp_path/img, and a data frame naming them (plus a missing file and a text file)."""
    folder = tmp_path / "img"
    folder.mkdir()
    for i in range(len(LABELS)):
        Image.fromarray(pixels(i)).save(folder / f"{i}.png")
    (folder / "notes.txt").write_text("not an image")
    df = pd.DataFrame({
        "filename": [f"{i}.png" for i in range(len(LABELS))] + ["missing.png", "notes.txt"],
        "class": LABELS + ["cat", "dog"],
        "score": [0.5 * i for i in range(len(LABELS) + 2)],
        "size": [10 * i for i in range(len(LABELS) + 2)],
        "weight": [1.0 + i for i in range(len(LABELS) + 2)],
        "tags": [["cat", "dog"], ["dog"], ["cat"], ["bird", "cat"], ["dog"], ["bird"], ["cat"], ["dog"]],
    })
    return df, str(folder)


def flow(frame, **kwargs):
    df, folder = frame
    kwargs.setdefault("target_size", (H, W))
    kwargs.setdefault("shuffle", False)
    return ImageDataGenerator().flow_from_dataframe(df, folder, **kwargs)


def test_categorical_batches_hold_the_files_pixels_and_one_hot_classes(frame, capsys):
    with pytest.warns(UserWarning, match='Found 2 invalid image filename\\(s\\) in x_col="filename"'):
        it = flow(frame, batch_size=4)
    assert capsys.readouterr().out == "Found 6 validated image filenames belonging to 3 classes.\n"
    assert it.class_indices == {"bird": 0, "cat": 1, "dog": 2}
    assert it.filenames == [f"{i}.png" for i in range(6)] and len(it) == 2
    assert it.filepaths[0] == os.path.join(frame[1], "0.png")
    assert it.classes == [1, 2, 1, 0, 2, 1]
    x, y = it[0]
    assert x.dtype == np.float32 and x.shape == (4, H, W, 3)
    np.testing.assert_array_equal(x, np.stack([pixels(i) for i in range(4)]).astype(np.float32))
    np.testing.assert_array_equal(y, np.eye(3, dtype=np.float32)[[1, 2, 1, 0]])
    assert it[1][0].shape == (2, H, W, 3)


def test_sparse_binary_raw_multi_output_input_and_none(frame):
    _, y = flow(frame, class_mode="sparse", batch_size=6)[0]
    np.testing.assert_array_equal(y, [1, 2, 1, 0, 2, 1])
    assert y.dtype == np.float32
    df, folder = frame
    pair = df[df["class"] != "bird"]
    _, y = ImageDataGenerator().flow_from_dataframe(pair, folder, class_mode="binary", target_size=(H, W),
                                                    shuffle=False)[0]
    np.testing.assert_array_equal(y, [0, 1, 0, 1, 0])
    _, y = flow(frame, class_mode="raw", y_col="score", batch_size=3)[1]
    np.testing.assert_array_equal(y, [1.5, 2.0, 2.5])
    _, y = flow(frame, class_mode="raw", y_col=["score", "size"], batch_size=2)[0]
    np.testing.assert_array_equal(y, [[0.0, 0], [0.5, 10]])
    _, (score, size) = flow(frame, class_mode="multi_output", y_col=["score", "size"], batch_size=2)[1]
    np.testing.assert_array_equal(score, [1.0, 1.5])
    np.testing.assert_array_equal(size, [20, 30])
    x, y = flow(frame, class_mode="input", batch_size=2)[0]
    np.testing.assert_array_equal(x, y)
    alone = flow(frame, class_mode=None, batch_size=2)[0]
    assert isinstance(alone, np.ndarray) and alone.shape == (2, H, W, 3)


def test_weights_classes_and_multi_label_rows(frame):
    x, y, w = flow(frame, weight_col="weight", batch_size=3)[0]
    np.testing.assert_array_equal(w, [1.0, 2.0, 3.0])
    it = flow(frame, classes=["dog", "cat"], batch_size=8)
    assert it.class_indices == {"dog": 0, "cat": 1} and it.filenames == ["0.png", "1.png", "2.png", "4.png",
                                                                         "5.png"]
    _, y = it[0]
    np.testing.assert_array_equal(y, [[0, 1], [1, 0], [0, 1], [1, 0], [0, 1]])
    _, y = flow(frame, y_col="tags", batch_size=6)[0]
    np.testing.assert_array_equal(y, [[0, 1, 1], [0, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0]])


def test_paths_without_directory_and_without_validation(frame, capsys):
    df, folder = frame
    absolute = df.assign(filename=[os.path.join(folder, f) for f in df["filename"]]).iloc[:6]
    it = ImageDataGenerator().flow_from_dataframe(absolute, target_size=(H, W), shuffle=False, batch_size=6)
    np.testing.assert_array_equal(it[0][0][5], pixels(5))
    capsys.readouterr()
    unchecked = flow(frame, validate_filenames=False)
    assert capsys.readouterr().out == "Found 8 non-validated image filenames belonging to 3 classes.\n"
    assert unchecked.samples == 8


def test_subsets_and_seeded_shuffling(frame):
    df, folder = frame
    gen = ImageDataGenerator(validation_split=0.5)
    val = gen.flow_from_dataframe(df, folder, target_size=(H, W), subset="validation", shuffle=False)
    train = gen.flow_from_dataframe(df, folder, target_size=(H, W), subset="training", shuffle=False)
    assert val.filenames == ["0.png", "1.png", "2.png"] and train.filenames == ["3.png", "4.png", "5.png"]
    first = [flow(frame, shuffle=True, seed=3, batch_size=6)[0] for _ in range(2)]
    np.testing.assert_array_equal(first[0][0], first[1][0])
    order = [next(i for i in range(6) if np.array_equal(img, pixels(i))) for img in first[0][0]]
    assert sorted(order) == list(range(6))
    resized = flow(frame, target_size=(4, 3), batch_size=1)[0][0]
    assert resized.shape == (1, 4, 3, 3)


def test_a_model_trains_from_the_iterator(frame):
    K.utils.set_random_seed(2)
    df, folder = frame
    many = pd.concat([df.iloc[:6]] * 6, ignore_index=True)
    it = ImageDataGenerator(rescale=1 / 255.).flow_from_dataframe(many, folder, target_size=(H, W), batch_size=6,
                                                                  seed=1)
    model = K.Sequential([K.Input((H, W, 3)), K.layers.GlobalAveragePooling2D(), K.layers.Dense(16, "relu"),
                          K.layers.Dense(3, "softmax")])
    model.compile(K.optimizers.Adam(0.05), "categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(it, epochs=15, verbose=0)
    assert history.history["accuracy"][-1] == 1.0


def test_keras_errors_and_legacy_arguments(frame):
    df, folder = frame
    gen = ImageDataGenerator()
    with pytest.raises(ValueError, match="Invalid class_mode: onehot"):
        gen.flow_from_dataframe(df, folder, class_mode="onehot")
    with pytest.raises(ValueError, match='If class_mode="binary" there must be 2 classes. Found 3 classes.'):
        gen.flow_from_dataframe(df, folder, class_mode="binary")
    with pytest.raises(TypeError, match='If class_mode="sparse", y_col="size" column values must be strings.'):
        gen.flow_from_dataframe(df, folder, y_col="size", class_mode="sparse")
    with pytest.raises(TypeError, match="All values in column x_col=size must be strings."):
        gen.flow_from_dataframe(df, folder, x_col="size")
    with pytest.raises(TypeError, match="Column weight_col=class must be numeric."):
        gen.flow_from_dataframe(df, folder, weight_col="class")
    with pytest.raises(TypeError, match='If class_mode="multi_output", y_col must be a list. Received str.'):
        gen.flow_from_dataframe(df, folder, y_col="score", class_mode="multi_output")
    with pytest.warns(DeprecationWarning, match='`class_mode` "other" is deprecated'):
        it = gen.flow_from_dataframe(df, folder, y_col="score", class_mode="other", target_size=(H, W),
                                     shuffle=False)
    assert it.class_mode == "raw"
    with pytest.warns(DeprecationWarning, match="has_ext is deprecated"):
        gen.flow_from_dataframe(df, folder, has_ext=True)
