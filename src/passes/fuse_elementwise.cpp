// Elementwise fusion: groups of elementwise nodes (casts included) whose
// values are all either the group's output shape or single elements become
// one FusedElementwise node. A group grows from its root (visited last to
// first) into producers whose every user is already in the group, so no
// path leaves the group and comes back: the fused node can take the root's
// place in the order. Stateful nodes are never fused.
#include <algorithm>

#include <fmt/format.h>

#include "ops/creation.h"
#include "exec/fused_elementwise.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

// Whether every value `n` reads and writes is `shape` or one element.
bool fits(const graph::Graph& g, const Node& n, const Shape& shape) {
  auto ok = [&](const Shape& s) {
    return s == shape || (s.is_fully_defined() && s.num_elements() == 1);
  };
  if (!ok(n.outputs[0].shape)) return false;
  for (const Value& v : n.inputs)
    if (!ok(g.type_of(v).shape)) return false;
  return true;
}

}  // namespace

bool fuse_elementwise(graph::Graph& g, int min_nodes) {
  const auto& nodes = g.nodes();
  const std::size_t count = nodes.size();
  std::vector<std::vector<const Node*>> users(count);
  for (const auto& n : nodes)
    for (const Value& v : n->inputs) users[v.node->id].push_back(n.get());
  std::vector<char> is_result(count, 0);
  for (const Value& v : g.results()) is_result[v.node->id] = 1;
  std::vector<char> fusible(count, 0);
  for (const auto& n : nodes) fusible[n->id] = exec::fusible_loop(g, *n) != nullptr;

  std::vector<int> group(count, -1);
  std::vector<std::vector<Node*>> groups;  // members, root first
  for (std::size_t i = count; i-- > 0;) {
    Node* root = nodes[i].get();
    if (!fusible[i] || group[i] >= 0) continue;
    const Shape& shape = root->outputs[0].shape;
    if (!shape.has_known_rank() || !fits(g, *root, shape)) continue;
    const int id = static_cast<int>(groups.size());
    std::vector<Node*> members{root};
    group[i] = id;
    // Grow until no producer qualifies (a producer of two members joins once
    // both are in, hence the repeated sweep).
    for (bool grew = true; grew;) {
      grew = false;
      for (std::size_t m = 0; m < members.size(); ++m) {
        for (const Value& v : members[m]->inputs) {
          Node* p = v.node;
          if (!fusible[p->id] || group[p->id] >= 0 || is_result[p->id] || !fits(g, *p, shape)) continue;
          bool all_inside = std::all_of(users[p->id].begin(), users[p->id].end(),
                                        [&](const Node* u) { return group[u->id] == id; });
          if (!all_inside) continue;
          group[p->id] = id;
          members.push_back(p);
          grew = true;
        }
      }
    }
    if (static_cast<int>(members.size()) < min_nodes) {
      for (Node* m : members) group[m->id] = -1;
      continue;
    }
    groups.push_back(std::move(members));
  }
  if (groups.empty()) return false;

  // Each group's body and fused node, keyed by the root's id.
  std::vector<std::unique_ptr<Node>> fused_of(count);
  ValueMap map;
  for (auto& members : groups) {
    std::sort(members.begin(), members.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
    Node* root = members.back();
    auto body = std::make_shared<graph::Graph>("fused");
    std::unordered_map<Value, Value, ValueHash> inner;  // outer value -> body value
    std::vector<Value> leaves;
    for (Node* m : members) {
      detail::SmallVector<Value, 3> ins;
      for (const Value& v : m->inputs) {
        auto it = inner.find(v);
        if (it == inner.end()) {
          // A value from outside the group: a new body parameter.
          Node* param = body->add_parameter(g.type_of(v), fmt::format("in{}", leaves.size()));
          leaves.push_back(v);
          it = inner.emplace(v, Value{param, 0}).first;
        }
        ins.push_back(it->second);
      }
      Node* copy = body->add_node_typed(*m->op, std::span<const Value>(ins.data(), ins.size()), m->attrs,
                                        std::span<const schema::TensorType>(m->outputs.data(), m->outputs.size()),
                                        m->location, m->name);
      inner.emplace(Value{m, 0}, Value{copy, 0});
    }
    body->results().push_back(inner.at(Value{root, 0}));
    auto fused = g.new_node(exec::fused_elementwise_op(), std::span<const Value>(leaves.data(), leaves.size()),
                            schema::Attrs{{"body", std::shared_ptr<const graph::Graph>(body)}},
                            std::span<const schema::TensorType>(root->outputs.data(), 1), root->location,
                            "fused_" + root->name);
    map.set({root, 0}, {fused.get(), 0});
    fused_of[root->id] = std::move(fused);
  }

  std::vector<char> grouped(count);
  for (std::size_t i = 0; i < count; ++i) grouped[i] = group[i] >= 0;
  place_fused_nodes(g, fused_of, grouped, map);  // each fused node in its root's place
  return true;
}

}  // namespace kiln::passes
