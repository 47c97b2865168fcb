#pragma once
// Adam's update of variables: the kernel behind ApplyAdam (one variable) and
// behind FusedApplyAdam (src/exec: every variable of a training step in one
// pass, made by the optimizer-update pass). Both run each element through the
// same code, so their bits agree.
#include <span>
#include <string_view>

#include "schema/op_def.h"

namespace kiln::detail {

// Updates each group of `inputs` (the var, m and v resource handles and the
// gradient: 4 tensors per variable), then `alpha` (the last input, a scalar),
// with the attrs' dtype, beta_1, beta_2 and epsilon, in one parallel pass over
// all their elements. Errors name `op`. Where a variable appears in two
// groups, the groups run one after another, as separate ApplyAdam ops would.
void run_adam(std::span<const Tensor> inputs, const Attrs& attrs, std::string_view op);

}  // namespace kiln::detail
