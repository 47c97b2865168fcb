// Choosing the values a while_loop's gradient stacks (see
// while_accumulators.h), and rewiring the backward body to read them.
#include "graph_ops/while_accumulators.h"

#include <atomic>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unordered_set>

#include "schema/op_def.h"

namespace kiln::graph_ops {

namespace {

bool accumulators_from_env() {
  const char* off = std::getenv("KILN_DISABLE_PASSES");
  if (!off) return true;
  std::stringstream list(off);
  for (std::string name; std::getline(list, name, ',');)
    if (name == "accumulators" || name == "all") return false;
  return true;
}

std::atomic<bool>& accumulators_on() {
  static std::atomic<bool> on{accumulators_from_env()};
  return on;
}

// Ops whose recomputation costs more than stacking their results
// (schema::kCostlyToRecompute: contractions, nested graphs). Elementwise
// ops, reductions and data movement are about as cheap as the copy, and
// recomputing them saves the memory.
bool is_costly(const detail::OpDef& op) { return op.is(schema::kCostlyToRecompute); }

// Ops whose outputs' shapes follow from their inputs' shapes and attrs,
// never from values (schema::kShapeFromShapes, and elementwise ops): a value
// of unknown dims computed by them alone from the loop variables (whose
// shapes stay) keeps its shape from one iteration to the next, which a stack
// needs. A nested loop's results, a TensorArray's stack or a segment sum may
// change shape.
bool shape_follows_shapes(const detail::OpDef& op) {
  return op.is(schema::kElementwise) || op.is(schema::kShapeFromShapes);
}

bool stackable(const schema::TensorType& t) { return t.dtype != DType::Resource && t.dtype != DType::String; }

}  // namespace

bool while_accumulators() { return accumulators_on().load(std::memory_order_relaxed); }
void set_while_accumulators(bool on) { accumulators_on().store(on, std::memory_order_relaxed); }

std::vector<graph::Value> values_to_accumulate(const graph::Graph& backward, const ReplayMap& replayed) {
  std::unordered_set<const graph::Node*> replayed_nodes;
  for (const auto& [v, forward] : replayed) replayed_nodes.insert(v.node);
  // Replayed values read by the gradient's nodes or the results.
  std::unordered_set<graph::Value, ValueHash> needed;
  for (const auto& n : backward.nodes()) {
    if (replayed_nodes.count(n.get())) continue;
    for (const graph::Value& v : n->inputs)
      if (replayed_nodes.count(v.node)) needed.insert(v);
  }
  for (const graph::Value& v : backward.results())
    if (replayed_nodes.count(v.node)) needed.insert(v);
  // In graph order: whether recomputing a value runs a costly op, a
  // stateful one (then it is not stacked: a read may see a new value), or
  // one whose output's shape may change between iterations.
  std::unordered_set<graph::Value, ValueHash> costly, impure, shape_may_vary;
  std::vector<graph::Value> chosen;
  for (const auto& n : backward.nodes()) {
    if (!replayed_nodes.count(n.get())) continue;
    bool costly_in = is_costly(*n->op), impure_in = n->is_stateful() || !n->control_inputs.empty();
    bool varies_in = !shape_follows_shapes(*n->op);
    for (const graph::Value& v : n->inputs) {
      costly_in |= costly.count(v) > 0;
      impure_in |= impure.count(v) > 0;
      varies_in |= shape_may_vary.count(v) > 0;
    }
    for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) {
      graph::Value v{n.get(), k};
      const schema::TensorType& type = n->outputs[k];
      bool varies = varies_in && !type.shape.is_fully_defined();
      auto forward = replayed.find(v);
      if (costly_in && !impure_in && !varies && needed.count(v) && forward != replayed.end() && stackable(type)) {
        chosen.push_back(forward->second);
        continue;  // read from its stack: free for what is computed from it
      }
      if (costly_in) costly.insert(v);
      if (impure_in) impure.insert(v);
      if (varies) shape_may_vary.insert(v);
    }
  }
  return chosen;
}

void read_instead(graph::Graph& g, const std::vector<std::pair<graph::Value, graph::Value>>& from_to) {
  std::unordered_map<graph::Value, graph::Value, ValueHash> map(from_to.begin(), from_to.end());
  auto resolve = [&](graph::Value& v) {
    auto it = map.find(v);
    if (it != map.end()) v = it->second;
  };
  for (const auto& n : g.nodes())
    for (graph::Value& v : n->inputs) resolve(v);
  for (graph::Value& v : g.results()) resolve(v);
  std::vector<char> live = g.live_nodes();
  std::vector<std::unique_ptr<graph::Node>> nodes = g.take_nodes(), kept;
  for (auto& n : nodes)
    if (live[n->id]) kept.push_back(std::move(n));
  g.set_nodes(std::move(kept));
}

}  // namespace kiln::graph_ops
