#pragma once
// Shape and array ops: reshape, transpose, expand_dims, squeeze, concat,
// stack, unstack, split, split_with_sizes, slice, gather, one_hot, tile, pad. Indexing (x[i],
// x[Slice(1, 3)], x.index({...})) is on Tensor itself (kiln/tensor.h).
#include <cstdint>
#include <utility>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// The same values in a new shape; one dim may be -1 (kiln::None) and is then
// inferred. The result shares x's buffer (no copy).
Tensor reshape(const Tensor& x, const Shape& shape, SourceLocation loc = SourceLocation::current());

// Permutes the dims: output dim i is input dim perm[i]. Empty perm reverses
// the dims (a matrix transpose for rank 2).
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm = {},
                 SourceLocation loc = SourceLocation::current());

// tf.shape: x's dims as an int32 vector, known when the op runs (a traced
// graph's None dims included).
Tensor shape_of(const Tensor& x, SourceLocation loc = SourceLocation::current());

// tf.ensure_shape: x (sharing its buffer), checked when the op runs to have
// `shape` (of known rank; kiln::None dims match any size). In a graph the
// result's static shape merges x's and `shape`.
Tensor ensure_shape(const Tensor& x, const Shape& shape, SourceLocation loc = SourceLocation::current());

// Inserts a dim of size 1 at `axis` (in [-rank-1, rank]). Shares x's buffer.
Tensor expand_dims(const Tensor& x, int64_t axis, SourceLocation loc = SourceLocation::current());

// Removes dims of size 1: the listed ones (each must be 1), or all of them
// when `axes` is empty. Shares x's buffer.
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes = {},
               SourceLocation loc = SourceLocation::current());

// Joins tensors of one dtype along an existing axis; the other dims must match.
Tensor concat(const std::vector<Tensor>& values, int64_t axis,
              SourceLocation loc = SourceLocation::current());

// Joins tensors of one dtype and shape along a new axis (TF's Pack).
Tensor stack(const std::vector<Tensor>& values, int64_t axis = 0,
             SourceLocation loc = SourceLocation::current());

// Splits x along `axis` into x.shape()[axis] tensors of rank-1 (TF's
// Unpack). The size of that dim must be known.
std::vector<Tensor> unstack(const Tensor& x, int64_t axis = 0,
                            SourceLocation loc = SourceLocation::current());

// tf.split: x cut along `axis` into `num_splits` equal parts (the dim must
// be known and divide evenly), or into parts of `sizes` (one size may be -1:
// the rest of the dim; two names, as LibTorch's, so that a braced `{4}` is
// never read as either). One op: its gradient is one concat of the parts'.
std::vector<Tensor> split(const Tensor& x, int64_t num_splits, int64_t axis = 0,
                          SourceLocation loc = SourceLocation::current());
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0,
                                     SourceLocation loc = SourceLocation::current());

// tf.slice: `size` elements from `begin` on every axis (size -1: to the end).
Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
             SourceLocation loc = SourceLocation::current());

// Masks of strided_slice, bit i for entry i (TF's StridedSlice).
struct SliceMasks {
  int64_t begin = 0;      // ignore begin[i]: start at the beginning (end for negative strides)
  int64_t end = 0;        // ignore end[i]: run to the end
  int64_t ellipsis = 0;   // entry i is `...` (at most one bit)
  int64_t new_axis = 0;   // entry i inserts a dim of size 1
  int64_t shrink_axis = 0;  // entry i is an integer index: begin[i], dim dropped
};
// The general slice that x.index({...}) builds (TF's StridedSlice).
Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                     const SliceMasks& masks = {}, SourceLocation loc = SourceLocation::current());

// Slices of params along `axis` picked by integer `indices` (int32 or int64):
// the output shape is params.shape[:axis] + indices.shape + params.shape[axis+1:].
// An index outside [0, params.shape[axis]) is an InvalidArgument whenever the
// indices' values are known at that time (always in eager code); inside a
// graph where they were not, the kernel writes zeros for that slice instead
// (as TF on GPU).
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis = 0,
              SourceLocation loc = SourceLocation::current());

// TF's gather_nd: the last dim of `indices` (int32 or int64) holds tuples of K
// indices into params' first K dims; the result has shape
// indices.shape[:-1] + params.shape[K:]. A tuple outside params is an
// InvalidArgument naming it ("indices[1] = [5, 0] does not index into shape [3, 2]").
Tensor gather_nd(const Tensor& params, const Tensor& indices, SourceLocation loc = SourceLocation::current());

// A copy of `tensor` with the slices that `indices` names (as gather_nd's)
// replaced by (update), or increased by (add), `updates` of shape
// indices.shape[:-1] + tensor.shape[K:]. A slice named twice: the last update
// wins; additions all count.
Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                SourceLocation loc = SourceLocation::current());
Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             SourceLocation loc = SourceLocation::current());
// tf.scatter_nd: `updates` added into zeros of `shape`.
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Shape& shape,
                  SourceLocation loc = SourceLocation::current());

// One-hot vectors of length `depth` at `axis` (-1: a new last axis): `on`
// where the index matches, `off` elsewhere (an index outside [0, depth) gives
// all `off`, as TF).
Tensor one_hot(const Tensor& indices, int64_t depth, const Scalar& on = 1, const Scalar& off = 0,
               int64_t axis = -1, DType dtype = DType::Float32,
               SourceLocation loc = SourceLocation::current());

// Repeats x multiples[i] times along axis i.
Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples,
            SourceLocation loc = SourceLocation::current());

// Pads axis i with paddings[i].first values before and .second after, all
// `value` (which takes x's dtype).
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           const Scalar& value = 0, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
