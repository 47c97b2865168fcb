#pragma once
// FusedMatMul(a, b, bias), FusedConv2D(input, filters, bias) and
// FusedDepthwiseConv2dNative(input, filter, bias): a matmul or convolution,
// a per-channel bias (BiasAdd) and optionally a relu as one op, made by the
// contraction pass. Attrs: the contraction's own, plus
// `activation` ("none" or "relu").
//
// MatMul and Conv2D in float32 run one oneDNN primitive whose binary_add
// post-op adds the bias to each finished sum (one float addition, as
// BiasAdd), then Relu's own loop in place: oneDNN's relu turns NaN into 0 and
// -0 into +0, Kiln's keeps both, so it cannot be a post-op. Other dtypes, and
// shapes oneDNN declines, run the three ops' kernels one after the other on
// the output buffer. The depthwise convolution runs its own kernel, then the
// bias and relu in one pass. Either way the bits are those of the unfused ops.
#include "graph/graph.h"

namespace kiln::exec {

const detail::OpDef& fused_matmul_op();
const detail::OpDef& fused_conv2d_op();
const detail::OpDef& fused_depthwise_conv2d_op();

}  // namespace kiln::exec
