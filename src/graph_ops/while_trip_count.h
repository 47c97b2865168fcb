#pragma once
// How many iterations a traced while_loop will run, when its graphs show it
// plainly: cond is `counter < limit`, the body adds 1 to the counter, and
// the limit does not change in the loop (for_range(start, limit) and the
// seeds' `i < n` loops). A While gradient's re-run sizes its stacks with it
// (while_gradient.cpp), so that they are allocated once instead of growing
// by doubling, each growth copying every row written so far.
#include <optional>
#include <span>

#include "graph/graph.h"
#include "kiln/tensor.h"

namespace kiln::graph_ops {

// max(limit - start, 0) as an int32 scalar tensor made in the current
// context (symbolic while tracing), from the While's inputs (`vars` loop
// variables, then the captures); nullopt when the graphs are not that plain.
// Only a size hint: the stacks stay dynamic, so a loop that ran longer would
// still be right.
std::optional<Tensor> trip_count(const graph::Graph& cond, const graph::Graph& body, std::span<const Tensor> inputs,
                                 std::size_t vars);

}  // namespace kiln::graph_ops
