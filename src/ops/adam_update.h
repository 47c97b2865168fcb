#pragma once
// Adam's update of variables: the kernel behind ApplyAdam (one variable) and
// behind FusedApplyAdam (src/exec: every variable of a training step in one
// pass, made by the optimizer-update pass). Both run each element through the
// same code, so their bits agree.
#include <span>
#include <string_view>

#include "schema/op_def.h"

namespace kiln::ops {

// One variable's gradient: a tensor, or (float32) one the update makes itself
// a band of rows at a time, each band updated while it is in cache and never
// stored whole (a row: a run of the last dim, so a matrix's rows, or the
// rows of a higher rank's leading dims). `rows(context, begin, end, out)`
// writes rows [begin, end) of the row-major `shape` to `out`, on the calling
// thread, for bands of `band_rows` rows (the last band may be shorter); it
// must not throw.
struct AdamGradient {
  Tensor tensor;
  Shape shape;
  int64_t band_rows = 0;
  void (*rows)(const void* context, int64_t begin, int64_t end, float* out) = nullptr;
  const void* context = nullptr;
  const Shape& gradient_shape() const { return rows ? shape : tensor.shape(); }
};

// The most variables one update handles without a heap allocation.
inline constexpr std::size_t kAdamInlineVariables = 32;

// Updates each variable (`handles`: its var, m and v resource handles, 3 per
// variable) with its gradient, `alpha` (a scalar) and the attrs' dtype,
// beta_1, beta_2 and epsilon, in one parallel pass over all the tensor
// gradients' elements (and one over each banded gradient's bands). Errors
// name `op`. Where a variable appears twice, the variables are updated one
// after another, as separate ApplyAdam ops would.
void run_adam(std::span<const Tensor> handles, std::span<const AdamGradient> grads, const Tensor& alpha,
              const schema::Attrs& attrs, std::string_view op);

}  // namespace kiln::ops
