#pragma once
// The registered ops that code outside their own files names: those the passes and the fused
// kernels pick out of a graph, a While gradient looks for (TensorArrayWrite; Less and Add for
// the trip count), or another op's kernel or gradient runs (Add and Sub update variables,
// GatherGrad is TensorArray gather's gradient). A pass asks "is this node op X" by comparing OpDef pointers (`n.op == &mul_op()`),
// as the rest of Kiln does with `&ops::placeholder_op()`. Each handle is defined in its op's own
// file and returns that file's OpDef: one identity per op, no lookup by name. Ops that have
// accessors of their own (ops::placeholder_op, ops::read_variable_op, graph_ops::call_op, the
// fused ops) are used through those. A property that a whole group of ops shares (costly to
// recompute, shapes that follow shapes) is an OpFlags bit instead, declared in each OpDef.
#include "schema/op_def.h"

namespace kiln::ops {

const detail::OpDef& const_op_def();  // not const_op: ops::const_op makes a Const tensor
const detail::OpDef& add_op();
const detail::OpDef& sub_op();
const detail::OpDef& mul_op();
const detail::OpDef& real_div_op();
const detail::OpDef& cast_op();
const detail::OpDef& reshape_op();
const detail::OpDef& transpose_op();
const detail::OpDef& relu_op();
const detail::OpDef& bias_add_op();
const detail::OpDef& matmul_op();
const detail::OpDef& conv2d_op();
const detail::OpDef& depthwise_conv2d_op();
const detail::OpDef& greater_op();
const detail::OpDef& less_op();
const detail::OpDef& select_op();
const detail::OpDef& max_pool_op();
const detail::OpDef& max_pool_grad_op();
const detail::OpDef& sum_to_shape_of_op();
const detail::OpDef& apply_adam_op();
const detail::OpDef& gather_grad_op();
const detail::OpDef& tensor_array_write_op();

}  // namespace kiln::ops
