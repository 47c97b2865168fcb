"""Small files in the formats of Keras' datasets, written into a Keras cache (KERAS_HOME/datasets) for the tests,
which have no network: CIFAR's tar.gz of pickled batches, imdb / reuters / boston_housing .npz files, word-index
JSON. Each writer returns what it wrote, for the tests' own reading of it."""
import hashlib
import io
import json
import os
import pickle
import tarfile

import numpy as np


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def cifar_images(rng, labels):
    """Rows of CIFAR's "data" ([N, 3072] uint8: the red, green and blue 32x32 planes in turn) that show their
    class: noise with a bright row at 3 * label (plus 1) in every plane, so a small CNN learns them."""
    n = len(labels)
    planes = rng.integers(0, 90, (n, 3, 32, 32), dtype=np.uint8)
    planes[np.arange(n), :, 1 + 3 * np.asarray(labels, dtype=int), :] = 250
    return planes.reshape(n, 3072)


def _pickled_batch(fields):
    # CIFAR's batches were pickled by Python 2: str keys, which Keras reads back as bytes (encoding="bytes").
    return pickle.dumps({key.encode(): value for key, value in fields.items()}, protocol=2)


def write_cifar_archive(keras_home, dirname, batches):
    """KERAS_HOME/datasets/DIRNAME.tar.gz (the name get_file(DIRNAME, untar=True) keeps Keras' archive under),
    holding DIRNAME/<name> for each {name: fields} of `batches`; its path."""
    directory = os.path.join(keras_home, "datasets")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, dirname + ".tar.gz")
    with tarfile.open(path, "w:gz") as archive:
        for name, fields in batches.items():
            data = _pickled_batch(fields)
            info = tarfile.TarInfo(f"{dirname}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def cifar10_batches(per_batch=20, test=15, seed=0):
    """{file name: fields} of cifar-10-batches-py: data_batch_1..5, test_batch and batches.meta."""
    rng = np.random.default_rng(seed)
    batches = {}
    for name, n in [(f"data_batch_{i}", per_batch) for i in range(1, 6)] + [("test_batch", test)]:
        labels = [int(v) for v in rng.integers(0, 10, n)]
        batches[name] = {"batch_label": f"{name} of 5".encode(), "labels": labels, "data": cifar_images(rng, labels),
                         "filenames": [f"image_{i}.png".encode() for i in range(n)]}
    batches["batches.meta"] = {"num_cases_per_batch": per_batch, "num_vis": 3072,
                               "label_names": [b"airplane", b"automobile", b"bird", b"cat", b"deer", b"dog",
                                               b"frog", b"horse", b"ship", b"truck"]}
    return batches


def cifar100_batches(train=30, test=12, seed=1):
    """{file name: fields} of cifar-100-python: train, test (fine and coarse labels) and meta."""
    rng = np.random.default_rng(seed)
    batches = {}
    for name, n in (("train", train), ("test", test)):
        fine = [int(v) for v in rng.integers(0, 100, n)]
        batches[name] = {"filenames": [f"f{i}.png".encode() for i in range(n)], "batch_label": name.encode(),
                         "fine_labels": fine, "coarse_labels": [v // 5 for v in fine],
                         "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8)}
    batches["meta"] = {"fine_label_names": [f"fine{i}".encode() for i in range(100)],
                       "coarse_label_names": [f"coarse{i}".encode() for i in range(20)]}
    return batches


def word_sequences(rng, n, vocabulary, longest):
    """An object array of n lists of word ranks in [1, vocabulary), of lengths 1..longest (Keras' npz files
    hold lists, pickled)."""
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = [int(w) for w in rng.integers(1, vocabulary, rng.integers(1, longest + 1))]
    return out


def write_npz(keras_home, name, **arrays):
    directory = os.path.join(keras_home, "datasets")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def write_json(keras_home, name, value):
    directory = os.path.join(keras_home, "datasets")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump(value, f)
    return path
