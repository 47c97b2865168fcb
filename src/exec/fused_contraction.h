#pragma once
// FusedMatMul(a, b, bias), FusedConv2D(input, filters, bias) and
// FusedDepthwiseConv2dNative(input, filter, bias): a matmul or convolution,
// a per-channel bias (BiasAdd) and optionally a relu as one op, made by the
// contraction pass. Attrs: the contraction's own, plus
// `activation` ("none" or "relu"); FusedConv2D may also have `max_pool`
// (true: a second output, the first pooled by 2x2 windows of stride 2, made
// by the convolution-pooling pass, passes/fuse_conv_pool.cpp).
//
// Each runs the contraction's own kernel (oneDNN for float32) into the
// output, then one pass over it that adds the bias (one float addition, as
// BiasAdd) and applies Relu's formula: the unfused chain's bits, with one
// pass over memory where it made two and no intermediate buffers. Neither the
// bias nor the relu is a oneDNN post-op: the binary_add post-op cost more
// than the pass (fused_contraction_op.cpp), and oneDNN's relu turns NaN into
// 0 and -0 into +0 where Kiln's keeps both.
#include "graph/graph.h"

namespace kiln::exec {

// Whether a FusedConv2D has the pooled second output.
inline bool has_max_pool(const schema::Attrs& attrs) { return attrs.has("max_pool") && attrs.get_bool("max_pool"); }

const detail::OpDef& fused_matmul_op();
const detail::OpDef& fused_conv2d_op();
const detail::OpDef& fused_depthwise_conv2d_op();

}  // namespace kiln::exec
