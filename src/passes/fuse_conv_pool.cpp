// Convolution-pooling fusion: a float32 MaxPool with 2x2 windows of stride 2
// and VALID padding, reading a FusedConv2D (made by the contraction pass)
// whose output tiles into its windows (known, even height and width),
// becomes that node's second output (`max_pool=true`): its kernel pools each
// pair of image rows right after its bias and relu pass has written them,
// while they are in cache, instead of MaxPool reading the whole output back
// (conv1's is 5 MB at MNIST's batch 50). The convolution's output stays a
// value: the pooling's gradient reads it. The bits are MaxPool's
// (exec/fused_contraction_op.cpp).
#include <array>
#include <string>
#include <vector>

#include "exec/fused_contraction.h"
#include "ops/known_ops.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

bool windows_2x2_valid(const schema::Attrs& attrs) {
  const std::vector<int64_t> two{2, 2};
  return attrs.has("ksize") && attrs.get_ints("ksize") == two && attrs.has("strides") &&
         attrs.get_ints("strides") == two && attrs.has("padding") && attrs.get_string("padding") == "VALID";
}

bool tiles_into_2x2(const schema::TensorType& t) {
  const Shape& s = t.shape;
  return t.dtype == DType::Float32 && s.has_known_rank() && s.rank() == 4 && s[1] >= 2 && s[1] % 2 == 0 &&
         s[2] >= 2 && s[2] % 2 == 0;
}

}  // namespace

bool fuse_conv_pools(graph::Graph& g) {
  const Uses uses(g);
  ChainFusion fusion(g);
  // One pooled output per convolution: a second MaxPool of it stays.
  std::vector<char> pooled(g.nodes().size(), 0);
  for (const auto& node : g.nodes()) {
    Node* pool = node.get();
    if (pool->op != &ops::max_pool_op() || pool->inputs.size() != 1 || uses.pinned[pool->id]) continue;
    Node* conv = pool->inputs[0].node;
    if (conv->op != &exec::fused_conv2d_op() || pool->inputs[0].index != 0 || uses.pinned[conv->id] ||
        pooled[conv->id] || exec::has_max_pool(conv->attrs))
      continue;
    if (!windows_2x2_valid(pool->attrs) || !tiles_into_2x2(conv->outputs[0])) continue;
    schema::Attrs attrs = conv->attrs;
    attrs.set("max_pool", true);
    const std::array<schema::TensorType, 2> outputs{conv->outputs[0], pool->outputs[0]};
    fusion.replace(g, *conv, exec::fused_conv2d_op(), conv->inputs, std::move(attrs), outputs,
                   conv->name + "_" + pool->name);
    fusion.take_over(*conv, *pool, 1);
    pooled[conv->id] = 1;
  }
  return fusion.apply(g);
}

}  // namespace kiln::passes
