"""kiln.keras.datasets.cifar10: load_data() as Keras 2.15's: cifar-10-python.tar.gz from Keras' origin (checked
against Keras' sha256), unpacked in Keras' cache as datasets/cifar-10-batches-py; its five training batches, then
test_batch, as ((x_train [50000, 32, 32, 3] uint8, y_train [50000, 1] uint8), (x_test [10000, 32, 32, 3],
y_test [10000, 1])), in the files' order."""
import os

import numpy as np

from . import _cifar

DIRNAME = "cifar-10-batches-py"
ARCHIVE = "cifar-10-python.tar.gz"
FILE_HASH = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"
_TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))


def load_data():
    path = _cifar.batches_directory(DIRNAME, ARCHIVE, FILE_HASH, _TRAIN_BATCHES + ("test_batch",))
    # Keras fills a [50000, ...] array batch by batch (10,000 rows each); concatenating gives the same arrays
    # from the real files and also reads smaller batches.
    parts = [_cifar.load_batch(os.path.join(path, name)) for name in _TRAIN_BATCHES]
    x_train = np.concatenate([data for data, _ in parts]).astype("uint8", copy=False)
    y_train = np.concatenate([np.asarray(labels, dtype="uint8") for _, labels in parts])
    x_test, y_test = _cifar.load_batch(os.path.join(path, "test_batch"))
    y_train = _cifar.labels_column(y_train)
    y_test = _cifar.labels_column(y_test)
    x_train, x_test = _cifar.channels_last(x_train), _cifar.channels_last(x_test)
    # Keras casts the test arrays to the training arrays' dtype: uint8 (the label list would be int64).
    return (x_train, y_train), (x_test.astype(x_train.dtype), y_test.astype(y_train.dtype))
