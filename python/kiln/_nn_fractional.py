"""tf.nn.fractional_max_pool and fractional_avg_pool (Graham's fractional max-pooling): each output row (column)
pools a region of the input whose bounds are a random pooling sequence 0 = a_0 < a_1 < ... < a_out = in, the
steps floor or ceil of in / out (shuffled; or, pseudo_random, a_i = ceil(alpha (i + u)) - 1 for one uniform u).
The sequences are drawn on the host (NumPy's generator: TF's rules, not TF's numbers); the pooling is gathers and
masked reductions, rows then columns (a rectangle's max or mean is the max or mean of its rows'), so it traces
and differentiates."""
import collections

import numpy as np

from . import _ops, dtypes as _dtypes
from . import errors as _errors
from ._array_ops import _tensor
from ._nn_ctc import _host

_Fractional = collections.namedtuple("FractionalPool", ["output", "row_pooling_sequence", "col_pooling_sequence"])


def _ratios(pooling_ratio):
    if isinstance(pooling_ratio, (int, float)):
        ratio = [1.0, float(pooling_ratio), float(pooling_ratio), 1.0]
    else:
        values = [float(r) for r in pooling_ratio]
        ratio = {1: lambda v: [1.0, v[0], v[0], 1.0], 2: lambda v: [1.0, v[0], v[1], 1.0],
                 4: lambda v: v}.get(len(values), lambda v: None)(values)
        if ratio is None:
            raise ValueError(f"pooling_ratio should be of length 1, 2 or 4, got {values}")
    if ratio[0] != 1.0 or ratio[3] != 1.0:
        raise _errors.UnimplementedError("Fractional pooling is not yet supported on the batch nor channel "
                                         f"dimension, got pooling_ratio {ratio}")
    if min(ratio[1:3]) < 1.0:
        raise _errors.InvalidArgumentError(f"pooling_ratio cannot be smaller than 1, got {ratio}")
    return ratio[1], ratio[2]


def _sequence(rng, size, out, pseudo_random):
    """The pooling sequence a_0 .. a_out, int64."""
    k = size // out
    if pseudo_random:
        alpha = size / out
        u = rng.random() * min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (out - 1))
        seq = [0] + [int(np.ceil(alpha * (i + u))) - 1 for i in range(1, out)] + [size]
        return np.array(seq, np.int64)
    steps = np.full(out, k, np.int64)
    steps[:size % out] += 1
    rng.shuffle(steps)
    return np.concatenate([[0], np.cumsum(steps)]).astype(np.int64)


def _regions(seq, size, overlapping, width):
    """[out, width] input positions of each region (padded by its first) and their validity."""
    out = len(seq) - 1
    index = np.zeros((out, width), np.int32)
    valid = np.zeros((out, width), bool)
    for i in range(out):
        end = min(seq[i + 1] if overlapping else seq[i + 1] - 1, size - 1)
        span = np.arange(seq[i], end + 1)[:width]
        index[i] = seq[i]
        index[i, :len(span)] = span
        valid[i, :len(span)] = True
    return index, valid


def _pool_axis(x, axis, index, valid, is_max):
    """Pool x's `axis` over the regions: gather [.., out, width, ..], mask, reduce the width."""
    picked = _ops.gather(x, _ops.reshape(index, [-1]), axis=axis)
    dims = x.shape.as_list()
    dims[axis:axis + 1] = [index.shape[0], index.shape[1]]
    picked = _ops.reshape(picked, [-1 if d is None else d for d in dims])
    mask_shape = [1] * len(dims)
    mask_shape[axis:axis + 2] = [index.shape[0], index.shape[1]]
    mask = _ops.reshape(valid, mask_shape)
    if is_max:
        return _ops.reduce_max(_ops.where(mask, picked, _ops.cast(float("-inf"), picked.dtype)), axis=axis + 1)
    weights = _ops.cast(mask, picked.dtype)
    total = _ops.reduce_sum(_ops.multiply(picked, weights), axis=axis + 1)
    return _ops.divide(total, _ops.reduce_sum(weights, axis=axis + 1))


def _fractional(is_max, op, value, pooling_ratio, pseudo_random, overlapping, seed):
    x = _tensor(value)
    if x.shape.rank != 4 or None in x.shape.as_list()[1:3]:
        raise ValueError(f"kiln.nn.{op}: value must be 4-D NHWC with known height and width, got {x.shape}")
    rh, rw = _ratios(pooling_ratio)
    h, w = x.shape[1], x.shape[2]
    out_h, out_w = int(np.floor(h / rh)), int(np.floor(w / rw))
    if out_h <= 0 or out_w <= 0:
        raise _errors.InvalidArgumentError(f"outputsize must be positive: {[out_h, out_w]} for an input of "
                                           f"{[h, w]} and pooling_ratio {[rh, rw]}")
    # seed 0 draws anew each time; another seed repeats its sequence of draws, advancing at each run
    rng = np.random.default_rng(None if not seed else int(seed))
    width_h, width_w = h // out_h + 2 + bool(overlapping), w // out_w + 2 + bool(overlapping)

    def draw(_):
        row_seq, col_seq = _sequence(rng, h, out_h, pseudo_random), _sequence(rng, w, out_w, pseudo_random)
        return (row_seq, col_seq, *_regions(row_seq, h, overlapping, width_h), *_regions(col_seq, w, overlapping,
                                                                                         width_w))

    row_seq, col_seq, row_idx, row_ok, col_idx, col_ok = _host(
        draw, [_ops.constant(0)], [_dtypes.int64, _dtypes.int64, _dtypes.int32, _dtypes.bool, _dtypes.int32,
                                   _dtypes.bool],
        [[out_h + 1], [out_w + 1], [out_h, width_h], [out_h, width_h], [out_w, width_w], [out_w, width_w]])
    pooled = _pool_axis(_pool_axis(x, 1, row_idx, row_ok, is_max), 2, col_idx, col_ok, is_max)
    return _Fractional(pooled, row_seq, col_seq)


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None):
    """(the max over each fractional region, the row and the column pooling sequences)."""
    return _fractional(True, "fractional_max_pool", value, pooling_ratio, pseudo_random, overlapping, seed)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None):
    """(the mean over each fractional region, the row and the column pooling sequences)."""
    return _fractional(False, "fractional_avg_pool", value, pooling_ratio, pseudo_random, overlapping, seed)
