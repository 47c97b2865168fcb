#pragma once
// The op of a function call inside a graph (DESIGN.md §7).
#include "schema/op_def.h"

namespace kiln::function_detail {
// Call(args..., captures...) {f}: runs graph f; StatefulCall when f has
// stateful nodes (kept in program order, never pruned).
const detail::OpDef& call_op(bool stateful);
}  // namespace kiln::function_detail

namespace kiln::detail {
void register_call_ops(OpRegistry& registry);
}  // namespace kiln::detail
