"""kiln.cond, kiln.while_loop and kiln.TensorArray, TF2's signatures. Eagerly
they are plain Python control flow; inside kiln.function each becomes one op
holding its branches or body as nested graphs."""
from . import _C
from . import dtypes as _dtypes


def _tensors_for_numbers(value):
    """TF converts Python numbers that branches or bodies return to tensors."""
    if isinstance(value, (bool, int, float)):
        return _C.constant(value, None)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_tensors_for_numbers(v) for v in value)
    if isinstance(value, list):
        return [_tensors_for_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _tensors_for_numbers(v) for k, v in value.items()}
    return value


def cond(pred, true_fn=None, false_fn=None, name=None):
    if true_fn is None or false_fn is None:
        raise TypeError("kiln.cond: true_fn and false_fn are required")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("kiln.cond: true_fn and false_fn must be callable")
    if isinstance(pred, bool):
        return true_fn() if pred else false_fn()
    pred = _C.constant(pred, None) if not isinstance(pred, (_C.Tensor, _C.Variable)) else pred
    if not _C.control_flow_intercepted():
        return true_fn() if _C.predicate_value(pred) else false_fn()
    from .gradient import in_nested_graph  # custom gradients ask which graph a tape belongs to
    return _C.cond(pred, in_nested_graph(lambda: _tensors_for_numbers(true_fn())),
                   in_nested_graph(lambda: _tensors_for_numbers(false_fn())))


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    if not callable(cond) or not callable(body):
        raise TypeError("kiln.while_loop: cond and body must be callable")
    single = not isinstance(loop_vars, (list, tuple))
    as_list = isinstance(loop_vars, list)
    vars_ = (loop_vars,) if single else tuple(loop_vars)
    if not _C.control_flow_intercepted():
        n = 0
        while maximum_iterations is None or n < int(maximum_iterations):
            keep_going = cond(*vars_)
            if not (keep_going if isinstance(keep_going, bool) else _C.predicate_value(keep_going)):
                break
            nxt = body(*vars_)
            vars_ = (nxt,) if single or (len(vars_) == 1 and not isinstance(nxt, (list, tuple))) else tuple(nxt)
            n += 1
    else:
        vars_ = tuple(_tensors_for_numbers(v) for v in vars_)
        if shape_invariants is not None and single:
            shape_invariants = [shape_invariants]
        from .gradient import in_nested_graph
        vars_ = _C.while_loop(in_nested_graph(lambda *v: cond(*v)),
                              in_nested_graph(lambda *v: _tensors_for_numbers(body(*v))), vars_,
                              shape_invariants, maximum_iterations)
    if single:
        return vars_[0]
    return list(vars_) if as_list else vars_


TensorArray_ = _C.TensorArray


class TensorArray:
    """tf.TensorArray: value semantics (use what write returns)."""

    def __new__(cls, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                name=None):
        return _C.TensorArray(_dtypes.as_dtype(dtype)._enum, 0 if size is None else size, bool(dynamic_size),
                              bool(clear_after_read), element_shape)


_C.TensorArray.dtype = property(lambda self: _dtypes._BY_ENUM[self._dtype_enum])
