"""tf.sparse: SparseTensor (sparse_tensor.py) and its operations (sparse_ops.py), composed of Kiln's dense ops."""
from .sparse_ops import (  # noqa: F401
    add, concat, expand_dims, fill_empty_rows, from_dense, map_values, reduce_max, reduce_sum, reorder, reshape, retain,
    slice, sparse_dense_matmul, to_dense, transpose)
from .sparse_ops import sparse_dense_matmul as matmul  # noqa: F401
from .sparse_tensor import SparseTensor, SparseTensorSpec  # noqa: F401
from .sparse_indexed_slices import mask  # noqa: F401

__all__ = ["SparseTensor", "SparseTensorSpec", "add", "concat", "expand_dims", "fill_empty_rows", "from_dense",
           "map_values", "mask", "matmul", "reduce_max", "reduce_sum", "reorder", "reshape", "retain", "slice",
           "sparse_dense_matmul", "to_dense", "transpose"]
from ._sparse_more import (bincount, eye, maximum, minimum, reset_shape, segment_mean,  # noqa: E402,F401
                           segment_sqrt_n, segment_sum, softmax, split, to_indicator)

__all__ += ["bincount", "eye", "maximum", "minimum", "reset_shape", "segment_mean", "segment_sqrt_n", "segment_sum",
            "softmax", "split", "to_indicator"]
