"""RaggedTensors and SparseTensors in tf.data elements. The engine carries flat lists of tensors, so a composite
travels as its components (flat values and row splits; indices, values, dense_shape) and the element spec
(RaggedTensorSpec, SparseTensorSpec, as TF's) rebuilds it. Slicing rows (from_tensor_slices, unbatch) and
batching (batch, ragged_batch) of composites are done here on the components' NumPy values, as TF's kernels do
on its variant encoding: a ragged row of ragged_rank r is a RaggedTensorSpec of ragged_rank r - 1 (rank 0: a dense
tensor), and ragged elements batch into one more ragged dimension."""
import collections as _collections

import numpy as _np

from .. import _composite
from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import nest as _nest
from .._ops import convert_to_tensor as _convert
from ..function import TensorSpec
from ..ragged_tensor import RaggedTensor, RaggedTensorSpec
from ..sparse_tensor import SparseTensor, SparseTensorSpec

# tf.compat.v1.SparseTensorValue: what as_numpy_iterator gives for a SparseTensor.
SparseTensorValue = _collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


def is_composite_spec(spec):
    return isinstance(spec, (RaggedTensorSpec, SparseTensorSpec))


def holds_composites(structure):
    """Whether a structure of values or specs holds a RaggedTensor(Spec) or SparseTensor(Spec) leaf."""
    return any(is_composite_spec(s) or _composite.is_composite(s) for s in _nest.flatten(structure))


def flatten(element):
    """The element's tensors as the engine carries them: composites as their components."""
    return _nest.flatten(element, expand_composites=True)


def spec_of_value(value, drop_leading=False):
    """The spec of one leaf of an element (`drop_leading`: of its rows)."""
    if isinstance(value, (RaggedTensor, SparseTensor)):
        spec = value._type_spec
        return sliced_spec(spec) if drop_leading else spec
    dims = value.shape.as_list()
    return TensorSpec(dims[1:] if drop_leading else dims, value.dtype)


def loose_spec(spec):
    """`spec` with every dim unknown (rank kept): what rebuilds any element of that type (a SparseTensorSpec
    with a known shape would impose it on the rebuilt value)."""
    def loose(s):
        if not is_composite_spec(s) or s.shape.rank is None:
            return s
        dims = [None] * s.shape.rank
        if isinstance(s, SparseTensorSpec):
            return SparseTensorSpec(dims, s.dtype)
        return RaggedTensorSpec(dims, s.dtype, s.ragged_rank, s.row_splits_dtype)
    return _nest.map_structure(loose, spec)


def template_of(structure):
    """An element template that packs flat components back into elements: composite values become their loose
    specs (their static shapes are one element's)."""
    return _nest.map_structure(
        lambda v: loose_spec(v._type_spec) if _composite.is_composite(v) else v, structure)


def sliced_spec(spec):
    """The spec of one row of a value of `spec` (from_tensor_slices, unbatch)."""
    dims = spec.shape
    rest = None if dims.rank is None else dims.as_list()[1:]
    if isinstance(spec, SparseTensorSpec):
        return SparseTensorSpec(rest, spec.dtype)
    if isinstance(spec, RaggedTensorSpec):
        if spec.ragged_rank == 0:
            return TensorSpec(rest, spec.dtype) if rest is not None else TensorSpec(None, spec.dtype)
        return RaggedTensorSpec(rest, spec.dtype, spec.ragged_rank - 1, spec.row_splits_dtype)
    return TensorSpec(rest, spec.dtype)


def batched_spec(spec, lead):
    """The spec of a batch of values of `spec`: ragged ones gain a ragged dimension, as TF's batch."""
    dims = [lead] + (spec.shape.as_list() if spec.shape.rank is not None else [])
    if isinstance(spec, SparseTensorSpec):
        return SparseTensorSpec(dims if spec.shape.rank is not None else None, spec.dtype)
    if isinstance(spec, RaggedTensorSpec):
        return RaggedTensorSpec(dims, spec.dtype, spec.ragged_rank + 1, spec.row_splits_dtype)
    return TensorSpec(dims if spec.shape.rank is not None else None, spec.dtype)


def dense_to_ragged_spec(spec, row_splits_dtype):
    """ragged_batch's view of a dense component: one whose shape is not fully known becomes a RaggedTensorSpec
    whose ragged rank is its last unknown dim (0: the rows' lengths differ)."""
    if not isinstance(spec, TensorSpec) or spec.shape.rank is None or spec.shape.is_fully_defined():
        return spec
    ragged_rank = max(axis for axis, d in enumerate(spec.shape.as_list()) if d is None)
    return RaggedTensorSpec(spec.shape, spec.dtype, ragged_rank, row_splits_dtype)


def to_ragged(value, spec):
    """A dense value as `spec` (from dense_to_ragged_spec) takes it."""
    if isinstance(spec, RaggedTensorSpec) and spec.ragged_rank > 0 and not isinstance(value, RaggedTensor):
        return RaggedTensor.from_tensor(value, ragged_rank=spec.ragged_rank, row_splits_dtype=spec.row_splits_dtype)
    return value


def conform(value, spec):
    """A generator's yielded leaf as a value of the composite `spec` (nested lists become a RaggedTensor, as
    tf.ragged.constant makes them); TypeError where it does not fit, as TF's from_generator."""
    if isinstance(spec, SparseTensorSpec):
        if not isinstance(value, SparseTensor) or value.dtype != spec.dtype or not spec.is_compatible_with(value):
            raise TypeError(f"`generator` yielded an element {value!r} where a {spec!r} was expected.")
        return value
    if not isinstance(value, RaggedTensor):
        if spec.ragged_rank == 0:
            value = _convert(value, spec.dtype)
        else:
            from ..ragged_ops import constant
            value = constant(value.numpy().tolist() if hasattr(value, "numpy") else value, dtype=spec.dtype,
                             ragged_rank=spec.ragged_rank, row_splits_dtype=spec.row_splits_dtype)
    if isinstance(value, RaggedTensor) and (value.ragged_rank != spec.ragged_rank or value.dtype != spec.dtype):
        raise TypeError(f"`generator` yielded an element {value!r} where a {spec!r} was expected.")
    if not spec.shape.is_compatible_with(value.shape):
        raise TypeError(f"`generator` yielded an element of shape {value.shape} where an element of shape "
                        f"{spec.shape} was expected.")
    return value


# ---- NumPy parts of a leaf ---------------------------------------------------------------------

def _array(t):
    return t.numpy() if hasattr(t, "numpy") else _np.asarray(t)


def _ragged_parts(value):
    """(flat values, [row splits outermost first]) of a RaggedTensor or a dense tensor (no splits)."""
    if isinstance(value, RaggedTensor):
        return _array(value.flat_values), [_array(s) for s in value.nested_row_splits]
    return _array(value), []


def _ragged_from_parts(flat, splits, spec):
    values = _convert(flat, spec.dtype)
    if not splits:
        return values
    return RaggedTensor.from_nested_row_splits(
        values, [_convert(s, spec.row_splits_dtype) for s in splits], validate=False)


def _ragged_row(flat, splits, i):
    """Row i of a ragged value given by its NumPy parts: (flat values, splits) of the row."""
    lo, hi = int(splits[0][i]), int(splits[0][i + 1])
    out = []
    for s in splits[1:]:
        seg = s[lo:hi + 1]
        out.append(seg - seg[0])
        lo, hi = int(seg[0]), int(seg[-1])
    return flat[lo:hi], out


def rows_of(value, spec):
    """The rows of one leaf value of `spec` (its spec's sliced_spec each), as eager values."""
    if isinstance(spec, SparseTensorSpec):
        indices, values, shape = _array(value.indices), _array(value.values), _array(value.dense_shape)
        if len(shape) == 0:
            raise ValueError("Unbatching a sparse tensor is only supported for rank >= 1")
        out = []
        for i in range(int(shape[0])):
            keep = indices[:, 0] == i
            out.append(SparseTensor(_convert(indices[keep, 1:], _dtypes.int64), _convert(values[keep], spec.dtype),
                                    _convert(shape[1:], _dtypes.int64)))
        return out
    if isinstance(spec, RaggedTensorSpec) and isinstance(value, RaggedTensor):
        flat, splits = _ragged_parts(value)
        row_spec = sliced_spec(spec)
        return [_ragged_from_parts(*_ragged_row(flat, splits, i), spec) if isinstance(row_spec, RaggedTensorSpec)
                else _convert(_ragged_row(flat, splits, i)[0], spec.dtype) for i in range(len(splits[0]) - 1)]
    array = _array(value)
    if array.ndim == 0:
        raise ValueError("Cannot unbatch an input with scalar components.")
    return [_convert(array[i], value.dtype) for i in range(array.shape[0])]


def slice_rows(structure, spec):
    """Every row of an element (from_tensor_slices, unbatch): a list of elements in `spec`'s structure of
    sliced specs; the leaves must agree on the number of rows (TF's error otherwise)."""
    leaves = _nest.flatten_up_to(spec, structure) if _nest.is_nested(spec) else [structure]
    specs = _nest.flatten(spec)
    columns = [rows_of(v, s) for v, s in zip(leaves, specs)]
    counts = {len(c) for c in columns}
    if len(counts) > 1:
        raise _errors.InvalidArgumentError(
            f"Input element components must have the same leading dimension size, got {sorted(counts)}.")
    n = counts.pop() if counts else 0
    return [_nest.pack_sequence_as(spec, [c[i] for c in columns]) for i in range(n)]


# ---- batching --------------------------------------------------------------------------------

def _batch_dense(values, index):
    arrays = [_array(v) for v in values]
    first = arrays[0].shape
    for k, a in enumerate(arrays[1:], 1):
        if a.shape != first:
            raise _errors.InvalidArgumentError(
                f"Cannot batch tensors with different shapes in component {index}. First element had shape "
                f"{list(first)} and element {k} had shape {list(a.shape)}.")
    return _convert(_np.stack(arrays), values[0].dtype)


def _batch_ragged(values, spec, index):
    parts = [_ragged_parts(v) for v in values]
    inner = {p[0].shape[1:] for p in parts}
    if len(inner) > 1:
        raise _errors.InvalidArgumentError(
            f"Cannot batch ragged tensors whose uniform inner dimensions differ in component {index}: "
            f"{sorted(list(s) for s in inner)}.")
    nrows = [len(s[0]) - 1 if s else f.shape[0] for f, s in parts]
    splits = [_np.concatenate([[0], _np.cumsum(nrows)])]
    for level in range(len(parts[0][1])):
        pieces, offset = [_np.zeros(1, _np.int64)], 0
        for _, s in parts:
            pieces.append(s[level][1:] + offset)
            offset += int(s[level][-1])
        splits.append(_np.concatenate(pieces))
    flat = _np.concatenate([f for f, _ in parts]) if parts else _np.zeros([0])
    return _ragged_from_parts(flat, splits, spec)


def _batch_sparse(values, spec, index):
    ranks = {int(_array(v.dense_shape).shape[0]) for v in values}
    if len(ranks) > 1:
        raise _errors.InvalidArgumentError(
            f"Cannot batch sparse tensors of different ranks in component {index}: {sorted(ranks)}.")
    indices = [_array(v.indices) for v in values]
    batched = _np.concatenate([_np.concatenate([_np.full([len(ix), 1], i, _np.int64), ix], axis=1)
                               for i, ix in enumerate(indices)])
    shape = _np.max(_np.stack([_array(v.dense_shape) for v in values]), axis=0)
    return SparseTensor(_convert(batched, _dtypes.int64),
                        _convert(_np.concatenate([_array(v.values) for v in values]), spec.dtype),
                        _convert(_np.concatenate([[len(values)], shape]).astype(_np.int64), _dtypes.int64))


def batch_elements(elements, spec):
    """Elements of `spec` combined into one batch (batched_spec's layout)."""
    specs = _nest.flatten(spec)
    columns = [(_nest.flatten_up_to(spec, e) if _nest.is_nested(spec) else [e]) for e in elements]
    out = []
    for index, s in enumerate(specs):
        values = [c[index] for c in columns]
        if isinstance(s, SparseTensorSpec):
            out.append(_batch_sparse(values, s, index))
        elif isinstance(s, RaggedTensorSpec):
            out.append(_batch_ragged(values, s, index))
        else:
            out.append(_batch_dense(values, index))
    return _nest.pack_sequence_as(spec, out)


def to_numpy_value(value):
    """as_numpy_iterator's form of a leaf: a SparseTensor as a SparseTensorValue of arrays."""
    if isinstance(value, SparseTensor):
        return SparseTensorValue(_array(value.indices), _array(value.values), _array(value.dense_shape))
    return value.numpy()
