"""tf.lookup.experimental: the mutable tables and the dataset initializer."""
from ._initializers import DatasetInitializer  # noqa: F401
from ._tables import DenseHashTable, MutableHashTable  # noqa: F401


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None, hasher_spec=None,
                       key_dtype=None, name=None):
    """A static table of a dataset's (key, value) pairs (the first vocab_size of them): a StaticVocabularyTable
    when num_oov_buckets, else a StaticHashTable with default_value. Only TF's fast hash is offered."""
    from ._tables import StaticHashTable, StaticVocabularyTable
    if dataset is None:
        raise ValueError("`dataset` must be specified.")
    if hasher_spec is not None and getattr(hasher_spec, "hasher", "fasthash") != "fasthash":
        raise NotImplementedError("kiln.lookup: only the fast hash (Fingerprint64) is supported")
    if vocab_size is not None:
        dataset = dataset.take(vocab_size)
    initializer = DatasetInitializer(dataset)
    if num_oov_buckets:
        return StaticVocabularyTable(initializer, num_oov_buckets, lookup_key_dtype=key_dtype, name=name)
    return StaticHashTable(initializer, default_value, name=name)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=-1, hasher_spec=None,
                             key_dtype=None, name=None):
    """A table from a dataset's keys to their positions (int64), as table_from_dataset."""
    if dataset is None:
        raise ValueError("`dataset` must be specified.")
    return table_from_dataset(dataset.enumerate().map(lambda index, key: (key, index)), num_oov_buckets, vocab_size,
                              default_value, hasher_spec, key_dtype, name)
