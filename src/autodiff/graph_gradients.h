#pragma once
// Gradients of the ops that hold graphs: Call, If, While (DESIGN.md §9).
// The src/function ops point at these functions (declared there, defined
// here), since differentiating a graph needs the tape.
#include "ops/op_def.h"

namespace kiln::detail {
void call_gradient(GradContext& c);
void if_gradient(GradContext& c);
void while_gradient(GradContext& c);
}  // namespace kiln::detail
