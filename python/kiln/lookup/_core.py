"""The one hash table behind tf.lookup's tables and Keras' StringLookup / IntegerLookup: a Python dict from host
keys (bytes for strings, int for integers, float for floats) to NumPy rows, and the way its operations run: on
NumPy values eagerly, as a host function (tf.py_function) while a function or a tf.data map is traced, so the
graph reads the table's contents whenever it runs (an insert made after tracing is seen)."""
import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..errors import FailedPreconditionError, InvalidArgumentError


def host_keys(array):
    """The dict keys of a NumPy array of keys, flattened: UTF-8 bytes for strings, Python numbers otherwise."""
    flat = np.asarray(array).reshape(-1).tolist()
    return [v.encode("utf-8") if isinstance(v, str) else v for v in flat]


def numpy_dtype(dtype):
    return object if dtype == _dtypes.string else dtype.as_numpy_dtype


class Typed:
    """A key dtype and a value dtype (tables and their initializers)."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype


class HashTable:
    """keys -> values (each of value_shape) of one value dtype."""

    def __init__(self, value_dtype, value_shape=()):
        self.value_dtype = value_dtype
        self.value_shape = tuple(value_shape)
        self.entries = {}

    def __len__(self):
        return len(self.entries)

    def _rows(self, values, count):
        rows = np.asarray(values, dtype=numpy_dtype(self.value_dtype))
        if rows.shape != (count,) + self.value_shape:
            raise InvalidArgumentError(f"Expected shape {[count, *self.value_shape]} for value, got "
                                       f"{list(rows.shape)}")
        return rows

    def insert(self, keys, values, overwrite=True):
        """Adds keys -> values; a static table's initializer (overwrite=False) refuses a key given two values."""
        flat = host_keys(keys)
        rows = self._rows(values, len(flat))
        for key, row in zip(flat, rows):
            if not overwrite and key in self.entries and not np.array_equal(self.entries[key], row):
                raise FailedPreconditionError(f"HashTable has different value for same key. Key {_shown(key)} "
                                              f"has {_shown(self.entries[key])} and trying to add value "
                                              f"{_shown(row)}")
            self.entries[key] = row

    def remove(self, keys):
        for key in host_keys(keys):
            self.entries.pop(key, None)

    def find(self, keys, default):
        """The values of `keys` (shape keys.shape + value_shape); `default` a value row, or one per key."""
        keys = np.asarray(keys)
        flat = host_keys(keys)
        default = np.asarray(default, dtype=numpy_dtype(self.value_dtype))
        per_key = default.shape == keys.shape + self.value_shape and default.ndim > len(self.value_shape)
        defaults = default.reshape((len(flat),) + self.value_shape) if per_key else None
        fallback = default[()] if default.ndim == 0 else default  # an object array's element, not a 0-d array
        out = np.empty((len(flat),) + self.value_shape, numpy_dtype(self.value_dtype))
        for i, key in enumerate(flat):
            row = self.entries.get(key)
            out[i] = row if row is not None else (defaults[i] if per_key else fallback)
        return out.reshape(keys.shape + self.value_shape)

    def contains(self, keys):
        return np.asarray([k in self.entries for k in host_keys(keys)], bool).reshape(np.shape(keys))

    def export(self, key_dtype):
        keys = np.asarray(list(self.entries), dtype=numpy_dtype(key_dtype)).reshape(-1)
        values = np.asarray(list(self.entries.values()), dtype=numpy_dtype(self.value_dtype)).reshape(
            (len(self.entries),) + self.value_shape)
        return keys, values


def _shown(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return _shown(value.item())
    return value


def eager_value(x):
    """x's NumPy value, or None for a tensor of a graph being traced (or a Keras symbolic tensor)."""
    if x._is_symbolic or _C.is_tracing():
        return None
    try:
        return x.numpy()
    except TypeError:  # a graph's constant
        return None


def run_on_host(fn, inputs, out_dtypes, out_shapes):
    """fn(*NumPy values) -> NumPy arrays, as tensors: directly when every input is eager, else as one host function
    whose outputs take out_shapes (each a list of dims, None unknown; None leaves it): Kiln reshapes to static dims
    with one unknown at most, so a host result of more unknown dims keeps an unknown shape."""
    values = [eager_value(x) for x in inputs]
    if not _C.is_tracing() and all(v is not None for v in values):
        outs = fn(*values)
        return [_C.constant(np.asarray(o, dtype=numpy_dtype(d)), d._enum) for o, d in zip(outs, out_dtypes)]
    from ..function import py_function
    outs = py_function(lambda *ts: [np.asarray(o, dtype=numpy_dtype(d))
                                    for o, d in zip(fn(*[t.numpy() for t in ts]), out_dtypes)],
                       list(inputs), list(out_dtypes))
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    shaped = []
    for out, shape in zip(outs, out_shapes):
        if shape is not None and list(shape).count(None) <= 1:
            out = _C.reshape(out, [-1 if d is None else d for d in shape])
        shaped.append(out)
    return shaped


def run_effect(fn, inputs):
    """fn(*NumPy values) for its effect on a table: now when eager, else a host function with no outputs, which the
    traced graph keeps in program order (a stateful node)."""
    values = [eager_value(x) for x in inputs]
    if not _C.is_tracing() and all(v is not None for v in values):
        fn(*values)
        return None
    from ..function import py_function
    py_function(lambda *ts: (fn(*[t.numpy() for t in ts]), [])[1], list(inputs), [])
    return None
