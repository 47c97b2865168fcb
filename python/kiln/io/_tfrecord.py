"""TFRecord files (tf.io.TFRecordWriter, tf.data.TFRecordDataset's reading), in TF's
framing: each record is

    uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes
    data[length]                  | uint32 masked CRC-32C of the data

and the whole file may be one GZIP or one ZLIB stream. A damaged file is a
DataLossError naming the file and the record's offset, never a crash or a
silently short read."""
import struct as _struct
import zlib as _zlib

from .. import errors as _errors
from ._crc32c import masked_crc32c

_COMPRESSIONS = {None: "", "": "", "ZLIB": "ZLIB", "GZIP": "GZIP"}


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """tf.io.TFRecordOptions: the compression of a TFRecord file ("", "ZLIB" or "GZIP")
    and zlib's settings."""
    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        if compression_type in self.compression_type_map:
            compression_type = self.compression_type_map[compression_type]
        if compression_type not in _COMPRESSIONS:
            raise ValueError(f'Unsupported compression type: {compression_type}. Supported are "", "ZLIB" and '
                             '"GZIP".')
        self.compression_type = _COMPRESSIONS[compression_type]
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return cls(options).compression_type


def compression_of(value):
    """A compression_type argument (None, "", "ZLIB", "GZIP" or a TFRecordOptions) as a string."""
    if hasattr(value, "numpy"):
        value = value.numpy().decode()
    return TFRecordOptions.get_compression_type_string(value)


def frame(record):
    """One record with TF's framing."""
    length = _struct.pack("<Q", len(record))
    return length + _struct.pack("<I", masked_crc32c(length)) + record + _struct.pack("<I", masked_crc32c(record))


class TFRecordWriter:
    """tf.io.TFRecordWriter(path, options=None): writes records to `path` (truncating it).
    A context manager; close() finishes a compressed stream."""

    def __init__(self, path, options=None):
        self._path = str(path)
        self._options = options if isinstance(options, TFRecordOptions) else TFRecordOptions(
            TFRecordOptions.get_compression_type_string(options))
        try:
            self._file = open(self._path, "wb")
        except OSError as e:
            raise _errors.NotFoundError(f"{self._path}; {e.strerror}") from None
        level = self._options.compression_level
        level = _zlib.Z_DEFAULT_COMPRESSION if level is None or level < 0 else level
        kind = self._options.compression_type
        self._compressor = None
        if kind == "GZIP":
            self._compressor = _zlib.compressobj(level, _zlib.DEFLATED, 16 + _zlib.MAX_WBITS)
        elif kind == "ZLIB":
            bits = self._options.window_bits or _zlib.MAX_WBITS
            self._compressor = _zlib.compressobj(level, _zlib.DEFLATED, bits)

    def write(self, record):
        if self._file is None:
            raise _errors.FailedPreconditionError("Writer is closed.")
        if hasattr(record, "numpy"):
            record = record.numpy()
        if isinstance(record, str):
            record = record.encode()
        data = frame(bytes(record))
        self._file.write(self._compressor.compress(data) if self._compressor else data)

    def flush(self):
        if self._file is None:
            raise _errors.FailedPreconditionError("Writer is closed.")
        if self._compressor is not None:
            self._file.write(self._compressor.flush(_zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush())
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never from a finalizer
            pass


# ---- reading ---------------------------------------------------------------------------------

class _Inflating:
    """read(n) over a ZLIB or GZIP stream; a damaged stream is a DataLossError."""

    def __init__(self, f, path, wbits):
        self._f, self._path = f, path
        self._z = _zlib.decompressobj(wbits)
        self._buffer = b""
        self._done = False

    def read(self, n=-1):
        """Up to n bytes (all that is left for n < 0)."""
        while (n < 0 or len(self._buffer) < n) and not self._done:
            chunk = self._f.read(1 << 16)
            try:
                if chunk:
                    self._buffer += self._z.decompress(chunk)
                else:
                    self._buffer += self._z.flush()
                    self._done = True
                    if not self._z.eof:
                        raise _errors.DataLossError(f"{self._path}: the compressed stream ends early (truncated)")
            except _zlib.error as e:
                raise _errors.DataLossError(f"{self._path}: the compressed stream is damaged ({e})") from None
            if self._z.eof and self._z.unused_data:
                # GZIP allows several members one after the other (as `cat a.gz b.gz`).
                rest = self._z.unused_data
                self._z = _zlib.decompressobj(16 + _zlib.MAX_WBITS if self._gzip else _zlib.MAX_WBITS)
                self._buffer += self._z.decompress(rest)
        if n < 0:
            n = len(self._buffer)
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


def _open(path, compression):
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise _errors.NotFoundError(f"{path}; No such file or directory") from None
    except OSError as e:
        raise _errors.NotFoundError(f"{path}; {e.strerror}") from None
    if compression == "":
        return f, f
    reader = _Inflating(f, path, 16 + _zlib.MAX_WBITS if compression == "GZIP" else _zlib.MAX_WBITS)
    reader._gzip = compression == "GZIP"
    return f, reader


class _Chunked:
    """take(n): the next n bytes of a stream (fewer at its end), read from it a megabyte at a
    time, so that a record costs two calls here rather than three reads of the file."""

    def __init__(self, stream):
        self._stream = stream
        self._buffer = b""
        self._pos = 0

    def take(self, n):
        end = self._pos + n
        if end <= len(self._buffer):
            out = self._buffer[self._pos:end]
            self._pos = end
            return out
        # The piece straddles chunks: it alone is copied together, the new chunk kept as it is.
        parts = [self._buffer[self._pos:]]
        have = len(parts[0])
        self._buffer, self._pos = b"", 0
        while have < n:
            # At most 64 MB a read: a damaged length reads to the file's end, not into memory it lacks.
            chunk = self._stream.read(min(max(n - have, 1 << 20), 1 << 26))
            if not chunk:
                break
            need = n - have
            if len(chunk) > need:
                parts.append(chunk[:need])
                self._buffer, self._pos = chunk, need
                break
            parts.append(chunk)
            have += len(chunk)
        return b"".join(parts)


def read_records(path, compression=""):
    """The records of one TFRecord file, in order (a generator)."""
    path = path.decode() if isinstance(path, bytes) else str(path)
    f, stream = _open(path, compression)
    reader = _Chunked(stream)
    offset = 0
    try:
        while True:
            header = reader.take(12)
            if not header:
                return
            if len(header) < 12:
                raise _errors.DataLossError(f"{path}: truncated record at {offset} (a {len(header)}-byte header "
                                            "where 12 bytes were expected)")
            length, length_crc = _struct.unpack("<QI", header)
            if masked_crc32c(header[:8]) != length_crc:
                raise _errors.DataLossError(f"{path}: corrupted record at {offset} (the length's checksum does not "
                                            "match)")
            data_and_footer = reader.take(length + 4)
            data, footer = data_and_footer[:length], data_and_footer[length:]
            if len(data) < length or len(footer) < 4:
                raise _errors.DataLossError(f"{path}: truncated record at {offset} ({length} bytes of data "
                                            f"expected, {len(data)} found)")
            if masked_crc32c(data) != _struct.unpack("<I", footer)[0]:
                raise _errors.DataLossError(f"{path}: corrupted record at {offset} (the data's checksum does not "
                                            "match)")
            yield data
            offset += 16 + length
    finally:
        f.close()


def tf_record_iterator(path, options=None):
    """tf.compat.v1.io.tf_record_iterator: the records of a file as bytes."""
    return read_records(path, compression_of(options))
