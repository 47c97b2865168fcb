#pragma once
// FusedElementwise(inputs...) {body}: a chain of elementwise ops (a nested
// graph with one parameter per input and one result) run as one pass over
// memory. The output is walked in tiles small enough that every intermediate
// stays in L1; each body op runs its own OpDef::elementwise loop (the one its
// eager kernel runs), so results are bitwise those of the unfused graph.
// Small float32 outputs run the same program on vector registers instead
// (fused_lanes.h). Inputs must have the output's element count or one
// element (then it is repeated); other broadcasts, rare in practice, run the
// body op by op.
#include "graph/graph.h"

namespace kiln::exec {

const detail::OpDef& fused_elementwise_op();

// One body op as the fused program runs it: its loop, its input registers
// and its output register. Registers are the kernel inputs, then
// temporaries; kResult is the node's output.
struct FusedStep {
  static constexpr int kResult = -1;
  schema::ElementwiseLoop loop;
  // The op's 8-lane form where `loop` is its float32 loop (OpDef::lane_form).
  schema::LaneForm lane_form;
  int arity;
  int in[3];
  int out;
};

// The contiguous loop computing `n` (a node of `g`), or nullptr when it
// cannot join a fused kernel (not elementwise, attrs, strings, several
// outputs, stateful).
schema::ElementwiseLoop fusible_loop(const graph::Graph& g, const graph::Node& n);

// FusedElementwise and the other fused ops the passes emit.
void register_fused_ops(schema::OpRegistry& registry);

}  // namespace kiln::exec
