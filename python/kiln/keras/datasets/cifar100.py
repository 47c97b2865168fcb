"""kiln.keras.datasets.cifar100: load_data(label_mode="fine") as Keras 2.15's: cifar-100-python.tar.gz from Keras'
origin (checked against Keras' sha256), unpacked in Keras' cache as datasets/cifar-100-python; its train and test
files as ((x_train [50000, 32, 32, 3] uint8, y_train [50000, 1]), (x_test, y_test)), the labels the 100 fine
classes or, with label_mode="coarse", the 20 superclasses. The labels are int64, as Keras 2.15 returns them
(np.reshape of the pickled list; its docstring says uint8, its code makes int64)."""
import os

from . import _cifar

DIRNAME = "cifar-100-python"
ARCHIVE = "cifar-100-python.tar.gz"
FILE_HASH = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


def load_data(label_mode="fine"):
    if label_mode not in ["fine", "coarse"]:
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    path = _cifar.batches_directory(DIRNAME, ARCHIVE, FILE_HASH, ("train", "test"))
    x_train, y_train = _cifar.load_batch(os.path.join(path, "train"), label_key=label_mode + "_labels")
    x_test, y_test = _cifar.load_batch(os.path.join(path, "test"), label_key=label_mode + "_labels")
    y_train, y_test = _cifar.labels_column(y_train), _cifar.labels_column(y_test)
    return (_cifar.channels_last(x_train), y_train), (_cifar.channels_last(x_test), y_test)
