"""tf.lookup.experimental: the mutable tables and the dataset initializer."""
from ._initializers import DatasetInitializer  # noqa: F401
from ._tables import DenseHashTable, MutableHashTable  # noqa: F401
