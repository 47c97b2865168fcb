// Weight rows: a float32 matrix variable that a graph reads only as the b of
// MatMuls (and FusedMatMuls), where MatMul's rule would copy b into longer
// rows for one of them (ops/nn_internal.h: oneDNN's AVX2 sgemm reading rows a
// multiple of 4 KB apart in place), is read in rows kMatmulBPad longer
// instead (ReadVariable row_padding, MatMul b_row_padding). The variable then
// keeps that form between steps (VariableState): the optimizer's update
// writes it and the next step's forward reads it with no copy, and a
// transposed product (a dense layer's input gradient) reads it too. Eager
// code reading the variable gets the dense value, made once per update.
// The products are the same bits (tests/matmul_padding_test.cpp).
#include <vector>

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

}  // namespace

bool pad_weight_rows(graph::Graph& g) {
  // Each node's readers of output 0 (ReadVariable has one output).
  std::vector<std::vector<Node*>> readers(g.nodes().size());
  std::vector<char> result(g.nodes().size(), 0);
  for (const auto& n : g.nodes())
    for (const Value& v : n->inputs)
      if (v.index == 0) readers[v.node->id].push_back(n.get());
  for (const Value& v : g.results()) result[v.node->id] = 1;
  bool changed = false;
  for (const auto& node : g.nodes()) {
    Node& read = *node;
    if (read.op != &ops::read_variable_op() || result[read.id] || readers[read.id].empty() ||
        read.attrs.has(ops::kReadRowPadding))
      continue;
    const schema::TensorType& type = read.outputs[0];
    if (type.dtype != DType::Float32 || !type.shape.is_fully_defined() || type.shape.rank() != 2) continue;
    const int64_t rows = type.shape[0], cols = type.shape[1];
    bool all_b = true, one_copies = false;
    for (const Node* m : readers[read.id]) {
      // Only as b, once, of a MatMul of a known matrix a.
      const int64_t m_rows = is_matmul(*m) ? rows_of_a(*m) : -1;
      if (m_rows < 0 || m->inputs.size() < 2 || m->inputs[0].node == &read || m->inputs[1].node != &read ||
          (m->inputs.size() > 2 && m->inputs[2].node == &read) || m->attrs.has(ops::kMatmulBRowPadding)) {
        all_b = false;
        break;
      }
      if (!m->attrs.get_bool("transpose_b"))
        one_copies |= ops::matmul_b_row_stride(m_rows, rows, cols) != cols;
    }
    if (!all_b || !one_copies) continue;
    read.attrs.set(ops::kReadRowPadding, ops::kMatmulBPad);
    read.outputs[0].shape = Shape{rows, cols + ops::kMatmulBPad};
    for (Node* m : readers[read.id]) m->attrs.set(ops::kMatmulBRowPadding, ops::kMatmulBPad);
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
