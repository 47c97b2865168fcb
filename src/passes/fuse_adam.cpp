// Optimizer-update fusion: the ApplyAdam nodes of a training step, one per
// variable, become one FusedApplyAdam that updates every variable in a single
// parallel pass (PyTorch's multi-tensor "foreach" Adam). A group is a run of
// ApplyAdam nodes that follow each other in program order (no other stateful
// node between them) with the same alpha and attrs (dtype, beta_1, beta_2,
// epsilon). The fused node takes the place of the group's last node, after
// every gradient it needs exists; the updates touch different variables (the
// kernel runs them one by one where they do not), so doing them together is
// what the program asked for. Each element's bits are ApplyAdam's.
//
// A float32 gradient made by MatMul(a, b, transpose_a=true) that nothing else
// reads (a dense layer's weight gradient) joins the fused node as a and b:
// the kernel makes it in bands, each updated while in cache (exec/fused_adam.h).
// A float32 gradient that is a Cast of a bfloat16 tensor (mixed_bfloat16's)
// joins as the bf16 tensor, which the kernel widens a band at a time.
#include <algorithm>
#include <memory>
#include <vector>

#include "exec/fused_adam.h"
#include "ops/known_ops.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

bool same_update(const Node& a, const Node& b) {
  return a.inputs[4] == b.inputs[4] && a.attrs.get_dtype("dtype") == b.attrs.get_dtype("dtype") &&
         a.attrs.get_float("beta_1") == b.attrs.get_float("beta_1") &&
         a.attrs.get_float("beta_2") == b.attrs.get_float("beta_2") &&
         a.attrs.get_float("epsilon") == b.attrs.get_float("epsilon");
}

// Runs of two or more ApplyAdam nodes that may become one.
std::vector<std::vector<Node*>> adam_groups(const graph::Graph& g) {
  std::vector<std::vector<Node*>> groups;
  bool open = false;
  for (Node* n : g.stateful_nodes()) {
    if (n->op != &ops::apply_adam_op()) {
      open = false;
      continue;
    }
    if (open && same_update(*groups.back().back(), *n))
      groups.back().push_back(n);
    else
      groups.push_back({n});
    open = true;
  }
  std::erase_if(groups, [](const std::vector<Node*>& group) { return group.size() < 2; });
  // A node between a group's first and last that must run after an earlier
  // member would run before the fused node: leave that group alone.
  std::erase_if(groups, [&](const std::vector<Node*>& group) {
    for (int id = group.front()->id + 1; id < group.back()->id; ++id) {
      const Node& n = *g.nodes()[id];
      if (std::find(group.begin(), group.end(), &n) != group.end()) continue;
      for (const Node* c : n.control_inputs)
        if (std::find(group.begin(), group.end(), c) != group.end()) return true;
    }
    return false;
  });
  return groups;
}

// The MatMul(a, b, transpose_a=true) of float32 matrices of known shapes that
// made `update`'s gradient, when nothing else reads it; else nullptr.
Node* gradient_matmul(const Node& update, const Uses& uses) {
  const Value& grad = update.inputs[3];
  Node* mm = grad.node;
  if (mm->op != &ops::matmul_op() || uses.pinned[mm->id] || uses.count[mm->id] != 1) return nullptr;
  if (update.attrs.get_dtype("dtype") != DType::Float32 || !mm->attrs.get_bool("transpose_a") ||
      mm->attrs.get_bool("transpose_b"))
    return nullptr;
  for (const Value& v : mm->inputs) {
    const schema::TensorType& t = v.node->outputs[v.index];
    if (t.dtype != DType::Float32 || t.shape.rank() != 2 || !t.shape.is_fully_defined()) return nullptr;
  }
  return mm;
}

// The Cast to float32 of a bfloat16 tensor of known shape (rank 1 or more)
// that made `update`'s gradient (mixed_bfloat16: a bf16 gradient of a
// float32 variable), when nothing else reads it; else nullptr. The fused node
// reads the bf16 gradient and widens it a band at a time (exact, so the bits
// are the Cast's) instead of the Cast writing a float32 copy whole.
Node* widening_cast(const Node& update, const Uses& uses) {
  const Value& grad = update.inputs[3];
  Node* cast = grad.node;
  if (cast->op != &ops::cast_op() || uses.pinned[cast->id] || uses.count[cast->id] != 1) return nullptr;
  if (update.attrs.get_dtype("dtype") != DType::Float32 || cast->outputs[0].dtype != DType::Float32) return nullptr;
  const schema::TensorType& from = cast->inputs[0].node->outputs[cast->inputs[0].index];
  if (from.dtype != DType::BFloat16 || from.shape.rank() < 1 || !from.shape.is_fully_defined()) return nullptr;
  return cast;
}

}  // namespace

bool fuse_adam_updates(graph::Graph& g) {
  const std::vector<std::vector<Node*>> groups = adam_groups(g);
  if (groups.empty()) return false;
  const Uses uses(g);
  // Per node id: the fused node that replaces it (at the group's last member)
  // and the fused node it folds into.
  std::vector<std::unique_ptr<Node>> fused(g.nodes().size());
  std::vector<Node*> folded_into(g.nodes().size(), nullptr);
  std::vector<char> absorbed(g.nodes().size(), 0);  // gradient MatMuls and Casts
  for (const std::vector<Node*>& group : groups) {
    std::vector<Value> inputs;
    std::vector<int64_t> grad_from_matmul;
    std::vector<Node*> control;
    for (const Node* n : group) {
      inputs.insert(inputs.end(), n->inputs.begin(), n->inputs.begin() + 3);
      Node* mm = gradient_matmul(*n, uses);
      grad_from_matmul.push_back(mm != nullptr);
      if (mm) {
        inputs.insert(inputs.end(), mm->inputs.begin(), mm->inputs.end());
        absorbed[mm->id] = 1;
      } else if (Node* cast = widening_cast(*n, uses)) {
        inputs.push_back(cast->inputs[0]);
        absorbed[cast->id] = 1;
      } else {
        inputs.push_back(n->inputs[3]);
      }
      for (Node* c : n->control_inputs)
        if (std::find(group.begin(), group.end(), c) == group.end() &&
            std::find(control.begin(), control.end(), c) == control.end())
          control.push_back(c);
    }
    inputs.push_back(group.front()->inputs[4]);
    const Node& first = *group.front();
    schema::Attrs attrs{{"dtype", first.attrs.get_dtype("dtype")},
                        {"grad_from_matmul", std::move(grad_from_matmul)},
                        {"beta_1", first.attrs.get_float("beta_1")},
                        {"beta_2", first.attrs.get_float("beta_2")},
                        {"epsilon", first.attrs.get_float("epsilon")}};
    std::unique_ptr<Node> node =
        g.new_node(exec::fused_apply_adam_op(), inputs, std::move(attrs), {}, first.location, "fused_" + first.name);
    node->control_inputs = std::move(control);
    for (const Node* n : group) folded_into[n->id] = node.get();
    fused[group.back()->id] = std::move(node);
  }
  std::vector<std::unique_ptr<Node>> old = g.take_nodes(), out;
  for (auto& n : old) {
    const int id = n->id;
    if (fused[id])
      out.push_back(std::move(fused[id]));
    else if (!folded_into[id] && !absorbed[id])
      out.push_back(std::move(n));
    else
      continue;
    // Control edges on a member (of this group or an earlier one) now wait for its fused node.
    std::vector<Node*> control;
    for (Node* c : out.back()->control_inputs) {
      Node* to = folded_into[c->id] ? folded_into[c->id] : c;
      if (std::find(control.begin(), control.end(), to) == control.end()) control.push_back(to);
    }
    out.back()->control_inputs = std::move(control);
  }
  g.set_nodes(std::move(out));
  return true;
}

}  // namespace kiln::passes
