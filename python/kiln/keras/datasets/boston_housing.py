"""kiln.keras.datasets.boston_housing: load_data as Keras 2.15's. boston_housing.npz (x: 506 houses' 13 attributes,
y: their median values in k$) from Keras' origin, checked against Keras' sha256, shuffled by
np.random.RandomState(seed); the first int(n * (1 - test_split)) rows train, the rest test."""
import numpy as np

from ._word_sequences import ORIGIN

FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    from .._file_utils import get_file
    if not 0 <= test_split < 1:  # Keras asserts it
        raise AssertionError(f"test_split must be in [0, 1): {test_split}")
    path = get_file(path, origin=ORIGIN + "boston_housing.npz", file_hash=FILE_HASH)
    with np.load(path, allow_pickle=True) as f:
        x, y = f["x"], f["y"]
    indices = np.arange(len(x))
    np.random.RandomState(seed).shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
