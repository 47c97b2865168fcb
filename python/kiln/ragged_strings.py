"""tf.strings' ops that give each string a row of its own (split; the Unicode and byte splits in
strings_unicode.py): one more dimension, ragged for an input of rank >= 1, a vector for a scalar. Run in NumPy,
as the other tf.strings ops do: directly when eager, as one host function in a trace."""
import numpy as np

from . import _C
from . import dtypes as _dtypes
from .ragged_tensor import RaggedTensor, splits_from_lengths


def string_rows(input, rows_of, dtypes, op):  # noqa: A002
    """One tensor per dtype in `dtypes`, each one rank higher than the string tensor `input`: `rows_of(bytes)`
    gives a string's rows, one list per dtype, all of one length (so the results share their row partitions).
    A RaggedTensor input keeps its partitions."""
    from . import _ops
    from .strings import _as_bytes, _check_string, _tensor
    if isinstance(input, RaggedTensor):
        return tuple(input.with_flat_values(r) for r in string_rows(input.flat_values, rows_of, dtypes, op))
    x = _tensor(input)
    _check_string(x, op)
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"tf.strings.{op} needs an input of known rank")
    np_types = [object if d == _dtypes.string else d.as_numpy_dtype for d in dtypes]

    def flat(v):
        rows = [rows_of(_as_bytes(e)) for e in np.asarray(v, dtype=object).reshape(-1)]
        columns = [np.asarray([item for row in rows for item in row[k]], dtype=t) for k, t in enumerate(np_types)]
        return columns + [np.asarray([len(row[0]) for row in rows], dtype=np.int64)]

    if not x._is_symbolic and not _C.is_tracing():
        *values, lengths = [_C.constant(c, d._enum) for c, d in zip(flat(x.numpy()), list(dtypes) + [_dtypes.int64])]
    else:
        from .function import py_function
        outs = py_function(lambda t: [_C.constant(c, d._enum) for c, d in zip(flat(t.numpy()), list(dtypes) +
                                                                              [_dtypes.int64])],
                           [x], list(dtypes) + [_dtypes.int64])
        *values, lengths = [_ops.reshape(o, [-1]) for o in outs]
    if rank == 0:
        return tuple(values)
    splits = splits_from_lengths(lengths)
    rows = [RaggedTensor._from_splits(v, splits) for v in values]
    if rank == 1:
        return tuple(rows)
    # The outer dimensions are uniform: a ragged frame of them whose flat values are the string rows.
    frame = RaggedTensor.from_tensor(_ops.reshape(_ops.zeros_like(lengths), _ops.shape(x, out_type=_dtypes.int64)),
                                     ragged_rank=rank - 1)
    return tuple(frame.with_flat_values(r) for r in rows)


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002 - TF's argument name
    """tf.strings.split(input, sep=None, maxsplit=-1): `sep` None (or empty) splits at runs of whitespace."""
    from . import _ops
    from .strings import _as_bytes
    if isinstance(sep, (bytes, str)):
        sep = _as_bytes(sep) or None
    elif sep is not None:
        sep = _ops.convert_to_tensor(sep).numpy()
        sep = None if not sep else bytes(sep)
    limit = -1 if maxsplit is None else maxsplit
    return string_rows(input, lambda b: (b.split(sep, limit),), [_dtypes.string], "split")[0]
