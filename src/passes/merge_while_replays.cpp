// Merging a while_loop with its gradient's replay. The While gradient runs
// the forward loop once more to stack each iteration's loop variables
// (graph_gradients.cpp); that replay starts from the forward loop's inputs
// and its first outputs are the forward loop's outputs, bit for bit. So the
// forward results can be taken from the replay, and the forward loop (no
// longer used) goes at DCE: a training step loops over the sequence twice
// (replay, backward) instead of three times.
#include <unordered_set>

#include "graph_ops/control_flow_ops.h"
#include "graph_ops/while_replays.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using GraphPtr = std::shared_ptr<const graph::Graph>;

// The nodes after position `limit` that `n`'s inputs need, if all of them are
// pure and need nothing else after `limit` (so they may run before it).
bool collect_movable(const Node& n, int limit, std::unordered_set<const Node*>& movable) {
  for (const graph::Value& v : n.inputs) {
    const Node* p = v.node;
    if (p->id <= limit || movable.count(p)) continue;
    if (p->is_stateful() || !p->control_inputs.empty()) return false;
    movable.insert(p);
    if (!collect_movable(*p, limit, movable)) return false;
  }
  return true;
}

}  // namespace

bool merge_while_replays(graph::Graph& g) {
  const detail::OpDef* pure_while = &graph_ops::while_op(false);
  bool changed = false;
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    Node* replay = g.nodes()[i].get();
    if (replay->op != pure_while) continue;
    std::optional<graph_ops::WhileReplay> of = graph_ops::while_replay_of(replay->attrs.get<GraphPtr>("body").get());
    if (!of || replay->inputs.size() < of->inputs || replay->outputs.size() < of->outputs) continue;
    Node* forward = nullptr;
    for (std::size_t j = 0; j < i && !forward; ++j) {
      Node* f = g.nodes()[j].get();
      if (f->op != pure_while || f->inputs.size() != of->inputs || f->outputs.size() != of->outputs ||
          f->attrs.get<GraphPtr>("body") != of->body || f->attrs.get<GraphPtr>("cond") != of->cond)
        continue;
      bool same_inputs = true;
      for (std::size_t k = 0; k < of->inputs && same_inputs; ++k) same_inputs = f->inputs[k] == replay->inputs[k];
      if (same_inputs) forward = f;
    }
    if (!forward) continue;
    // The replay takes the forward loop's place, with what it needs that was
    // made later (its empty stacks: pure nodes on constants).
    std::unordered_set<const Node*> movable{replay};
    if (!replay->control_inputs.empty() || !collect_movable(*replay, forward->id, movable)) continue;
    std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out, later;
    for (auto& n : nodes) {
      if (n.get() == forward) {
        for (auto& m : nodes)
          if (m && movable.count(m.get())) out.push_back(std::move(m));
      }
      if (!n) continue;
      (n->id < forward->id ? out : later).push_back(std::move(n));
    }
    for (auto& n : later) out.push_back(std::move(n));
    ValueMap map;
    for (std::size_t k = 0; k < of->outputs; ++k)
      map.set({forward, static_cast<int>(k)}, {replay, static_cast<int>(k)});
    for (auto& n : out) map.apply(*n);
    map.apply_results(g);
    g.set_nodes(std::move(out));
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
