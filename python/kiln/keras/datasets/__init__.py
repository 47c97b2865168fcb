"""kiln.keras.datasets (tf.keras.datasets): Keras 2.15's seven. All but mnist read Keras' cache and fetch what is
missing from Keras' origin with keras.utils.get_file; mnist reads the repository's digits (mnist.py)."""
from . import boston_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters  # noqa: F401
