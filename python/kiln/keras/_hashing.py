"""Keras' Hashing layer and the string hash it stands on: FarmHash's Fingerprint64, which
tf.strings.to_hash_bucket_fast reduces modulo the number of buckets (StringLookup's extra OOV buckets use it too).
Computed in Python, with 64-bit wrap-around arithmetic, on the host (a host function while tracing)."""
import numpy as np


from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from ._layer import Layer
from ._lookup import _WholeInputs

_MASK = (1 << 64) - 1
_K0 = 0xc3a5c85c97cb3127
_K1 = 0xb492b66fbe98f273
_K2 = 0x9ae16a3b2f90404f


def _fetch64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _fetch32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _rotate(v, shift):
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _MASK


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash_len16(u, v, mul):
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _len0to16(s):
    n = len(s)
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(s, 0) + _K2) & _MASK
        b = _fetch64(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _hash_len16(n + (_fetch32(s, 0) << 3), _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xffffffff
        z = (n + (s[n - 1] << 2)) & 0xffffffff
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _len17to32(s):
    n = len(s)
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K1) & _MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _MASK
    d = (_fetch64(s, n - 16) * _K2) & _MASK
    return _hash_len16((_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
                       (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _len33to64(s):
    n = len(s)
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K2) & _MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _MASK
    d = (_fetch64(s, n - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_len16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(s, 16) * mul) & _MASK
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _MASK
    h = ((z + _fetch64(s, n - 24)) * mul) & _MASK
    return _hash_len16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                       (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak_hash32(s, i, a, b):
    w, x, y, z = _fetch64(s, i), _fetch64(s, i + 8), _fetch64(s, i + 16), _fetch64(s, i + 24)
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(data):
    """FarmHash Fingerprint64 (farmhashna::Hash64) of bytes, as an unsigned int."""
    s = bytes(data)
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v, w = (0, 0), (0, 0)
    x = (x * _K2 + _fetch64(s, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak_hash32(s, i, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak_hash32(s, i + 32, (z + w[1]) & _MASK, (y + _fetch64(s, i + 16)) & _MASK)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xff) << 1)
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak_hash32(s, i, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak_hash32(s, i + 32, (z + w[1]) & _MASK, (y + _fetch64(s, i + 16)) & _MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK,
                       (_hash_len16(v[1], w[1], mul) + x) & _MASK, mul)


def hash_bucket_fast(value, num_buckets):
    """tf.strings.to_hash_bucket_fast of one string (str or UTF-8 bytes)."""
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return fingerprint64(data) % num_buckets


def _as_string(value):
    """tf.strings.as_string of an integer / the bytes of a string."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return str(int(value)).encode("ascii")


class Hashing(_WholeInputs, Layer):
    """Hashes strings (and integers, as their decimal text) into num_bins bins with FarmHash, as
    tf.strings.to_hash_bucket_fast; mask_value, when given, takes bin 0 and the others 1 .. num_bins - 1;
    output_mode "int", or "one_hot" / "multi_hot" / "count" vectors."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        from ._lookup import _check_output_mode, _no_sparse
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if salt is not None:
            raise NotImplementedError("kiln.keras.layers.Hashing: salt (SipHash, to_hash_bucket_strong) is not "
                                      "supported")
        self.output_mode = _check_output_mode(output_mode, ("int", "one_hot", "multi_hot", "count"))
        _no_sparse("Hashing", sparse)
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = None
        self.sparse = False
        self._output_dtype = _dtypes.int64 if output_mode == "int" else _dtypes.float32

    def _hash(self, values):
        array = np.asarray(values, dtype=object)
        bins = self.num_bins
        masked = self.mask_value is not None and bins > 1
        if masked:
            bins -= 1
            mask_bytes = _as_string(self.mask_value)
        out = np.empty(array.size, np.int64)
        for i, v in enumerate(array.reshape(-1).tolist()):
            data = _as_string(v)
            if masked and data == mask_bytes:
                out[i] = 0
            else:
                out[i] = fingerprint64(data) % bins + (1 if masked else 0)
        out = out.reshape(array.shape)
        if self.output_mode == "int":
            return out
        from ._lookup import encode_numpy
        return encode_numpy(out, self.output_mode, self.num_bins)

    def call(self, inputs):
        from ._lookup import _run_numpy
        return _run_numpy(self._hash, inputs, self._output_dtype, self.compute_output_shape(inputs.shape))

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return TensorShape(input_shape)
        from ._lookup import CategoryEncoding
        return CategoryEncoding(self.num_bins, self.output_mode).compute_output_shape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(num_bins=self.num_bins, salt=self.salt, mask_value=self.mask_value,
                      output_mode=self.output_mode, sparse=self.sparse)
        return config



