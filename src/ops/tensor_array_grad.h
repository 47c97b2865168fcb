#pragma once
// The TensorArray ops' gradient functions (tensor_array_grad_ops.cpp), for
// their OpDefs in tensor_array_ops.cpp, and the index helpers both files use.
#include "core/tensor_impl.h"
#include "ops/array_util.h"
#include "schema/op_def.h"

namespace kiln::ops {

void tensor_array_write_grad(schema::GradContext& c);    // Write, Scatter
void tensor_array_unstack_grad(schema::GradContext& c);  // Unstack
void tensor_array_gather_grad(schema::GradContext& c);   // Read, Gather
void tensor_array_stack_grad(schema::GradContext& c);    // Stack, Concat
// TensorArrayWriteRows and TensorArrayWriteGrad, the ops these are made of.
void register_tensor_array_grad_ops(schema::OpRegistry& registry);

// Element k of an int32 or int64 index tensor.
inline int64_t index_at(const Tensor& t, int64_t k) {
  return t.dtype() == DType::Int32 ? core::data_of<int32_t>(t)[k] : core::data_of<int64_t>(t)[k];
}

}  // namespace kiln::ops
