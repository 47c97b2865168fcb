// Layout assignment (the CPU phase's `layouts` pass; ops/matmul_layout.h).
// A trained weight (a variable whose only writes in the graph are Adam's
// updates of it as var) read only by products that can all take it packed,
// its forward (b read as it is, in a layout MatMul wants) and its input
// gradient (b read transposed, where the layout multiplies so), is read
// packed alone: ReadVariable layout=<name>, and Adam updates the packed form
// (VariableState::update_target). Elsewhere it is read dense: Adam writing
// a packed form beside the dense value cost more than it saved.
// A float32 matrix that never changes while the graph runs, read as the b of
// a MatMul (or FusedMatMul) whose CPU kernel reads b faster in a weight
// layout, is given to that product packed so, made once per value:
// - a variable the graph only reads (every use of its handle a ReadVariable:
//   a served model's weights) gets a second read, ReadVariable layout=<name>
//   (and layout_of_transpose where the product reads it transposed), which
//   VariableState's cache serves until the next write, eager or not;
// - a captured eager tensor (a served model's weights in C++, an imported
//   ONNX file's) gets a Const packed once, when the plan is built.
// The product takes b_layout=<name> and, read transposed, transpose_b=false:
// the packed form is of the transpose (docs/design-notes.md, "Weight
// layouts"). The products keep the dense products' bits
// (tests/passes_layouts_test.cpp).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "exec/fused_adam.h"
#include "exec/fused_contraction.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "ops/variable_ops.h"
#include "passes/passes.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

bool is_matmul(const Node& n) { return n.op == &ops::matmul_op() || n.op == &exec::fused_matmul_op(); }

// The layout `m` would read `source`'s output 0 in, as its b alone (not its
// a or bias too), with `transposed` set where it reads b transposed; null
// where it reads it dense: a not a known float32 matrix read as it is, b not
// a float32 matrix, or no layout wanted for these shapes.
const ops::MatmulLayout* wanted_layout(const Node& m, const Node& source, bool& transposed) {
  if (!is_matmul(m) || m.inputs.size() < 2 || m.inputs[1].node != &source || m.inputs[1].index != 0 ||
      m.inputs[0].node == &source || (m.inputs.size() > 2 && m.inputs[2].node == &source) ||
      m.attrs.has(ops::kMatmulBLayout) || m.attrs.get_bool("transpose_a"))
    return nullptr;
  const Shape& a = m.inputs[0].node->output_type(m.inputs[0].index).shape;
  const schema::TensorType& b = source.outputs[0];
  if (b.dtype != DType::Float32 || !b.shape.is_fully_defined() || b.shape.rank() != 2 || !a.is_fully_defined() ||
      a.rank() != 2)
    return nullptr;
  transposed = m.attrs.get_bool("transpose_b");
  return ops::preferred_layout(a[0], b.shape[transposed ? 1 : 0], b.shape[transposed ? 0 : 1], transposed);
}

// Whether `m`, a MatMul, reads `source`'s output 0 as its b alone,
// transposed (a dense layer's input gradient, dy w^T), where `layout`
// multiplies so from the packed w.
bool reads_transposed(const Node& m, const Node& source, const ops::MatmulLayout& layout) {
  if (m.op != &ops::matmul_op() || m.inputs[1].node != &source || m.inputs[1].index != 0 ||
      m.inputs[0].node == &source || m.attrs.has(ops::kMatmulBLayout) || m.attrs.get_bool("transpose_a") ||
      !m.attrs.get_bool("transpose_b") || !layout.multiplies_transposed)
    return false;
  const Shape& a = m.inputs[0].node->output_type(m.inputs[0].index).shape;
  const Shape& b = source.outputs[0].shape;
  return source.outputs[0].dtype == DType::Float32 && b.is_fully_defined() && b.rank() == 2 &&
         a.is_fully_defined() && a.rank() == 2 && layout.multiplies_transposed(a[0], b[1], b[0]);
}

// Whether every place `n` takes `handle` is a var of its Adam updates (not
// an m or v): ApplyAdam(var, m, v, grad, alpha), FusedApplyAdam's groups of
// var, m, v and one gradient or two (grad_from_matmul), then alpha.
bool adam_updates_as_var(const Node& n, const Value& handle) {
  std::vector<char> var(n.inputs.size(), 0);
  if (n.op == &ops::apply_adam_op()) {
    var[0] = 1;
  } else if (n.op == &exec::fused_apply_adam_op()) {
    std::size_t at = 0;
    for (int64_t from_matmul : n.attrs.get_ints("grad_from_matmul")) {
      if (at < var.size()) var[at] = 1;
      at += 3 + (from_matmul ? 2 : 1);
    }
  } else {
    return false;
  }
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] == handle && !var[i]) return false;
  return true;
}

// A trained weight's read that every use can take packed alone: its
// forward's layout, or null.
const ops::MatmulLayout* packed_alone_layout(const Node& read, const std::vector<Node*>& uses) {
  const ops::MatmulLayout* layout = nullptr;
  bool t = false;
  for (const Node* m : uses)
    if (const ops::MatmulLayout* l = wanted_layout(*m, read, t); l && !t && l->offset) layout = l;
  if (!layout) return nullptr;
  for (const Node* m : uses)
    if (!(wanted_layout(*m, read, t) == layout && !t) && !reads_transposed(*m, read, *layout)) return nullptr;
  return layout;
}

// A captured eager tensor fixed for the graph's life. Not a buffer of
// outside memory (numpy's, DLPack's), which its owner may write between calls.
bool fixed_matrix(const Tensor& outer) {
  return outer.defined() && !outer.is_symbolic() && outer.dtype() == DType::Float32 && outer.shape().rank() == 2 &&
         !outer.impl()->buffer->release_external;
}

// Each node's readers of output 0 (ReadVariable and placeholders, variable
// handles among them, have one output), and whether it is a result.
struct Uses {
  std::vector<std::vector<Node*>> readers;
  std::vector<char> result;
};
Uses uses_of(const graph::Graph& g) {
  Uses u{std::vector<std::vector<Node*>>(g.nodes().size()), std::vector<char>(g.nodes().size(), 0)};
  for (const auto& n : g.nodes())
    for (const Value& v : n->inputs)
      if (v.index == 0) u.readers[v.node->id].push_back(n.get());
  for (const Value& v : g.results()) u.result[v.node->id] = 1;
  return u;
}

// For each (layout, orientation) some reader of `source` wants: `make` makes
// the node giving `source`'s value so packed, and those readers read it.
template <class Make>
bool pack_for_readers(const Node& source, const std::vector<Node*>& readers,
                      std::vector<std::unique_ptr<Node>>& added, Make&& make) {
  bool changed = false;
  for (bool transposed : {false, true})
    for (Node* first : readers) {
      bool t = false;
      const ops::MatmulLayout* layout = wanted_layout(*first, source, t);
      if (!layout || t != transposed) continue;
      std::unique_ptr<Node> packed = make(*layout, transposed);
      for (Node* m : readers)
        if (wanted_layout(*m, source, t) == layout && t == transposed) {
          m->inputs[1] = Value{packed.get(), 0};
          m->attrs.set("transpose_b", false);
          m->attrs.set(ops::kMatmulBLayout, std::string(layout->name));
        }
      added.push_back(std::move(packed));
      changed = true;
    }
  return changed;
}

std::string suffix(const ops::MatmulLayout& layout, bool transposed) {
  return fmt::format("_{}{}", layout.name, transposed ? "_of_transpose" : "");
}

schema::TensorType packed_type(const ops::MatmulLayout& layout, const Shape& matrix, bool transposed) {
  return {DType::Float32, transposed ? layout.packed_shape(matrix[1], matrix[0])
                                     : layout.packed_shape(matrix[0], matrix[1])};
}

// Inserts each of `after[id]` right after node `id`.
void insert_after(graph::Graph& g, std::vector<std::vector<std::unique_ptr<Node>>>& after) {
  std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out;
  out.reserve(nodes.size());
  for (auto& n : nodes) {
    const int id = n->id;
    out.push_back(std::move(n));
    for (auto& added : after[id]) out.push_back(std::move(added));
  }
  g.set_nodes(std::move(out));
}

}  // namespace

bool assign_layouts(graph::Graph& g) {
  const auto [readers, result] = uses_of(g);
  std::vector<std::vector<std::unique_ptr<Node>>> after(g.nodes().size());
  bool changed = false;
  for (const auto& node : g.nodes()) {
    const std::vector<Node*>& users = readers[node->id];
    if (users.empty() || node->outputs[0].dtype != DType::Resource || result[node->id]) continue;
    const Value handle{node.get(), 0};
    auto is_read = [](const Node* n) { return n->op == &ops::read_variable_op(); };
    if (!std::all_of(users.begin(), users.end(), is_read)) {
      // A trained weight: its other uses Adam's updates of it as var.
      if (!std::all_of(users.begin(), users.end(), [&](const Node* n) {
            return is_read(n) || adam_updates_as_var(*n, handle);
          }))
        continue;
      for (Node* read : users) {
        if (!is_read(read) || result[read->id] || read->attrs.has(ops::kReadLayout)) continue;
        const std::vector<Node*>& uses = readers[read->id];
        const ops::MatmulLayout* layout = packed_alone_layout(*read, uses);
        if (!layout) continue;
        for (Node* m : uses) m->attrs.set(ops::kMatmulBLayout, std::string(layout->name));
        read->attrs.set(ops::kReadLayout, std::string(layout->name));
        read->outputs[0] = packed_type(*layout, read->outputs[0].shape, false);
        read->name += suffix(*layout, false);
        changed = true;
      }
      continue;
    }
    // A variable the graph only reads.
    for (Node* read : users) {
      if (read->attrs.has(ops::kReadLayout)) continue;
      changed |= pack_for_readers(*read, readers[read->id], after[read->id], [&](const ops::MatmulLayout& layout,
                                                                                bool transposed) {
        schema::Attrs attrs = read->attrs;
        attrs.set(ops::kReadLayout, std::string(layout.name));
        if (transposed) attrs.set(ops::kReadTransposed, true);
        const schema::TensorType type = packed_type(layout, read->outputs[0].shape, transposed);
        return g.new_node(ops::read_variable_op(), std::span(&handle, 1), std::move(attrs),
                          std::span<const schema::TensorType>(&type, 1), read->location,
                          read->name + suffix(layout, transposed));
      });
    }
  }
  // Captured eager tensors: a Const after the placeholder.
  for (const graph::Capture& c : g.captures()) {
    Node& placeholder = *c.placeholder;
    const Tensor& outer = c.outer;
    if (!fixed_matrix(outer)) continue;
    changed |= pack_for_readers(placeholder, readers[placeholder.id], after[placeholder.id],
                                [&](const ops::MatmulLayout& layout, bool transposed) {
                                  const Tensor packed = ops::pack(layout, outer, transposed);
                                  const schema::TensorType type{DType::Float32, packed.shape()};
                                  return g.new_node(ops::const_op_def(), {}, schema::Attrs{{"value", packed}},
                                                    std::span<const schema::TensorType>(&type, 1),
                                                    placeholder.location,
                                                    placeholder.name + suffix(layout, transposed));
                                });
  }
  if (changed) insert_after(g, after);
  return changed;
}

}  // namespace kiln::passes
