"""kiln.keras.datasets.fashion_mnist: load_data() as Keras 2.15's: the four gzip IDX files in Keras' cache
(datasets/fashion-mnist under $KERAS_HOME or ~/.keras), fetched by keras.utils.get_file from Keras' origin when
they are not there (Debian's dataset-fashion-mnist copy is read instead of a download), read as uint8 arrays: ((x_train [60000, 28, 28], y_train), (x_test, y_test))."""
import gzip
import os

import numpy as np

_BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_FILES = ["train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
          "t10k-images-idx3-ubyte.gz"]


_DEBIAN = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist: the same four files


def _debian_copy(fname, dirname):
    """Debian's copy of a file missing from Keras' cache: read in place of a download."""
    from .._file_utils import _cache_dir
    cached = os.path.join(_cache_dir(None), dirname, fname)
    local = os.path.join(_DEBIAN, fname)
    return local if not os.path.exists(cached) and os.path.exists(local) else None


def load_data():
    from .._file_utils import get_file
    dirname = os.path.join("datasets", "fashion-mnist")
    paths = [_debian_copy(fname, dirname) or get_file(fname, origin=_BASE + fname, cache_subdir=dirname)
             for fname in _FILES]
    with gzip.open(paths[0], "rb") as f:
        y_train = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[1], "rb") as f:
        x_train = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_train), 28, 28)
    with gzip.open(paths[2], "rb") as f:
        y_test = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(paths[3], "rb") as f:
        x_test = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
