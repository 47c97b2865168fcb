"""The op surface under TensorFlow's names, argument names and defaults.
Each function converts its arguments and calls one engine op (kiln._C)."""
import builtins as _builtins
import collections as _collections

import numpy as _np

from . import _C
from . import _dynamic_shape
from . import dtypes as _dtypes
from .tensor_shape import TensorShape

Tensor = _C.Tensor


def _dtype(d):
    return None if d is None else _dtypes.as_dtype(d)


def _enum(d):
    return _dtypes.as_dtype(d)._enum


def _dims(shape):
    """A shape argument for the engine: a list of ints, a 1-D tensor, or (a list mixing ints and
    scalar tensors whose values are known only when the graph runs) a _dynamic_shape.DynamicDims."""
    if isinstance(shape, TensorShape):
        return shape.as_list()
    if isinstance(shape, _C.Tensor) and shape._is_symbolic:
        return _dynamic_shape.unpack(shape)  # tf.zeros(tf.shape(x)) in a trace
    if isinstance(shape, (_C.Tensor, _C.Variable)):
        return shape
    if isinstance(shape, int):
        return [shape]
    dims = list(shape)
    if _builtins.any(isinstance(d, (_C.Tensor, _C.Variable)) for d in dims):
        return _dynamic_shape.resolve(dims)
    return dims


def _is_dynamic(dims):
    return isinstance(dims, _dynamic_shape.DynamicDims)


def _axis_list(axis):
    if axis is None:
        return None
    if isinstance(axis, (_C.Tensor, _C.Variable)):
        axis = axis.numpy().tolist()
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return int(axis)


# ---- creation ---------------------------------------------------------------------

def _holds_python_float(value, depth=0):
    if isinstance(value, float) and not isinstance(value, _np.generic):
        return True
    return depth < 32 and isinstance(value, (list, tuple)) and _builtins.any(
        _holds_python_float(v, depth + 1) for v in value)


def _numpy_converts(source, dtype):
    """TF's eager rule for a NumPy value made a tensor of `dtype`: NumPy casts numbers to any number
    or bool dtype (pywrap_tensor.cc converts with NPY_ARRAY_FORCECAST: 1.7 becomes 1); strings stay
    strings."""
    return (source.kind in "OSU") == (dtype == _dtypes.string)


def _literal(value, dtype):
    """`value` ready for the engine's conversion, by TF's rules: a NumPy scalar keeps its
    dtype (np.float64 is a Python float too, which alone would make float32) and NumPy values
    cast to `dtype`; Python floats do not become integers or bools (TF's "Cannot convert 1.5
    to EagerTensor of dtype int32")."""
    if hasattr(value, "__array__") and not isinstance(value, (_np.ndarray, _np.generic, _C.Tensor, _C.Variable)):
        value = _np.asarray(value)  # a pandas Series (of strings too), as TF converts what has __array__
    if isinstance(value, (_np.ndarray, _np.generic)):
        value = _np.asarray(value)
        if dtype is not None and not _numpy_converts(value.dtype, dtype):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        return value
    if dtype is not None and not (dtype.is_floating or dtype == _dtypes.string) and _holds_python_float(value):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if isinstance(value, (list, tuple)) and _first_leaf(value).__class__ is bytes:
        # As objects: NumPy's fixed-width bytes would drop each string's trailing NULs.
        strings = _np.array(value, dtype=object)
        if all(type(v) is bytes for v in strings.reshape(-1)):
            return strings
    return value


def _first_leaf(value):
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value


def constant(value, dtype=None, shape=None, name=None):
    dtype = _dtype(dtype)
    t = _C.constant(_literal(value, dtype), None if dtype is None else dtype._enum, True)
    if shape is not None:
        shape = _dims(shape)
        if _is_dynamic(shape):
            return _C.add(_dynamic_shape.zeros(shape, t.dtype), t) if t.ndim == 0 else reshape(t, shape)
        if t.ndim == 0 and list(shape) != []:
            t = _C.fill(shape, t, None)
        else:
            t = _C.reshape(t, shape)
    return t


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    if dtype is None and dtype_hint is not None and not isinstance(value, (_C.Tensor, _C.Variable)):
        try:
            return _C.constant(_literal(value, _dtype(dtype_hint)), _enum(dtype_hint))
        except (TypeError, ValueError):
            pass
    dtype = _dtype(dtype)
    return _C.constant(_literal(value, dtype), None if dtype is None else dtype._enum)


def op_input(value, parameter, allowed, dtype=None, dtype_hint=None):
    """`value` as a tensor for an op's input `parameter` (a variable read, a Python value converted as `dtype`
    or `dtype_hint`), refused with TF's TypeError when its dtype's name is not in `allowed`."""
    if isinstance(value, _C.Variable):
        value = value.read_value()
    if not isinstance(value, _C.Tensor):
        value = convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint)
    if value.dtype.name not in allowed:
        raise TypeError(f"Value passed to parameter '{parameter}' has DataType {value.dtype.name} not in list of "
                        f"allowed values: {', '.join(allowed)}")
    return value


def is_tensor(x):
    return isinstance(x, (_C.Tensor, _C.Variable))


def _creation_dims(shape):
    """zeros/ones/fill's shape, its entries checked as TF converts them to an int32/int64
    tensor: a non-integer is a TypeError, an integer past int64 InvalidArgumentError
    (the engine checks the sizes int64 can hold)."""
    dims = _dims(shape)
    if isinstance(dims, list):
        for d in dims:
            if not isinstance(d, (int, _np.integer)):
                raise TypeError(f"Cannot convert {shape!r} to EagerTensor of dtype int32: the shape's entry {d!r} "
                                f"is not an integer")
            if not -2**63 <= int(d) < 2**63:
                from .errors import InvalidArgumentError
                raise InvalidArgumentError(f"Shape {shape!r} has a dimension {d} that does not fit in int64")
    return dims


def zeros(shape, dtype=_dtypes.float32, name=None):
    dims = _creation_dims(shape)
    if _is_dynamic(dims):
        return _dynamic_shape.zeros(dims, _dtypes.as_dtype(dtype))
    return _C.zeros(dims, _enum(dtype))


def ones(shape, dtype=_dtypes.float32, name=None):
    dims = _creation_dims(shape)
    if _is_dynamic(dims):
        dtype = _dtypes.as_dtype(dtype)
        return _C.add(_dynamic_shape.zeros(dims, dtype), _C.ones([], dtype._enum))
    return _C.ones(dims, _enum(dtype))


def fill(dims, value, name=None):
    dims = _creation_dims(dims)
    if _is_dynamic(dims):
        value = convert_to_tensor(value)
        return _C.add(_dynamic_shape.zeros(dims, value.dtype), value)
    # The value's dtype, as TF converts it (a Python int is int32, a float float32, NumPy keeps its own).
    if isinstance(value, _C.Tensor) and value._is_symbolic:
        from ._array_ops import broadcast_to  # a graph tensor's value is known when the graph runs
        return broadcast_to(value, dims)
    dtype = value.dtype if isinstance(value, (_C.Tensor, _C.Variable)) else convert_to_tensor(value).dtype
    return _C.fill(dims, value, _enum(dtype))


def zeros_like(input, dtype=None, name=None):  # noqa: A002 - TF's argument name
    return _C.zeros_like(input, None if dtype is None else _enum(dtype))


def ones_like(input, dtype=None, name=None):  # noqa: A002
    return _C.ones_like(input, None if dtype is None else _enum(dtype))


# Bounds of ranges traced with bounds known only at run time: AutoGraph's
# `for i in kiln.range(n)` loops on them without the materialized tensor.
_traced_ranges = _collections.OrderedDict()


def _range_bounds(t):
    """(start, limit, delta) of a tensor made by kiln.range while tracing, else None."""
    entry = _traced_ranges.get(id(t))
    return entry[1] if entry is not None and entry[0] is t else None


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's name
    if limit is None:
        start, limit = 0, start
    bounds = (start, limit, delta)
    symbolic = [b for b in bounds if isinstance(b, _C.Tensor) and b._is_symbolic]
    if not symbolic:
        vals = [b._scalar_value() if isinstance(b, (_C.Tensor, _C.Variable)) else b for b in bounds]
        if dtype is None:
            tensors = [b for b in bounds if isinstance(b, (_C.Tensor, _C.Variable))]
            if tensors:
                dtype = tensors[0].dtype
            elif any(isinstance(v, float) for v in vals):
                dtype = _dtypes.float32
            elif _builtins.all(-2**31 <= v < 2**31 for v in vals):
                dtype = _dtypes.int32
        return _C.range(vals[0], vals[1], vals[2], None if dtype is None else _enum(dtype))
    t = _dynamic_range(*bounds, dtype=dtype)
    _traced_ranges[id(t)] = (t, bounds)
    while len(_traced_ranges) > 256:
        _traced_ranges.popitem(last=False)
    return t


def _checked_range_start(start, limit, delta, dtype):
    """`start`, passed on once the graph has checked the range's size as the eager Range op
    does: the loop below would otherwise spin (delta 0) or run for days (2**40 elements)
    before any allocation failed."""
    import math
    import os

    def check(s, l, d):
        from .errors import InvalidArgumentError, ResourceExhaustedError
        lo, hi, step = (x.numpy().item() for x in (s, l, d))
        if step == 0:
            raise InvalidArgumentError("Range: delta must not be zero")
        if isinstance(step, float):
            if math.isnan(lo) or math.isnan(hi) or math.isnan(step) or math.isinf(hi - lo):
                raise InvalidArgumentError(f"Range: the range from {lo} to {hi} by {step} has no size")
            n = max(0, math.ceil((hi - lo) / step))
        else:
            n = max(0, -((lo - hi) // step))  # exact in Python ints: ceil((hi - lo) / step)
        if n > 2**48:
            raise InvalidArgumentError(f"Range: the range from {lo} to {hi} by {step} has {n} elements, more "
                                       f"than a tensor may have (2^48 = {2**48})")
        wanted, memory = n * dtype.size, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if wanted > memory:
            raise ResourceExhaustedError(f"Range: OOM when allocating a tensor of shape ({n},) and type "
                                         f"{dtype.name}: {wanted} bytes wanted, more than the machine's "
                                         f"{memory} bytes")
        return s

    return _C.reshape(_C.host_function(check, [start, limit, delta], [dtype])[0], [])


def _dynamic_range(start, limit, delta, dtype=None):
    from .control_flow import TensorArray, while_loop
    ref = next(b for b in (start, limit, delta) if isinstance(b, _C.Tensor))
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else ref.dtype
    start, limit, delta = (cast(b, dtype) if isinstance(b, _C.Tensor) else constant(b, dtype) for b in (start, limit, delta))
    start = _checked_range_start(start, limit, delta, dtype)

    def more(i, ta):
        return logical_or(logical_and(delta > 0, i < limit), logical_and(delta < 0, i > limit))

    def step(i, ta):
        return i + delta, ta.write(ta.size(), i)

    _, ta = while_loop(more, step, (start, TensorArray(dtype, size=0, dynamic_size=True, element_shape=[])))
    return ta.stack()


def cast(x, dtype, name=None):
    return _C.cast(x, _enum(dtype))


# ---- arithmetic and math --------------------------------------------------------------

def add(x, y, name=None): return _C.add(x, y)
def subtract(x, y, name=None): return _C.subtract(x, y)
def multiply(x, y, name=None): return _C.multiply(x, y)
def divide(x, y, name=None): return _C.divide(x, y)
def truediv(x, y, name=None): return _C.divide(x, y)
def floordiv(x, y, name=None): return _C.floordiv(x, y)
def floormod(x, y, name=None): return _C.mod(x, y)
def truncatediv(x, y, name=None): return _C.truncatediv(x, y)
def truncatemod(x, y, name=None): return _C.truncatemod(x, y)
def squared_difference(x, y, name=None): return _C.squared_difference(x, y)
def pow(x, y, name=None): return _C.pow(x, y)  # noqa: A001
def maximum(x, y, name=None): return _C.maximum(x, y)
def minimum(x, y, name=None): return _C.minimum(x, y)
def negative(x, name=None): return _C.negative(x)
def abs(x, name=None): return _C.abs(x)  # noqa: A001
def complex(real, imag, name=None): return _C.complex(real, imag)  # noqa: A001
def real(input, name=None): return _C.real(input)  # noqa: A002
def imag(input, name=None): return _C.imag(input)  # noqa: A002
def conj(x, name=None): return _C.conj(x)
def angle(input, name=None): return _C.angle(input)  # noqa: A002
def sign(x, name=None): return _C.sign(x)
def floor(x, name=None): return _C.floor(x)
def ceil(x, name=None): return _C.ceil(x)
def round(x, name=None): return _C.round(x)  # noqa: A001
def rint(x, name=None): return _C.rint(x)
def square(x, name=None): return _C.square(x)
def relu(features, name=None): return _C.relu(features)
def sqrt(x, name=None): return _C.sqrt(x)
def rsqrt(x, name=None): return _C.rsqrt(x)
def exp(x, name=None): return _C.exp(x)
def log(x, name=None): return _C.log(x)
def log1p(x, name=None): return _C.log1p(x)
def tanh(x, name=None): return _C.tanh(x)
def sigmoid(x, name=None): return _C.sigmoid(x)
def sin(x, name=None): return _C.sin(x)
def cos(x, name=None): return _C.cos(x)
def equal(x, y, name=None): return _C.equal(x, y)
def not_equal(x, y, name=None): return _C.not_equal(x, y)
def less(x, y, name=None): return _C.less(x, y)
def less_equal(x, y, name=None): return _C.less_equal(x, y)
def greater(x, y, name=None): return _C.greater(x, y)
def greater_equal(x, y, name=None): return _C.greater_equal(x, y)
def logical_and(x, y, name=None): return _C.logical_and(x, y)
def logical_or(x, y, name=None): return _C.logical_or(x, y)
def logical_not(x, name=None): return _C.logical_not(x)
def stop_gradient(input, name=None): return _C.stop_gradient(input)  # noqa: A002


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    return _C.clip(t, clip_value_min, clip_value_max)


def where(condition, x=None, y=None, name=None):
    """x where condition else y (broadcast); with neither x nor y, the coordinates of condition's true (nonzero)
    elements, int64 [count, rank] in row-major order."""
    if x is None and y is None:
        from ._array_ops import true_coordinates
        return true_coordinates(condition)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _C.where(condition, x, y)


def _reduction(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        return op(input_tensor, _axis_list(axis), bool(keepdims))
    return reduce


reduce_sum = _reduction(_C.reduce_sum)
reduce_mean = _reduction(_C.reduce_mean)
reduce_prod = _reduction(_C.reduce_prod)
reduce_max = _reduction(_C.reduce_max)
reduce_min = _reduction(_C.reduce_min)
reduce_any = _reduction(_C.reduce_any)
reduce_all = _reduction(_C.reduce_all)


def argmax(input, axis=None, output_type=_dtypes.int64, name=None):  # noqa: A002
    return _C.argmax(input, 0 if axis is None else int(axis), _enum(output_type))


def argmin(input, axis=None, output_type=_dtypes.int64, name=None):  # noqa: A002
    return _C.argmin(input, 0 if axis is None else int(axis), _enum(output_type))


# The (a, b, output) dtypes of TF's BatchMatMulV3 CPU kernels, what tf.matmul runs when
# output_type differs from the inputs' dtype: 8-bit integers accumulate in int32.
_MATMUL_OUTPUT_TYPES = {("int8", "int8", "int32"), ("uint8", "int8", "int32"), ("int8", "uint8", "int32"),
                        ("uint8", "uint8", "int32"), ("bfloat16", "int8", "bfloat16"),
                        ("bfloat16", "uint8", "bfloat16"), ("int8", "bfloat16", "bfloat16"),
                        ("uint8", "bfloat16", "bfloat16")}


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, name=None):
    if adjoint_a or adjoint_b or output_type is not None:
        a, b = convert_to_tensor(a), convert_to_tensor(b)
    if output_type is not None:
        out = _dtypes.as_dtype(output_type)
        if out != a.dtype or out != b.dtype:
            if (a.dtype.name, b.dtype.name, out.name) not in _MATMUL_OUTPUT_TYPES:
                raise _C.NotFoundError(f"Could not find device for node: {{{{node BatchMatMulV3}}}} = BatchMatMulV3"
                                       f"[Ta={a.dtype.name}, Tb={b.dtype.name}, Tout={out.name}]")
            a, b = _C.cast(a, out._enum), _C.cast(b, out._enum)
    if adjoint_a and a.dtype.is_complex:  # the adjoint conjugates; real dtypes only transpose
        a = _C.conj(a)
    if adjoint_b and b.dtype.is_complex:
        b = _C.conj(b)
    return _C.matmul(a, b, bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b))


def einsum(equation, *inputs, **kwargs):
    """tf.einsum: letters name dims, '...' stands for broadcast dims, letters absent from the output are summed."""
    unknown = set(kwargs) - {"name", "optimize"}
    if unknown:
        raise TypeError(f"einsum() got unexpected keyword arguments: {sorted(unknown)}")
    return _C.einsum(equation, inputs)


# ---- shapes and indexing ---------------------------------------------------------------

def reshape(tensor, shape, name=None):
    dims = _dims(shape)
    if _is_dynamic(dims):
        tensor = convert_to_tensor(tensor)
        dims = _dynamic_shape.reshape_dims(tensor, dims)
    return _C.reshape(tensor, dims)


def transpose(a, perm=None, conjugate=False, name="transpose"):
    if conjugate:
        a = convert_to_tensor(a)
        if a.dtype.is_complex:
            a = _C.conj(a)
    return _C.transpose(a, [] if perm is None else [int(p) for p in perm])


def shape(input, out_type=_dtypes.int32, name=None):  # noqa: A002
    s = _C.shape(input)
    s = s if s.dtype == _dtypes.as_dtype(out_type) else _C.cast(s, _enum(out_type))
    if isinstance(input, (_C.Tensor, _C.Variable)):
        _dynamic_shape.note_shape(s, input)
    return s


def size(input, out_type=_dtypes.int32, name=None):  # noqa: A002
    return cast(reduce_prod(shape(input, _dtypes.int64)), out_type)


def rank(input, name=None):  # noqa: A002
    return constant(input.ndim, _dtypes.int32)


def expand_dims(input, axis, name=None):  # noqa: A002
    return _C.expand_dims(input, int(axis))


def squeeze(input, axis=None, name=None):  # noqa: A002
    if axis is None:
        axis = []
    elif isinstance(axis, int):
        axis = [axis]
    return _C.squeeze(input, list(axis))


def concat(values, axis, name="concat"):
    return _C.concat(list(values), int(axis))


def stack(values, axis=0, name="stack"):
    return _C.stack(list(values), int(axis))


def unstack(value, num=None, axis=0, name="unstack"):
    return _C.unstack(value, int(axis))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """tf.split: `value` cut along `axis` into num_or_size_splits equal parts (an int), or into parts of
    those sizes (a list or 1-D tensor; one may be -1, the rest of the dim). One op, whose gradient is one
    concat of the parts' gradients."""
    if isinstance(num_or_size_splits, _C.Tensor):
        num_or_size_splits = num_or_size_splits.numpy()
    if getattr(num_or_size_splits, "ndim", None) == 0:  # a NumPy or tensor scalar: a count
        num_or_size_splits = int(num_or_size_splits)
    if isinstance(num_or_size_splits, int):
        return _C.split(value, num_or_size_splits, int(axis))
    sizes = [int(s) for s in num_or_size_splits]
    if num is not None and int(num) != len(sizes):
        raise ValueError(f"kiln.split: num={num} but {len(sizes)} sizes were given")
    return _C.split_with_sizes(value, sizes, int(axis))


def slice(input_, begin, size, name=None):  # noqa: A001
    return _C.slice(input_, [int(b) for b in begin], [int(s) for s in size])


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, name=None):
    strides = [1] * len(begin) if strides is None else strides
    return _C.strided_slice(input_, list(begin), list(end), list(strides), begin_mask, end_mask, ellipsis_mask,
                            new_axis_mask, shrink_axis_mask)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    if batch_dims:
        raise ValueError("kiln.gather: batch_dims is not supported")
    return _C.gather(params, indices, 0 if axis is None else int(axis))


def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of params named by the index tuples in the last dim of indices."""
    if batch_dims:
        from ._array_ops import batch_gather_nd
        return batch_gather_nd(params, indices, int(batch_dims))
    return _C.gather_nd(params, indices)


def scatter_nd(indices, updates, shape, name=None):
    """updates added into zeros of `shape` at the slices indices names (duplicates add up)."""
    if isinstance(shape, (_C.Tensor, _C.Variable)):
        shape = shape.numpy().tolist()
    return _C.scatter_nd(indices, updates, [int(d) for d in _dims(shape)])


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    return _C.tensor_scatter_nd_update(tensor, indices, updates)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    return _C.tensor_scatter_nd_add(tensor, indices, updates)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """tensor with updates subtracted at the slices indices names (duplicates subtract each)."""
    return _C.tensor_scatter_nd_add(tensor, indices, _C.negative(convert_to_tensor(updates)))


def _tensor_scatter_nd_extreme(tensor, indices, updates, segment_extreme, pick):
    """tensor with each named slice replaced by pick(slice, extreme of its updates): duplicate indices
    reduce first, so every write of one slice writes the same value."""
    tensor, indices, updates = convert_to_tensor(tensor), convert_to_tensor(indices), convert_to_tensor(updates)
    depth = indices.shape[-1]
    if depth is None:
        raise ValueError("tensor_scatter_nd_min/max need indices whose last dimension is known")
    from .math import cumprod
    dims = shape(tensor, out_type=indices.dtype)
    outer = dims[:depth]
    strides = cumprod(outer, exclusive=True, reverse=True)
    flat_indices = reshape(indices, [-1, depth])
    slots = reduce_sum(flat_indices * strides, axis=1)
    static_outer = tensor.shape[:depth]
    if not static_outer.is_fully_defined():
        raise ValueError(f"tensor_scatter_nd_min/max need the indexed dimensions of tensor known, got {tensor.shape}")
    slot_count = int(_np.prod(static_outer.as_list(), dtype=_np.int64))
    flat_updates = reshape(updates, concat([constant([-1], dims.dtype), dims[depth:]], 0))
    reduced = gather(segment_extreme(flat_updates, slots, slot_count), slots)
    return tensor_scatter_nd_update(tensor, flat_indices,
                                    pick(gather_nd(tensor, flat_indices), reduced))


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """tensor with each slice indices names replaced by the maximum of it and its updates."""
    from .math import unsorted_segment_max
    return _tensor_scatter_nd_extreme(tensor, indices, updates, unsorted_segment_max, _C.maximum)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """tensor with each slice indices names replaced by the minimum of it and its updates."""
    from .math import unsorted_segment_min
    return _tensor_scatter_nd_extreme(tensor, indices, updates, unsorted_segment_min, _C.minimum)


def _one_hot_indices(indices):
    """TF's OneHot takes uint8, int8, int32 or int64 indices. A value that is no tensor yet converts
    to the op's default index dtype, int64, by TF's rules: a NumPy array casts (1.9 -> 1), Python
    floats are a TypeError. The op refuses a float tensor: InvalidArgumentError eagerly, TypeError
    while tracing (op_def_library)."""
    if not isinstance(indices, (_C.Tensor, _C.Variable)):
        return constant(indices, dtype=_dtypes.int64)
    if indices.dtype not in (_dtypes.uint8, _dtypes.int32, _dtypes.int64):
        if _C.is_tracing():
            raise TypeError(f"Value passed to parameter 'indices' has DataType {indices.dtype.name} not in list "
                            "of allowed values: uint8, int8, int32, int64")
        from .errors import InvalidArgumentError
        tf_name = {"float32": "float", "float64": "double"}.get(indices.dtype.name, indices.dtype.name)
        raise InvalidArgumentError(f"Value for attr 'TI' of {tf_name} is not in the list of allowed values: uint8, "
                                   "int8, int32, int64 [Op:OneHot]")
    return indices


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    indices = _one_hot_indices(indices)
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    elif on_value is not None or off_value is not None:
        # TF: the output takes on_value's (else off_value's) dtype, a Python 1 making int32.
        dtype = convert_to_tensor(on_value if on_value is not None else off_value).dtype
    else:
        dtype = _dtypes.float32
    return _C.one_hot(indices, int(depth), 1 if on_value is None else on_value, 0 if off_value is None else off_value,
                      -1 if axis is None else int(axis), dtype._enum)


def tile(input, multiples, name=None):  # noqa: A002
    if isinstance(multiples, (_C.Tensor, _C.Variable)):
        multiples = multiples.numpy().tolist()
    return _C.tile(input, [int(m) for m in multiples])


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    if mode.upper() != "CONSTANT":
        raise ValueError(f"kiln.pad: mode {mode!r} is not supported (only 'CONSTANT')")
    if isinstance(paddings, (_C.Tensor, _C.Variable)):
        paddings = paddings.numpy().tolist()
    return _C.pad(tensor, [(int(a), int(b)) for a, b in paddings], constant_values)


def identity(input, name=None):  # noqa: A002
    return convert_to_tensor(input)


def ensure_shape(x, shape, name=None):
    """x, checked when it is computed to have `shape` (None dims match any size); in a graph its static shape
    becomes the one the two agree on. InvalidArgumentError when they differ."""
    from .tensor_shape import TensorShape
    x, shape = convert_to_tensor(x), TensorShape(shape)
    if shape.rank is None:
        return x
    return _C.ensure_shape(x, [-1 if d is None else int(d) for d in shape.as_list()])


def add_n(inputs, name=None):
    inputs = list(inputs)
    total = inputs[0]
    for x in inputs[1:]:
        total = _C.add(total, x)
    return total


class _PrintSlot:
    """Where a tensor of a structure goes in the structure's printed text."""

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"\x00{self.index}\x00"


def _print_pieces(value):
    """A list, tuple or dict holding tensors as literal text and tensors, which print as TF prints the structure:
    Python's text of it with each tensor's values in place of its repr ("([0 1 2 3],)")."""
    import re
    from . import nest
    leaves = nest.flatten(value)
    tensors = [leaf for leaf in leaves if isinstance(leaf, _C.Tensor)]
    if not tensors:
        return [value]
    slots, k = [], 0
    for leaf in leaves:
        if isinstance(leaf, _C.Tensor):
            slots.append(_PrintSlot(k))
            k += 1
        else:
            slots.append(leaf)
    parts = re.split("\x00(\\d+)\x00", str(nest.pack_sequence_as(value, slots)))
    return [tensors[int(p)] if i % 2 else p for i, p in enumerate(parts) if i % 2 or p]


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """tf.print: prints when the graph runs (every call), to stderr by default. A list, tuple or dict prints as
    Python prints it, with its tensors' values."""
    import sys
    to_stdout = output_stream is sys.stdout or output_stream == "stdout"
    if any(isinstance(x, (list, tuple, dict)) for x in inputs):
        pieces = []
        for i, x in enumerate(inputs):
            if i:
                pieces.append(sep)
            pieces.extend(_print_pieces(x) if isinstance(x, (list, tuple, dict)) else [x])
        inputs, sep = pieces, ""
    _C.print_(*inputs, sep=sep, end=end, summarize=summarize if summarize is not None else 3, to_stdout=to_stdout)


reduce_logsumexp = _reduction(_C.reduce_logsumexp)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t scaled so that its L2 norm over `axes` is at most clip_norm."""
    return _C.clip_by_norm(t, clip_norm, _axis_list(axes))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(every tensor scaled by clip_norm / max(global_norm, clip_norm), the global norm); None
    entries stay None. NaN everywhere when the norm is inf or NaN, as TF."""
    if use_norm is not None:
        raise NotImplementedError("clip_by_global_norm: use_norm is not supported; leave it None")
    clipped, norm = _C.clip_by_global_norm(list(t_list), float(clip_norm))
    return clipped, norm


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis`; `exclusive` leaves each element out, `reverse` runs from the end."""
    return _C.cumsum(x, int(axis), bool(exclusive), bool(reverse))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis`; `exclusive` leaves each element out, `reverse` runs from the end."""
    return _C.cumprod(x, int(axis), bool(exclusive), bool(reverse))


_TopK = _collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, index_type=_dtypes.int32, name=None):  # noqa: A002
    """The k largest entries of the last axis and their indices (always sorted)."""
    values, indices = _C.top_k(input, int(k))
    if _dtypes.as_dtype(index_type) != _dtypes.int32:
        indices = cast(indices, index_type)
    return _TopK(values, indices)


def _direction(direction):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"Unknown direction {direction!r}: expected 'ASCENDING' or 'DESCENDING'")
    return direction == "DESCENDING"


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """values sorted along `axis` (stable)."""
    return _C.sort(values, int(axis), _direction(direction))


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort `values` along `axis` (always stable)."""
    return _C.argsort(values, int(axis), _direction(direction))
