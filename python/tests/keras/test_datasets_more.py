"""keras.datasets' cifar10, cifar100, imdb, reuters and boston_housing (Keras 2.15) on small files of Keras'
formats in a temporary Keras cache ($KERAS_HOME), with the network cut: Keras' origins, cache names and hashes,
and every argument checked against the tests' own NumPy reading of Keras' documented rules."""
import logging
import os
import shutil
import urllib.error
import urllib.request

import numpy as np
import pytest

import kiln as tf
from dataset_files import (cifar10_batches, cifar100_batches, md5, sha256, word_sequences, write_cifar_archive,
                           write_json, write_npz)

datasets = tf.keras.datasets
ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    """An empty Keras cache, and no network: a download fails as urllib fails offline."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))

    def offline(url, *args, **kwargs):
        raise urllib.error.URLError("no network in the tests")
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    return str(tmp_path)


# ---- what each loader asks get_file for ---------------------------------------------------------------------

class _Asked(Exception):
    pass


@pytest.mark.parametrize("call, expected", [
    (lambda: datasets.cifar10.load_data(),
     dict(fname="cifar-10-batches-py", origin="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", untar=True,
          file_hash="6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce")),
    (lambda: datasets.cifar100.load_data(),
     dict(fname="cifar-100-python", origin="https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz", untar=True,
          file_hash="85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7")),
    (lambda: datasets.imdb.load_data(),
     dict(fname="imdb.npz", origin=ORIGIN + "imdb.npz",
          file_hash="69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f")),
    (lambda: datasets.imdb.load_data(path="mine.npz"),
     dict(fname="mine.npz", origin=ORIGIN + "imdb.npz",
          file_hash="69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f")),
    (lambda: datasets.imdb.get_word_index(),
     dict(fname="imdb_word_index.json", origin=ORIGIN + "imdb_word_index.json",
          file_hash="bfafd718b763782e994055a2d397834f")),
    (lambda: datasets.reuters.load_data(),
     dict(fname="reuters.npz", origin=ORIGIN + "reuters.npz",
          file_hash="d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916")),
    (lambda: datasets.reuters.get_word_index(),
     dict(fname="reuters_word_index.json", origin=ORIGIN + "reuters_word_index.json",
          file_hash="4d44cc38712099c9e383dc6e5f11a921")),
    (lambda: datasets.boston_housing.load_data(),
     dict(fname="boston_housing.npz", origin=ORIGIN + "boston_housing.npz",
          file_hash="f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5")),
])
def test_loaders_ask_get_file_for_keras_files(keras_home, monkeypatch, call, expected):
    from kiln.keras import _file_utils
    asked = {}

    def get_file(fname=None, origin=None, untar=False, file_hash=None, **kwargs):
        asked.update(fname=fname, origin=origin, file_hash=file_hash, **({"untar": True} if untar else {}))
        assert kwargs == {}  # Keras' default cache_subdir ("datasets") and hash algorithm
        raise _Asked
    monkeypatch.setattr(_file_utils, "get_file", get_file)
    with pytest.raises(_Asked):
        call()
    assert asked == expected


@pytest.mark.parametrize("call, origin", [
    (lambda: datasets.cifar10.load_data(), "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"),
    (lambda: datasets.cifar100.load_data(label_mode="coarse"),
     "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"),
    (lambda: datasets.imdb.load_data(), ORIGIN + "imdb.npz"),
    (lambda: datasets.imdb.get_word_index(), ORIGIN + "imdb_word_index.json"),
    (lambda: datasets.reuters.load_data(), ORIGIN + "reuters.npz"),
    (lambda: datasets.reuters.get_word_index(), ORIGIN + "reuters_word_index.json"),
    (lambda: datasets.boston_housing.load_data(), ORIGIN + "boston_housing.npz"),
])
def test_a_missing_file_offline_is_keras_url_fetch_failure(keras_home, call, origin):
    with pytest.raises(Exception, match=f"^URL fetch failure on {origin}: "):
        call()


def test_a_cached_file_of_another_hash_is_fetched_again(keras_home, capsys):
    # Keras' rule: a cached file whose hash is not Keras' is stale, and downloaded again (which fails offline).
    write_npz(keras_home, "boston_housing.npz", x=np.zeros((5, 13)), y=np.zeros(5))
    with pytest.raises(Exception, match="^URL fetch failure on " + ORIGIN + "boston_housing.npz"):
        datasets.boston_housing.load_data()
    assert "file hash does not match the original value of f553886a" in capsys.readouterr().out


# ---- CIFAR ----------------------------------------------------------------------------------------------------

def channels_last_images(data):
    """CIFAR's rows [N, 3072] (plane, row, column) as [N, 32, 32, 3] pixels, element by element."""
    n = len(data)
    out = np.zeros((n, 32, 32, 3), np.uint8)
    for channel in range(3):
        for row in range(32):
            out[:, row, :, channel] = data[:, channel * 1024 + row * 32: channel * 1024 + row * 32 + 32]
    return out


def test_cifar10_unpacks_keras_archive_and_reads_the_batches_in_order(keras_home, monkeypatch):
    batches = cifar10_batches(per_batch=20, test=15)
    archive = write_cifar_archive(keras_home, "cifar-10-batches-py", batches)
    monkeypatch.setattr(datasets.cifar10, "FILE_HASH", sha256(archive))  # the synthetic archive's own hash
    (x_train, y_train), (x_test, y_test) = datasets.cifar10.load_data()
    assert os.path.isfile(os.path.join(keras_home, "datasets", "cifar-10-batches-py", "data_batch_5"))

    train_data = np.concatenate([batches[f"data_batch_{i}"]["data"] for i in range(1, 6)])
    train_labels = sum((batches[f"data_batch_{i}"]["labels"] for i in range(1, 6)), [])
    assert x_train.shape == (100, 32, 32, 3) and x_train.dtype == np.uint8
    assert x_test.shape == (15, 32, 32, 3) and x_test.dtype == np.uint8
    assert y_train.shape == (100, 1) and y_train.dtype == np.uint8
    assert y_test.shape == (15, 1) and y_test.dtype == np.uint8
    np.testing.assert_array_equal(x_train, channels_last_images(train_data))
    np.testing.assert_array_equal(x_test, channels_last_images(batches["test_batch"]["data"]))
    assert y_train[:, 0].tolist() == train_labels
    assert y_test[:, 0].tolist() == batches["test_batch"]["labels"]


def test_cifar10_reads_an_unpacked_copy_without_the_archive(keras_home):
    # Keras reads the unpacked directory whatever the archive (it never unpacks over it); Kiln reads it offline.
    batches = cifar10_batches(per_batch=4, test=3, seed=5)
    write_cifar_archive(keras_home, "unpack-me", batches)
    shutil.unpack_archive(os.path.join(keras_home, "datasets", "unpack-me.tar.gz"), keras_home)
    os.rename(os.path.join(keras_home, "unpack-me"), os.path.join(keras_home, "datasets", "cifar-10-batches-py"))
    (x_train, y_train), (x_test, _) = datasets.cifar10.load_data()
    assert x_train.shape == (20, 32, 32, 3) and x_test.shape == (3, 32, 32, 3)
    np.testing.assert_array_equal(x_train[:4], channels_last_images(batches["data_batch_1"]["data"]))
    # A directory that lacks a batch is not Keras' unpacked archive: the archive is asked for.
    os.remove(os.path.join(keras_home, "datasets", "cifar-10-batches-py", "test_batch"))
    with pytest.raises(Exception, match="^URL fetch failure on https://www.cs.toronto.edu/~kriz/cifar-10-python"):
        datasets.cifar10.load_data()


@pytest.mark.parametrize("label_mode", ["fine", "coarse"])
def test_cifar100_label_modes(keras_home, monkeypatch, label_mode):
    batches = cifar100_batches(train=30, test=12)
    archive = write_cifar_archive(keras_home, "cifar-100-python", batches)
    monkeypatch.setattr(datasets.cifar100, "FILE_HASH", sha256(archive))
    (x_train, y_train), (x_test, y_test) = datasets.cifar100.load_data(label_mode=label_mode)
    assert x_train.shape == (30, 32, 32, 3) and x_test.shape == (12, 32, 32, 3) and x_train.dtype == np.uint8
    np.testing.assert_array_equal(x_train, channels_last_images(batches["train"]["data"]))
    np.testing.assert_array_equal(x_test, channels_last_images(batches["test"]["data"]))
    # Keras 2.15 reshapes the pickled list: int64 labels (its docstring says uint8).
    assert y_train.shape == (30, 1) and y_test.shape == (12, 1) and y_train.dtype == np.int64
    assert y_train[:, 0].tolist() == batches["train"][label_mode + "_labels"]
    assert y_test[:, 0].tolist() == batches["test"][label_mode + "_labels"]


def test_cifar100_refuses_other_label_modes():
    with pytest.raises(ValueError, match=r'^`label_mode` must be one of `"fine"`, `"coarse"`. Received: '
                                         r'label_mode=medium.$'):
        datasets.cifar100.load_data(label_mode="medium")


# ---- imdb and reuters: the tests' reading of Keras' documented rules ----------------------------------------

def reference_sequences(sequences, labels, rng, start_char, index_from, maxlen):
    """Shuffled (rng's permutation), marked, offset and length-filtered sequences as int64 arrays."""
    order = rng.permutation(len(sequences))
    out, kept_labels = [], []
    for i in order:
        seq = np.asarray(sequences[i], dtype=np.int64) + index_from
        if start_char is not None:
            seq = np.concatenate([[start_char], seq])
        if not maxlen or len(seq) < maxlen:
            out.append(seq)
            kept_labels.append(labels[i])
    return out, kept_labels


def reference_vocabulary(sequences, num_words, skip_top, oov_char):
    bound = num_words or max(int(s.max()) for s in sequences)  # Keras: the largest index, itself excluded
    keep = [(s >= skip_top) & (s < bound) for s in sequences]
    if oov_char is None:
        return [s[k].tolist() for s, k in zip(sequences, keep)]
    return [np.where(k, s, oov_char).tolist() for s, k in zip(sequences, keep)]


def assert_sequences(actual, expected):
    assert actual.dtype == object and actual.shape[0] == len(expected)
    assert [list(row) for row in actual] == expected
    assert all(type(w) is int or isinstance(w, np.integer) for row in actual for w in row)


@pytest.fixture
def imdb_file(keras_home, monkeypatch):
    rng = np.random.default_rng(3)
    arrays = dict(x_train=word_sequences(rng, 40, 30, 12), y_train=rng.integers(0, 2, 40),
                  x_test=word_sequences(rng, 25, 30, 12), y_test=rng.integers(0, 2, 25))
    path = write_npz(keras_home, "imdb.npz", **arrays)
    monkeypatch.setattr(datasets.imdb, "FILE_HASH", sha256(path))
    return arrays


IMDB_CASES = [
    {}, {"num_words": 12}, {"num_words": 12, "skip_top": 5}, {"skip_top": 7, "oov_char": None},
    {"maxlen": 8}, {"maxlen": 8, "num_words": 20, "oov_char": 0}, {"seed": 7}, {"start_char": None},
    {"start_char": None, "index_from": 0}, {"start_char": 9, "index_from": 10, "num_words": 25},
]


@pytest.mark.parametrize("kwargs", IMDB_CASES)
def test_imdb_arguments(imdb_file, kwargs):
    args = dict(num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2, index_from=3)
    args.update(kwargs)
    (x_train, y_train), (x_test, y_test) = datasets.imdb.load_data(**kwargs)

    rng = np.random.RandomState(args["seed"])  # one generator: the training set's draw, then the test set's
    train, train_labels = reference_sequences(imdb_file["x_train"], imdb_file["y_train"], rng, args["start_char"],
                                              args["index_from"], args["maxlen"])
    test, test_labels = reference_sequences(imdb_file["x_test"], imdb_file["y_test"], rng, args["start_char"],
                                            args["index_from"], args["maxlen"])
    cut = reference_vocabulary(train + test, args["num_words"], args["skip_top"], args["oov_char"])
    assert_sequences(x_train, cut[:len(train)])
    assert_sequences(x_test, cut[len(train):])
    assert y_train.tolist() == train_labels and y_test.tolist() == test_labels
    assert y_train.dtype == imdb_file["y_train"].dtype
    if args["num_words"]:
        assert max(max(row) for row in list(x_train) + list(x_test)) < args["num_words"]
    if args["maxlen"]:
        assert len(x_train) < 40 and max(len(row) for row in x_train) < args["maxlen"]


def test_imdb_default_shuffle_is_seed_113(imdb_file):
    (x_default, y_default), _ = datasets.imdb.load_data()
    (x_113, y_113), _ = datasets.imdb.load_data(seed=113)
    (x_other, _), _ = datasets.imdb.load_data(seed=1)
    assert [list(r) for r in x_default] == [list(r) for r in x_113] and y_default.tolist() == y_113.tolist()
    assert [list(r) for r in x_default] != [list(r) for r in x_other]


def test_imdb_errors_and_old_keyword(imdb_file, caplog):
    with pytest.raises(ValueError, match="^After filtering for sequences shorter than maxlen=2, no sequence was "
                                         "kept. Increase maxlen.$"):
        datasets.imdb.load_data(maxlen=2)  # every sequence has start_char and a word
    with pytest.raises(TypeError, match=r"^Unrecognized keyword arguments: \{'words': 5\}.$"):
        datasets.imdb.load_data(words=5)
    with caplog.at_level(logging.WARNING):
        (x_old, _), _ = datasets.imdb.load_data(nb_words=10)
    assert "The `nb_words` argument in `load_data` has been renamed `num_words`." in caplog.text
    (x_new, _), _ = datasets.imdb.load_data(num_words=10)
    assert [list(r) for r in x_old] == [list(r) for r in x_new]


def test_imdb_sequences_of_one_length_make_a_2d_object_array(keras_home, monkeypatch):
    # Keras' np.array(list of lists, dtype="object"): equal lengths give rows of a 2-D array.
    x = np.empty(4, dtype=object)
    for i in range(4):
        x[i] = [i + 1, i + 2]
    path = write_npz(keras_home, "imdb.npz", x_train=x, y_train=np.arange(4), x_test=x, y_test=np.arange(4))
    monkeypatch.setattr(datasets.imdb, "FILE_HASH", sha256(path))
    (x_train, _), (x_test, _) = datasets.imdb.load_data()
    assert x_train.shape == (4, 3) and x_train.dtype == object


def test_imdb_reads_path_from_the_cache_or_an_absolute_path(imdb_file, keras_home, monkeypatch, tmp_path):
    source = os.path.join(keras_home, "datasets", "imdb.npz")
    shutil.copy(source, os.path.join(keras_home, "datasets", "renamed.npz"))
    (x_renamed, _), _ = datasets.imdb.load_data(path="renamed.npz")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(source, elsewhere / "copy.npz")
    (x_absolute, _), _ = datasets.imdb.load_data(path=str(elsewhere / "copy.npz"))
    (x_default, _), _ = datasets.imdb.load_data()
    assert [list(r) for r in x_renamed] == [list(r) for r in x_default] == [list(r) for r in x_absolute]


@pytest.fixture
def reuters_file(keras_home, monkeypatch):
    rng = np.random.default_rng(4)
    arrays = dict(x=word_sequences(rng, 50, 40, 15), y=rng.integers(0, 46, 50))
    path = write_npz(keras_home, "reuters.npz", **arrays)
    monkeypatch.setattr(datasets.reuters, "FILE_HASH", sha256(path))
    return arrays


@pytest.mark.parametrize("kwargs", IMDB_CASES + [{"test_split": 0.5}, {"test_split": 0.0}, {"test_split": 0.33,
                                                                                             "maxlen": 9}])
def test_reuters_arguments(reuters_file, kwargs):
    args = dict(num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113, start_char=1, oov_char=2,
                index_from=3)
    args.update(kwargs)
    (x_train, y_train), (x_test, y_test) = datasets.reuters.load_data(**kwargs)

    xs, labels = reference_sequences(reuters_file["x"], reuters_file["y"], np.random.RandomState(args["seed"]),
                                     args["start_char"], args["index_from"], args["maxlen"])
    xs = reference_vocabulary(xs, args["num_words"], args["skip_top"], args["oov_char"])
    cut = int(len(xs) * (1 - args["test_split"]))
    assert_sequences(x_train, xs[:cut])
    assert_sequences(x_test, xs[cut:])
    assert y_train.tolist() == labels[:cut] and y_test.tolist() == labels[cut:]
    assert isinstance(y_train, np.ndarray) and y_train.dtype == reuters_file["y"].dtype


def test_reuters_keywords_and_label_names(reuters_file):
    with pytest.raises(TypeError, match=r"^Unrecognized keyword arguments: \{'split': 0.1\}$"):
        datasets.reuters.load_data(split=0.1)
    names = datasets.reuters.get_label_names()
    assert isinstance(names, tuple) and len(names) == 46
    assert (names[0], names[3], names[4], names[19], names[45]) == ("cocoa", "earn", "acq", "money-fx", "lead")


@pytest.mark.parametrize("module, name", [("imdb", "imdb_word_index.json"), ("reuters", "reuters_word_index.json")])
def test_word_index(keras_home, monkeypatch, module, name):
    index = {"the": 1, "and": 2, "a": 3, "of": 4}
    path = write_json(keras_home, name, index)
    loader = getattr(datasets, module)
    monkeypatch.setattr(loader, "WORD_INDEX_HASH", md5(path))  # Keras checks these with md5
    assert loader.get_word_index() == index
    os.rename(path, os.path.join(keras_home, "datasets", "other.json"))
    assert loader.get_word_index(path="other.json") == index


# ---- boston_housing ------------------------------------------------------------------------------------------

@pytest.fixture
def boston_file(keras_home, monkeypatch):
    rng = np.random.default_rng(5)
    arrays = dict(x=rng.normal(size=(37, 13)), y=rng.uniform(10, 50, 37))
    path = write_npz(keras_home, "boston_housing.npz", **arrays)
    monkeypatch.setattr(datasets.boston_housing, "FILE_HASH", sha256(path))
    return arrays


@pytest.mark.parametrize("kwargs", [{}, {"test_split": 0.5}, {"test_split": 0.0}, {"seed": 3},
                                    {"test_split": 0.9, "seed": 0}])
def test_boston_housing_split_and_seed(boston_file, kwargs):
    test_split, seed = kwargs.get("test_split", 0.2), kwargs.get("seed", 113)
    (x_train, y_train), (x_test, y_test) = datasets.boston_housing.load_data(**kwargs)
    order = np.random.RandomState(seed).permutation(37)
    cut = int(37 * (1 - test_split))
    np.testing.assert_array_equal(x_train, boston_file["x"][order[:cut]])
    np.testing.assert_array_equal(y_train, boston_file["y"][order[:cut]])
    np.testing.assert_array_equal(x_test, boston_file["x"][order[cut:]])
    np.testing.assert_array_equal(y_test, boston_file["y"][order[cut:]])
    assert x_train.shape == (cut, 13) and y_test.shape == (37 - cut,) and x_train.dtype == np.float64


@pytest.mark.parametrize("test_split", [1.0, -0.1])
def test_boston_housing_refuses_a_split_outside_0_1(boston_file, test_split):
    with pytest.raises(AssertionError):
        datasets.boston_housing.load_data(test_split=test_split)
