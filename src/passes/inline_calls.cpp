// Inlining: a Call / StatefulCall node becomes the nodes of its callee, so
// the other passes (CSE across the call boundary, fusion) see through it and
// the executor saves the nested plan's frame per call.
#include <unordered_map>

#include "graph_ops/call_op.h"
#include "ops/creation.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;
using GraphPtr = std::shared_ptr<const graph::Graph>;

bool is_call(const Node& n) {
  return n.op == &graph_ops::call_op(false) || n.op == &graph_ops::call_op(true);
}

// Copies the callee of `call` into `out`; maps the call's outputs in `map`.
// Returns the last stateful node copied (nullptr when none).
Node* inline_one(graph::Graph& g, Node& call, ValueMap& map, std::vector<std::unique_ptr<Node>>& out) {
  const graph::Graph& f = *call.attrs.get<GraphPtr>("f");
  std::unordered_map<const Node*, Value> feeds;  // the callee's placeholders
  std::size_t k = 0;
  for (const Node* p : f.parameters()) feeds[p] = call.inputs[k++];
  for (const graph::Capture& c : f.captures()) feeds[c.placeholder] = call.inputs[k++];
  std::unordered_map<const Node*, Node*> copies;
  auto outer = [&](const Value& v) -> Value {
    auto it = feeds.find(v.node);
    return it != feeds.end() ? it->second : Value{copies.at(v.node), v.index};
  };
  Node* last_stateful = nullptr;
  for (const auto& fn : f.nodes()) {
    if (fn->op == &ops::placeholder_op()) continue;
    detail::SmallVector<Value, 3> inputs;
    for (const Value& v : fn->inputs) inputs.push_back(outer(v));
    auto copy = g.new_node(*fn->op, std::span<const Value>(inputs.data(), inputs.size()), fn->attrs,
                           std::span<const schema::TensorType>(fn->outputs.data(), fn->outputs.size()),
                           fn->location, call.name + "/" + fn->name);
    for (const Node* c : fn->control_inputs) copy->control_inputs.push_back(copies.at(c));
    // The callee's first side effects run after what preceded the call.
    if (copy->is_stateful() && copy->control_inputs.empty())
      copy->control_inputs = call.control_inputs;
    if (copy->is_stateful()) last_stateful = copy.get();
    copies[fn.get()] = copy.get();
    out.push_back(std::move(copy));
  }
  for (std::size_t r = 0; r < f.results().size(); ++r)
    map.set({&call, static_cast<int>(r)}, outer(f.results()[r]));
  return last_stateful;
}

bool inline_round(graph::Graph& g) {
  std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out, dead;
  ValueMap map;
  // A call's stand-in for the control inputs of later stateful nodes.
  std::unordered_map<const Node*, std::vector<Node*>> control_map;
  for (auto& n : nodes) {
    map.apply(*n);
    if (!control_map.empty()) {
      std::vector<Node*> controls;
      for (Node* c : n->control_inputs) {
        auto it = control_map.find(c);
        if (it == control_map.end()) controls.push_back(c);
        else controls.insert(controls.end(), it->second.begin(), it->second.end());
      }
      n->control_inputs = std::move(controls);
    }
    if (!is_call(*n)) {
      out.push_back(std::move(n));
      continue;
    }
    Node* last = inline_one(g, *n, map, out);
    control_map[n.get()] = last ? std::vector<Node*>{last} : n->control_inputs;
    dead.push_back(std::move(n));
  }
  map.apply_results(g);
  g.set_nodes(std::move(out));
  return !dead.empty();
}

}  // namespace

bool inline_calls(graph::Graph& g) {
  // One level per round: a callee's own calls come in on the next round.
  constexpr int kMaxDepth = 16;
  bool changed = false;
  for (int depth = 0; depth < kMaxDepth && inline_round(g); ++depth) changed = true;
  return changed;
}

}  // namespace kiln::passes
