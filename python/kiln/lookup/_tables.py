"""tf.lookup's tables: StaticHashTable and StaticVocabularyTable (filled once by an initializer), and the
experimental MutableHashTable and DenseHashTable (insert, remove; saved in checkpoints). Each holds a
_core.HashTable; lookups of a SparseTensor or RaggedTensor look its values up and keep its structure."""
import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..errors import InvalidArgumentError
from .._farmhash import hash_bucket_fast
from ._core import HashTable, Typed, run_effect, run_on_host


def _tensor(value, dtype=None, dtype_hint=None):
    from .._ops import convert_to_tensor
    if isinstance(value, (_C.Tensor, _C.Variable)):
        return value
    return convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint)


def _flat_values(keys):
    """The dense tensor of keys, and how to put looked-up values back into keys' structure."""
    from ..ragged_tensor import RaggedTensor
    from ..sparse_tensor import SparseTensor
    if isinstance(keys, SparseTensor):
        return keys.values, lambda values: SparseTensor(keys.indices, values, keys.dense_shape)
    if isinstance(keys, RaggedTensor):
        return keys.flat_values, keys.with_flat_values
    return keys, lambda values: values


def hash_bucket(keys, num_buckets):
    """tf.strings.to_hash_bucket_fast of strings, or of integers' decimal text (TF's as_string), as NumPy."""
    flat = np.asarray(keys).reshape(-1).tolist()
    return np.asarray([hash_bucket_fast(key, num_buckets) for key in flat], np.int64).reshape(np.shape(keys))


class LookupInterface(Typed):
    """A table's dtypes, its name and `table[keys]`."""

    def __init__(self, key_dtype, value_dtype, name):
        super().__init__(key_dtype, value_dtype)
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def resource_handle(self):
        return self  # Kiln's tables are Python objects: the handle is the table

    def __getitem__(self, keys):
        return self.lookup(keys)

    def _check_keys(self, keys):
        keys = keys if hasattr(keys, "dtype") else _tensor(keys, dtype_hint=self._key_dtype)
        if keys.dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}")
        return keys

    def _size_tensor(self, core):
        return run_on_host(lambda: [np.int64(len(core))], [], [_dtypes.int64], [[]])[0]


class StaticHashTable(LookupInterface):
    """keys -> values from an initializer, fixed once made; default_value for the keys it lacks."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        super().__init__(initializer.key_dtype, initializer.value_dtype, name or "hash_table")
        self._initializer = initializer
        self._default_value = _tensor(default_value, dtype=self._value_dtype)
        if self._default_value.shape.rank != 0:
            raise ValueError(f"Shapes {self._default_value.shape} and () are incompatible")
        self._core = HashTable(self._value_dtype)
        initializer.initialize(self)

    @property
    def default_value(self):
        return self._default_value

    def size(self, name=None):
        return _C.constant(np.int64(len(self._core)), _dtypes.int64._enum)

    def lookup(self, keys, name=None):
        keys = self._check_keys(keys)
        flat, rebuild = _flat_values(keys)
        default = self._default_value.numpy()
        values, = run_on_host(lambda k: [self._core.find(k, default)], [flat], [self._value_dtype], [flat.shape.as_list()])
        return rebuild(values)

    def export(self, name=None):
        keys, values = self._core.export(self._key_dtype)
        return (_C.constant(keys, self._key_dtype._enum), _C.constant(values, self._value_dtype._enum))


class StaticVocabularyTable(LookupInterface):
    """String (or integer) -> int64 id from an initializer; a key it lacks goes to one of num_oov_buckets buckets
    after the table's entries, size() + Fingerprint64(key) % num_oov_buckets (an integer hashed as its decimal
    text), as TF's string_to_hash_bucket_fast."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0.")
        if initializer is not None:
            lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype or initializer.key_dtype)
            if initializer.key_dtype not in (_dtypes.int64, _dtypes.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of ({_dtypes.int64!r}, {_dtypes.string!r}), "
                                f"but got {initializer.key_dtype}.")
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                raise TypeError(f"Invalid `key_dtype`, expected "
                                f"{'integer' if lookup_key_dtype.is_integer else 'non-integer'} but got "
                                f"{initializer.key_dtype}.")
            if initializer.value_dtype != _dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`, expected {_dtypes.int64} but got "
                                f"{initializer.value_dtype}.")
            self._table = StaticHashTable(initializer, -1)
        else:
            lookup_key_dtype = _dtypes.string
            self._table = None
        if not lookup_key_dtype.is_integer and lookup_key_dtype != _dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {lookup_key_dtype}")
        self._num_oov_buckets = int(num_oov_buckets)
        super().__init__(lookup_key_dtype, _dtypes.int64, name or ("hash_table" if initializer else "hash_bucket"))

    def size(self, name=None):
        entries = len(self._table._core) if self._table is not None else 0
        return _C.constant(np.int64(entries + self._num_oov_buckets), _dtypes.int64._enum)

    def _ids(self, keys):
        buckets = hash_bucket(keys, self._num_oov_buckets)
        if self._table is None:
            return buckets
        core = self._table._core
        found = core.find(keys, -1)
        return np.where(found != -1, found, buckets + len(core))

    def lookup(self, keys, name=None):
        keys = self._check_keys(keys)
        flat, rebuild = _flat_values(keys)
        ids, = run_on_host(lambda k: [self._ids(k)], [flat], [_dtypes.int64], [flat.shape.as_list()])
        return rebuild(ids)


class _MutableTable(LookupInterface):
    """What MutableHashTable and DenseHashTable share: insert, remove, lookup, export, and their checkpoint
    entries ("<path>/.ATTRIBUTES/table-keys" and "-values", as TF writes them)."""

    def __init__(self, key_dtype, value_dtype, default_value, name, checkpoint):
        super().__init__(key_dtype, value_dtype, name)
        self._default_value = _tensor(default_value, dtype=self._value_dtype)
        self._value_shape = tuple(self._default_value.shape.as_list())
        self._core = HashTable(self._value_dtype, self._value_shape)
        self._checkpoint = checkpoint

    @property
    def default_value(self):
        return self._default_value

    def _check_values(self, keys, values):
        values = _tensor(values, dtype=self._value_dtype) if not hasattr(values, "dtype") else values
        if values.dtype != self._value_dtype:
            raise TypeError(f"Invalid value dtype for table, expected {self._value_dtype} but got {values.dtype}.")
        return values

    def _check_host_keys(self, keys):
        """Keys the table refuses (DenseHashTable's empty and deleted keys)."""

    def _inserted(self):
        """After an insert (DenseHashTable grows its buckets)."""

    def size(self, name=None):
        return self._size_tensor(self._core)

    def insert(self, keys, values, name=None):
        keys = self._check_keys(keys)
        values = self._check_values(keys, values)

        def insert(k, v):
            self._check_host_keys(k)
            if v.shape != k.shape + self._value_shape:
                raise InvalidArgumentError(f"Expected shape {list(k.shape) + list(self._value_shape)} for value, "
                                           f"got {list(v.shape)}")
            self._core.insert(k.reshape(-1), v.reshape((-1,) + self._value_shape))
            self._inserted()
        return run_effect(insert, [keys, values])

    def remove(self, keys, name=None):
        keys = self._check_keys(keys)

        def remove(k):
            self._check_host_keys(k)
            self._core.remove(k)
        return run_effect(remove, [keys])

    def lookup(self, keys, dynamic_default_values=None, name=None):
        keys = self._check_keys(keys)
        flat, rebuild = _flat_values(keys)
        defaults = self._default_value if dynamic_default_values is None else \
            _tensor(dynamic_default_values, dtype=self._value_dtype)

        def find(k, d):
            self._check_host_keys(k)
            return [self._core.find(k, d)]
        shape = flat.shape.as_list() + list(self._value_shape)
        values, = run_on_host(find, [flat, defaults], [self._value_dtype], [shape])
        return rebuild(values)

    def export(self, name=None):
        def export():
            return self._export_arrays()
        return tuple(run_on_host(export, [], [self._key_dtype, self._value_dtype], [None, None]))

    def _export_arrays(self):
        return self._core.export(self._key_dtype)

    # -- checkpoints: tf.train.Checkpoint reads and writes these (train/_checkpoint.py) --
    def _kiln_checkpoint_tensors(self):
        if not self._checkpoint:
            return {}
        keys, values = self._core.export(self._key_dtype)
        return {"table-keys": keys, "table-values": values}

    def _kiln_restore_tensors(self, tensors):
        keys, values = tensors.get("table-keys"), tensors.get("table-values")
        if keys is None or values is None:
            return
        self._core.entries.clear()
        self._core.insert(np.asarray(keys).reshape(-1), np.asarray(values).reshape((-1,) + self._value_shape))


class MutableHashTable(_MutableTable):
    """A table that insert() and remove() change; values may be vectors (the default value's shape)."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint)


class DenseHashTable(_MutableTable):
    """MutableHashTable's interface over TF's open-addressing table: two reserved keys (empty_key, deleted_key)
    that no entry may use, and a bucket count (a power of 2, doubled when over 80% full) that export() shows:
    its keys hold empty_key where no entry is (Kiln puts the entries first, in insertion order)."""

    _MAX_LOAD = 0.8

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key, initial_num_buckets=None,
                 name="MutableDenseHashTable", checkpoint=True, experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint)
        self._empty_key = _tensor(empty_key, dtype=self._key_dtype)
        self._deleted_key = _tensor(deleted_key, dtype=self._key_dtype)
        empty, deleted = self._empty_key.numpy(), self._deleted_key.numpy()
        if np.array_equal(empty, deleted):
            raise InvalidArgumentError("Empty and deleted keys must have different values")
        buckets = 2 ** 17 if initial_num_buckets is None else int(initial_num_buckets)
        if buckets < 4 or buckets & (buckets - 1):
            raise InvalidArgumentError(f"Number of buckets must be at least 4 and a power of 2, got: {buckets}")
        self._num_buckets = buckets
        self._reserved = {"empty_key": empty.item() if empty.ndim == 0 else None,
                          "deleted_key": deleted.item() if deleted.ndim == 0 else None}

    def _check_host_keys(self, keys):
        flat = set(np.asarray(keys, dtype=object).reshape(-1).tolist())
        for what, key in self._reserved.items():
            if key in flat:
                raise InvalidArgumentError(f"Using the {what} as a table key is not allowed")

    def insert_or_assign(self, keys, values, name=None):
        return self.insert(keys, values, name)

    def erase(self, keys, name=None):
        return self.remove(keys, name)

    def _inserted(self):
        while len(self._core) > self._MAX_LOAD * self._num_buckets:
            self._num_buckets *= 2

    def _export_arrays(self):
        keys, values = self._core.export(self._key_dtype)
        free = self._num_buckets - len(keys)
        keys = np.concatenate([keys, np.full(free, self._empty_key.numpy(), keys.dtype)])
        values = np.concatenate([values, np.zeros((free,) + self._value_shape, values.dtype)])
        return keys, values
