#pragma once
// Internal entry points of the creation ops, for other layers.
#include "kiln/tensor.h"

namespace kiln::detail {

// `value` (a concrete tensor) as the output of a Const op: returned as is in
// eager mode, a Const node while tracing.
Tensor const_op(Tensor value, const SourceLocation& loc);

// A concrete scalar tensor of `dtype` holding `value` (no dispatch).
Tensor make_scalar(const Scalar& value, DType dtype);

}  // namespace kiln::detail

namespace kiln::detail {
struct OpDef;
// The op of graph parameters: its node stands for a value fed at each call.
const OpDef& placeholder_op();
}  // namespace kiln::detail
