"""tf.data's file sources: TextLineDataset, TFRecordDataset, CsvDataset and
tf.data.experimental.make_csv_dataset. Each reads its files in Python, one pass at a
time (a PyDataset), so it works eagerly and in kiln.function's dataset loop.
Compressed files ("GZIP", "ZLIB") are read through kiln.io's streams."""
import collections as _collections
import csv as _csv
import glob as _glob
import io as _pyio

import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from .._ops import convert_to_tensor as _convert
from ..function import TensorSpec
from ..io import _tfrecord
from . import _cards
from ._dataset import Dataset
from ._python_dataset import PyDataset


def _filenames(filenames):
    """A filenames argument (a path, a list, a string tensor or a Dataset of them) as a
    callable giving the list of paths of a pass."""
    if isinstance(filenames, Dataset):
        return lambda: [_text(f) for f in filenames]
    if hasattr(filenames, "numpy"):
        filenames = filenames.numpy()
    if isinstance(filenames, (str, bytes)):
        filenames = [filenames]
    paths = [_text(f) for f in _np.asarray(filenames, dtype=object).reshape(-1)]
    if not paths and not isinstance(filenames, Dataset):
        raise ValueError("`filenames` must be a non-empty list of file names.")
    return lambda: paths


def _text(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    return value.decode() if isinstance(value, bytes) else str(value)


def _round_robin(iterators):
    """One element from each in turn (TF's parallel reads: interleave, block_length 1)."""
    live = list(iterators)
    while live:
        kept = []
        for it in live:
            element = next(it, None)
            if element is not None:
                yield element
                kept.append(it)
        live = kept


def _files_pass(filenames, read_file, num_parallel_reads):
    """open_pass() for the items `read_file(path)` gives of each file, in TF's order."""
    paths = _filenames(filenames)
    parallel = 1 if num_parallel_reads in (None, 0) else int(num_parallel_reads)
    if parallel == -1:  # AUTOTUNE
        parallel = 4

    def open_pass():
        files = paths()
        if parallel <= 1:
            for path in files:
                yield from read_file(path)
            return
        for start in range(0, len(files), parallel):
            yield from _round_robin([iter(read_file(p)) for p in files[start:start + parallel]])

    return open_pass


def _files_dataset(filenames, read_file, num_parallel_reads, spec, template):
    return PyDataset(_files_pass(filenames, read_file, num_parallel_reads), spec=spec, template=template,
                     card=_cards.UNKNOWN)


def _string(value):
    return _convert(value, _dtypes.string)


def _read_bytes(path, compression):
    f, stream = _tfrecord._open(path, compression)
    try:
        return stream.read()
    finally:
        f.close()


class TextLineDataset(PyDataset):
    """tf.data.TextLineDataset: the lines of text files as string scalars, without their
    line ends ("\\n" or "\\r\\n")."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        compression = _tfrecord.compression_of(compression_type)

        def lines(path):
            data = _read_bytes(path, compression)
            for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n") if data else []:
                yield _string(line[:-1] if line.endswith(b"\r") else line)

        ds = _files_dataset(filenames, lines, num_parallel_reads, TensorSpec([], _dtypes.string), 0)
        self.__dict__.update(ds.__dict__)


class TFRecordDataset(PyDataset):
    """tf.data.TFRecordDataset: the records of TFRecord files as string scalars."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        compression = _tfrecord.compression_of(compression_type)

        def records(path):
            for record in _tfrecord.read_records(path, compression):
                yield _string(record)

        ds = _files_dataset(filenames, records, num_parallel_reads, TensorSpec([], _dtypes.string), 0)
        self.__dict__.update(ds.__dict__)
        # The same pass as bytes, for batch().
        self._record_bytes = _files_pass(filenames, lambda path: _tfrecord.read_records(path, compression),
                                         num_parallel_reads)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Dataset.batch, made here: each batch's records become one string vector, without a tensor
        per record (the usual `TFRecordDataset(...).batch(n).map(parse_example)` pipeline)."""
        size, drop = int(batch_size), bool(drop_remainder)
        if size <= 0:
            raise ValueError(f"batch_size must be greater than zero, got {batch_size}")
        record_bytes = self._record_bytes

        def batches():
            rows = []
            for record in record_bytes():
                rows.append(record)
                if len(rows) == size:
                    yield _string(_np.array(rows, dtype=object))
                    rows = []
            if rows and not drop:
                yield _string(_np.array(rows, dtype=object))

        return PyDataset(batches, parents=(self,), spec=TensorSpec([size if drop else None], _dtypes.string),
                         template=0, card=_cards.UNKNOWN)


class FixedLengthRecordDataset(PyDataset):
    """tf.data.FixedLengthRecordDataset: each file's bytes after `header_bytes` and before
    `footer_bytes`, cut into string scalars of `record_bytes` (a body that is not a
    multiple of it is TF's InvalidArgumentError)."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None):
        compression = _tfrecord.compression_of(compression_type)
        size, header, footer = (int(_value(v) or 0) for v in (record_bytes, header_bytes, footer_bytes))
        if size <= 0:
            raise _errors.InvalidArgumentError(f"record_bytes must be greater than zero, got {size}")

        def records(path):
            data = _read_bytes(path, compression)
            body = len(data) - header - footer
            if body < 0 or body % size:
                raise _errors.InvalidArgumentError(
                    f"Excluding the header ({header} bytes) and footer ({footer} bytes), input file \"{path}\" has "
                    f"body length {body} bytes, which is not an exact multiple of the record length ({size} bytes).")
            for start in range(header, header + body, size):
                yield _string(data[start:start + size])

        ds = _files_dataset(filenames, records, num_parallel_reads, TensorSpec([], _dtypes.string), 0)
        self.__dict__.update(ds.__dict__)


def _value(v):
    return v.numpy() if hasattr(v, "numpy") else v


# ---- CSV ---------------------------------------------------------------------------------

_CSV_DTYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)


def _column_default(value, index):
    """(dtype, default or None when the column is required) of one record_defaults entry."""
    if isinstance(value, _dtypes.DType):
        dtype, default = value, None
    else:
        from .. import _C
        with _C.init_scope():  # a default is data, never a graph constant of a function being traced
            t = value if hasattr(value, "numpy") else _convert(value)
        dtype = t.dtype
        array = _np.asarray(t.numpy(), dtype=object if dtype == _dtypes.string else None).reshape(-1)
        if array.size > 1:
            raise ValueError(f"Invalid `record_defaults`: the default of column {index} must be a scalar or have "
                             f"one element, got {array.size}.")
        default = array[0] if array.size else None
    if dtype not in _CSV_DTYPES:
        raise TypeError(f"Invalid `record_defaults`: column {index} has type {dtype.name}; CSV columns are float32, "
                        "float64, int32, int64 or string.")
    return dtype, default


def _convert_field(text, dtype, default, index, na_value):
    if text == "" or text == na_value:
        if default is None:
            raise _errors.InvalidArgumentError(f"Field {index} is required but missing in record!")
        return default
    if dtype == _dtypes.string:
        return text.encode()
    try:
        if dtype in (_dtypes.int32, _dtypes.int64):
            value = int(text.strip())
            bound = 2 ** 31 if dtype == _dtypes.int32 else 2 ** 63
            if not -bound <= value < bound:
                raise ValueError
            return value
        return float(text.strip())
    except ValueError:
        raise _errors.InvalidArgumentError(f"Field {index} in record is not a valid {dtype.name}: {text}") from None


def _csv_rows(path, compression, field_delim, use_quote_delim, header):
    text = _read_bytes(path, compression).decode("utf-8")
    reader = _csv.reader(_pyio.StringIO(text, newline=""), delimiter=field_delim, strict=True,
                         quoting=_csv.QUOTE_MINIMAL if use_quote_delim else _csv.QUOTE_NONE,
                         quotechar='"' if use_quote_delim else None, doublequote=True)
    try:
        for n, row in enumerate(reader):
            if n == 0 and header:
                continue
            yield row or [""]  # a blank line is a record of one empty field, as TF reads it
    except _csv.Error as e:
        message = str(e)
        if "unexpected end of data" in message or "EOF" in message:
            message = "Reached end of file without closing quoted field in record"
        elif "expected after" in message:
            message = "Quote inside a string has to be escaped by another quote"
        raise _errors.InvalidArgumentError(f"{message} ({path}, line {reader.line_num})") from None


class CsvDataset(PyDataset):
    """tf.data.experimental.CsvDataset: each record of CSV files as a tuple of scalars, one
    per `record_defaults` entry (a dtype or an empty tensor: required; a value: its
    default when the field is empty or `na_value`). RFC 4180 quotes ("" inside quotes
    is a quote) unless use_quote_delim=False."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None, name=None):
        columns = [_column_default(v, i) for i, v in enumerate(record_defaults)]
        if not columns:
            raise ValueError("`record_defaults` must not be empty.")
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        if select_cols is not None:
            select_cols = [int(c) for c in select_cols]
            if any(b <= a for a, b in zip(select_cols, select_cols[1:])) or (select_cols and select_cols[0] < 0):
                raise _errors.InvalidArgumentError("select_cols is not strictly increasing.")
            if len(select_cols) != len(columns):
                raise _errors.InvalidArgumentError("len(select_cols) != len(record_defaults)")
        if exclude_cols is not None:
            exclude_cols = sorted(int(c) for c in exclude_cols)
        compression = _tfrecord.compression_of(compression_type)
        if len(field_delim) != 1:
            raise _errors.InvalidArgumentError("field_delim should be only 1 char")

        def records(path):
            for row in _csv_rows(path, compression, field_delim, use_quote_delim, header):
                if select_cols is not None:
                    if len(row) <= select_cols[-1]:
                        raise _errors.InvalidArgumentError(
                            f"Expect {select_cols[-1] + 1} fields but have {len(row)} in record")
                    fields = [row[c] for c in select_cols]
                elif exclude_cols is not None:
                    fields = [f for i, f in enumerate(row) if i not in exclude_cols]
                else:
                    fields = row
                if len(fields) != len(columns):
                    raise _errors.InvalidArgumentError(f"Expect {len(columns)} fields but have {len(fields)} in record")
                yield tuple(_convert(_convert_field(f, d, default, i, na_value), d)
                            for i, (f, (d, default)) in enumerate(zip(fields, columns)))

        spec = tuple(TensorSpec([], d) for d, _ in columns)
        ds = _files_dataset(filenames, records, None, spec, tuple(range(len(columns))))
        self.__dict__.update(ds.__dict__)


def _infer_type(values):
    """The narrowest of int32, int64, float32, string that holds every value (TF's inference)."""
    best = 0
    for v in values:
        if v == "":
            continue
        try:
            n = int(v)
            best = max(best, 0 if -2 ** 31 <= n < 2 ** 31 else 1)
            continue
        except ValueError:
            pass
        try:
            float(v)
            best = max(best, 2)
        except ValueError:
            best = 3
    return [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.string][best]


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """Batches of (features, label) from CSV files: features an OrderedDict of column name
    to a batch of values, the label column taken out when `label_name` is given. Column
    names come from the header unless given, types from `column_defaults` or from the
    first `num_rows_for_inference` rows."""
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    files = sorted(f for p in patterns for f in _glob.glob(_text(p)))
    if not files:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    compression = _tfrecord.compression_of(compression_type)
    first_rows = []
    for row in _csv_rows(files[0], compression, field_delim, use_quote_delim, False):
        first_rows.append(row)
        if len(first_rows) > num_rows_for_inference:
            break
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` argument to be provided.")
        column_names = first_rows[0]
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Found duplicate column names in `column_names`.")
    data_rows = first_rows[1:] if header else first_rows
    select = None
    if select_columns is not None:
        select = sorted(column_names.index(c) if isinstance(c, str) else int(c) for c in select_columns)
    names = [column_names[i] for i in select] if select is not None else column_names
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. Received: {label_name}.")
    if column_defaults is None:
        indices = select if select is not None else range(len(column_names))
        column_defaults = []
        for i in indices:
            dtype = _infer_type([r[i] for r in data_rows if i < len(r)])
            column_defaults.append(_np.array([], dtype=object) if dtype == _dtypes.string else
                                   _convert(_np.zeros([0], dtype._np), dtype))
        column_defaults = [d if hasattr(d, "numpy") else _convert(d, _dtypes.string) for d in column_defaults]
    ds = CsvDataset(files, column_defaults, compression_type=compression, header=header, field_delim=field_delim,
                    use_quote_delim=use_quote_delim, na_value=na_value, select_cols=select)
    if ignore_errors:
        ds = ds.ignore_errors()

    def to_features(*values):
        features = _collections.OrderedDict(zip(names, values))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    ds = ds.map(to_features)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    ds = ds.batch(batch_size)
    return ds.prefetch(-1 if prefetch_buffer_size is None else prefetch_buffer_size)

