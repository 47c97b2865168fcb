// Contraction fusion: a float32 (or bfloat16) MatMul, Conv2D or DepthwiseConv2dNative whose
// only user adds a per-channel bias (BiasAdd, or Add of a 1-D bias as long as
// the last dim), optionally followed by a Relu that is that sum's only user,
// becomes one FusedMatMul / FusedConv2D / FusedDepthwiseConv2dNative node in
// the last node's place (every input of the chain exists by then). An intermediate value read by anything else (a
// gradient, a result) stays, and with it the unfused chain. Training steps
// qualify because Relu's gradient reads Relu's output, not its input.
//
// float32, and bfloat16 (oneDNN's bf16 kernels where the CPU has them; the
// bias pass rounds each sum once, as BiasAdd): float64 and the rest do not run
// on oneDNN, so fusing them gains nothing. Stateful nodes and nodes tied by
// control edges are left alone.
#include <array>
#include <string>

#include "exec/fused_contraction.h"
#include "ops/known_ops.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

// Whether `add` (reading the contraction through input 0) adds one value per
// channel of the contraction's last dim: always for BiasAdd; for Add when
// the other input is 1-D and as long as a known last dim, so nothing else
// broadcasts.
bool adds_channel_bias(const graph::Graph& g, const Node& add, const Node& contraction) {
  if (add.inputs.size() != 2) return false;
  if (add.op == &ops::bias_add_op()) return true;
  if (add.op != &ops::add_op()) return false;
  const Shape& out = contraction.outputs[0].shape;
  const schema::TensorType& bias = g.type_of(add.inputs[1]);
  if (!out.has_known_rank() || out.rank() < 1 || bias.dtype != contraction.outputs[0].dtype ||
      !bias.shape.has_known_rank() ||
      bias.shape.rank() != 1)
    return false;
  const int64_t channels = out[out.rank() - 1];
  return channels >= 0 && bias.shape[0] == channels;
}

const detail::OpDef* fused_op_for(const Node& n) {
  if (n.op == &ops::matmul_op()) return &exec::fused_matmul_op();
  if (n.op == &ops::conv2d_op()) return &exec::fused_conv2d_op();
  if (n.op == &ops::depthwise_conv2d_op()) return &exec::fused_depthwise_conv2d_op();
  return nullptr;
}

}  // namespace

bool fuse_contractions(graph::Graph& g) {
  const Uses uses(g);
  ChainFusion fusion(g);
  for (const auto& node : g.nodes()) {
    Node* contraction = node.get();
    const detail::OpDef* fused_op = fused_op_for(*contraction);
    const DType dtype = contraction->outputs[0].dtype;
    if (!fused_op || uses.pinned[contraction->id] || (dtype != DType::Float32 && dtype != DType::BFloat16)) continue;
    Node* add = uses.only_reader(*contraction);
    if (!add || !adds_channel_bias(g, *add, *contraction)) continue;
    Node* last = add;
    Node* relu = uses.only_reader(*add);
    const bool with_relu = relu && relu->op == &ops::relu_op();
    if (with_relu) last = relu;

    schema::Attrs attrs = contraction->attrs;
    attrs.set("activation", std::string(with_relu ? "relu" : "none"));
    const std::array<Value, 3> inputs{contraction->inputs[0], contraction->inputs[1], add->inputs[1]};
    fusion.replace(g, *last, *fused_op, inputs, std::move(attrs));
    fusion.absorb(*contraction);
    if (with_relu) fusion.absorb(*add);
  }
  return fusion.apply(g);
}

}  // namespace kiln::passes
