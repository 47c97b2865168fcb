#pragma once
// Shared plumbing of the passes: a map from replaced values to their
// replacements, applied to node inputs and graph results while a pass walks
// the node list.
#include <memory>
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

// Rebuilds `g`'s node list after a fusion: the node with id i gives its
// place to fused[i] when that is set (so a fused node sits where the last
// node of its group was), goes when absorbed[i], and stays otherwise; every
// input and result then reads through `map`.
void place_fused_nodes(graph::Graph& g, std::vector<std::unique_ptr<graph::Node>>& fused,
                       const std::vector<char>& absorbed, const ValueMap& map);

// The Const node's value, or nullptr when `n` is not a Const.
const Tensor* const_value(const graph::Node& n);

}  // namespace kiln::passes
