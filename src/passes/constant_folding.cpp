// Constant folding: a pure op whose inputs are all constants runs once, now,
// with its own kernel (so the value is the one it would compute per call),
// and becomes Const nodes. Results over the size cap stay unfolded.
#include "ops/creation.h"
#include "ops/known_ops.h"
#include "passes/passes.h"
#include "passes/rewrite.h"
#include "runtime/dispatch.h"

namespace kiln::passes {

namespace {

using graph::Node;

bool foldable(const Node& n, int64_t max_elements) {
  // A folded value is a Const, which CSE merges with its equals.
  if (!n.op->mergeable() || n.op->is(schema::kGraphOnly) || const_value(n)) return false;
  // A background op (a collective) talks to other processes: it runs when
  // the graph runs, never while a plan is compiled.
  if (n.op->start) return false;
  // A resource handle names state (a variable): reading through it must
  // happen per call.
  for (const graph::Value& v : n.inputs)
    if (!const_value(*v.node) || v.node->outputs[0].dtype == DType::Resource) return false;
  // Nested graphs and host callbacks are left to run: folding them would
  // copy programs into constants for little gain.
  for (const auto& a : n.attrs)
    if (std::holds_alternative<std::shared_ptr<const graph::Graph>>(a.value) ||
        std::holds_alternative<std::shared_ptr<const schema::HostCallback>>(a.value))
      return false;
  for (const schema::TensorType& t : n.outputs) {
    if (!t.shape.is_fully_defined() || t.shape.num_elements() > max_elements) return false;
    if (t.dtype == DType::Resource) return false;
  }
  return true;
}

}  // namespace

bool fold_constants(graph::Graph& g, int64_t max_elements) {
  std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out, dead;
  ValueMap map;
  for (auto& n : nodes) {
    map.apply(*n);
    if (!foldable(*n, max_elements)) {
      out.push_back(std::move(n));
      continue;
    }
    std::vector<Tensor> inputs;
    for (const graph::Value& v : n->inputs) inputs.push_back(*const_value(*v.node));
    runtime::TensorList values;
    try {
      values = runtime::run_eager(*n->op, inputs, n->attrs, &n->location);
    } catch (const std::exception&) {
      // The error belongs to the call that reaches this node: leave it there.
      out.push_back(std::move(n));
      continue;
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      schema::TensorType type{values[k].dtype(), values[k].shape()};
      auto c = g.new_node(ops::const_op_def(), {}, schema::Attrs{{"value", values[k]}},
                          std::span<const schema::TensorType>(&type, 1), n->location, n->name);
      map.set({n.get(), static_cast<int>(k)}, {c.get(), 0});
      out.push_back(std::move(c));
    }
    dead.push_back(std::move(n));
  }
  map.apply_results(g);
  g.set_nodes(std::move(out));
  return !dead.empty();
}

}  // namespace kiln::passes
