"""tf.strings: the elementwise string ops text pipelines use (lower, upper, strip, regex_replace,
regex_full_match, length, substr, join, reduce_join, to_number, as_string), with TF's names, arguments and
byte-string rules. They run in NumPy: directly when eager, as a host function (py_function) inside a traced
graph, so they work in dataset maps, Keras' TextVectorization `standardize` functions and tf.function, but are
not exportable and have no gradient (TF's string ops have none either). Patterns are Python `re` patterns, which
agree with RE2's for the common syntax (classes, escapes, groups, \\1 in rewrites)."""
import re

import numpy as np

from . import _C, _farmhash, dtypes, errors
from .tensor_shape import TensorShape

__all__ = ["lower", "upper", "strip", "regex_replace", "regex_full_match", "length", "substr", "join",
           "reduce_join", "to_number", "as_string", "split", "to_hash_bucket_fast", "to_hash_bucket_strong",
           "to_hash_bucket", "bytes_split", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode",
           "unicode_split", "unicode_split_with_offsets", "unicode_transcode", "unicode_script", "ngrams"]


def _tensor(x):
    if isinstance(x, (_C.Tensor, _C.Variable)):
        return x
    return _C.constant(np.asarray(x, dtype=object) if not isinstance(x, (bytes, str)) else x, dtypes.string._enum)


def _check_string(x, op):
    if x.dtype != dtypes.string:
        raise TypeError(f"{op}: expected a string tensor, got {x.dtype.name}")


def _as_bytes(v):
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _host(fn, inputs, out_dtype, shape):
    """fn(*NumPy values) as a tensor of `out_dtype` and static `shape`: eager, or a host call in a trace."""
    if not any(t._is_symbolic for t in inputs) and not _C.is_tracing():
        return _C.constant(np.asarray(fn(*[t.numpy() for t in inputs])), out_dtype._enum)
    from .function import py_function
    out = py_function(lambda *ts: np.asarray(fn(*[t.numpy() for t in ts])), list(inputs), out_dtype)
    dims = TensorShape(shape).as_list() if TensorShape(shape).rank is not None else None
    if dims is not None and sum(d is None for d in dims) <= 1:
        out = _C.reshape(out, [-1 if d is None else d for d in dims])
    return out


def _map(fn, x, out_dtype, op):
    """fn over each element of the string tensor x (shape kept)."""
    x = _tensor(x)
    _check_string(x, op)
    otype = object if out_dtype == dtypes.string else out_dtype.as_numpy_dtype

    def run(v):
        v = np.asarray(v, dtype=object)
        out = np.empty(v.shape, dtype=otype)
        for i, e in np.ndenumerate(v):
            out[i] = fn(_as_bytes(e))
        return out
    return _host(run, [x], out_dtype, x.shape)


def lower(input, encoding="", name=None):  # noqa: A002 - TF's argument name
    """Lowercase: ASCII letters only with encoding "" (TF's default), every letter with "utf-8"."""
    if encoding not in ("", "utf-8"):
        raise ValueError(f"lower: encoding must be '' or 'utf-8', got {encoding!r}")
    if encoding == "utf-8":
        return _map(lambda b: b.decode("utf-8").lower().encode("utf-8"), input, dtypes.string, "lower")
    return _map(bytes.lower, input, dtypes.string, "lower")


def upper(input, encoding="", name=None):  # noqa: A002
    if encoding not in ("", "utf-8"):
        raise ValueError(f"upper: encoding must be '' or 'utf-8', got {encoding!r}")
    if encoding == "utf-8":
        return _map(lambda b: b.decode("utf-8").upper().encode("utf-8"), input, dtypes.string, "upper")
    return _map(bytes.upper, input, dtypes.string, "upper")


def strip(input, name=None):  # noqa: A002
    """Leading and trailing whitespace removed."""
    return _map(bytes.strip, input, dtypes.string, "strip")


def _pattern(pattern):
    if isinstance(pattern, (_C.Tensor, _C.Variable)):
        pattern = pattern.numpy()
    try:
        return re.compile(_as_bytes(pattern))
    except re.error as e:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError(None, None, f"Invalid pattern: {pattern!r}, error: {e}") from None


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Each match of `pattern` replaced by `rewrite` (\\1 .. \\9 name groups; all matches, or the first one with
    replace_global=False)."""
    compiled = _pattern(pattern)
    if isinstance(rewrite, (_C.Tensor, _C.Variable)):
        rewrite = rewrite.numpy()
    rewrite = _as_bytes(rewrite)
    count = 0 if replace_global else 1
    return _map(lambda b: compiled.sub(rewrite, b, count=count), input, dtypes.string, "regex_replace")


def regex_full_match(input, pattern, name=None):  # noqa: A002
    compiled = _pattern(pattern)
    return _map(lambda b: compiled.fullmatch(b) is not None, input, dtypes.bool, "regex_full_match")


def length(input, name=None, unit="BYTE"):  # noqa: A002
    """Bytes per string (unit="BYTE") or Unicode code points (unit="UTF8_CHAR"), as int32."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    count = len if unit == "BYTE" else (lambda b: len(b.decode("utf-8")))
    return _map(count, input, dtypes.int32, "length")


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF's argument names
    """input[pos:pos + len] per string (a negative pos counts from the end); pos past the end is an error, as
    TF's."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    pos, size = int(pos), int(len)

    def cut(b):
        s = b if unit == "BYTE" else b.decode("utf-8")
        start = pos if pos >= 0 else builtins_len(s) + pos
        if start < 0 or start > builtins_len(s):
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(None, None, f"pos {pos} out of range for string b'{b!r}' at index 0")
        out = s[start:start + size]
        return out if unit == "BYTE" else out.encode("utf-8")
    return _map(cut, input, dtypes.string, "substr")


builtins_len = len


def join(inputs, separator="", name=None):
    """Elementwise: the strings of the inputs (same shape, or scalars) joined by `separator`."""
    tensors = [_tensor(t) for t in inputs]
    for t in tensors:
        _check_string(t, "join")
    sep = _as_bytes(separator)
    shape = next((t.shape for t in tensors if t.shape.rank), tensors[0].shape if tensors else TensorShape([]))

    def run(*values):
        arrays = np.broadcast_arrays(*[np.asarray(v, dtype=object) for v in values])
        out = np.empty(arrays[0].shape, dtype=object)
        for i in np.ndindex(out.shape):
            out[i] = sep.join(_as_bytes(a[i]) for a in arrays)
        return out
    return _host(run, tensors, dtypes.string, shape)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings along `axis` (all of them with axis=None) joined by `separator`."""
    x = _tensor(inputs)
    _check_string(x, "reduce_join")
    sep = _as_bytes(separator)
    rank = x.shape.rank
    axes = None if axis is None else sorted(a % rank for a in (axis if isinstance(axis, (list, tuple)) else [axis]))
    shape = None
    if rank is not None:
        reduced = range(rank) if axes is None else axes
        shape = [1 if i in reduced else d for i, d in enumerate(x.shape.as_list()) if keepdims or i not in reduced]

    def run(v):
        v = np.asarray(v, dtype=object)
        red = tuple(range(v.ndim)) if axes is None else tuple(axes)
        moved = np.moveaxis(v, red, tuple(range(v.ndim - builtins_len(red), v.ndim)))
        keep = moved.shape[:v.ndim - builtins_len(red)]
        flat = moved.reshape(keep + (-1,))
        out = np.empty(keep, dtype=object)
        for i in np.ndindex(keep):
            out[i] = sep.join(_as_bytes(e) for e in flat[i])
        if keepdims:
            out = out.reshape([1 if d in red else n for d, n in enumerate(v.shape)])
        return out
    return _host(run, [x], dtypes.string, shape)


def to_number(string_tensor, out_type=dtypes.float32, name=None):
    """Each string parsed as a number of `out_type` (float32, float64, int32, int64)."""
    out_type = dtypes.as_dtype(out_type)
    if out_type not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"to_number: out_type must be float32, float64, int32 or int64, got {out_type.name}")
    parse = float if out_type.is_floating else int

    def convert(b):
        try:
            return parse(b.decode("utf-8").strip())
        except ValueError:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(None, None, f"StringToNumberOp could not correctly convert string: "
                                       f"{b.decode('utf-8', 'replace')}") from None
    return _map(convert, string_tensor, out_type, "to_number")


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """Numbers or bools as strings: integers in decimal, floats with `precision` digits (TF's default: %f's 6)."""
    x = input if isinstance(input, (_C.Tensor, _C.Variable)) else _C.constant(np.asarray(input), None)

    def fmt(v):
        if isinstance(v, (bool, np.bool_)):
            s = "true" if v else "false"
        elif isinstance(v, (float, np.floating)):
            if shortest:
                s = repr(float(v))
            else:
                s = f"%.{6 if precision < 0 else precision}{'e' if scientific else 'f'}" % v
        else:
            s = str(int(v))
        if width > 0:
            s = s.rjust(width, fill or " ")
        return s.encode("utf-8")

    def run(v):
        v = np.asarray(v)
        out = np.empty(v.shape, dtype=object)
        for i, e in np.ndenumerate(v):
            out[i] = fmt(e)
        return out
    return _host(run, [x], dtypes.string, x.shape)


def _hash_bucket(hash_fn, input, num_buckets, op):  # noqa: A002
    if not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise errors.InvalidArgumentError(None, None, f"{op}: num_buckets must be >= 1, got {num_buckets!r}")
    from .ragged_tensor import RaggedTensor
    if isinstance(input, RaggedTensor):  # elementwise: the flat values, the row partitions kept
        return input.with_flat_values(_hash_bucket(hash_fn, input.flat_values, num_buckets, op))
    return _map(lambda b: hash_fn(b) % int(num_buckets), input, dtypes.int64, op)


def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """FarmHash's Fingerprint64 of each string modulo num_buckets (int64), TF's numbers."""
    return _hash_bucket(_farmhash.fingerprint64, input, num_buckets, "to_hash_bucket_fast")


def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """SipHash-2-4 of each string under `key` (two integers) modulo num_buckets (int64), TF's numbers."""
    key = list(key)
    if len(key) != 2:
        raise errors.InvalidArgumentError(None, None, f"to_hash_bucket_strong: key must have 2 elements, got {len(key)}")
    return _hash_bucket(lambda b: _farmhash.siphash24(key, b), input, num_buckets, "to_hash_bucket_strong")


def to_hash_bucket(string_tensor, num_buckets, name=None):
    """TF's legacy Hash64 of each string modulo num_buckets (int64); TF recommends to_hash_bucket_fast."""
    return _hash_bucket(_farmhash.hash64, string_tensor, num_buckets, "to_hash_bucket")


from .ragged_strings import split  # noqa: E402  (returns RaggedTensors)
from .strings_unicode import (bytes_split, unicode_decode, unicode_decode_with_offsets, unicode_encode,  # noqa: E402
                              unicode_split, unicode_split_with_offsets, unicode_transcode, unicode_script, ngrams)


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """output[i] = separator.join(the inputs whose segment id is i, in order); "" for an empty segment.
    segment_ids' shape is a prefix of inputs'; the output is [num_segments] + the rest of inputs' shape."""
    from ._ops import convert_to_tensor
    inputs, segment_ids = _tensor(inputs), convert_to_tensor(segment_ids)
    _check_string(inputs, "unsorted_segment_join")
    count = num_segments if isinstance(num_segments, int) else int(convert_to_tensor(num_segments).numpy())
    sep = _as_bytes(separator)
    id_rank = segment_ids.shape.rank
    if inputs.shape.as_list()[:id_rank] != segment_ids.shape.as_list():
        raise ValueError(f"segment_ids.shape {segment_ids.shape} must be a prefix of inputs.shape {inputs.shape}")
    inner = inputs.shape.as_list()[id_rank:]

    def run(values, ids):
        values = np.asarray(values, dtype=object).reshape([-1] + inner)
        ids = np.asarray(ids).reshape(-1)
        out = np.empty([count] + inner, dtype=object)
        for index in np.ndindex(*out.shape):
            out[index] = []
        for row, seg in zip(values, ids):
            if 0 <= seg < count:
                for index in np.ndindex(*inner):
                    out[(seg,) + index].append(_as_bytes(np.asarray(row, dtype=object)[index]))
        for index in np.ndindex(*out.shape):
            out[index] = sep.join(out[index])
        return out
    return _host(run, [inputs, segment_ids], dtypes.string, [count] + inner)
