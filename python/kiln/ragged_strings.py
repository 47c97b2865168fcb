"""tf.strings.split: strings cut at a separator, as a RaggedTensor (a vector for a scalar input). Runs in NumPy,
as the other tf.strings ops do: directly when eager, as host functions in a trace."""
import numpy as np

from . import _C
from . import dtypes as _dtypes
from .ragged_tensor import RaggedTensor, splits_from_lengths


def _pieces(values, sep, maxsplit):
    out, lengths = [], []
    for v in np.asarray(values, dtype=object).reshape(-1):
        b = v.encode("utf-8") if isinstance(v, str) else bytes(v)
        parts = b.split(None if sep is None else sep, -1 if maxsplit is None else maxsplit)
        out.extend(parts)
        lengths.append(len(parts))
    return np.asarray(out, dtype=object), np.asarray(lengths, dtype=np.int64)


def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002 - TF's argument name
    """tf.strings.split(input, sep=None, maxsplit=-1): `sep` None (or empty) splits at runs of whitespace."""
    from . import _ops
    from .strings import _tensor, _check_string
    x = _tensor(input)
    _check_string(x, "split")
    if isinstance(sep, (bytes, str)):
        sep = sep.encode("utf-8") if isinstance(sep, str) else sep
        if not sep:
            sep = None
    elif sep is not None:
        sep = _ops.convert_to_tensor(sep).numpy()
        sep = None if not sep else bytes(sep)
    rank = x.shape.rank
    if rank is None:
        raise ValueError("tf.strings.split needs an input of known rank")
    if not x._is_symbolic and not _C.is_tracing():
        words, lengths = _pieces(x.numpy(), sep, maxsplit)
        values = _C.constant(words if len(words) else np.zeros(0, dtype=object), _dtypes.string._enum)
        lengths = _ops.constant(lengths, _dtypes.int64)
    else:
        from .function import py_function
        values = py_function(lambda t: _C.constant(_pieces(t.numpy(), sep, maxsplit)[0], _dtypes.string._enum),
                             [x], _dtypes.string)
        values = _ops.reshape(values, [-1])
        lengths = _ops.reshape(py_function(lambda t: _ops.constant(_pieces(t.numpy(), sep, maxsplit)[1]), [x],
                                           _dtypes.int64), [-1])
    if rank == 0:
        return values
    rt = RaggedTensor._from_splits(values, splits_from_lengths(lengths))
    if rank == 1:
        return rt
    outer = _ops.shape(x, out_type=_dtypes.int64)
    # The outer dimensions are uniform: a ragged frame of them whose flat values are the split rows.
    frame = RaggedTensor.from_tensor(_ops.reshape(_ops.zeros_like(lengths), outer), ragged_rank=rank - 1)
    return frame.with_flat_values(rt)
