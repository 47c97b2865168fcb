#pragma once
// TF's accumulators, for a while_loop's gradient (while_gradient.cpp): the
// forward values the backward body's gradient nodes read are, when
// recomputing them would run a contraction, stacked per iteration by the
// gradient's re-run of the loop and read back by the backward loop instead
// of being computed a second time. What stays recomputed is cheap
// (elementwise, data movement) and reads the stacked values.
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace kiln::graph_ops {

// Whether While gradients accumulate: on unless KILN_DISABLE_PASSES names
// `accumulators` (or `all`); set_while_accumulators overrides that (tests
// compare both forms bit for bit). Read when a gradient is traced.
bool while_accumulators();
void set_while_accumulators(bool on);

struct ValueHash {
  std::size_t operator()(const graph::Value& v) const {
    return std::hash<const void*>()(v.node) * 31u + static_cast<std::size_t>(v.index);
  }
};
// Values of a backward body that replay a forward body's values: backward
// value -> the forward body's value it recomputes.
using ReplayMap = std::unordered_map<graph::Value, graph::Value, ValueHash>;

// The forward body's values (in the backward body's order) worth stacking:
// replayed values that a node other than a replayed one reads (a gradient
// node, a result), whose node is pure, whose recomputation from the loop
// variables, the captures and the values already chosen would run a
// contraction (MatMul, a convolution) or a nested graph, and whose shape
// stays from one iteration to the next (fully known, or computed by ops
// whose shapes follow their inputs' shapes: the loop variables keep theirs). A replayed
// stateful node (a variable read) and everything computed from it are
// recomputed, as before.
std::vector<graph::Value> values_to_accumulate(const graph::Graph& backward, const ReplayMap& replayed);

// Points every read of `from` at `to` (pairs of values of g), then drops
// the nodes nothing needs any more (the recomputation the stacks replace).
void read_instead(graph::Graph& g, const std::vector<std::pair<graph::Value, graph::Value>>& from_to);

}  // namespace kiln::graph_ops
