#pragma once
// NumPy broadcasting: shape inference (with unknown dims) and a strided
// iteration over the rows of a broadcast output, shared by the elementwise
// math kernels (and usable by any op that broadcasts its inputs).
#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "core/parallel.h"
#include "schema/op_def.h"

namespace kiln::ops {

// The broadcast of two shapes. Unknown rank gives unknown rank; an unknown
// dim against a known dim > 1 gives that dim, otherwise unknown. Returns
// false when known dims conflict (`*bad_dim`: the conflicting dim, counted
// from the right, -1 for the last).
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out, int* bad_dim = nullptr);

// broadcast_shapes, failing through `c` with a message that names the op,
// both arguments and both shapes.
Shape infer_broadcast(const schema::InferContext& c, const Shape& a, const Shape& b, const char* a_name,
                      const char* b_name);

// An output's element space as (collapsed) dims with, for each input, the
// element stride along each dim (0 where the input is broadcast).
struct BroadcastPlan {
  static constexpr int kMaxInputs = 3;
  int rank = 1;  // >= 1
  int num_inputs = 0;
  int64_t dims[Shape::kMaxRank] = {1};
  int64_t strides[kMaxInputs][Shape::kMaxRank] = {};

  int64_t inner() const { return dims[rank - 1]; }
  // Stride of input k along the innermost dim: 0 (broadcast) or 1.
  int64_t inner_stride(int k) const { return strides[k][rank - 1]; }
};

// `inputs` must broadcast to `out` (inference checked that).
BroadcastPlan make_broadcast_plan(const Shape& out, std::initializer_list<const Shape*> inputs);

// Calls row(offsets, out_offset, length) for every innermost row of the
// plan, where offsets[k] is input k's element offset at the row's start;
// rows are split over threads in chunks of about `grain` elements.
template <class Row>
void for_each_row(const BroadcastPlan& p, int64_t grain, Row&& row) {
  const int outer_rank = p.rank - 1;
  const int64_t inner = p.inner();
  int64_t rows = 1;
  for (int d = 0; d < outer_rank; ++d) rows *= p.dims[d];
  if (rows == 0 || inner == 0) return;
  const int64_t row_grain = std::max<int64_t>(1, grain / inner);
  core::parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        int64_t index[Shape::kMaxRank] = {};
        int64_t offsets[BroadcastPlan::kMaxInputs] = {};
        int64_t rest = begin;
        for (int d = outer_rank - 1; d >= 0; --d) {
          index[d] = rest % p.dims[d];
          rest /= p.dims[d];
          for (int k = 0; k < p.num_inputs; ++k) offsets[k] += index[d] * p.strides[k][d];
        }
        for (int64_t r = begin; r < end; ++r) {
          row(static_cast<const int64_t*>(offsets), r * inner, inner);
          for (int d = outer_rank - 1; d >= 0; --d) {
            if (++index[d] < p.dims[d]) {
              for (int k = 0; k < p.num_inputs; ++k) offsets[k] += p.strides[k][d];
              break;
            }
            index[d] = 0;
            for (int k = 0; k < p.num_inputs; ++k) offsets[k] -= (p.dims[d] - 1) * p.strides[k][d];
          }
        }
      },
      row_grain);
}

}  // namespace kiln::ops
