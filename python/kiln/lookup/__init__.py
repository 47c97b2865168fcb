"""tf.lookup: hash tables from keys (strings, integers) to values, and their initializers."""
from ._initializers import KeyValueTensorInitializer, TextFileIndex, TextFileInitializer  # noqa: F401
from ._tables import StaticHashTable, StaticVocabularyTable  # noqa: F401
from . import experimental  # noqa: F401
