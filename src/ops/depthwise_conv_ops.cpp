// DepthwiseConv2dNative and its two gradients, as tf.nn.depthwise_conv2d:
// input [N, H, W, C], filter [KH, KW, C, M]; input channel c is convolved
// with filter[:, :, c, :] alone, giving output channels c * M + m. That is a
// grouped convolution with one group per input channel, whose filters
// [KH, KW, C / C, C * M] are the same buffer, so the three ops run Conv2D's
// kernels (oneDNN's grouped primitives for float32, the grouped loops for
// float64) with groups = C. The backprops take (input, filter, dy) and read
// only the shape of the tensor whose gradient they compute, as Conv2D's.
#include <algorithm>

#include "kiln/nn_ops.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

Tensor backprop_input(const Tensor& input, const Tensor& filter, const Tensor& dy, const schema::Attrs& attrs);
Tensor backprop_filter(const Tensor& input, const Tensor& filter, const Tensor& dy, const schema::Attrs& attrs);

// The checks of input and filter (inputs 0 and 1) with TF's messages, and
// the output shape.
Shape infer_depthwise_output(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  const Shape& f = c.shape(1);
  DType di = c.dtype(0), df = c.dtype(1);
  if (di != df)
    c.fail("input and filter must have the same dtype, got input: {} and filter: {}", dtype_name(di),
           dtype_name(df));
  if (!is_floating(di)) c.fail("dtype must be float32 or float64, got {}", dtype_name(di));
  if (in.has_known_rank() && in.rank() != 4)
    c.fail("input must be 4-dimensional [batch, height, width, in_channels], got shape {}", in.to_string());
  if (f.has_known_rank() && f.rank() != 4)
    c.fail("filter must be 4-dimensional [filter_height, filter_width, in_channels, channel_multiplier], got shape {}",
           f.to_string());
  const bool fk = f.has_known_rank();
  const int64_t kh = fk ? f[0] : -1, kw = fk ? f[1] : -1;
  if (kh == 0 || kw == 0) c.fail("filter must have a positive height and width, got shape {}", f.to_string());
  const int64_t depth = in.has_known_rank() ? in[3] : -1, filter_depth = fk ? f[2] : -1;
  if (depth >= 0 && filter_depth >= 0 && depth != filter_depth)
    c.fail("input and filter must have the same depth: {} vs {} (input shape {}, filter shape {})", depth,
           filter_depth, in.to_string(), f.to_string());
  const int64_t channels = std::max(depth, filter_depth), multiplier = fk ? f[3] : -1;
  if (channels >= 0 && multiplier >= 0 && static_cast<__int128>(channels) * multiplier > (__int128{1} << 62))
    c.fail("in_channels * channel_multiplier, {} * {}, is larger than 2^62", channels, multiplier);
  Window2D g = infer_window(c, in, kh, kw, /*has_dilations=*/true, "filter shape " + f.to_string());
  return Shape{in.has_known_rank() ? in[0] : -1, g.h.out, g.w.out,
               channels >= 0 && multiplier >= 0 ? channels * multiplier : -1};
}

void depthwise_infer(schema::InferContext& c) { c.add_output(c.dtype(0), infer_depthwise_output(c)); }

void backprop_input_infer(schema::InferContext& c) {
  check_conv_dy(c, infer_depthwise_output(c));
  Shape out = c.shape(0).has_known_rank() ? c.shape(0) : Shape{-1, -1, -1, -1};
  out[0] = known_or(out[0], dim_or_unknown(c.shape(2), 0));
  out[3] = known_or(out[3], dim_or_unknown(c.shape(1), 2));
  c.add_output(c.dtype(0), out);
}

void backprop_filter_infer(schema::InferContext& c) {
  check_conv_dy(c, infer_depthwise_output(c));
  Shape out = c.shape(1).has_known_rank() ? c.shape(1) : Shape{-1, -1, -1, -1};
  const int64_t channels = dim_or_unknown(c.shape(0), 3), dy_channels = dim_or_unknown(c.shape(2), 3);
  out[2] = known_or(out[2], channels);
  if (out[3] < 0 && channels > 0 && dy_channels >= 0) out[3] = dy_channels / channels;
  c.add_output(c.dtype(0), out);
}

ConvDims depthwise_dims(const schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& f = c.in_shape(1);
  return ConvDims{in[0], in[1], in[2], in[3], in[3] * f[3], kernel_window(c.attrs, in, f[0], f[1]),
                  /*groups=*/std::max<int64_t>(in[3], 1)};
}

void depthwise_kernel(schema::KernelContext& c) { conv2d_forward(c, depthwise_dims(c)); }
void backprop_input_kernel(schema::KernelContext& c) { conv2d_backprop_input_kernel(c, depthwise_dims(c)); }
void backprop_filter_kernel(schema::KernelContext& c) { conv2d_backprop_filter_kernel(c, depthwise_dims(c)); }

// (input, filter, dy): float32 and float64, strides, VALID, dilations, a
// multiplier of 1 and more (the last in float32 too: oneDNN's grouped
// primitives, and a case onnxruntime, which lacks float64 Conv, can check).
std::vector<schema::OpSample> backprop_samples() {
  constexpr DType f32 = DType::Float32, f64 = DType::Float64;
  return {conv_backprop_sample(f32, {1, 5, 5, 2}, {3, 3, 2, 2}, {1, 5, 5, 4}, 1, "SAME", 1),
          conv_backprop_sample(f64, {2, 5, 6, 3}, {3, 2, 3, 1}, {2, 2, 5, 3}, {2, 1}, "VALID", 1),
          conv_backprop_sample(f64, {1, 6, 6, 2}, {2, 2, 2, 3}, {1, 3, 3, 6}, 2, "SAME", 2),
          conv_backprop_sample(f32, {2, 7, 6, 3}, {2, 3, 3, 2}, {2, 3, 2, 6}, {2, 1}, "VALID", {1, 2})};
}

std::vector<schema::OpSample> depthwise_samples() {
  std::vector<schema::OpSample> samples = backprop_samples();
  for (schema::OpSample& s : samples) s.inputs.pop_back();  // dy
  return samples;
}

Tensor depthwise_with(const Tensor& x, const Tensor& f, const schema::Attrs& attrs) {
  return nn::depthwise_conv2d(x, f, attrs.get_ints("strides"), attrs.get_string("padding"),
                              attrs.get_ints("dilations"));
}
constexpr ConvOps kDepthwiseOps{depthwise_with, backprop_input, backprop_filter};

void depthwise_gradient(schema::GradContext& c) { conv_gradient(c, kDepthwiseOps); }
void backprop_input_gradient(schema::GradContext& c) { conv_backprop_input_gradient(c, kDepthwiseOps); }
void backprop_filter_gradient(schema::GradContext& c) { conv_backprop_filter_gradient(c, kDepthwiseOps); }

constexpr detail::OpDef kDepthwiseConv2dNative{.name = "DepthwiseConv2dNative", .infer = depthwise_infer,
                                               .kernel = depthwise_kernel,
                                               .flags = schema::kCostlyToRecompute | schema::kShapeFromShapes,
                                               .samples = depthwise_samples, .gradient = depthwise_gradient};
constexpr detail::OpDef kBackpropInput{.name = "DepthwiseConv2dNativeBackpropInput", .infer = backprop_input_infer,
                                       .kernel = backprop_input_kernel, .flags = schema::kCostlyToRecompute,
                                       .samples = backprop_samples, .gradient = backprop_input_gradient};
constexpr detail::OpDef kBackpropFilter{.name = "DepthwiseConv2dNativeBackpropFilter", .infer = backprop_filter_infer,
                                        .kernel = backprop_filter_kernel, .flags = schema::kCostlyToRecompute,
                                        .samples = backprop_samples, .gradient = backprop_filter_gradient};

Tensor backprop_input(const Tensor& input, const Tensor& filter, const Tensor& dy, const schema::Attrs& attrs) {
  const Tensor in[] = {input, filter, dy};
  return runtime::dispatch1(kBackpropInput, in, schema::Attrs(attrs), SourceLocation::current());
}

Tensor backprop_filter(const Tensor& input, const Tensor& filter, const Tensor& dy, const schema::Attrs& attrs) {
  const Tensor in[] = {input, filter, dy};
  return runtime::dispatch1(kBackpropFilter, in, schema::Attrs(attrs), SourceLocation::current());
}

}  // namespace

void register_depthwise_conv_ops(schema::OpRegistry& r) {
  r.add(kDepthwiseConv2dNative);
  r.add(kBackpropInput);
  r.add(kBackpropFilter);
}

}  // namespace ops

namespace nn {

Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, const Size2D& strides, const PaddingArg& padding,
                        const Size2D& dilations, SourceLocation loc) {
  const Tensor in[] = {input, filter};
  return runtime::dispatch1(ops::kDepthwiseConv2dNative, in, ops::conv_attrs(strides, padding, dilations), loc);
}

}  // namespace nn
}  // namespace kiln

// The handle the contraction pass compares nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& depthwise_conv2d_op() { return ops::kDepthwiseConv2dNative; }
}  // namespace kiln::ops
