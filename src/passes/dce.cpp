// Dead-code elimination: keeps what the results and the stateful nodes need
// (through inputs and control inputs) and every placeholder (the call
// signature); drops the rest. Stateful nodes are never removed.
#include "passes/passes.h"

namespace kiln::passes {

bool eliminate_dead_code(graph::Graph& g) {
  const std::vector<char> live = g.live_nodes();
  std::vector<std::unique_ptr<graph::Node>> nodes = g.take_nodes(), out;
  bool changed = false;
  for (auto& n : nodes) {
    if (live[n->id]) out.push_back(std::move(n));
    else changed = true;
  }
  g.set_nodes(std::move(out));
  return changed;
}

}  // namespace kiln::passes
