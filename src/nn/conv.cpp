// Conv2D, Conv2DTranspose, DepthwiseConv2D and the 2-D pooling layers.
#include <algorithm>

#include <fmt/format.h>

#include "kiln/error.h"
#include "kiln/nn/layers.h"
#include "nn/spatial.h"

namespace kiln::nn {

Conv2D::Conv2D(int64_t filters, Size2D kernel_size, Conv2DOptions options)
    : Conv2D("conv2d", "Conv2D", filters, kernel_size, std::move(options)) {}

Conv2D::Conv2D(std::string_view kind, std::string_view label, int64_t filters, Size2D kernel_size,
               Conv2DOptions options, std::string_view filters_arg)
    : Layer(kind, std::move(options.name), std::move(options.input_shape), options.dtype),
      filters_(filters),
      activation_(std::move(options.activation)),
      use_bias_(options.use_bias),
      seed_(options.seed) {
  std::string who = fmt::format("{} '{}'", label, name());
  if (filters <= 0) throw InvalidArgument(fmt::format("{}: {} must be positive, got {}", who, filters_arg, filters));
  std::tie(kh_, kw_) = size2d(kernel_size, who, "kernel_size");
  std::tie(sh_, sw_) = size2d(options.strides, who, "strides");
  same_ = is_same_padding(options.padding, who);
}

Shape Conv2D::compute_output_shape(const Shape& input_shape) const {
  return output_shape_2d(input_shape, kh_, kw_, sh_, sw_, same_,
                         output_channels(input_shape.rank() == 4 ? input_shape[3] : None), describe());
}

void Conv2D::build_weights(const Shape& input_shape) {
  check_rank(input_shape, 4);
  int64_t in = input_shape[3];
  if (in < 0)
    throw InvalidArgument(fmt::format("{}: the channel dim of the inputs must be known to build the kernel, got shape {}",
                                      describe(), input_shape.to_string()));
  // Glorot's fans from the kernel's shape, as Keras: receptive field times its last two dims.
  Shape shape = kernel_shape(in);
  kernel_ = add_weight(kernel_name(), shape, Init::GlorotUniform, kh_ * kw_ * shape[2], kh_ * kw_ * shape[3], seed_);
  if (use_bias_) bias_ = add_weight("bias", Shape{output_channels(in)}, Init::Zeros);
}

Tensor Conv2D::call(const Tensor& x, bool) {
  const Shape& s = x.shape();
  check_rank(s, 4);
  int64_t in = kernel_.shape()[input_channels_axis()];
  if (s.has_known_rank() && s[3] >= 0 && s[3] != in)
    throw InvalidArgument(fmt::format("{}: the inputs have {} channels but the layer was built for {} (shape {})",
                                      describe(), s[3], in, build_input_shape().to_string()));
  Tensor y = convolve(x, kernel_.read_value());
  if (use_bias_) y = bias_add(y, bias_.read_value());
  return activation_(y);
}

Tensor Conv2D::convolve(const Tensor& x, const Tensor& kernel) const {
  return conv2d(x, kernel, {sh_, sw_}, same_ ? Padding::Same : Padding::Valid);
}

Conv2DTranspose::Conv2DTranspose(int64_t filters, Size2D kernel_size, Conv2DOptions options)
    : Conv2D("conv2d_transpose", "Conv2DTranspose", filters, kernel_size, std::move(options)) {}

namespace {
int64_t transposed_length(int64_t in, int64_t k, int64_t stride, bool same) {
  if (in < 0) return None;
  return same ? in * stride : in * stride + std::max<int64_t>(k - stride, 0);
}
}  // namespace

Shape Conv2DTranspose::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 4);
  return Shape{input_shape[0], transposed_length(input_shape[1], kh_, sh_, same_),
               transposed_length(input_shape[2], kw_, sw_, same_), filters_};
}

Tensor Conv2DTranspose::convolve(const Tensor& x, const Tensor& kernel) const {
  return conv2d_transpose(x, kernel, compute_output_shape(x.shape()), {sh_, sw_},
                          same_ ? Padding::Same : Padding::Valid);
}

DepthwiseConv2D::DepthwiseConv2D(Size2D kernel_size, DepthwiseConv2DOptions options)
    : Conv2D("depthwise_conv2d", "DepthwiseConv2D", options.depth_multiplier, kernel_size,
             Conv2DOptions{.strides = std::move(options.strides),
                           .padding = std::move(options.padding),
                           .activation = std::move(options.activation),
                           .use_bias = options.use_bias,
                           .input_shape = std::move(options.input_shape),
                           .name = std::move(options.name),
                           .seed = options.seed,
                           .dtype = options.dtype},
             "depth_multiplier") {}

Tensor DepthwiseConv2D::convolve(const Tensor& x, const Tensor& kernel) const {
  return depthwise_conv2d(x, kernel, {sh_, sw_}, same_ ? Padding::Same : Padding::Valid);
}

Pool2D::Pool2D(std::string_view kind, std::string_view label, Size2D pool_size, Pool2DOptions options)
    : Layer(kind, std::move(options.name), std::move(options.input_shape)) {
  std::string who = fmt::format("{} '{}'", label, name());
  std::tie(ph_, pw_) = size2d(pool_size, who, "pool_size");
  if (options.strides) std::tie(sh_, sw_) = size2d(*options.strides, who, "strides");
  else sh_ = ph_, sw_ = pw_;
  same_ = is_same_padding(options.padding, who);
}

Shape Pool2D::compute_output_shape(const Shape& input_shape) const {
  return output_shape_2d(input_shape, ph_, pw_, sh_, sw_, same_, input_shape.rank() == 4 ? input_shape[3] : None,
                         describe());
}

MaxPool2D::MaxPool2D(Size2D pool_size, Pool2DOptions options)
    : Pool2D("max_pooling2d", "MaxPooling2D", pool_size, std::move(options)) {}

Tensor MaxPool2D::call(const Tensor& x, bool) {
  check_rank(x.shape(), 4);
  return max_pool2d(x, window(), strides(), padding());
}

AvgPool2D::AvgPool2D(Size2D pool_size, Pool2DOptions options)
    : Pool2D("average_pooling2d", "AveragePooling2D", pool_size, std::move(options)) {}

Tensor AvgPool2D::call(const Tensor& x, bool) {
  check_rank(x.shape(), 4);
  return avg_pool2d(x, window(), strides(), padding());
}

}  // namespace kiln::nn
