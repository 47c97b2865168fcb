"""NumPy-style indexing of tensors: ints, slices with steps, `...`, None, and
integer tensors (a scalar tensor index gathers, so it works inside graphs)."""
import numpy as _np

from . import _C


def _is_tensor_index(k):
    return isinstance(k, (_C.Tensor, _C.Variable))


def _is_boolean_mask(key):
    """A whole key of bools selects as tf.boolean_mask does: TF's _slice_helper sends a Python bool, a bool
    tensor and a bool ndarray there (a NumPy bool scalar is none of them)."""
    if isinstance(key, (_C.Tensor, _C.Variable, _np.ndarray)):
        return key.dtype == bool
    return isinstance(key, bool)


def getitem(x, key):
    if _is_boolean_mask(key):
        from . import _array_ops
        return _array_ops.boolean_mask(x, key)
    result = _getitem(x, key)
    if isinstance(key, (int, slice)) and x._is_symbolic:
        from . import _dynamic_shape
        _dynamic_shape.note_index(result, x, key)  # tf.shape(y)[i]: y's dim i, for shape arguments
    return result


def _getitem(x, key):
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_mask = 0
    gathers = []  # (position in the sliced result, index tensor)
    out_dim = 0
    seen_ellipsis = False
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            ellipsis_mask |= bit
            begin.append(0), end.append(0), strides.append(1)
            # Dims covered by the ellipsis: the rank minus the indices that consume a dim.
            consumed = sum(1 for kk in key if kk is not None and kk is not Ellipsis)
            rank = x.ndim if x.ndim is not None else consumed
            out_dim += max(rank - consumed, 0)
        elif k is None:
            new_axis_mask |= bit
            begin.append(0), end.append(0), strides.append(1)
            out_dim += 1
        elif isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and not isinstance(part, int) and not hasattr(part, "__index__"):
                    raise TypeError(f"slice indices must be integers or None, got {part!r}")
            step = 1 if k.step is None else int(k.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(step)
            if k.start is None:
                begin_mask |= bit
            if k.stop is None:
                end_mask |= bit
            out_dim += 1
        elif _is_tensor_index(k) and (k._is_symbolic if isinstance(k, _C.Tensor) else True):
            # Keep the dim here; gather along it afterwards.
            begin.append(0), end.append(0), strides.append(1)
            begin_mask |= bit
            end_mask |= bit
            gathers.append((out_dim, k))
            out_dim += 1
        else:
            try:
                idx = int(k.__index__() if hasattr(k, "__index__") else k)
            except (TypeError, ValueError):
                raise TypeError(
                    "Only integers, slices (`:`), ellipsis (`...`), kiln.newaxis (`None`) and scalar int32/int64 "
                    f"tensors are valid indices, got {k!r}") from None
            begin.append(idx), end.append(idx + 1), strides.append(1)
            shrink_mask |= bit
    result = _C.strided_slice(x, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                              shrink_mask)
    for axis, index in reversed(gathers):
        result = _C.gather(result, index, axis)
    return result
