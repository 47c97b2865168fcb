"""tf.strings' Unicode and splitting ops that return one more (ragged) dimension: unicode_decode (code points,
with byte offsets), unicode_split, unicode_encode, unicode_transcode, bytes_split and ngrams. Run in Python on the
host, as the other tf.strings ops: directly when eager, as host functions in a trace.

Invalid input follows TF's `errors`: "replace" gives one `replacement_char` per maximal invalid subsequence
(Unicode's recommended practice, as ICU and Python's codecs both do), "ignore" drops it, "strict" raises
InvalidArgumentError."""
import codecs

import numpy as np

from . import _C
from . import dtypes as _dtypes
from . import errors as _errors
from .ragged_strings import string_rows
from .ragged_tensor import RaggedTensor, splits_from_lengths
from .strings import _as_bytes

_ENCODE_NAMES = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _invalid(message):
    return _errors.InvalidArgumentError(None, None, message)


def _codec(encoding, decoding):
    name = _ENCODE_NAMES.get(str(encoding).upper()) if not decoding else None
    if name is None and decoding:
        try:
            name = codecs.lookup(str(encoding)).name
        except LookupError:
            name = None
    if name is None:
        what = "input" if decoding else "output"
        raise _invalid(f"Could not create converter for {what} encoding: {encoding}")
    return name


def _check_errors(errors):
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors must be one of 'strict', 'replace' or 'ignore', got {errors!r}")


def _char_width(ch, codec):
    return len(ch.encode(codec, "surrogatepass"))


def _decode(data, codec, errors, replacement_char, replace_control_characters):
    """(code points, byte offsets) of one string."""
    points, offsets, pos = [], [], 0

    def take(text, offset):
        for ch in text:
            points.append(ord(ch))
            offsets.append(offset)
            offset += _char_width(ch, codec)

    while True:
        try:
            take(data[pos:].decode(codec), pos)
            break
        except UnicodeDecodeError as bad:  # one maximal invalid subsequence at a time
            take(data[pos:pos + bad.start].decode(codec), pos)
            if errors == "strict":
                raise _invalid(f"Invalid formatting on input string at byte {pos + bad.start}: {data!r}") from None
            if errors == "replace":
                points.append(replacement_char)
                offsets.append(pos + bad.start)
            pos += bad.end
    if replace_control_characters:
        points = [replacement_char if p < 0x20 else p for p in points]
    return points, offsets


def _encode_points(points, codec, errors, replacement_char):
    out = []
    for p in points:
        p = int(p)
        if p < 0 or p > 0x10FFFF or 0xD800 <= p <= 0xDFFF:
            if errors == "strict":
                raise _invalid(f"Invalid code point: {p}")
            if errors == "ignore":
                continue
            p = replacement_char
        out.append(chr(p))
    return "".join(out).encode(codec, "surrogatepass")


def _strings(x, op):
    from .strings import _check_string, _tensor
    x = _tensor(x)
    _check_string(x, op)
    return x


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """Each string's code points (int32), one dimension more: ragged for a rank >= 1 input."""
    return unicode_decode_with_offsets(input, input_encoding, errors, replacement_char, replace_control_characters)[0]


def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                                replace_control_characters=False, name=None):
    """(code points, the byte offset where each starts (int64)), each shaped as unicode_decode's result."""
    _check_errors(errors)
    codec = _codec(input_encoding, decoding=True)
    return string_rows(input, lambda b: _decode(b, codec, errors, replacement_char, replace_control_characters),
                       [_dtypes.int32, _dtypes.int64], "unicode_decode_with_offsets")


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """Each string cut into its characters (strings in `input_encoding`), one dimension more."""
    return unicode_split_with_offsets(input, input_encoding, errors, replacement_char)[0]


def unicode_split_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                               name=None):
    """(unicode_split's characters, the byte offset where each starts)."""
    _check_errors(errors)
    codec = _codec(input_encoding, decoding=True)
    out_codec = _codec(input_encoding, decoding=False)

    def rows(b):
        points, offsets = _decode(b, codec, errors, replacement_char, False)
        return [_encode_points([p], out_codec, errors, replacement_char) for p in points], offsets
    return string_rows(input, rows, [_dtypes.string, _dtypes.int64], "unicode_split_with_offsets")


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """Code points (int32, dense or ragged, innermost dimension the characters) joined into strings of
    `output_encoding` ("UTF-8", "UTF-16-BE" or "UTF-32-BE")."""
    from . import _ops
    _check_errors(errors)
    codec = _codec(output_encoding, decoding=False)
    if isinstance(input, RaggedTensor):
        if input.ragged_rank > 1:
            return input.with_values(unicode_encode(input.values, output_encoding, errors, replacement_char))
        lengths = input.row_lengths().numpy()
        points = input.values.numpy().tolist()
        out, pos = [], 0
        for n in lengths:
            out.append(_encode_points(points[pos:pos + n], codec, errors, replacement_char))
            pos += n
        return _C.constant(np.asarray(out, dtype=object).reshape(len(out)), _dtypes.string._enum)
    x = _ops.convert_to_tensor(input)
    if x.dtype != _dtypes.int32:
        raise TypeError(f"unicode_encode: input must be int32 code points, got {x.dtype.name}")
    if x.shape.rank == 0:
        raise ValueError("unicode_encode: input must have rank >= 1")

    def run(v):
        v = np.asarray(v)
        rows = v.reshape(-1, v.shape[-1]) if v.shape[-1] else np.zeros((int(np.prod(v.shape[:-1])), 0), np.int32)
        out = np.asarray([_encode_points(r.tolist(), codec, errors, replacement_char) for r in rows], dtype=object)
        return out.reshape(v.shape[:-1])
    from .strings import _host
    return _host(run, [x], _dtypes.string, x.shape[:-1])


def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                      replace_control_characters=False, name=None):
    """Each string decoded from `input_encoding` and encoded in `output_encoding` (shape kept)."""
    from .strings import _map
    _check_errors(errors)
    codec = _codec(input_encoding, decoding=True)
    out_codec = _codec(output_encoding, decoding=False)
    return _map(lambda b: _encode_points(_decode(b, codec, errors, replacement_char, replace_control_characters)[0],
                                         out_codec, errors, replacement_char),
                input, _dtypes.string, "unicode_transcode")


def bytes_split(input, name=None):  # noqa: A002
    """Each string cut into its bytes, one dimension more (ragged for a rank >= 1 input)."""
    return string_rows(input, lambda b: ([b[i:i + 1] for i in range(len(b))],), [_dtypes.string], "bytes_split")[0]


def _ngrams_of(row, widths, separator, pad_values, padding_width, preserve_short):
    out = []
    for width in widths:
        pad = width - 1 if padding_width is None else padding_width
        padded = [pad_values[0]] * pad + row + [pad_values[1]] * pad if pad_values is not None else row
        grams = [separator.join(padded[i:i + width]) for i in range(len(padded) - width + 1)]
        if not grams and preserve_short and row:
            grams = [separator.join(padded)]
        out.extend(grams)
    return out


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,  # noqa: C901
           preserve_short_sequences=False, name="ngrams"):
    """The n-grams of the innermost dimension of a string tensor, each `ngram_width` (an int or a sequence)
    strings joined by `separator`; a dense input gives a dense result, a ragged one a ragged result."""
    from . import _ops
    widths = [ngram_width] if isinstance(ngram_width, (int, np.integer)) else list(ngram_width)
    if any(w < 1 for w in widths):
        raise _invalid(f"Requested ngram width must be > 0, got {ngram_width}")
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be > 0 when given")
    if pad_values is not None:
        if isinstance(pad_values, (bytes, str)):
            pad_values = (pad_values, pad_values)
        if len(pad_values) != 2:
            raise ValueError("pad_values must be a string, tuple or list of 2 strings")
        pad_values = tuple(_as_bytes(p) for p in pad_values)
    sep = _as_bytes(separator)
    make = lambda row: _ngrams_of([_as_bytes(e) for e in row], widths, sep, pad_values, padding_width,  # noqa: E731
                                  preserve_short_sequences)
    if isinstance(data, RaggedTensor):
        if data.ragged_rank > 1:
            return data.with_values(ngrams(data.values, ngram_width, separator, pad_values, padding_width,
                                           preserve_short_sequences))
        rows = [make(r) for r in data.to_list()]
        values = np.asarray([g for r in rows for g in r], dtype=object)
        return RaggedTensor._from_splits(_C.constant(values if len(values) else np.zeros(0, object),
                                                     _dtypes.string._enum),
                                         splits_from_lengths(_ops.constant(np.asarray([len(r) for r in rows],
                                                                                      np.int64))))
    x = _strings(data, "ngrams")
    if x.shape.rank == 0:
        raise ValueError("ngrams: data must have rank >= 1")
    v = np.asarray(x.numpy(), dtype=object)
    rows = [make(list(r)) for r in v.reshape(-1, v.shape[-1])] if v.size or v.ndim == 1 else []
    if v.ndim == 1:
        return _C.constant(np.asarray(rows[0] if rows else [], dtype=object), _dtypes.string._enum)
    count = len(rows[0]) if rows else 0
    out = np.asarray(rows, dtype=object).reshape(v.shape[:-1] + (count,))
    return _C.constant(out, _dtypes.string._enum)


def _script_code(point):
    import icu  # PyICU (Debian's python3-icu): the same ICU script table TF's kernel reads
    if point < 0 or point > 0x10FFFF:
        return -1
    return icu.Script.getScript(int(point)).getScriptCode()


def unicode_script(input, name=None):  # noqa: A002
    """ICU's UScriptCode of each code point (int32; -1 for an invalid one), shape kept; ragged stays ragged."""
    from . import _ops
    from .strings import _host
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_script(input.flat_values))
    x = _ops.convert_to_tensor(input)
    if x.dtype != _dtypes.int32:
        raise TypeError(f"unicode_script: input must be int32 code points, got {x.dtype.name}")
    run = lambda v: np.vectorize(_script_code, otypes=[np.int32])(np.asarray(v))  # noqa: E731
    return _host(run, [x], _dtypes.int32, x.shape)
