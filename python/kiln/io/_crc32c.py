"""CRC-32C (Castagnoli), the checksum of TFRecord framing and of checkpoint entries,
and TF's masking of it. crcmod's C code computes it where Debian's python3-crcmod is
installed; otherwise a table-driven loop in Python (slower, the same values)."""

_POLY = 0x82F63B78  # the Castagnoli polynomial, reflected


def _table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c_python(data, crc=0):
    """The CRC-32C of `data`, continuing from `crc` (a previous chunk's)."""
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


try:
    import crcmod.predefined as _crcmod

    _crcmod_fn = _crcmod.mkPredefinedCrcFun("crc-32c")

    def crc32c(data, crc=0):
        return _crcmod_fn(bytes(data), crc)
except ImportError:  # pragma: no cover - python3-crcmod absent
    crc32c = crc32c_python

_MASK_DELTA = 0xA282EAD8


def mask(crc):
    """TF's masked CRC: rotated right by 15 bits plus a constant (so a CRC of data that
    holds CRCs does not cancel out)."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked):
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_crc32c(data):
    return mask(crc32c(data))
