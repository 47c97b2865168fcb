#pragma once
// Internal entry points of the creation ops, for other layers: constants,
// and C++ scalars turned into tensors (weak typing of `x * 2`).
#include "kiln/tensor.h"

namespace kiln::ops {

// `value` (a concrete tensor) as the output of a Const op: returned as is in
// eager mode, a Const node while tracing.
Tensor const_op(Tensor value, const SourceLocation& loc);

// A concrete scalar tensor of `dtype` holding `value` (no dispatch), for use
// as an op's operand or attr: it may be one cached tensor shared by every
// caller, so it must not be handed to the user as it is (give it its own
// identity first, core::give_own_identity).
Tensor make_scalar(const Scalar& value, DType dtype);

// A C++ scalar as a tensor of `dtype`, raising InvalidArgument (naming
// `op_name`) when `dtype` cannot hold the value exactly (1.5 as int32).
Tensor scalar_to_tensor(const Scalar& value, DType dtype, std::string_view op_name,
                        const SourceLocation& loc);

// The two inputs of a binary op: a weakly typed scalar takes the other
// operand's dtype; two tensors keep theirs (the op checks they agree).
struct BinaryInputs {
  Tensor inputs[2];
};
BinaryInputs binary_inputs(const Operand& a, const Operand& b, std::string_view op_name);

}  // namespace kiln::ops

namespace kiln::detail {
struct OpDef;

}  // namespace kiln::detail

namespace kiln::ops {

// The op of graph parameters: its node stands for a value fed at each call.
const detail::OpDef& placeholder_op();
}  // namespace kiln::ops
