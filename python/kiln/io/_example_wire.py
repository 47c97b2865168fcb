"""A fast path for parsing a tf.train.Example: its features read straight from the wire
bytes, for the layout TF's writers (and protobuf's serializers) produce. Looking features
up through the protobuf runtime costs several microseconds each (the Python wrappers of
each map entry are made on first access); reading the bytes costs a few slices.

`features_of(data)` returns {key: (kind, payload)} (kind "bytes_list", "float_list" or
"int64_list"; payload the list's packed value bytes, or a list of bytes for a bytes_list),
or None for anything else: a repeated or unknown field, a list written unpacked, a key
seen twice, a damaged message. The caller then parses with protobuf, which applies the
merging rules of such messages and reports damage."""
import numpy as _np

from ._packed import decode_varints

_KINDS = {1: "bytes_list", 2: "float_list", 3: "int64_list"}


def _varint(data, i):
    """(value, next index) of the varint at data[i], or (None, i) if it runs off the end."""
    value, shift = 0, 0
    while i < len(data) and shift < 64:
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i += 1
        if byte < 0x80:
            return value, i
        shift += 7
    return None, i


def _fields(data):
    """[(field number, payload bytes)] of a message whose fields are all length-delimited, or None."""
    out, i, n = [], 0, len(data)
    while i + 1 < n:
        tag, length = data[i], data[i + 1]
        if tag & 7 != 2 or tag >= 0x80:  # wire type 2, field numbers 1-15
            return None
        i += 2
        if length >= 0x80:  # a longer varint (short lengths, the usual case, are one byte)
            length, i = _varint(data, i - 1)
            if length is None:
                return None
        if i + length > n:
            return None
        out.append((tag >> 3, data[i:i + length]))
        i += length
    return out if i == n else None


def _one_field(data):
    """(field number, payload) of bytes that are exactly one length-delimited field, or None."""
    n = len(data)
    if n < 2:
        return None
    tag, length, i = data[0], data[1], 2
    if tag & 7 != 2 or tag >= 0x80:
        return None
    if length >= 0x80:
        length, i = _varint(data, 1)
        if length is None:
            return None
    return (tag >> 3, data[i:]) if i + length == n else None


def features_of(data):
    data = memoryview(data)  # slices without copies
    top = _fields(data)
    if top is None or len(top) > 1 or (top and top[0][0] != 1):
        return None
    features = {}
    entries = _fields(top[0][1]) if top else []
    if entries is None:
        return None
    for number, entry in entries:
        parts = _fields(entry)
        if number != 1 or parts is None or [p[0] for p in parts] != [1, 2]:
            return None
        try:
            key = bytes(parts[0][1]).decode()
        except UnicodeDecodeError:
            return None
        if key in features:
            return None
        feature = parts[1][1]
        if not len(feature):
            features[key] = (None, None)  # a Feature with no kind set
            continue
        kind_and_list = _one_field(feature)
        kind = _KINDS.get(kind_and_list[0]) if kind_and_list else None
        if kind is None:
            return None
        if kind == "bytes_list":
            values = _fields(kind_and_list[1])
            if values is None:
                return None
            for number, _ in values:
                if number != 1:
                    return None
            features[key] = (kind, [bytes(v) for _, v in values])
        elif not len(kind_and_list[1]):
            features[key] = (kind, data[0:0])
        else:
            packed = _one_field(kind_and_list[1])
            if packed is None or packed[0] != 1:
                return None
            features[key] = (kind, packed[1])
    return features


def values_of(kind, payload):
    """The NumPy values of one feature read by features_of, or None if its bytes are not whole."""
    if kind == "float_list":
        if len(payload) % 4:
            return None
        return _np.frombuffer(payload, "<f4").astype(_np.float32)
    if kind == "int64_list":
        if not len(payload):
            return _np.zeros([0], _np.int64)
        return None if payload[-1] >= 0x80 else decode_varints(payload)
    return _np.array(payload, dtype=object).reshape(len(payload))
