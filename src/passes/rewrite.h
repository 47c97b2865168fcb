#pragma once
// Shared plumbing of the passes: a map from replaced values to their
// replacements, applied to node inputs and graph results while a pass walks
// the node list.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"

namespace kiln::passes {

struct ValueHash {
  std::size_t operator()(const graph::Value& v) const {
    return std::hash<const void*>()(v.node) * 31u + static_cast<std::size_t>(v.index);
  }
};

class ValueMap {
 public:
  void set(const graph::Value& from, const graph::Value& to) { map_[from] = to; }
  bool empty() const { return map_.empty(); }
  graph::Value resolve(graph::Value v) const {
    for (auto it = map_.find(v); it != map_.end(); it = map_.find(v)) v = it->second;
    return v;
  }
  // Points the node's inputs at the replacements.
  void apply(graph::Node& n) const {
    if (map_.empty()) return;
    for (graph::Value& v : n.inputs) v = resolve(v);
  }
  void apply_results(graph::Graph& g) const {
    for (graph::Value& v : g.results()) v = resolve(v);
  }

 private:
  std::unordered_map<graph::Value, graph::Value, ValueHash> map_;
};

// What reads each node: how many uses of its outputs (results count) and the
// last reading node.
struct Uses {
  std::vector<int> count;
  std::vector<graph::Node*> reader;
  std::vector<char> pinned;  // stateful, or on either end of a control edge

  explicit Uses(const graph::Graph& g)
      : count(g.nodes().size(), 0), reader(g.nodes().size(), nullptr), pinned(g.nodes().size(), 0) {
    for (const auto& n : g.nodes()) {
      pinned[n->id] |= n->is_stateful() || !n->control_inputs.empty();
      for (const graph::Node* c : n->control_inputs) pinned[c->id] = 1;
      for (const graph::Value& v : n->inputs) {
        ++count[v.node->id];
        reader[v.node->id] = n.get();
      }
    }
    for (const graph::Value& v : g.results()) ++count[v.node->id];
  }

  // The one node reading `n` (through input 0) when it is not pinned, else nullptr.
  graph::Node* only_reader(const graph::Node& n) const {
    graph::Node* r = reader[n.id];
    if (count[n.id] != 1 || !r || pinned[r->id] || r->inputs.empty() || r->inputs[0] != graph::Value{const_cast<graph::Node*>(&n), 0})
      return nullptr;
    return r;
  }
};

// Rebuilds `g`'s node list after a fusion: the node with id i gives its
// place to fused[i] when that is set (so a fused node sits where the last
// node of its group was), goes when absorbed[i], and stays otherwise; every
// input and result then reads through `map`.
void place_fused_nodes(graph::Graph& g, std::vector<std::unique_ptr<graph::Node>>& fused,
                       const std::vector<char>& absorbed, const ValueMap& map);

// The bookkeeping of a pass that fuses a chain of nodes into one: each fused
// node is made in the place of the chain's last node (whose output 0 it
// replaces); the chain's other nodes are absorbed.
class ChainFusion {
 public:
  explicit ChainFusion(const graph::Graph& g) : fused_(g.nodes().size()), absorbed_(g.nodes().size(), 0) {}

  // A node of `op` on `inputs` with `last`'s output type, location and name
  // (prefixed "fused_"), replacing `last`.
  void replace(graph::Graph& g, graph::Node& last, const detail::OpDef& op, std::span<const graph::Value> inputs,
               schema::Attrs attrs) {
    replace(g, last, op, inputs, std::move(attrs), std::span<const schema::TensorType>(last.outputs.data(), 1));
  }
  // The same with the fused node's outputs given (output 0 stands for
  // `last`'s; take_over maps the others), and optionally its name.
  void replace(graph::Graph& g, graph::Node& last, const detail::OpDef& op, std::span<const graph::Value> inputs,
               schema::Attrs attrs, std::span<const schema::TensorType> outputs, std::string name = {}) {
    auto& fused = fused_[last.id];
    fused = g.new_node(op, inputs, std::move(attrs), outputs, last.location,
                       name.empty() ? "fused_" + last.name : std::move(name));
    map_.set({&last, 0}, {fused.get(), 0});
  }
  void absorb(const graph::Node& n) { absorbed_[n.id] = 1; }
  // Absorbs `n`, a later node whose output 0 becomes output `index` of the
  // node that replaced `last`.
  void take_over(const graph::Node& last, graph::Node& n, int index) {
    map_.set({&n, 0}, {fused_[last.id].get(), index});
    absorb(n);
  }

  // Rebuilds `g` with the fused nodes when there are any; says whether it did.
  bool apply(graph::Graph& g) {
    if (map_.empty()) return false;
    place_fused_nodes(g, fused_, absorbed_, map_);
    return true;
  }

 private:
  std::vector<std::unique_ptr<graph::Node>> fused_;
  std::vector<char> absorbed_;
  ValueMap map_;
};

// The Const node's value, or nullptr (graph/graph.h).
using graph::const_value;

}  // namespace kiln::passes
