// Layout assignment (the CPU phase's `layouts` pass; ops/matmul_layout.h): a
// float32 matrix that never changes while the graph runs, read as the b of a
// MatMul (or FusedMatMul) whose CPU kernel reads b faster in a weight
// layout, is given to that product packed so, made once per value:
// - a variable the graph only reads (every use of its handle a ReadVariable:
//   a served model's weights) gets a second read, ReadVariable layout=<name>
//   (and layout_of_transpose where the product reads it transposed), which
//   VariableState's cache serves until the next write, eager or not;
// - a captured eager tensor (a served model's weights in C++, an imported
//   ONNX file's) gets a Const packed once, when the plan is built.
// The product takes b_layout=<name> and, read transposed, transpose_b=false:
// the packed form is of the transpose. Variables a graph updates stay dense
// (docs/design-notes.md, "Weight layouts"). The products keep the dense
// products' bits (tests/passes_layouts_test.cpp).
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/tensor_impl.h"
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
  return ops::preferred_layout(a[0], b.shape[transposed ? 1 : 0], b.shape[transposed ? 0 : 1]);
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
  // Variables the graph only reads.
  for (const auto& node : g.nodes()) {
    const std::vector<Node*>& users = readers[node->id];
    if (users.empty() || node->outputs[0].dtype != DType::Resource || result[node->id] ||
        !std::all_of(users.begin(), users.end(), [](const Node* n) { return n->op == &ops::read_variable_op(); }))
      continue;
    const Value handle{node.get(), 0};
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
