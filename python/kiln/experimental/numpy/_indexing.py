"""NumPy-style `tensor[key]` under experimental_enable_numpy_behavior: besides Kiln's basic indexing,
integer arrays (lists, tuples, NumPy arrays, tensors) and boolean arrays as indices, with NumPy's
placement of the indexed dimensions. Integers stay basic indices (they drop their axis first), as in
TF's numpy-style slicing, where NumPy would count them among the advanced ones.

The basic part (slices, newaxis, ...) is one strided slice; the advanced axes, moved first, are
then one gather_nd with the broadcast index arrays stacked, and the result dims go where NumPy
puts them: in place of the indexed axes when those are adjacent, else first."""
import numpy as np

from ... import _C, _ops, _array_ops
from ... import dtypes as _kdtypes
from ... import _indexing as _basic


def _is_array_index(k):
    if isinstance(k, (list, tuple)):
        return True
    if isinstance(k, np.ndarray):
        return True
    if isinstance(k, (_C.Tensor, _C.Variable)):
        return k.shape.rank != 0 or k.dtype == _kdtypes.bool
    return False


def _as_index_array(k):
    """(list of integer index arrays, number of axes consumed); a boolean array consumes its rank."""
    if isinstance(k, (_C.Tensor, _C.Variable)):
        t = k if isinstance(k, _C.Tensor) else k.read_value()
        if t.dtype == _kdtypes.bool:
            if t.shape.rank != 1:
                raise NotImplementedError(f"Need rank 1 for bool index {k}")
            coords = _ops.where(t)
            return list(_ops.unstack(coords, num=t.shape.rank, axis=1)), t.shape.rank
        return [_ops.cast(t, _kdtypes.int64)], 1
    a = np.asarray(k)
    if a.dtype == bool:
        if a.ndim != 1:
            raise NotImplementedError(f"Need rank 1 for bool index {k}")
        return [_ops.constant(c.astype(np.int64)) for c in np.nonzero(a)], max(a.ndim, 1)
    if a.size == 0:
        a = a.astype(np.int64)
    if a.dtype.kind not in "iu":
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                         "boolean arrays are valid indices")
    return [_ops.constant(a.astype(np.int64))], 1


def getitem(x, key):
    items = key if isinstance(key, tuple) else (key,)
    if _basic._is_boolean_mask(key) or not any(_is_array_index(k) for k in items):  # a whole bool key masks
        return _basic.getitem(x, key)
    rank = x.shape.rank
    consumed = 0
    expanded = []  # (kind, value): "basic" keeps k, "adv" holds index arrays
    for k in items:
        if k is None or k is Ellipsis:
            expanded.append(("basic", k))
        elif _is_array_index(k):
            arrays, n = _as_index_array(k)
            expanded.append(("adv", arrays))
            consumed += n
        elif isinstance(k, slice):
            expanded.append(("basic", k))
            consumed += 1
        else:
            expanded.append(("int", k))
            consumed += 1
    if consumed > rank:
        raise IndexError(f"too many indices for array: array is {rank}-dimensional, but {consumed} were indexed")
    # The basic slice: advanced entries become full slices over the axes they index.
    basic_key, adv_axes, adv_arrays = [], [], []
    out_axis = 0
    fill = rank - consumed
    for kind, v in expanded:
        if kind == "int":
            basic_key.append(v)
        elif kind == "basic":
            if v is Ellipsis:
                basic_key.append(Ellipsis)
                out_axis += fill
                fill = 0
            else:
                basic_key.append(v)
                out_axis += 1
        else:
            for arr in v:
                basic_key.append(slice(None))
                adv_axes.append(out_axis)
                adv_arrays.append(arr)
                out_axis += 1
    sliced = _basic.getitem(x, tuple(basic_key))
    dims = _ops.shape(sliced, out_type=_kdtypes.int64)
    # Negative indices count from the end of their axis.
    adv_arrays = [_ops.where(_ops.less(a, 0), a + dims[ax], a) for a, ax in zip(adv_arrays, adv_axes)]
    shape = adv_arrays[0].shape
    for a in adv_arrays[1:]:
        shape = _array_ops.broadcast_static_shape(shape, a.shape)
    if shape.is_fully_defined():
        adv_arrays = [_array_ops.broadcast_to(a, shape.as_list()) for a in adv_arrays]
    elif len(adv_arrays) > 1:  # run-time lengths (nonzero's, in a trace): broadcast by adding zeros
        zeros = [_ops.zeros_like(a) for a in adv_arrays]
        adv_arrays = [a + _ops.add_n([z for j, z in enumerate(zeros) if j != i]) if len(zeros) > 2 else
                      a + zeros[1 - i] for i, a in enumerate(adv_arrays)]
    r = sliced.shape.rank
    rest = [i for i in range(r) if i not in adv_axes]
    moved = _ops.transpose(sliced, adv_axes + rest)
    picked = _ops.gather_nd(moved, _ops.stack(adv_arrays, -1))
    adjacent = adv_axes == list(range(adv_axes[0], adv_axes[0] + len(adv_axes)))
    if adjacent and adv_axes[0] > 0:
        nb = shape.rank
        lead = adv_axes[0]
        perm = list(range(nb, nb + lead)) + list(range(nb)) + list(range(nb + lead, picked.shape.rank))
        picked = _ops.transpose(picked, perm)
    return picked
