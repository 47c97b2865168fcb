"""tf.data's transformations of elements holding RaggedTensors or SparseTensors, made in Python over
_composite_elements (rows and batches of components): from_tensor_slices, batch, unbatch, ragged_batch,
sparse_batch, and padded_batch's refusal, with TF's specs and errors."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import nest as _nest
from .._ops import convert_to_tensor as _convert
from ..sparse_tensor import SparseTensor
from ..tensor_shape import TensorShape
from . import _cards
from . import _composite_elements as _ce
from ._dataset import _spec_of
from ._python_dataset import PyDataset, relaxed_spec


def _rows_count(value):
    if hasattr(value, "nrows"):
        return int(value.nrows().numpy())
    if isinstance(value, SparseTensor):
        return int(value.dense_shape.numpy()[0])
    return value.shape[0]


def composite_slices(value):
    """Dataset.from_tensor_slices of a structure holding composites: its rows, one element each."""
    for t in _ce.flatten(value):
        if getattr(t, "_is_symbolic", False):
            raise _errors.UnimplementedError(
                "Dataset.from_tensor_slices of a RaggedTensor or SparseTensor slices it in Python, from its value: "
                "make the dataset outside the traced function (or pass the dataset in).")
    spec = _nest.map_structure(_spec_of, value)
    leaves, specs = _nest.flatten(value), _nest.flatten(spec)
    for v, s in zip(leaves, specs):
        if s.shape.rank == 0:
            raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got a scalar {v!r}")
    counts = [_rows_count(v) for v in leaves]
    if len(set(counts)) > 1:
        raise ValueError(f"Dimensions {counts[0]} and {next(c for c in counts if c != counts[0])} are not "
                         "compatible")
    out_spec = _nest.map_structure(_ce.sliced_spec, spec)
    rows = []

    def open_pass():
        if not rows:
            rows.append(_ce.slice_rows(value, spec))
        return iter(rows[0])

    return PyDataset(open_pass, spec=out_spec, template=_ce.loose_spec(out_spec), card=counts[0] if counts else 0)


def composite_batch(ds, batch_size, drop_remainder):
    """batch of composites: a ragged component gains a ragged dimension, a sparse one a leading dimension
    (its dense_shape the largest of the batch's), a dense one is stacked."""
    spec = relaxed_spec(ds)
    lead = batch_size if drop_remainder else None
    out_spec = _nest.map_structure(lambda s: _ce.batched_spec(s, lead), spec)

    def open_pass():
        rows = []
        for element in ds:
            rows.append(element)
            if len(rows) == batch_size:
                yield _ce.batch_elements(rows, spec)
                rows = []
        if rows and not drop_remainder:
            yield _ce.batch_elements(rows, spec)

    return PyDataset(open_pass, parents=(ds,), spec=out_spec, template=_ce.loose_spec(out_spec),
                     card=_cards.batch(ds._cardinality(), batch_size, drop_remainder))


def composite_unbatch(ds):
    spec = relaxed_spec(ds)
    out_spec = _nest.map_structure(_ce.sliced_spec, spec)
    for s in _nest.flatten(spec):
        if s.shape.rank == 0:
            raise ValueError("Cannot unbatch an input with scalar components.")

    def open_pass():
        for element in ds:
            yield from _ce.slice_rows(element, spec)

    return PyDataset(open_pass, parents=(ds,), spec=out_spec, template=_ce.loose_spec(out_spec),
                     card=_cards.INFINITE if ds._cardinality() == _cards.INFINITE else _cards.UNKNOWN)


def ragged_batch(ds, batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64):
    """TF's ragged_batch: components whose shape is not fully known become RaggedTensorSpecs (of ragged rank
    their last unknown dim), then batch."""
    row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
    spec = relaxed_spec(ds)
    ragged_spec = _nest.map_structure(lambda s: _ce.dense_to_ragged_spec(s, row_splits_dtype), spec)
    specs = _nest.flatten(ragged_spec)

    def open_pass():
        for element in ds:
            leaves = _nest.flatten_up_to(ragged_spec, element) if _nest.is_nested(ragged_spec) else [element]
            yield _nest.pack_sequence_as(ragged_spec, [_ce.to_ragged(v, s) for v, s in zip(leaves, specs)])

    as_ragged = PyDataset(open_pass, parents=(ds,), spec=ragged_spec, template=_ce.loose_spec(ragged_spec),
                          card=ds._cardinality())
    return as_ragged.batch(batch_size, drop_remainder)


def sparse_batch(ds, batch_size, row_shape):
    """TF's sparse_batch (dense_to_sparse_batch): each batch one SparseTensor holding every entry of its
    elements, of dense_shape [n] + row_shape (a -1 or None dim: the batch's largest)."""
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise ValueError(f"batch_size must be greater than zero, got {batch_size}")
    if hasattr(row_shape, "numpy"):
        row_shape = row_shape.numpy().tolist()
    row = TensorShape(row_shape).as_list()
    spec = ds.element_spec
    if _nest.is_nested(spec) or _ce.is_composite_spec(spec):
        raise TypeError(f"`sparse_batch` takes a dataset of single tensors, got {spec!r}")

    def batch(elements):
        arrays = [e.numpy() for e in elements]
        bound = []
        for axis, want in enumerate(row):
            longest = max((a.shape[axis] for a in arrays if a.ndim == len(row)), default=0)
            bound.append(longest if want is None or want == -1 else want)
        indices, values = [], []
        for i, a in enumerate(arrays):
            if a.ndim != len(row) or any(d > b for d, b in zip(a.shape, bound)):
                raise _errors.InvalidArgumentError(
                    f"Input element had shape ({', '.join(str(d) for d in a.shape)}) that is incompatible with the "
                    f"row shape ({', '.join(str(d) for d in bound)}).")
            positions = _np.indices(a.shape).reshape(a.ndim, -1).T
            indices.append(_np.concatenate([_np.full([len(positions), 1], i), positions], axis=1))
            values.append(a.reshape(-1))
        return SparseTensor(_convert(_np.concatenate(indices).astype(_np.int64), _dtypes.int64),
                            _convert(_np.concatenate(values), spec.dtype),
                            _convert(_np.array([len(arrays)] + bound, _np.int64), _dtypes.int64))

    def open_pass():
        rows = []
        for element in ds:
            rows.append(element)
            if len(rows) == batch_size:
                yield batch(rows)
                rows = []
        if rows:
            yield batch(rows)

    from ..sparse_tensor import SparseTensorSpec
    out_spec = SparseTensorSpec([None] + row, spec.dtype)
    return PyDataset(open_pass, parents=(ds,), spec=out_spec, template=_ce.loose_spec(out_spec),
                     card=_cards.batch(ds._cardinality(), batch_size, False))


def refuse_padded_batch(ds):
    """TF's padded_batch takes tensor elements only."""
    for s in _nest.flatten(ds.element_spec):
        if _ce.is_composite_spec(s):
            raise TypeError(f"`padded_batch` is only supported for datasets that produce tensor elements but the "
                            f"input dataset spec contains: `{s!r}`.")
