#pragma once
// The op of a function call inside a graph (docs/design-notes.md, "kiln::function").
#include "schema/op_def.h"

namespace kiln::graph_ops {
// Call(args..., captures...) {f}: runs graph f; StatefulCall when f has
// stateful nodes (kept in program order, never pruned).
const detail::OpDef& call_op(bool stateful);

void register_call_ops(schema::OpRegistry& registry);

}  // namespace kiln::graph_ops
