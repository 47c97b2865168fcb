#pragma once
// The TensorArray ops' gradient functions (tensor_array_grad_ops.cpp), for
// their OpDefs in tensor_array_ops.cpp.
#include "ops/op_def.h"

namespace kiln::detail {

void tensor_array_write_grad(GradContext& c);    // Write, Scatter
void tensor_array_unstack_grad(GradContext& c);  // Unstack
void tensor_array_gather_grad(GradContext& c);   // Read, Gather
void tensor_array_stack_grad(GradContext& c);    // Stack, Concat
// TensorArrayWriteRows and TensorArrayWriteGrad, the ops these are made of.
void register_tensor_array_grad_ops(OpRegistry& registry);

}  // namespace kiln::detail
