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

// Whether `source`'s output 0, a float32 [rows, cols] matrix, is read only
// as the b of MatMuls of known matrices, once each; `copied` is set where
// MatMul's rule would copy it for one of them.
bool only_b(const Node& source, const std::vector<Node*>& readers, bool* copied) {
  const schema::TensorType& type = source.outputs[0];
  if (readers.empty() || type.dtype != DType::Float32 || !type.shape.is_fully_defined() || type.shape.rank() != 2)
    return false;
  const int64_t rows = type.shape[0], cols = type.shape[1];
  for (const Node* m : readers) {
    const int64_t m_rows = is_matmul(*m) ? rows_of_a(*m) : -1;
    if (m_rows < 0 || m->inputs.size() < 2 || m->inputs[0].node == &source || m->inputs[1].node != &source ||
        (m->inputs.size() > 2 && m->inputs[2].node == &source) || m->attrs.has(ops::kMatmulBRowPadding))
      return false;
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

}  // namespace

bool pad_weight_rows(graph::Graph& g) {
  // Each node's readers of output 0 (ReadVariable and placeholders, variable
  // handles among them, have one output).
  std::vector<std::vector<Node*>> readers(g.nodes().size());
  std::vector<char> result(g.nodes().size(), 0);
  for (const auto& n : g.nodes())
    for (const Value& v : n->inputs)
      if (v.index == 0) readers[v.node->id].push_back(n.get());
  for (const Value& v : g.results()) result[v.node->id] = 1;
  // Variables: all of a handle's reads, or none. Any other use of the handle
  // (an assign, another optimizer's update, a call, a loop, a result) would
  // write or read the dense form every step, and the two forms would be
  // remade from each other every step.
  bool changed = false;
  for (const auto& node : g.nodes()) {
    const std::vector<Node*>& users = readers[node->id];
    if (users.empty() || node->outputs[0].dtype != DType::Resource || result[node->id]) continue;
    const Value handle{node.get(), 0};
    std::vector<Node*> reads;
    bool ok = true, copied = false;
    for (Node* n : users) {
      if (n->op == &ops::read_variable_op()) {
        ok &= !result[n->id] && !n->attrs.has(ops::kReadRowPadding) && only_b(*n, readers[n->id], &copied);
        reads.push_back(n);  // a read takes one input: listed once
      } else {
        ok &= adam_updates_as_var(*n, handle);
      }
    }
    if (!ok || !copied || reads.empty()) continue;
    for (Node* read : reads) {
      read->attrs.set(ops::kReadRowPadding, ops::kMatmulBPad);
      read->outputs[0].shape = Shape{read->outputs[0].shape[0], read->outputs[0].shape[1] + ops::kMatmulBPad};
      for (Node* m : readers[read->id]) m->attrs.set(ops::kMatmulBRowPadding, ops::kMatmulBPad);
    }
    changed = true;
  }
  // Captured eager tensors: a Const in longer rows right after the
  // placeholder, which stays (the call feeds it) with no reader. Not a
  // buffer of outside memory (numpy's, DLPack's), which its owner may write.
  std::vector<std::unique_ptr<Node>> consts(g.nodes().size());
  bool added = false;
  for (const graph::Capture& c : g.captures()) {
    Node& placeholder = *c.placeholder;
    const Tensor& outer = c.outer;
    bool copied = false;
    if (!outer.defined() || outer.is_symbolic() || outer.dtype() != DType::Float32 || result[placeholder.id] ||
        outer.impl()->buffer->release_external || !only_b(placeholder, readers[placeholder.id], &copied) || !copied)
      continue;
    const Tensor longer = ops::in_longer_rows(outer, ops::kMatmulBPad);
    const schema::TensorType type{DType::Float32, longer.shape()};
    auto k = g.new_node(ops::const_op_def(), {}, schema::Attrs{{"value", longer}},
                        std::span<const schema::TensorType>(&type, 1), placeholder.location, placeholder.name + "_rows");
    for (Node* m : readers[placeholder.id]) {
      m->inputs[1] = Value{k.get(), 0};
      m->attrs.set(ops::kMatmulBRowPadding, ops::kMatmulBPad);
    }
    consts[placeholder.id] = std::move(k);
    added = true;
  }
  if (added) {
    std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out;
    out.reserve(nodes.size() + consts.size());
    for (auto& n : nodes) {
      const int id = n->id;
      out.push_back(std::move(n));
      if (consts[id]) out.push_back(std::move(consts[id]));
    }
    g.set_nodes(std::move(out));
  }
  return changed || added;
}

}  // namespace kiln::passes
