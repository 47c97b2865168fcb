"""TF's TensorBundle, the two files of a checkpoint:

- `<prefix>.data-00000-of-00001`: the tensors' bytes, one after the other (numbers
  little-endian as in memory; a string tensor as the varint64 length of each
  string, the masked CRC-32C of those lengths (each summed as a uint32), then the
  strings' bytes);
- `<prefix>.index`: a table (_table.py) whose "" key holds a BundleHeaderProto and
  each tensor's key a BundleEntryProto (dtype, shape, shard 0, offset, size, the
  masked CRC-32C of its bytes).

Both are written to temporary names and renamed, the index last, so a reader never
sees an index without its data. A damaged file is a DataLossError naming it."""
import os as _os
import struct as _struct
import uuid as _uuid

import numpy as _np

from .. import errors as _errors
from ..io import _messages as _pb
from ..io._crc32c import crc32c, mask, unmask
from . import _table

DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
_NUMPY_OF = {"float32": _np.float32, "float64": _np.float64, "int32": _np.int32, "int64": _np.int64,
             "uint8": _np.uint8, "bool": _np.bool_, "float16": _np.float16, "int8": _np.int8, "int16": _np.int16,
             "uint16": _np.uint16, "uint32": _np.uint32, "uint64": _np.uint64, "complex64": _np.complex64,
             "complex128": _np.complex128}


def _string_bytes(array):
    """TF's string tensor layout, and its running CRC (over each length as a fixed-size
    integer, the lengths' masked checksum, then the strings)."""
    items = [v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1)]
    lengths, crc = b"", 0
    for item in items:
        lengths += _table._varint(len(item))
        # Each length as a uint32 (a uint64 past 4 GiB), as TF sums them.
        crc = crc32c(_struct.pack("<I" if len(item) <= 0xFFFFFFFF else "<Q", len(item)), crc)
    checksum = _struct.pack("<I", mask(crc))
    crc = crc32c(checksum, crc)
    body = b"".join(items)
    return lengths + checksum + body, crc32c(body, crc)


def _atomic_write(path, data):
    temp = f"{path}.tempstate{_uuid.uuid4().hex}"
    with open(temp, "wb") as f:
        f.write(data)
        f.flush()
        _os.fsync(f.fileno())
    _os.replace(temp, path)


def write(prefix, tensors):
    """Writes {key: NumPy array (dtype float32, float64, int32, int64, uint8, bool, or
    object of bytes for strings)} as a bundle at `prefix`."""
    entries, data = [], bytearray()
    for key in sorted(tensors):
        array = _np.asarray(tensors[key])
        entry = _pb.BundleEntryProto(shard_id=0, offset=len(data))
        for d in array.shape:
            entry.shape.dim.add(size=d)
        if array.dtype == object or array.dtype.kind in "SU":
            raw, crc = _string_bytes(array.astype(object))
            entry.dtype = _pb.DATA_TYPE_OF["string"]
        else:
            name = "bool" if array.dtype == _np.bool_ else array.dtype.name
            if name not in _pb.DATA_TYPE_OF:
                raise TypeError(f"A checkpoint cannot hold a tensor of dtype {array.dtype} ({key})")
            raw = _np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
            crc = crc32c(raw)
            entry.dtype = _pb.DATA_TYPE_OF[name]
        entry.size = len(raw)
        entry.crc32c = mask(crc)
        data += raw
        entries.append((key.encode(), entry.SerializeToString()))
    header = _pb.BundleHeaderProto(num_shards=1, endianness=0, version=_pb.VersionDef(producer=1))
    entries.append((b"", header.SerializeToString()))
    directory = _os.path.dirname(prefix)
    if directory:
        _os.makedirs(directory, exist_ok=True)
    _atomic_write(prefix + DATA_SUFFIX, bytes(data))
    _atomic_write(prefix + INDEX_SUFFIX, _table.build(entries))


class BundleReader:
    """The entries of a bundle; get(key) reads and checks one tensor."""

    def __init__(self, prefix):
        self.prefix = prefix
        index = prefix + INDEX_SUFFIX
        try:
            with open(index, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise _errors.NotFoundError(f"Failed to find any matching files for {prefix}") from None
        try:
            table = _table.read(raw)
            header = _pb.BundleHeaderProto.FromString(table.pop(b"", b""))
            self.entries = {k.decode(): _pb.BundleEntryProto.FromString(v) for k, v in table.items()}
        except (_table.TableError, UnicodeDecodeError, Exception) as e:  # noqa: BLE001 - protobuf's DecodeError too
            if isinstance(e, _errors.OpError):
                raise
            raise _errors.DataLossError(f"{index}: not a valid checkpoint index ({e})") from None
        if header.num_shards > 1:
            raise _errors.UnimplementedError(f"{index}: a checkpoint of {header.num_shards} shards (Kiln reads one)")
        if header.endianness != 0:
            raise _errors.UnimplementedError(f"{index}: a big-endian checkpoint")
        self._data = None

    def _data_bytes(self):
        if self._data is None:
            path = self.prefix + DATA_SUFFIX
            try:
                with open(path, "rb") as f:
                    self._data = f.read()
            except FileNotFoundError:
                raise _errors.NotFoundError(f"{path}; No such file or directory (the checkpoint's data file)") \
                    from None
        return self._data

    def dtype_name(self, key):
        return _pb.DTYPE_NAME_OF.get(self.entries[key].dtype, f"DataType({self.entries[key].dtype})")

    def shape(self, key):
        return [d.size for d in self.entries[key].shape.dim]

    def get(self, key):
        if key not in self.entries:
            raise _errors.NotFoundError(f"Key {key} not found in checkpoint")
        entry = self.entries[key]
        data = self._data_bytes()
        path = self.prefix + DATA_SUFFIX
        raw = data[entry.offset:entry.offset + entry.size]
        if len(raw) != entry.size:
            raise _errors.DataLossError(f"{path}: the data of {key} runs past the end of the file (truncated)")
        shape = self.shape(key)
        name = self.dtype_name(key)
        if name == "string":
            value, crc = self._strings(raw, shape, key, path)
        elif name == "bfloat16":  # NumPy has none: its values read as float32 (a bfloat16 is float32's top half)
            halves = _np.frombuffer(raw, dtype="<u2").astype(_np.uint32) << 16
            value = halves.view(_np.float32)
            if value.size != int(_np.prod(shape)):
                raise _errors.DataLossError(f"{path}: {key} holds {value.size} values for shape {shape}")
            value = value.reshape(shape)
            crc = crc32c(raw)
        elif name in _NUMPY_OF:
            value = _np.frombuffer(raw, dtype=_np.dtype(_NUMPY_OF[name]).newbyteorder("<")).astype(_NUMPY_OF[name])
            if value.size != int(_np.prod(shape)):
                raise _errors.DataLossError(f"{path}: {key} holds {value.size} values for shape {shape}")
            value = value.reshape(shape)
            crc = crc32c(raw)
        else:
            raise _errors.UnimplementedError(f"{key}: Kiln does not read checkpoint tensors of {name}")
        if crc != unmask(entry.crc32c):
            raise _errors.DataLossError(f"{path}: Checksum does not match for {key}: stored {unmask(entry.crc32c)} vs. "
                                        f"calculated on the restored bytes {crc}")
        return value

    @staticmethod
    def _strings(raw, shape, key, path):
        count = int(_np.prod(shape))
        pos, lengths = 0, []
        try:
            for _ in range(count):
                n, pos = _table._read_varint(raw, pos)
                lengths.append(n)
        except _table.TableError:
            raise _errors.DataLossError(f"{path}: the string lengths of {key} are damaged") from None
        items, start = [], pos + 4
        for n in lengths:
            items.append(bytes(raw[start:start + n]))
            start += n
        value = _np.empty(count, dtype=object)
        value[:] = items
        rebuilt, crc = _string_bytes(value)
        if rebuilt != bytes(raw):
            crc = crc32c(bytes(raw))  # a damaged layout: the checksum cannot match
        return value.reshape(shape), crc
