#pragma once
// Running a graph's nodes again in the current dispatch context: how the
// backward graphs of Call, If and While (graph_gradients.cpp,
// while_gradient.cpp) recompute the forward values their gradients read.
#include <span>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "runtime/dispatch.h"

namespace kiln::graph_ops {

// The outputs of each node of a replayed graph, as the replay made them.
using ReplayedValues = std::unordered_map<const graph::Node*, runtime::TensorList>;

// Runs f's nodes again, f's parameters then captures fed by `feeds`, and
// returns f's results. Stateful nodes nothing reads (print, variable
// updates) are skipped: a backward pass must not repeat side effects.
// Result j's node takes `given[j]` where that is defined (a random draw the
// forward run returned); other stateful nodes whose outputs are read run
// again (a variable is read anew). `values`, when given, receives every
// node's outputs.
std::vector<Tensor> replay(const graph::Graph& f, std::span<const Tensor> feeds, std::span<const Tensor> given = {},
                           ReplayedValues* values = nullptr);

inline bool is_stateful_graph(const graph::Graph& g) { return !g.stateful_nodes().empty(); }

}  // namespace kiln::graph_ops
