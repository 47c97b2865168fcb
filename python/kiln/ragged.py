"""tf.ragged: RaggedTensors' own functions (the class is kiln.RaggedTensor, in ragged_tensor.py; operations on
ragged values in ragged_ops.py; tf.* functions accept them through ragged_dispatch.py)."""
from .ragged_ops import boolean_mask, constant, map_flat_values, stack  # noqa: F401
from .ragged_ops import ragged_range as range  # noqa: F401,A001 - TF's name
from .ragged_tensor import RaggedTensor, RaggedTensorSpec, row_ids_of as _row_ids

__all__ = ["boolean_mask", "constant", "map_flat_values", "range", "stack", "row_splits_to_segment_ids",
           "segment_ids_to_row_splits", "RaggedTensor", "RaggedTensorSpec"]


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    from ._ops import cast, convert_to_tensor
    ids = _row_ids(convert_to_tensor(splits))
    return ids if out_type is None else cast(ids, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    from . import dtypes
    return RaggedTensor.from_value_rowids(segment_ids, segment_ids, num_segments).row_splits if out_type is None \
        else RaggedTensor.from_value_rowids(segment_ids, segment_ids, num_segments).with_row_splits_dtype(
            dtypes.as_dtype(out_type)).row_splits


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """A RaggedTensor whose row i holds data's rows with partitions == i, in order (dense data)."""
    from ._ops import argsort, cast, convert_to_tensor, gather
    from . import dtypes
    data, partitions = convert_to_tensor(data), convert_to_tensor(partitions)
    if partitions.shape.rank != 1:
        raise ValueError(f"partitions must be a vector, got shape {partitions.shape}")
    order = argsort(partitions, stable=True)
    return RaggedTensor.from_value_rowids(gather(data, order), cast(gather(partitions, order), dtypes.int64),
                                          nrows=num_partitions)


__all__.append("stack_dynamic_partitions")
