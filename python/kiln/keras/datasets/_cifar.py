"""What cifar10 and cifar100 share (Keras 2.15's cifar.py and the two load_data functions): the archive in Keras'
cache, its pickled batches, and Keras' channels_last images.

A batch file is a pickled dict with bytes keys: b"data", a uint8 array [N, 3072] (each row the red, green and blue
32x32 planes in turn), and the label lists (b"labels"; CIFAR-100's b"fine_labels" and b"coarse_labels")."""
import os
import pickle

import numpy as np

_ORIGIN = "https://www.cs.toronto.edu/~kriz/"


def load_batch(fpath, label_key="labels"):
    """(data [N, 3, 32, 32] uint8, labels as the file's list) of one pickled batch."""
    with open(fpath, "rb") as f:
        batch = pickle.load(f, encoding="bytes")
    batch = {key.decode("utf8"): value for key, value in batch.items()}
    data = batch["data"]
    return data.reshape(data.shape[0], 3, 32, 32), batch[label_key]


def batches_directory(dirname, archive, file_hash, members):
    """The unpacked archive in Keras' cache ($KERAS_HOME or ~/.keras, datasets/DIRNAME), fetched and unpacked by
    get_file when missing.

    Keras asks get_file for the archive first, but reads the directory it finds, and never unpacks over one: an
    unpacked directory holding every batch is what it would read whatever the archive, so Kiln reads it without
    asking for the archive, and runs offline."""
    from .._file_utils import _cache_dir, get_file
    base = _cache_dir(None)
    if os.path.isdir(base) and not os.access(base, os.W_OK):
        base = os.path.join("/tmp", ".keras")  # get_file's cache when Keras' is read-only
    unpacked = os.path.join(base, "datasets", dirname)
    if all(os.path.isfile(os.path.join(unpacked, name)) for name in members):
        return unpacked
    return get_file(dirname, origin=_ORIGIN + archive, untar=True, file_hash=file_hash)


def channels_last(images):
    """Keras' images are [N, 32, 32, 3] unless keras.backend's image_data_format is channels_first."""
    from .. import backend
    return images.transpose(0, 2, 3, 1) if backend.image_data_format() == "channels_last" else images


def labels_column(labels):
    """A batch's label list as Keras returns it: a column [N, 1] (np.reshape of the list)."""
    return np.reshape(labels, (len(labels), 1))
