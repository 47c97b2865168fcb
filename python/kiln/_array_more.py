"""Top-level tf.* functions composed from Kiln's ops: TF's Python-level helpers (sequence_mask, unravel_index,
saturate_cast, dynamic_partition/stitch, reverse_sequence, switch_case, case, ...) and the graph-building
helpers that eager TF 2 code still calls (no_op, group, tuple, control_dependencies: Kiln's traces keep
stateful ops in program order, as TF's automatic control dependencies do)."""
import contextlib
import time

import numpy as np

from . import _C
from . import dtypes as _dtypes


def _t(x, dtype=None):
    from ._ops import convert_to_tensor
    return convert_to_tensor(x, dtype=dtype)


def _eager(*tensors):
    return not _C.is_tracing() and not any(getattr(t, "_is_symbolic", False) for t in tensors)


def realdiv(x, y, name=None):
    """x / y: true division for floating and complex types, truncating for integers (TF's RealDiv)."""
    from ._ops import divide, truncatediv
    x = _t(x)
    y = _t(y, dtype=x.dtype) if not isinstance(y, (_C.Tensor, _C.Variable)) else y
    return truncatediv(x, y) if x.dtype.is_integer else divide(x, y)


def saturate_cast(value, dtype, name=None):
    """value cast to dtype, clamped first to dtype's range (so no wrap-around or overflow)."""
    from ._ops import cast, maximum, minimum, constant
    value = _t(value)
    dtype = _dtypes.as_dtype(dtype)
    if value.dtype.is_complex or value.dtype == _dtypes.bool or dtype == _dtypes.bool or dtype.is_complex:
        return cast(value, dtype)
    if value.dtype.min < dtype.min:
        value = maximum(value, constant(dtype.min, dtype=value.dtype))
    if value.dtype.max > dtype.max:
        value = minimum(value, constant(dtype.max, dtype=value.dtype))
    return cast(value, dtype)


def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name=None):
    """mask[i..., j] = j < lengths[i...], j in [0, maxlen) (maxlen: the largest length by default)."""
    from ._ops import cast, expand_dims, less, range as _range, reduce_max
    lengths = _t(lengths)
    if maxlen is None:
        maxlen = reduce_max(lengths)
        maxlen = _C.maximum(maxlen, _t(0, dtype=maxlen.dtype))
    else:
        maxlen = _t(maxlen)
        if maxlen.shape.rank not in (None, 0):
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = {maxlen}.")
    row = _range(cast(maxlen, lengths.dtype), dtype=lengths.dtype)
    mask = less(row, expand_dims(lengths, -1))
    dtype = _dtypes.as_dtype(dtype)
    return mask if dtype == _dtypes.bool else cast(mask, dtype)


def unravel_index(indices, dims, name=None):
    """The coordinates in an array of shape `dims` of flat indices: shape [len(dims)] for a scalar index,
    [len(dims), N] for N of them."""
    from ._ops import floordiv, floormod, stack, unstack
    indices = _t(indices)
    dims = _t(dims, dtype=indices.dtype)
    if _eager(indices, dims):
        total = int(np.prod(dims.numpy()))
        bad = [int(i) for i in np.ravel(indices.numpy()) if not 0 <= i < total]
        if bad:
            raise _C.InvalidArgumentError(f"index {bad[0]} is out of bound as with dims")
    rest, coords = indices, []
    for d in reversed(unstack(dims)):
        coords.append(floormod(rest, d))
        rest = floordiv(rest, d)
    return stack(list(reversed(coords)))


def no_op(name=None):
    """Does nothing (TF's eager no_op returns None)."""
    return None


def group(*inputs, **kwargs):
    """Groups ops as one to run; eager (and in Kiln's traces, which keep stateful ops) there is nothing to
    wait for: None, as eager TF returns."""
    return None


def tf_tuple(tensors, control_inputs=None, name=None):
    """The tensors (identities of them), None kept; control_inputs callables are called first."""
    from ._ops import identity
    for control in control_inputs or []:
        if callable(control):
            control()
    return [None if t is None else identity(t) for t in tensors]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Eager TF calls the callables among control_inputs and runs the block as it is; Kiln does so also while
    tracing (its traces keep every stateful op, Assert included, in program order)."""
    for control in control_inputs or []:
        if callable(control):
            control()
    yield


def get_static_value(tensor, partial=False):
    """The NumPy value of a tensor known without running a graph (any eager tensor), else None."""
    if isinstance(tensor, (_C.Tensor, _C.Variable)):
        if isinstance(tensor, _C.Variable):
            return None
        return None if tensor._is_symbolic else tensor.numpy()
    try:
        return _t(tensor).numpy()
    except (TypeError, ValueError):
        raise TypeError(f"{tensor!r} is not a Tensor nor can be converted to one.") from None


def is_symbolic_tensor(tensor):
    """Whether `tensor` is a symbolic tensor of a function being traced (not an eager value)."""
    return isinstance(tensor, _C.Tensor) and bool(tensor._is_symbolic)


def inside_function():
    """Whether the code runs while a tf.function is traced."""
    return bool(_C.is_tracing())


def get_current_name_scope():
    """The current name scope, "outer/inner" (no trailing slash), "" outside every scope."""
    from . import _scope
    return _scope.current().rstrip("/")


def parallel_stack(values, name="parallel_stack"):
    from ._ops import stack
    return stack(values)


def shape_n(input, out_type=_dtypes.int32, name=None):  # noqa: A002 - TF's name
    from ._ops import shape
    return [shape(x, out_type=out_type) for x in input]


def guarantee_const(input, name=None):  # noqa: A002
    """The input, promised constant (TF's hint to its graph optimizer; Kiln's folds what it can anyway)."""
    from ._ops import identity
    return identity(input)


def timestamp(name=None):
    """Seconds since the epoch, float64, when it runs (on every call of a traced function)."""
    if _eager():
        return _t(time.time(), dtype=_dtypes.float64)
    from .function import py_function
    return _C.reshape(py_function(lambda: np.float64(time.time()), [], _dtypes.float64), [])


def numpy_function(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's names
    """func over NumPy arrays (py_function hands it tensors), its results converted to Tout."""
    from .function import py_function

    def on_arrays(*tensors):
        return func(*[t.numpy() if hasattr(t, "numpy") else t for t in tensors])
    return py_function(on_arrays, inp, Tout)


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """branch_fns[branch_index](); an index out of range runs `default` (the last branch when None). Eager:
    the chosen branch only; traced: tf.cond nested over the branches."""
    from .control_flow import cond
    from ._ops import equal
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    else:
        pairs = [p if isinstance(p, (list, tuple)) else (i, p) for i, p in enumerate(branch_fns)]
    if not pairs:
        raise ValueError("`branch_fns` must be a list or dict of callables, got an empty one.")
    keys = [int(k) for k, _ in pairs]
    if sorted(keys) != list(range(len(keys))):
        raise ValueError(f"`branch_fns` keys must be 0 .. {len(keys) - 1}, got {keys}.")
    fns = dict(pairs)
    default = default if default is not None else fns[max(keys)]
    branch_index = _t(branch_index)
    if _eager(branch_index):
        return fns.get(int(branch_index.numpy()), default)()
    result = default
    for k in sorted(keys, reverse=True):
        result = (lambda k=k, rest=result: lambda: cond(equal(branch_index, k), fns[k], rest))()
    return result()


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The fn of the first true predicate (any true one when `exclusive`, which then must be the only one);
    `default` (the last pair's fn when None) when none is true."""
    from .control_flow import cond
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs:
        raise ValueError("`pred_fn_pairs` must not be empty.")
    for pred, fn in pairs:
        if not callable(fn):
            raise TypeError(f"fn for pred {pred} must be callable.")
    if default is None:
        *pairs, (_, default) = pairs
    preds = [_t(p) for p, _ in pairs]
    if _eager(*preds):
        chosen = [fn for p, (_, fn) in zip(preds, pairs) if bool(p.numpy())]
        if exclusive and len(chosen) > 1:
            raise _C.InvalidArgumentError(f"Input error: exclusive=True: more than 1 conditions "
                                          f"({len(chosen)}) evaluated as True.")
        return (chosen[0] if chosen else default)()
    result = default
    for p, (_, fn) in reversed(list(zip(preds, pairs))):
        result = (lambda p=p, fn=fn, rest=result: lambda: cond(p, fn, rest))()
    return result()


def dynamic_partition(data, partitions, num_partitions, name=None):
    """[the rows of data whose partition is i, for i in range(num_partitions)], in order."""
    from ._ops import equal
    from ._array_ops import boolean_mask
    data, partitions = _t(data), _t(partitions)
    if _eager(partitions):
        p = partitions.numpy()
        if p.size and (p.min() < 0 or p.max() >= num_partitions):
            bad = p[(p < 0) | (p >= num_partitions)][0]
            raise _C.InvalidArgumentError(f"partitions{list(np.argwhere((p < 0) | (p >= num_partitions))[0])} = "
                                          f"{bad} is not in [0, {num_partitions})")
    return [boolean_mask(data, equal(partitions, _t(i, dtype=partitions.dtype))) for i in range(num_partitions)]


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i]] = data[m][i], later pieces winning where indices repeat; max index + 1 rows."""
    from ._ops import add, concat, gather, range as _range, reduce_max, reshape, shape
    from .math import unsorted_segment_max
    indices = [_t(i, dtype=_dtypes.int32) for i in indices]
    data = [_t(d) for d in data]
    for i, d in zip(indices, data):
        if i.shape.rank is not None and d.shape.rank is not None and \
                not d.shape[:i.shape.rank].is_compatible_with(i.shape):
            raise ValueError(f"data shape {d.shape} must start with its indices' shape {i.shape}")
    flat_idx = concat([reshape(i, [-1]) for i in indices], 0)
    inner = [shape(d)[len(i.shape):] for i, d in zip(indices, data)][0]
    flat_data = concat([reshape(d, concat([[-1], inner], 0)) for d in data], 0)
    rows = add(reduce_max(flat_idx), 1)
    position = unsorted_segment_max(_range(shape(flat_idx)[0]), flat_idx, rows)
    return gather(flat_data, position)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """Each batch entry's first seq_lengths[b] elements along seq_axis reversed, the rest kept."""
    from ._ops import add, cast, expand_dims, less, range as _range, shape, subtract, transpose, where
    from ._ops import zeros_like
    input, seq_lengths = _t(input), _t(seq_lengths)
    rank = input.shape.rank
    batch_axis = 0 if batch_axis is None else batch_axis % rank
    seq_axis = seq_axis % rank
    if seq_axis == batch_axis:
        raise ValueError(f"seq_axis and batch_axis must differ, both are {seq_axis}")
    perm = [batch_axis, seq_axis] + [a for a in range(rank) if a not in (batch_axis, seq_axis)]
    moved = transpose(input, perm)
    steps = shape(moved)[1]
    t = expand_dims(_range(steps), 0)
    lengths = expand_dims(cast(seq_lengths, _dtypes.int32), 1)
    if _eager(seq_lengths):
        too_long = (seq_lengths.numpy() > int(steps.numpy())).nonzero()[0]
        if too_long.size:  # TF names the first entry too long
            raise _C.InvalidArgumentError(f"seq_lens({too_long[0]}) > input.dims({seq_axis})")
    t = add(t, zeros_like(lengths))  # [batch, steps]
    source = where(less(t, lengths), subtract(subtract(lengths, 1), t), t)  # past the length: kept
    batch = add(expand_dims(_range(shape(moved)[0]), 1), zeros_like(source))
    from ._ops import gather_nd, stack
    out = gather_nd(moved, stack([batch, source], axis=-1))
    inverse = [perm.index(a) for a in range(rank)]
    return transpose(out, inverse)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops) making input_shape + paddings divisible by block_shape, as space_to_batch needs."""
    from ._ops import floormod, stack, subtract, add, zeros_like, cast, unstack
    input_shape = cast(_t(input_shape), _dtypes.int32)
    block_shape = cast(_t(block_shape), _dtypes.int32)
    if base_paddings is None:
        from ._ops import zeros
        base_paddings = zeros([int(block_shape.shape[0]), 2], _dtypes.int32)
    base_paddings = cast(_t(base_paddings), _dtypes.int32)
    start, end = unstack(base_paddings, axis=1)
    full = add(add(input_shape, start), end)
    extra = floormod(subtract(block_shape, floormod(full, block_shape)), block_shape)
    paddings = stack([start, add(end, extra)], axis=1)
    crops = stack([zeros_like(extra), extra], axis=1)
    return paddings, crops


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002 - TF's name
    """The inverse of space_to_batch: the batch's prod(block_shape) blocks moved back into the M spatial
    dimensions, then cropped by crops [M, 2]. Static shapes."""
    x = _t(input)
    block = [int(b) for b in np.ravel(_t(block_shape).numpy())]
    crop = np.asarray(_t(crops).numpy()).reshape(-1, 2).astype(int)
    shape = x.shape.as_list()
    m = len(block)
    if None in shape:
        raise ValueError(f"batch_to_space in Kiln needs a static input shape, got {x.shape}")
    if crop.shape[0] != m:
        raise ValueError(f"crops must be [{m}, 2], got {list(crop.shape)}")
    prod = int(np.prod(block))
    if shape[0] % prod:
        raise ValueError(f"The batch {shape[0]} is not divisible by the product of block_shape, {prod}")
    spatial, rest = shape[1:1 + m], shape[1 + m:]
    if any(s * b - int(c[0]) - int(c[1]) < 0 for s, b, c in zip(spatial, block, crop)):
        raise ValueError(f"crops {crop.tolist()} are larger than the result's dimensions")
    from ._nn_conv import _batch_to_space  # the inverse tf.nn.space_to_batch already uses
    return _batch_to_space(x, block, crop, spatial, rest)


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """Levenshtein distances between the sequences (last dimension) of two SparseTensors, [batch...] float32;
    normalize divides by the truth's length (an empty truth gives inf)."""
    from .sparse_tensor import SparseTensor
    for what, sp in (("hypothesis", hypothesis), ("truth", truth)):
        if not isinstance(sp, SparseTensor):
            raise TypeError(f"{what} must be a SparseTensor.")

    def sequences(indices, values):
        seqs = {}
        for index, value in sorted(zip(map(tuple, indices.tolist()), values.tolist())):
            seqs.setdefault(index[:-1], []).append(value)
        return seqs

    def levenshtein(a, b):
        row = list(range(len(b) + 1))
        for i, x in enumerate(a, 1):
            prev, row[0] = row[0], i
            for j, y in enumerate(b, 1):
                prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
        return row[-1]

    def run(hi, hv, hs, ti, tv, ts):
        hi, hv, hs, ti, tv, ts = (np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in (hi, hv, hs, ti, tv, ts))
        lead = np.maximum(hs[:-1], ts[:-1]).astype(int)
        hyp, tru = sequences(hi, hv), sequences(ti, tv)
        out = np.zeros(lead, np.float32)
        for index in np.ndindex(*lead):
            a, b = hyp.get(index, []), tru.get(index, [])
            d = float(levenshtein(a, b))
            out[index] = (d / len(b) if b else np.inf) if normalize else d
        return out
    inputs = [hypothesis.indices, hypothesis.values, hypothesis.dense_shape, truth.indices, truth.values,
              truth.dense_shape]
    if _eager(*inputs):
        return _t(run(*inputs))
    from .function import py_function
    return py_function(run, inputs, _dtypes.float32)


def bitcast(input, type, name=None):  # noqa: A002 - TF's names
    """The bytes of `input` read as `type` (no copy in TF, a NumPy view here): the same shape for types of one
    size; from a wider type a new last dimension of the size ratio; to a wider type the last dimension, which
    must equal the ratio, goes. Not differentiable, as in TF."""
    x = _t(input)
    dtype = _dtypes.as_dtype(type)
    bad = [d for d in (x.dtype, dtype) if d in (_dtypes.string, _dtypes.resource, _dtypes.bool, _dtypes.bfloat16)]
    if bad:
        raise TypeError(f"bitcast does not take {bad[0].name} (Kiln: numbers but bfloat16)")
    src, dst = np.dtype(x.dtype.as_numpy_dtype), np.dtype(dtype.as_numpy_dtype)
    shape = x.shape.as_list() if x.shape.rank is not None else None
    if src.itemsize < dst.itemsize:
        ratio = dst.itemsize // src.itemsize
        if shape is None or not shape or shape[-1] != ratio:
            raise _C.InvalidArgumentError(f"Cannot bitcast from {x.dtype.name} to {dtype.name}: shape {x.shape}")
        out_shape = shape[:-1]
    elif src.itemsize > dst.itemsize:
        out_shape = None if shape is None else shape + [src.itemsize // dst.itemsize]
    else:
        out_shape = shape

    def run(value):
        arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        arr = np.ascontiguousarray(arr).reshape(arr.shape)  # (ascontiguousarray makes a scalar 1-D)
        if src.itemsize > dst.itemsize:
            return arr.reshape(arr.shape + (1,)).view(dst)
        out = arr.view(dst)
        return out.reshape(arr.shape[:-1]) if src.itemsize < dst.itemsize else out
    if _eager(x):
        return _t(run(x), dtype=dtype)
    from .function import py_function
    out = py_function(run, [x], dtype)
    return out if out_shape is None or None in out_shape else _C.reshape(out, out_shape)
