// Pool-gradient fusion: in a training step, max pooling after a relu has the
// gradient Select(Greater(y, 0), MaxPoolGrad(y, dy), 0), y the relu's output
// (Relu's gradient reads its output) and the pooling's input. Where nothing
// else reads the MaxPoolGrad, the Select becomes FusedMaxPoolGrad(y, dy)
// {activation="relu"}, which masks each band of the gradient while it is in
// cache instead of a second pass over the whole tensor (the Greater goes too
// when the Select was its only reader). Both zeros must be +0 of the dtype, as
// Relu's gradient makes them: the fused kernel writes +0.
// A SumToShapeOf of the Select's result down to its last dim (the bias
// gradient of the convolution before the relu) joins too, as the fused node's
// second output: the kernel sums each channel as it writes the gradient,
// instead of reading it all again (the bits are SumToShapeOf's).
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor_impl.h"
#include "exec/fused_pool_grad.h"
#include "ops/known_ops.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

// Whether `v` is a Const scalar +0 of `dtype` (float32, float64 or bfloat16:
// mixed_bfloat16's training step).
bool is_positive_zero(const Value& v, DType dtype) {
  const Tensor* t = const_value(*v.node);
  if (!t || t->dtype() != dtype || t->size() != 1) return false;
  // All bits clear: +0 alone (-0 has its sign bit).
  if (dtype == DType::Float32) return std::bit_cast<uint32_t>(t->item<float>()) == 0;
  if (dtype == DType::Float64) return std::bit_cast<uint64_t>(t->item<double>()) == 0;
  if (dtype == DType::BFloat16) return core::data_of<bfloat16_t>(*t)[0].bits == 0;
  return false;
}

// For each node, a SumToShapeOf that sums its output 0 down to its last dim
// (a bias gradient), or nullptr.
std::vector<Node*> bias_gradients(const graph::Graph& g, const Uses& uses) {
  std::vector<Node*> sums(g.nodes().size(), nullptr);
  for (const auto& node : g.nodes()) {
    Node* sum = node.get();
    if (sum->op != &ops::sum_to_shape_of_op() || sum->inputs.size() != 2 || uses.pinned[sum->id]) continue;
    const Value& from = sum->inputs[0];
    if (from.index != 0 || sums[from.node->id]) continue;
    const Shape &shape = from.node->outputs[0].shape, &to = sum->outputs[0].shape;
    const bool to_last_dim =
        shape.has_known_rank() && shape.rank() >= 1 && to.rank() == 1 && to[0] >= 0 && to[0] == shape[shape.rank() - 1];
    if (to_last_dim && sum->outputs[0].dtype == from.node->outputs[0].dtype) sums[from.node->id] = sum;
  }
  return sums;
}

}  // namespace

bool fuse_pool_gradients(graph::Graph& g) {
  const Uses uses(g);
  const std::vector<Node*> sums = bias_gradients(g, uses);
  ChainFusion fusion(g);
  for (const auto& node : g.nodes()) {
    Node* select = node.get();
    if (select->op != &ops::select_op() || select->inputs.size() != 3 || uses.pinned[select->id]) continue;
    Node* greater = select->inputs[0].node;
    Node* pool_grad = select->inputs[1].node;
    if (greater->op != &ops::greater_op() || pool_grad->op != &ops::max_pool_grad_op()) continue;
    if (uses.pinned[greater->id] || uses.pinned[pool_grad->id] || uses.count[pool_grad->id] != 1) continue;
    const DType dtype = pool_grad->outputs[0].dtype;
    const Value& y = pool_grad->inputs[0];
    if (greater->inputs.size() != 2 || greater->inputs[0] != y || !is_positive_zero(greater->inputs[1], dtype) ||
        !is_positive_zero(select->inputs[2], dtype))
      continue;
    // The Select's output is the pooling gradient's type (y, the condition's
    // shape, is the gradient's): nothing broadcasts.
    if (select->outputs[0].dtype != dtype || !(select->outputs[0].shape == pool_grad->outputs[0].shape)) continue;

    schema::Attrs attrs = pool_grad->attrs;
    attrs.set("activation", std::string("relu"));
    const std::array<Value, 2> inputs{y, pool_grad->inputs[1]};
    Node* sum = sums[select->id];
    std::vector<schema::TensorType> outputs{select->outputs[0]};
    if (sum) {
      attrs.set("bias_gradient", true);
      outputs.push_back(sum->outputs[0]);
    }
    fusion.replace(g, *select, exec::fused_max_pool_grad_op(), inputs, std::move(attrs), outputs);
    if (sum) fusion.take_over(*select, *sum, 1);
    fusion.absorb(*pool_grad);
    if (uses.count[greater->id] == 1) fusion.absorb(*greater);
  }
  return fusion.apply(g);
}

}  // namespace kiln::passes
