"""keras.utils' data helpers real programs call: pad_sequences (the values of Keras' docstring examples), the image
array helpers on PIL, text_dataset_from_directory / image_dataset_from_directory (Keras' file order, split and
printed lines), set_random_seed and normalize."""
import os
import random

import numpy as np
import pytest

import kiln as tf
from kiln import keras


def test_pad_sequences_as_keras_documents():
    sequence = [[1], [2, 3], [4, 5, 6]]
    np.testing.assert_array_equal(keras.utils.pad_sequences(sequence), [[0, 0, 1], [0, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(sequence, value=-1),
                                  [[-1, -1, 1], [-1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(sequence, padding="post"),
                                  [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(sequence, maxlen=2), [[0, 1], [2, 3], [5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(sequence, maxlen=2, truncating="post"),
                                  [[0, 1], [2, 3], [4, 5]])
    assert keras.utils.pad_sequences(sequence).dtype == np.int32
    assert keras.preprocessing.sequence.pad_sequences is keras.utils.pad_sequences
    with pytest.raises(ValueError, match="Padding type"):
        keras.utils.pad_sequences(sequence, padding="middle")


def test_image_arrays_and_files_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (6, 5, 3)).astype("float32")
    img = keras.utils.array_to_img(rgb, scale=False)
    assert (img.mode, img.size) == ("RGB", (5, 6))
    np.testing.assert_array_equal(keras.utils.img_to_array(img), rgb)
    gray = keras.preprocessing.image.array_to_img(np.linspace(0, 1, 12, dtype="float32").reshape(3, 4, 1))
    assert gray.mode == "L"
    np.testing.assert_array_equal(np.asarray(gray)[0], [0, 23, 46, 69])  # scale=True stretches to 0..255
    path = os.path.join(tmp_path, "x.png")
    keras.utils.save_img(path, rgb, scale=False)
    np.testing.assert_array_equal(keras.utils.img_to_array(keras.utils.load_img(path)), rgb)
    small = keras.utils.load_img(path, color_mode="grayscale", target_size=(3, 2))
    assert (small.mode, small.size) == ("L", (2, 3))
    with pytest.raises(ValueError, match="rank 3"):
        keras.utils.array_to_img(np.zeros((2, 2)))


def _write_texts(root):
    for label, count in (("neg", 4), ("pos", 6)):
        os.makedirs(os.path.join(root, label))
        for i in range(count):
            with open(os.path.join(root, label, f"{i}.txt"), "w") as f:
                f.write(f"{label} review number {i}")
    with open(os.path.join(root, "pos", "notes.md"), "w") as f:
        f.write("not a .txt file")


def test_text_dataset_from_directory_follows_keras(tmp_path, capsys):
    _write_texts(str(tmp_path))
    train = keras.utils.text_dataset_from_directory(str(tmp_path), batch_size=4, validation_split=0.2,
                                                    subset="training", seed=1337)
    val = keras.utils.text_dataset_from_directory(str(tmp_path), batch_size=4, validation_split=0.2,
                                                  subset="validation", seed=1337)
    assert capsys.readouterr().out.splitlines() == [
        "Found 10 files belonging to 2 classes.", "Using 8 files for training.",
        "Found 10 files belonging to 2 classes.", "Using 2 files for validation."]
    assert train.class_names == ["neg", "pos"] and int(train.cardinality()) == 2
    texts, labels = [], []
    for ds in (train, val):
        for t, y in ds:
            assert t.dtype == tf.string and y.dtype == tf.int32
            texts += [s.decode() for s in t.numpy()]
            labels += y.numpy().tolist()
    assert sorted(texts) == sorted(f"{c} review number {i}" for c, n in (("neg", 4), ("pos", 6)) for i in range(n))
    for text, label in zip(texts, labels):
        assert text.startswith(["neg", "pos"][label])
    # Keras' shuffle: RandomState(seed) over the sorted paths, the last 20% for validation.
    paths = [os.path.join(str(tmp_path), c, f"{i}.txt") for c, n in (("neg", 4), ("pos", 6)) for i in range(n)]
    np.random.RandomState(1337).shuffle(paths)
    assert sorted(val.file_paths) == sorted(paths[-2:])
    ordered = keras.utils.text_dataset_from_directory(str(tmp_path), batch_size=None, shuffle=False,
                                                      label_mode="binary", class_names=["pos", "neg"],
                                                      max_length=3)
    first = next(iter(ordered))
    assert first[0].numpy() == b"pos" and first[1].numpy().tolist() == [0.0]


def test_dataset_from_directory_argument_errors(tmp_path):
    _write_texts(str(tmp_path))
    with pytest.raises(ValueError, match="must provide a `seed`"):
        keras.utils.text_dataset_from_directory(str(tmp_path), validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="`validation_split` must be set"):
        keras.utils.text_dataset_from_directory(str(tmp_path), subset="training", seed=1)
    with pytest.raises(ValueError, match="class_names"):
        keras.utils.text_dataset_from_directory(str(tmp_path), class_names=["pos", "other"])


def test_image_dataset_from_directory(tmp_path):
    rng = np.random.default_rng(0)
    for label in ("cat", "dog"):
        os.makedirs(os.path.join(tmp_path, label))
        for i in range(3):
            keras.utils.save_img(os.path.join(tmp_path, label, f"{i}.png"),
                                 rng.integers(0, 256, (10, 12, 3)).astype("float32"), scale=False)
    train, val = keras.utils.image_dataset_from_directory(str(tmp_path), image_size=(8, 8), batch_size=2,
                                                          validation_split=0.5, subset="both", seed=3)
    images, labels = next(iter(train))
    assert images.shape == (2, 8, 8, 3) and images.dtype == tf.float32 and labels.dtype == tf.int32
    assert train.class_names == ["cat", "dog"] and int(val.cardinality()) == 2


def test_set_random_seed_and_normalize():
    keras.utils.set_random_seed(7)
    a = (random.random(), np.random.random(), tf.random.uniform([2]).numpy())
    keras.utils.set_random_seed(7)
    b = (random.random(), np.random.random(), tf.random.uniform([2]).numpy())
    assert a[:2] == b[:2]
    np.testing.assert_array_equal(a[2], b[2])
    np.testing.assert_allclose(keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0, 0]])


def test_get_file_uses_the_cache_downloads_and_extracts(tmp_path, monkeypatch, capsys):
    import hashlib
    import zipfile
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    source = tmp_path / "remote"
    source.mkdir()
    (source / "data.txt").write_text("hello")
    with zipfile.ZipFile(source / "bundle.zip", "w") as z:
        z.writestr("bundle.csv", "a,b\n1,2\n")
    # A file:// origin stands in for the network: the first call downloads, the second finds the cached copy.
    path = keras.utils.get_file("data.txt", (source / "data.txt").as_uri())
    assert path == str(tmp_path / "home" / "datasets" / "data.txt") and open(path).read() == "hello"
    assert capsys.readouterr().out.startswith("Downloading data from file://")
    (source / "data.txt").write_text("changed")
    assert open(keras.utils.get_file("data.txt", (source / "data.txt").as_uri())).read() == "hello"
    assert capsys.readouterr().out == ""
    sha = hashlib.sha256(b"changed").hexdigest()
    path = keras.utils.get_file("data.txt", (source / "data.txt").as_uri(), file_hash=sha)  # stale: fetched again
    assert open(path).read() == "changed"
    zip_path = keras.utils.get_file(origin=(source / "bundle.zip").as_uri(), fname="bundle.zip", extract=True)
    assert open(zip_path.replace(".zip", ".csv")).read() == "a,b\n1,2\n"
    with pytest.raises(Exception, match="URL fetch failure on file://"):
        keras.utils.get_file("gone.txt", (source / "gone.txt").as_uri())
    with pytest.raises(ValueError, match="file hash does not match"):
        keras.utils.get_file("other.txt", (source / "data.txt").as_uri(), file_hash="0" * 64)


def test_fashion_mnist_reads_keras_cache(tmp_path, monkeypatch):
    import gzip
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    directory = tmp_path / "datasets" / "fashion-mnist"
    directory.mkdir(parents=True)
    images = np.arange(3 * 28 * 28, dtype=np.uint32).astype(np.uint8).reshape(3, 28, 28)
    for prefix in ("train", "t10k"):
        with gzip.open(directory / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(b"\0\0\x08\x01" + (3).to_bytes(4, "big") + bytes([7, 0, 9]))
        with gzip.open(directory / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(b"\0\0\x08\x03" + (3).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + images.tobytes())
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    assert x_train.shape == (3, 28, 28) and x_train.dtype == np.uint8 and y_test.tolist() == [7, 0, 9]
    np.testing.assert_array_equal(x_test, images)


@pytest.mark.parametrize("fname", ["aclImdb_v1", "aclImdb_v1.tar.gz"])
def test_get_file_untar_unpacks_name_tar_gz_to_name(tmp_path, monkeypatch, fname):
    # Keras' rule (the text tutorial's get_file("aclImdb_v1.tar.gz", url, untar=True)): the archive is kept as
    # NAME.tar.gz and unpacked beside it, and the path returned is NAME.
    import tarfile
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    (tmp_path / "aclImdb").mkdir()
    (tmp_path / "aclImdb" / "README").write_text("reviews")
    with tarfile.open(tmp_path / "remote.tar.gz", "w:gz") as t:
        t.add(tmp_path / "aclImdb", arcname="aclImdb")
    path = keras.utils.get_file(fname, (tmp_path / "remote.tar.gz").as_uri(), untar=True)
    datasets = tmp_path / "home" / "datasets"
    assert path == str(datasets / "aclImdb_v1")
    assert (datasets / "aclImdb_v1.tar.gz").exists()
    assert (datasets / "aclImdb" / "README").read_text() == "reviews"


def test_get_file_refuses_a_tar_member_outside_the_cache(tmp_path, monkeypatch):
    import io
    import tarfile
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    with tarfile.open(tmp_path / "evil.tar.gz", "w:gz") as t:
        data = b"owned"
        info = tarfile.TarInfo("../../escaped.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    with pytest.raises((ValueError, tarfile.TarError)):  # newer Pythons: tarfile's own filter error
        keras.utils.get_file("evil", (tmp_path / "evil.tar.gz").as_uri(), untar=True)
    assert not (tmp_path / "escaped.txt").exists()
