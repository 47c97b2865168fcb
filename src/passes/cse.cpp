// Common-subexpression elimination: a pure node with the same op, inputs
// and attrs as an earlier one is replaced by it. Tracing already hash-conses
// what the user wrote; this catches what inlining and the other passes
// expose (a callee computing what its caller did, equal constants).
#include <unordered_set>

#include "ops/creation.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;

struct KeyHash {
  std::size_t operator()(const Node* n) const {
    std::size_t h = std::hash<const void*>()(n->op);
    for (const graph::Value& v : n->inputs) h = h * 1000003u ^ ValueHash()(v);
    return h ^ schema::attrs_hash(n->attrs);
  }
};
struct KeyEq {
  bool operator()(const Node* a, const Node* b) const {
    if (a->op != b->op || a->inputs.size() != b->inputs.size()) return false;
    for (std::size_t i = 0; i < a->inputs.size(); ++i)
      if (!(a->inputs[i] == b->inputs[i])) return false;
    return schema::attrs_equal(a->attrs, b->attrs);
  }
};

}  // namespace

bool eliminate_common_subexpressions(graph::Graph& g) {
  std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out, dead;
  ValueMap map;
  std::unordered_set<const Node*, KeyHash, KeyEq> seen;
  for (auto& n : nodes) {
    map.apply(*n);
    if (!n->op->mergeable() || n->op == &ops::placeholder_op()) {
      out.push_back(std::move(n));
      continue;
    }
    auto [it, fresh] = seen.insert(n.get());
    if (fresh) {
      out.push_back(std::move(n));
      continue;
    }
    for (std::size_t k = 0; k < n->outputs.size(); ++k)
      map.set({n.get(), static_cast<int>(k)}, {const_cast<Node*>(*it), static_cast<int>(k)});
    dead.push_back(std::move(n));
  }
  map.apply_results(g);
  g.set_nodes(std::move(out));
  return !dead.empty();
}

}  // namespace kiln::passes
