"""The sorted string table TF's checkpoint `.index` files are (TF's copy of LevelDB's
table format, uncompressed):

    data blocks | metaindex block (empty) | index block | footer (48 bytes)

A block is entries sharing key prefixes with the entry before (varint32 shared,
varint32 unshared, varint32 value length, the key's unshared bytes, the value), a
full key every `restart_interval` entries, then the restart offsets (fixed32 each)
and their count (fixed32); each block is followed by a type byte (0: not
compressed) and the masked CRC-32C of block + type. The index block maps a key at
or after each data block's last key to that block's handle (varint64 offset, varint64
size). The footer holds the metaindex and index handles, padded to 40 bytes, then the
magic number 0xdb4775248b80fb57."""
import struct as _struct

from ..io._crc32c import masked_crc32c

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
BLOCK_SIZE = 4096  # TF's table_builder default (bytes of entries before a block is cut)


class TableError(ValueError):
    """A damaged table (the caller names the file)."""


def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data, pos, limit=None):
    limit = len(data) if limit is None else limit
    result, shift = 0, 0
    while True:
        if pos >= limit or shift > 63:
            raise TableError("a varint runs past its block")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _block(entries, restart_interval):
    out, restarts, last = bytearray(), [], b""
    for i, (key, value) in enumerate(entries):
        if i % restart_interval == 0:
            restarts.append(len(out))
            shared = 0
        else:
            shared = 0
            while shared < min(len(last), len(key)) and last[shared] == key[shared]:
                shared += 1
        out += _varint(shared) + _varint(len(key) - shared) + _varint(len(value)) + key[shared:] + value
        last = key
    if not restarts:
        restarts = [0]
    out += b"".join(_struct.pack("<I", r) for r in restarts) + _struct.pack("<I", len(restarts))
    return bytes(out)


def _handle(offset, size):
    return _varint(offset) + _varint(size)


def _shortest_separator(start, limit):
    """LevelDB's FindShortestSeparator: a short key >= start and < limit (the index
    block's key for a data block followed by another)."""
    n = 0
    while n < min(len(start), len(limit)) and start[n] == limit[n]:
        n += 1
    if n < min(len(start), len(limit)) and start[n] < 0xFF and start[n] + 1 < limit[n]:
        return start[:n] + bytes([start[n] + 1])
    return start


def _short_successor(key):
    """LevelDB's FindShortSuccessor: a short key >= key (the last data block's)."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def build(items, restart_interval=16):
    """The table bytes of `items` ((key bytes, value bytes) pairs), sorted by key, laid
    out as TF's table_builder does (blocks cut where TF's size estimate reaches
    BLOCK_SIZE, index keys shortened), so equal entries give TF's bytes."""
    items = sorted(items, key=lambda kv: kv[0])
    out = bytearray()
    index = []

    def emit(block_bytes):
        offset = len(out)
        out.extend(block_bytes)
        out.extend(b"\x00" + _struct.pack("<I", masked_crc32c(block_bytes + b"\x00")))
        return offset, len(block_bytes)

    pending, pending_handle, last_key = [], None, b""
    for key, value in items:
        if pending_handle is not None:
            index.append((_shortest_separator(last_key, key), pending_handle))
            pending_handle = None
        pending.append((key, value))
        last_key = key
        if len(_block(pending, restart_interval)) >= BLOCK_SIZE:
            pending_handle, pending = emit(_block(pending, restart_interval)), []
    if pending:
        pending_handle = emit(_block(pending, restart_interval))
    meta = emit(_block([], restart_interval))
    if pending_handle is not None:
        index.append((_short_successor(last_key), pending_handle))
    index_handle = emit(_block([(k, _handle(*h)) for k, h in index], 1))
    footer = _handle(*meta) + _handle(*index_handle)
    footer += bytes(40 - len(footer)) + _struct.pack("<II", MAGIC & 0xFFFFFFFF, MAGIC >> 32)
    return bytes(out + footer)


def _read_block(data, offset, size):
    if offset + size + 5 > len(data):
        raise TableError(f"a block at {offset} runs past the end of the file")
    contents = data[offset:offset + size]
    kind = data[offset + size]
    crc = _struct.unpack_from("<I", data, offset + size + 1)[0]
    if masked_crc32c(contents + bytes([kind])) != crc:
        raise TableError(f"the block at {offset} fails its checksum")
    if kind != 0:
        raise TableError(f"the block at {offset} is compressed (type {kind}); only uncompressed tables are read")
    return contents


def _entries(block):
    if len(block) < 4:
        raise TableError("a block is shorter than its restart count")
    restarts = _struct.unpack_from("<I", block, len(block) - 4)[0]
    limit = len(block) - 4 - 4 * restarts
    if limit < 0:
        raise TableError("a block's restart array runs past its start")
    pos, last = 0, b""
    while pos < limit:
        shared, pos = _read_varint(block, pos, limit)
        unshared, pos = _read_varint(block, pos, limit)
        length, pos = _read_varint(block, pos, limit)
        if shared > len(last) or pos + unshared + length > limit:
            raise TableError("an entry runs past its block")
        key = last[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + length]
        pos += length
        last = key


def read(data):
    """{key: value} of a table's bytes; a damaged table is a TableError."""
    if len(data) < FOOTER_SIZE:
        raise TableError(f"the file is {len(data)} bytes, shorter than a table's footer")
    footer = data[-FOOTER_SIZE:]
    low, high = _struct.unpack_from("<II", footer, 40)
    if (high << 32 | low) != MAGIC:
        raise TableError("the footer's magic number is not a table's")
    pos = 0
    _, pos = _read_varint(footer, pos, 40)
    _, pos = _read_varint(footer, pos, 40)
    index_offset, pos = _read_varint(footer, pos, 40)
    index_size, pos = _read_varint(footer, pos, 40)
    out = {}
    for _, handle in _entries(_read_block(data, index_offset, index_size)):
        offset, p = _read_varint(handle, 0)
        size, _ = _read_varint(handle, p)
        for key, value in _entries(_read_block(data, offset, size)):
            out[key] = value
    return out
