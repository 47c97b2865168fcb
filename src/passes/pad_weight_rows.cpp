// Weight rows: a float32 matrix that a graph reads only as the b of MatMuls
// (and FusedMatMuls), where MatMul's rule would copy b into longer rows for
// one of them (ops/nn_internal.h: oneDNN's AVX2 sgemm reading rows a multiple
// of 4 KB apart in place), is given to them in rows kMatmulBPad longer
// instead (MatMul b_row_padding):
// - a variable is read so (ReadVariable row_padding) and keeps that form
//   between steps (VariableState): Adam's update writes it in place and the
//   next step's forward reads it with no copy, and a transposed product (a
//   dense layer's input gradient) reads it too. Eager code reading the
//   variable gets the dense value, made once per update. Only where the
//   graph's every read is such and its only writer Adam (as var): another
//   writer (an assign, SGD's assign_sub) would make the two forms anew from
//   each other on every step;
// - a captured eager tensor (fixed for the graph's life: a served model's
//   weights) is copied into longer rows once, into a Const of the optimized
//   graph, instead of on every call.
// The products are the same bits (tests/matmul_padding_test.cpp).
//
// Panels: where oneDNN's matmul wants b in panels instead (its AVX-512
// brgemm, ops/nn_internal.h), a float32 matrix read as the b of a MatMul not
// transposed (a dense layer's forward) is given to that MatMul in panels
// (MatMul b_panels), by a second read of the variable (ReadVariable panels)
// or a Const made once from a captured tensor; Adam keeps the dense value
// and the panels both (VariableState). A matrix read as a transposed b (a
// dense layer's input gradient dy w^T, a tied embedding's logits h e^T) is
// given in the panels of its transpose (ReadVariable transposed_panels, or a
// Const), where the graph does not update the variable: Adam writing those
// too cost more than the product gained. Where it does, and the variable is
// read only by its forward and by transposed products that MatMul's own
// kernel runs with oneDNN's bits (b_panels and transpose_b: few rows,
// ops/nn_internal.h), the read gives the panels alone: the graph reads no
// dense value, and Adam updates the panels alone (VariableState). Elsewhere
// the dense value stays for its other readers. Only where the variable's
// other uses are reads and Adam's updates (as var), as for longer rows. The
// products are the same bits (tests/passes_panel_weights_test.cpp).
#include <algorithm>
#include <vector>

#include "core/tensor_impl.h"
#include "exec/fused_adam.h"
#include "exec/fused_contraction.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "ops/variable_ops.h"
#include "passes/passes.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

bool is_matmul(const Node& n) { return n.op == &ops::matmul_op() || n.op == &exec::fused_matmul_op(); }

// The rows of `matmul`'s a, or -1 when not a known matrix.
int64_t rows_of_a(const Node& matmul) {
  const Shape& a = matmul.inputs[0].node->output_type(matmul.inputs[0].index).shape;
  if (!a.is_fully_defined() || a.rank() != 2) return -1;
  return matmul.attrs.get_bool("transpose_a") ? a[1] : a[0];
}

// Whether `m`, a MatMul or FusedMatMul, reads `source`'s output 0 as its b
// alone (not as its a or bias too), dense: in no other form yet.
bool reads_as_dense_b(const Node& m, const Node& source) {
  return is_matmul(m) && m.inputs.size() >= 2 && m.inputs[1].node == &source && m.inputs[1].index == 0 &&
         m.inputs[0].node != &source && !(m.inputs.size() > 2 && m.inputs[2].node == &source) &&
         !m.attrs.has(ops::kMatmulBRowPadding) && !m.attrs.has(ops::kMatmulBPanels);
}

// Whether `source`'s output 0, a float32 [rows, cols] matrix, is read only
// as the b of MatMuls of known matrices, once each; `copied` is set where
// MatMul's rule would copy it for one of them.
bool only_b(const Node& source, const std::vector<Node*>& readers, bool* copied) {
  const schema::TensorType& type = source.outputs[0];
  if (readers.empty() || type.dtype != DType::Float32 || !type.shape.is_fully_defined() || type.shape.rank() != 2)
    return false;
  const int64_t rows = type.shape[0], cols = type.shape[1];
  for (const Node* m : readers) {
    const int64_t m_rows = reads_as_dense_b(*m, source) ? rows_of_a(*m) : -1;
    if (m_rows < 0) return false;
    if (!m->attrs.get_bool("transpose_b")) *copied |= ops::matmul_b_row_stride(m_rows, rows, cols) != cols;
  }
  return true;
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

// A variable handle's reads, where its every other use is an Adam update
// taking it as var; none otherwise. Any other use (an assign, another
// optimizer's update, a call, a loop) would write or read the dense form
// every step, and a kept form would be remade from it every step.
std::vector<Node*> reads_of_adam_var(Node& handle_node, const std::vector<Node*>& users) {
  const Value handle{&handle_node, 0};
  std::vector<Node*> reads;
  for (Node* n : users) {
    if (n->op == &ops::read_variable_op())
      reads.push_back(n);  // a read takes one input: listed once
    else if (!adam_updates_as_var(*n, handle))
      return {};
  }
  return reads;
}

// A captured eager tensor the plan may copy once into another form: a
// float32 matrix fixed for the graph's life. Not a buffer of outside memory
// (numpy's, DLPack's), which its owner may write between calls.
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

using ops::PanelsOf;

// Each panel form: its ReadVariable attr and the suffix of its node's name.
struct PanelForm {
  PanelsOf which;
  const char* read_attr;
  const char* suffix;
};
constexpr PanelForm kPanelForms[] = {{PanelsOf::kValue, ops::kReadPanels, "_panels"},
                                     {PanelsOf::kTranspose, ops::kReadTransposedPanels, "_transposed_panels"}};

// Whether `m` reads `source`'s output 0 as a b that MatMul would read
// fastest in panels: of the matrix, where not transposed (a dense layer's
// forward), or of its transpose, where transposed (its input gradient).
bool wants_panels(const Node& m, const Node& source, PanelsOf which) {
  const bool transposed = which == PanelsOf::kTranspose;
  if (!reads_as_dense_b(m, source) || m.attrs.get_bool("transpose_b") != transposed) return false;
  const schema::TensorType& b = source.outputs[0];
  const int64_t rows = rows_of_a(m);
  if (b.dtype != DType::Float32 || !b.shape.is_fully_defined() || b.shape.rank() != 2 || rows <= 0) return false;
  const int64_t k = b.shape[transposed ? 1 : 0], n = b.shape[transposed ? 0 : 1];
  return ops::matmul_reads_panels(rows, k, n);
}

bool any_wants_panels(const Node& source, const std::vector<Node*>& readers, PanelsOf which) {
  return std::any_of(readers.begin(), readers.end(), [&](const Node* m) { return wants_panels(*m, source, which); });
}

// The panels of matrix `b` or of its transpose.
schema::TensorType panels_type(const Shape& b, PanelsOf which) {
  constexpr int64_t w = ops::kMatmulPanelWidth;
  return {DType::Float32, which == PanelsOf::kTranspose ? Shape{b[0] / w, b[1], w} : Shape{b[1] / w, b[0], w}};
}

// The MatMuls among `readers` that want `which` panels read them from
// `panels` (a product with b transposed becomes one with the panels of the
// transpose, not transposed).
void read_from_panels(const Node& source, const std::vector<Node*>& readers, Node& panels, PanelsOf which) {
  for (Node* m : readers)
    if (wants_panels(*m, source, which)) {
      m->inputs[1] = Value{&panels, 0};
      m->attrs.set("transpose_b", false);
      m->attrs.set(ops::kMatmulBPanels, ops::kMatmulPanelWidth);
    }
}

// Whether `m` reads `source`'s output 0 transposed, as a dense layer's input
// gradient (dy w^T) does, where MatMul's own kernel reads w's panels
// transposed with oneDNN's bits and faster (few rows): the product may read
// the panels the forward reads (for a variable Adam updates, which keeps no
// panels of the transpose).
bool reads_transposed_from_panels(const Node& m, const Node& source) {
  if (m.op != &ops::matmul_op() || !reads_as_dense_b(m, source) || !m.attrs.get_bool("transpose_b") ||
      m.attrs.get_bool("transpose_a"))
    return false;
  const schema::TensorType& b = source.outputs[0];
  const int64_t rows = rows_of_a(m);
  return b.dtype == DType::Float32 && b.shape.is_fully_defined() && b.shape.rank() == 2 && rows > 0 &&
         ops::matmul_reads_transposed_from_panels(rows, b.shape[1], b.shape[0]);
}

// Inserts each of `after[id]` right after node `id`.
void insert_after(graph::Graph& g, std::vector<std::vector<std::unique_ptr<Node>>>& after) {
  std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out;
  out.reserve(nodes.size() + after.size());
  for (auto& n : nodes) {
    const int id = n->id;
    out.push_back(std::move(n));
    for (auto& added : after[id]) out.push_back(std::move(added));
  }
  g.set_nodes(std::move(out));
}

// The panels part of the pass (above), after the longer rows.
bool panel_weights(graph::Graph& g, bool transposed_panels) {
  const auto [readers, result] = uses_of(g);
  std::vector<std::vector<std::unique_ptr<Node>>> after(g.nodes().size());
  bool added = false;
  for (const auto& node : g.nodes()) {
    const std::vector<Node*>& users = readers[node->id];
    if (users.empty() || node->outputs[0].dtype != DType::Resource || result[node->id]) continue;
    const Value handle{node.get(), 0};
    const std::vector<Node*> reads = reads_of_adam_var(*node, users);
    // Adam keeps no panels of the transpose (VariableState): they go to
    // variables the graph only reads.
    const bool updated = reads.size() != users.size();
    for (Node* read : reads) {
      if (read->attrs.has(ops::kReadRowPadding) || read->attrs.has(ops::kReadPanels) ||
          read->attrs.has(ops::kReadTransposedPanels))
        continue;
      const std::vector<Node*>& uses = readers[read->id];
      // A trained weight whose every use reads its panels (the forward, and
      // the input gradient with MatMul's own kernel): the read itself gives
      // them, and no dense read is left, so that Adam updates the panels alone.
      const bool forward = transposed_panels && updated && any_wants_panels(*read, uses, PanelsOf::kValue);
      if (forward && !result[read->id] &&
          std::all_of(uses.begin(), uses.end(), [&](const Node* m) {
            return wants_panels(*m, *read, PanelsOf::kValue) || reads_transposed_from_panels(*m, *read);
          })) {
        for (Node* m : uses) m->attrs.set(ops::kMatmulBPanels, ops::kMatmulPanelWidth);
        read->attrs.set(ops::kReadPanels, ops::kMatmulPanelWidth);
        read->outputs[0] = panels_type(read->outputs[0].shape, PanelsOf::kValue);
        read->name += kPanelForms[int(PanelsOf::kValue)].suffix;
        added = true;
        continue;
      }
      for (const PanelForm& form : kPanelForms) {
        if ((form.which == PanelsOf::kTranspose && updated) || !any_wants_panels(*read, uses, form.which)) continue;
        schema::Attrs attrs = read->attrs;
        attrs.set(form.read_attr, ops::kMatmulPanelWidth);
        const schema::TensorType type = panels_type(read->outputs[0].shape, form.which);
        auto panels = g.new_node(ops::read_variable_op(), std::span(&handle, 1), std::move(attrs),
                                 std::span<const schema::TensorType>(&type, 1), read->location,
                                 read->name + form.suffix);
        read_from_panels(*read, uses, *panels, form.which);
        after[read->id].push_back(std::move(panels));
        added = true;
      }
    }
  }
  // Captured eager tensors (a served model's weights): a Const in panels
  // after the placeholder, made once.
  for (const graph::Capture& c : g.captures()) {
    Node& placeholder = *c.placeholder;
    const Tensor& outer = c.outer;
    const std::vector<Node*>& uses = readers[placeholder.id];
    if (!fixed_matrix(outer)) continue;
    for (const PanelForm& form : kPanelForms) {
      if (!any_wants_panels(placeholder, uses, form.which)) continue;
      const Tensor panels =
          form.which == PanelsOf::kTranspose ? ops::in_transposed_panels(outer) : ops::in_panels(outer);
      const schema::TensorType type{DType::Float32, panels.shape()};
      auto k = g.new_node(ops::const_op_def(), {}, schema::Attrs{{"value", panels}},
                          std::span<const schema::TensorType>(&type, 1), placeholder.location,
                          placeholder.name + form.suffix);
      read_from_panels(placeholder, uses, *k, form.which);
      after[placeholder.id].push_back(std::move(k));
      added = true;
    }
  }
  if (added) insert_after(g, after);
  return added;
}

}  // namespace

bool pad_weight_rows(graph::Graph& g, bool transposed_panels) {
  const auto [readers, result] = uses_of(g);
  // Variables: all of a handle's reads, or none (a read that is a result,
  // or read otherwise than as b, would need the dense form every step).
  bool changed = false;
  for (const auto& node : g.nodes()) {
    const std::vector<Node*>& users = readers[node->id];
    if (users.empty() || node->outputs[0].dtype != DType::Resource || result[node->id]) continue;
    const std::vector<Node*> reads = reads_of_adam_var(*node, users);
    bool ok = !reads.empty(), copied = false;
    for (Node* n : reads)
      ok &= !result[n->id] && !n->attrs.has(ops::kReadRowPadding) && only_b(*n, readers[n->id], &copied);
    if (!ok || !copied) continue;
    for (Node* read : reads) {
      read->attrs.set(ops::kReadRowPadding, ops::kMatmulBPad);
      read->outputs[0].shape = Shape{read->outputs[0].shape[0], read->outputs[0].shape[1] + ops::kMatmulBPad};
      for (Node* m : readers[read->id]) m->attrs.set(ops::kMatmulBRowPadding, ops::kMatmulBPad);
    }
    changed = true;
  }
  // Captured eager tensors: a Const in longer rows right after the
  // placeholder, which stays (the call feeds it) with no reader.
  std::vector<std::vector<std::unique_ptr<Node>>> consts(g.nodes().size());
  bool added = false;
  for (const graph::Capture& c : g.captures()) {
    Node& placeholder = *c.placeholder;
    const Tensor& outer = c.outer;
    bool copied = false;
    if (!fixed_matrix(outer) || result[placeholder.id] || !only_b(placeholder, readers[placeholder.id], &copied) ||
        !copied)
      continue;
    const Tensor longer = ops::in_longer_rows(outer, ops::kMatmulBPad);
    const schema::TensorType type{DType::Float32, longer.shape()};
    auto k = g.new_node(ops::const_op_def(), {}, schema::Attrs{{"value", longer}},
                        std::span<const schema::TensorType>(&type, 1), placeholder.location, placeholder.name + "_rows");
    for (Node* m : readers[placeholder.id]) {
      m->inputs[1] = Value{k.get(), 0};
      m->attrs.set(ops::kMatmulBRowPadding, ops::kMatmulBPad);
    }
    consts[placeholder.id].push_back(std::move(k));
    added = true;
  }
  if (added) insert_after(g, consts);
  const bool panels = panel_weights(g, transposed_panels);
  return changed || added || panels;
}

}  // namespace kiln::passes
