// Conv2D and the 2-D pooling layers.
#include <fmt/format.h>

#include "kiln/error.h"
#include "kiln/nn/layers.h"
#include "nn/spatial.h"

namespace kiln::nn {

using namespace layer_detail;

Conv2D::Conv2D(int64_t filters, Size2D kernel_size, Conv2DOptions options)
    : Layer("conv2d", std::move(options.name), std::move(options.input_shape), options.dtype),
      filters_(filters),
      activation_(std::move(options.activation)),
      use_bias_(options.use_bias),
      seed_(options.seed) {
  std::string who = fmt::format("Conv2D '{}'", name());
  if (filters <= 0) throw InvalidArgument(fmt::format("{}: filters must be positive, got {}", who, filters));
  std::tie(kh_, kw_) = size2d(kernel_size, who, "kernel_size");
  std::tie(sh_, sw_) = size2d(options.strides, who, "strides");
  same_ = is_same_padding(options.padding, who);
}

Shape Conv2D::compute_output_shape(const Shape& input_shape) const {
  return output_shape_2d(input_shape, kh_, kw_, sh_, sw_, same_, filters_, describe());
}

void Conv2D::build_weights(const Shape& input_shape) {
  check_rank(input_shape, 4);
  int64_t in = input_shape[3];
  if (in < 0)
    throw InvalidArgument(fmt::format("{}: the channel dim of the inputs must be known to build the kernel, got shape {}",
                                      describe(), input_shape.to_string()));
  kernel_ = add_weight("kernel", Shape{kh_, kw_, in, filters_}, Init::GlorotUniform, kh_ * kw_ * in,
                       kh_ * kw_ * filters_, seed_);
  if (use_bias_) bias_ = add_weight("bias", Shape{filters_}, Init::Zeros);
}

Tensor Conv2D::call(const Tensor& x, bool) {
  const Shape& s = x.shape();
  check_rank(s, 4);
  int64_t in = kernel_.shape()[2];
  if (s.has_known_rank() && s[3] >= 0 && s[3] != in)
    throw InvalidArgument(fmt::format("{}: the inputs have {} channels but the layer was built for {} (shape {})",
                                      describe(), s[3], in, build_input_shape().to_string()));
  Tensor y = conv2d(x, kernel_.read_value(), {sh_, sw_}, same_ ? Padding::Same : Padding::Valid);
  if (use_bias_) y = bias_add(y, bias_.read_value());
  return activation_(y);
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
