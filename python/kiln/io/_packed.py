"""The values of a FloatList or Int64List as a NumPy array, read from the list's packed wire
bytes: the protobuf runtime serializes the sub-message in C, where np.array over the
repeated field converts one Python number at a time (about 20x slower for an MNIST image).

Both fields are packed (TF's feature.proto says so, and proto3 packs by default), so a
list serializes as tag 0x0a, a varint byte count, then the values: little-endian float32s,
or varints (int64s as two's complement, ten bytes when negative)."""
import numpy as _np

# Short lists convert faster through Python than through the wire bytes.
_SHORT = 8


def _payload(data):
    """The packed values' bytes of a serialized list, or None if they are not laid out as expected."""
    if not data:
        return b""
    if data[0] != 0x0A:
        return None
    count, shift, i = 0, 0, 1
    while i < len(data):
        byte = data[i]
        count |= (byte & 0x7F) << shift
        i += 1
        if byte < 0x80:
            return data[i:] if len(data) - i == count else None
        shift += 7
    return None


def float_values(float_list):
    """float32 array of a FloatList's values."""
    values = float_list.value
    if len(values) <= _SHORT:
        return _np.array(values, _np.float32)
    payload = _payload(float_list.SerializeToString())
    if payload is None or len(payload) != 4 * len(values):
        return _np.array(values, _np.float32)
    return _np.frombuffer(payload, "<f4").astype(_np.float32)


def decode_varints(payload):
    """int64 array of the varints packed in `payload` (bytes), all complete; None if one is
    longer than the ten bytes of a 64-bit varint."""
    if len(payload) <= 16:  # a label or two: a Python loop beats NumPy's per-call costs
        return _decode_few(payload)
    raw = _np.frombuffer(payload, _np.uint8)
    ends = _np.flatnonzero(raw < 0x80)
    starts = _np.empty_like(ends)
    starts[0:1] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    if len(lengths) and lengths.max() > 10:
        return None
    out = _np.zeros(len(ends), _np.uint64)
    for k in range(int(lengths.max(initial=0))):
        has = lengths > k
        out[has] |= (raw[starts[has] + k] & 0x7F).astype(_np.uint64) << _np.uint64(7 * k)
    return out.view(_np.int64)


def _decode_few(payload):
    values, value, shift = [], 0, 0
    for byte in bytes(payload):
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if shift > 63:
                return None
            value &= (1 << 64) - 1  # as the wide decoder's uint64s wrap
            values.append(value - (1 << 64) if value >= 1 << 63 else value)
            value, shift = 0, 0
        else:
            shift += 7
    return _np.array(values, _np.int64)


def int64_values(int64_list):
    """int64 array of an Int64List's values."""
    values = int64_list.value
    if len(values) <= _SHORT:
        return _np.array(values, _np.int64)
    payload = _payload(int64_list.SerializeToString())
    if payload is None:
        return _np.array(values, _np.int64)
    decoded = decode_varints(payload)
    return decoded if decoded is not None and len(decoded) == len(values) else _np.array(values, _np.int64)
