"""FarmHash's Fingerprint64 (farmhashna::Hash64), the string hash of tf.strings.to_hash_bucket_fast, Keras'
Hashing/StringLookup OOV buckets, tf.lookup's and the feature columns' buckets, and (with FingerprintCat64)
tf.sparse.cross_hashed's crosses. Python integers with 64-bit wrap-around."""

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


def hash64(data, seed=0xDECAFCAFFE):
    """TF's legacy Hash64 (a MurmurHash64A), tf.strings.to_hash_bucket's hash."""
    m, n = 0xc6a4a7935bd1e995, len(data)
    h = (seed ^ (n * m)) & _MASK
    whole = n - n % 8
    for i in range(0, whole, 8):
        k = (_fetch64(data, i) * m) & _MASK
        k = ((k ^ (k >> 47)) * m) & _MASK
        h = ((h ^ k) * m) & _MASK
    if n % 8:
        h = ((h ^ int.from_bytes(data[whole:], "little")) * m) & _MASK
    h = ((h ^ (h >> 47)) * m) & _MASK
    return h ^ (h >> 47)


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & _MASK; v1 = _rotl(v1, 13) ^ v0; v0 = _rotl(v0, 32)  # noqa: E702
    v2 = (v2 + v3) & _MASK; v3 = _rotl(v3, 16) ^ v2  # noqa: E702
    v0 = (v0 + v3) & _MASK; v3 = _rotl(v3, 21) ^ v0  # noqa: E702
    v2 = (v2 + v1) & _MASK; v1 = _rotl(v1, 17) ^ v2; v2 = _rotl(v2, 32)  # noqa: E702
    return v0, v1, v2, v3


def _rotl(v, shift):
    return ((v << shift) | (v >> (64 - shift))) & _MASK


def siphash24(key, data):
    """SipHash-2-4 of bytes under a 128-bit key given as two 64-bit words (tf.strings.to_hash_bucket_strong)."""
    k0, k1 = (int(k) & _MASK for k in key)
    v0, v1 = k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d
    v2, v3 = k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573
    n = len(data)
    whole = n - n % 8
    for i in range(0, whole, 8):
        m = _fetch64(data, i)
        v3 ^= m
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= m
    m = ((n & 0xff) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= m
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= m
    v2 ^= 0xff
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def hash_bucket_fast(value, num_buckets):
    """tf.strings.to_hash_bucket_fast of one value: a string's UTF-8 bytes, or an integer's decimal text (TF's
    as_string, which tf.lookup's OOV buckets and feature columns hash), by Fingerprint64 modulo num_buckets."""
    if isinstance(value, str):
        data = value.encode("utf-8")
    elif isinstance(value, bytes):
        data = bytes(value)
    else:
        data = str(int(value)).encode("ascii")
    return fingerprint64(data) % num_buckets


_CAT_MUL = 0xC6A4A7935BD1E995
CROSS_KEY = 0xDECAFCAFFE  # tf.sparse.cross_hashed's default hash key


def fingerprint_cat64(fp1, fp2):
    """TF's FingerprintCat64: two 64-bit fingerprints combined, order-dependent."""
    result = fp1 ^ _CAT_MUL
    result ^= (_shift_mix((fp2 * _CAT_MUL) & _MASK) * _CAT_MUL) & _MASK
    result = (result * _CAT_MUL) & _MASK
    result = (_shift_mix(result) * _CAT_MUL) & _MASK
    return _shift_mix(result)


def cross_fingerprint(values, hash_key=CROSS_KEY):
    """tf.sparse.cross_hashed's fingerprint of one combination of features (before the modulo): FingerprintCat64
    from hash_key over each feature's hash, a string's Fingerprint64 or an integer itself (HashedCrossing's and
    crossed_column's)."""
    h = hash_key
    for value in values:
        if isinstance(value, (bytes, str)):
            feature = fingerprint64(value.encode("utf-8") if isinstance(value, str) else bytes(value))
        else:
            feature = int(value) & _MASK
        h = fingerprint_cat64(h, feature)
    return h
