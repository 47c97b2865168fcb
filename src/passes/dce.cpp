// Dead-code elimination: keeps what the results and the stateful nodes need
// (through inputs and control inputs) and every placeholder (the call
// signature); drops the rest. Stateful nodes are never removed.
#include "ops/creation.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

bool eliminate_dead_code(graph::Graph& g) {
  std::vector<char> live(g.nodes().size(), 0);
  std::vector<const graph::Node*> work;
  auto mark = [&](const graph::Node* n) {
    if (!live[n->id]) {
      live[n->id] = 1;
      work.push_back(n);
    }
  };
  for (const graph::Value& v : g.results()) mark(v.node);
  for (const auto& n : g.nodes())
    if (n->is_stateful() || n->op == &detail::placeholder_op()) mark(n.get());
  while (!work.empty()) {
    const graph::Node* n = work.back();
    work.pop_back();
    for (const graph::Value& v : n->inputs) mark(v.node);
    for (const graph::Node* c : n->control_inputs) mark(c);
  }
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
