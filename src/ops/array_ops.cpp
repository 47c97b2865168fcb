// The array ops' entry point. The ops themselves live by responsibility in
// shape_ops.cpp (Reshape, ExpandDims, Squeeze, Transpose), join_ops.cpp
// (Concat, Pack, Unpack, Tile, Pad; their gradient ops SplitLike and TileGrad
// in join_grad_ops.cpp), slice_ops.cpp (StridedSlice and tensor
// indexing), gather_ops.cpp (Gather, OneHot) and tensor_array_ops.cpp
// (kiln::TensorArray).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/array_util.h"

namespace kiln::ops {

std::string ints_to_string(const std::vector<int64_t>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

void register_array_ops(schema::OpRegistry& r) {
  register_shape_ops(r);
  register_join_ops(r);
  register_join_grad_ops(r);
  register_slice_ops(r);
  register_gather_ops(r);
  register_tensor_array_ops(r);
}

}  // namespace kiln::ops
