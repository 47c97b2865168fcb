"""tf.lookup's table initializers: what a static table is filled with when made (a pair of tensors, the lines of
a text file, a dataset of pairs). Each gives its (keys, values) as NumPy arrays, read once."""
import numpy as np

from .. import dtypes as _dtypes
from ..errors import InvalidArgumentError, NotFoundError
from ._core import Typed, numpy_dtype


def _tensor(value, dtype=None):
    from .._ops import convert_to_tensor
    return convert_to_tensor(value, dtype=dtype)


class TableInitializerBase(Typed):
    """An initializer's key and value dtypes; `_contents()` gives its (keys, values) as NumPy arrays."""

    def initialize(self, table):
        table._core.insert(*self._contents(), overwrite=False)


class KeyValueTensorInitializer(TableInitializerBase):
    """Keys and values from two tensors (or what converts to them) of one length."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = _tensor(keys, key_dtype)
        self._values = _tensor(values, value_dtype)
        self._name = name or "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def _contents(self):
        keys, values = self._keys.numpy(), self._values.numpy()
        if keys.shape != values.shape[:1] or keys.ndim != 1:
            raise InvalidArgumentError(f"Expected shape {list(keys.shape)} for value, got {list(values.shape)}")
        return keys, values


class TextFileIndex:
    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _check_index(what, index, dtype):
    if index < TextFileIndex.WHOLE_LINE:
        raise ValueError(f"`{what}_index` must be >= -2, received {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != _dtypes.int64:
        raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is {TextFileIndex.LINE_NUMBER}, "
                         f"received {dtype}")
    if index == TextFileIndex.WHOLE_LINE and not (dtype.is_integer or dtype == _dtypes.string):
        raise ValueError(f"`{what}_dtype` should be either integer or string for `{what}_index` "
                         f"{TextFileIndex.WHOLE_LINE}, received {dtype}")


class TextFileInitializer(TableInitializerBase):
    """Keys and values from a text file, one pair a line: each the line number (TextFileIndex.LINE_NUMBER, plus
    value_index_offset for values), the whole line (WHOLE_LINE) or a column of the line split at `delimiter`, parsed
    into its dtype."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None, delimiter="\t",
                 name=None, value_index_offset=0):
        if not filename:
            raise ValueError("`filename` argument is required (must not be empty).")
        key_dtype, value_dtype = _dtypes.as_dtype(key_dtype), _dtypes.as_dtype(value_dtype)
        _check_index("key", key_index, key_dtype)
        _check_index("value", value_index, value_dtype)
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != _dtypes.string:
            raise ValueError(f"`value_dtype` must be string if `value_index` is {TextFileIndex.WHOLE_LINE}, "
                             f"received {value_dtype}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` must be > 0, received {vocab_size}.")
        self._filename = filename.numpy().decode() if hasattr(filename, "numpy") else str(filename)
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter = vocab_size, delimiter
        self._offset = value_index_offset
        self._name = name or "text_file_init"
        super().__init__(key_dtype, value_dtype)

    def _field(self, line, number, columns, index, dtype):
        if index == TextFileIndex.LINE_NUMBER:
            return number
        text = line if index == TextFileIndex.WHOLE_LINE else None
        if text is None:
            if index >= len(columns):
                raise InvalidArgumentError(f"Invalid number of columns in {self._filename} line {number} ({line}) "
                                           f": expected at least {index + 1} got {len(columns)}")
            text = columns[index]
        if dtype == _dtypes.string:
            return text.encode("utf-8")
        try:
            return int(text) if dtype.is_integer else float(text)
        except ValueError:
            raise InvalidArgumentError(f"Field {text} in line {number} is not a valid {dtype.name}.") from None

    def _contents(self):
        try:
            with open(self._filename, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError as e:
            raise NotFoundError(f"{self._filename}; {e.strerror}") from None
        if lines and lines[-1] == "":
            lines.pop()
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise InvalidArgumentError(f"Invalid vocab_size in {self._filename}: expected {self._vocab_size} "
                                           f"but got {len(lines)}")
            lines = lines[:self._vocab_size]
        keys, values = [], []
        for number, line in enumerate(lines):
            columns = line.split(self._delimiter) if self._delimiter else line.split()
            keys.append(self._field(line, number, columns, self._key_index, self.key_dtype))
            value = self._field(line, number, columns, self._value_index, self.value_dtype)
            if self._value_index == TextFileIndex.LINE_NUMBER:
                value += self._offset
            values.append(value)
        return (np.asarray(keys, numpy_dtype(self.key_dtype)).reshape(-1),
                np.asarray(values, numpy_dtype(self.value_dtype)).reshape(-1))


class DatasetInitializer(TableInitializerBase):
    """Keys and values from a dataset of (key, value) scalar pairs (tf.lookup.experimental.DatasetInitializer)."""

    def __init__(self, dataset):
        spec = dataset.element_spec
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise ValueError(f"The dataset's elements must be (key, value) pairs, received: {spec}")
        key_spec, value_spec = spec
        if key_spec.shape.rank != 0 or value_spec.shape.rank != 0:
            raise ValueError(f"The dataset's keys and values must be scalars, received: {spec}")
        self.dataset = dataset
        super().__init__(key_spec.dtype, value_spec.dtype)

    def _contents(self):
        keys, values = [], []
        for key, value in self.dataset:
            keys.append(key.numpy())
            values.append(value.numpy())
        return (np.asarray(keys, numpy_dtype(self.key_dtype)).reshape(-1),
                np.asarray(values, numpy_dtype(self.value_dtype)).reshape(-1))
