// Layers without weights: Flatten, Reshape, Dropout, and the activation
// layers ReLU, Softmax, Activation, LeakyReLU, ELU.
#include <fmt/format.h>

#include <cmath>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn/layers.h"
#include "kiln/nn_ops.h"
#include "kiln/random.h"

namespace kiln::nn {

namespace {
// The product of dims [1, rank); -1 when one is unknown.
int64_t non_batch_elements(const Shape& s) {
  int64_t n = 1;
  for (int i = 1; i < s.rank(); ++i) {
    if (s[i] < 0) return -1;
    n *= s[i];
  }
  return n;
}
}  // namespace

Flatten::Flatten(LayerOptions options) : Layer("flatten", std::move(options.name), std::move(options.input_shape)) {}

Shape Flatten::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 1, /*at_least=*/true);
  return Shape{input_shape[0], non_batch_elements(input_shape)};
}

Tensor Flatten::call(const Tensor& x, bool) {
  Shape out = compute_output_shape(x.shape());
  if (out[0] < 0 && out[1] < 0)
    throw InvalidArgument(fmt::format("{}: cannot flatten inputs of shape {}: the batch dim or the others must be known",
                                      describe(), x.shape().to_string()));
  return reshape(x, out[0] < 0 ? Shape{-1, out[1]} : Shape{out[0], -1});
}

Reshape::Reshape(Shape target_shape, LayerOptions options)
    : Layer("reshape", std::move(options.name), std::move(options.input_shape)), target_(target_shape) {
  int unknown = 0;
  for (int64_t d : target_.dims()) {
    if (d < -1 || d == 0)
      throw InvalidArgument(fmt::format("Reshape '{}': target dims must be positive or -1, got {}", name(),
                                        target_.to_string()));
    unknown += d == -1;
  }
  if (unknown > 1)
    throw InvalidArgument(fmt::format("Reshape '{}': at most one target dim may be -1, got {}", name(),
                                      target_.to_string()));
}

Shape Reshape::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 1, /*at_least=*/true);
  int64_t in = non_batch_elements(input_shape);
  int64_t known = 1;
  for (int64_t d : target_.dims())
    if (d > 0) known *= d;
  Shape out{input_shape[0]};
  for (int64_t d : target_.dims()) {
    if (d == -1) {
      if (in >= 0 && in % known != 0)
        throw InvalidArgument(fmt::format("{}: cannot reshape {} elements per sample into {}", describe(), in,
                                          target_.to_string()));
      out.push_back(in < 0 ? -1 : in / known);
    } else {
      out.push_back(d);
    }
  }
  if (in >= 0 && non_batch_elements(out) != in)
    throw InvalidArgument(fmt::format("{}: cannot reshape inputs of shape {} ({} elements per sample) into {}",
                                      describe(), input_shape.to_string(), in, target_.to_string()));
  return out;
}

Tensor Reshape::call(const Tensor& x, bool) {
  Shape out = compute_output_shape(x.shape());
  int unknown = 0;
  for (int64_t d : out.dims()) unknown += d < 0;
  if (unknown > 1)
    throw InvalidArgument(fmt::format("{}: cannot reshape inputs of shape {} into {}: too many unknown dims",
                                      describe(), x.shape().to_string(), target_.to_string()));
  return reshape(x, out);
}

Dropout::Dropout(double rate, LayerOptions options)
    : Layer("dropout", std::move(options.name), std::move(options.input_shape)), rate_(rate) {
  if (!(rate >= 0 && rate < 1))
    throw InvalidArgument(fmt::format("Dropout '{}': rate must be in [0, 1), got {}", name(), rate));
}

Tensor dropout(const Tensor& x, double rate) {
  if (!(rate >= 0 && rate < 1)) throw InvalidArgument(fmt::format("dropout: rate must be in [0, 1), got {}", rate));
  if (rate == 0) return x;
  // uniform_like: the batch dim may be known only when a traced graph runs.
  Tensor keep = greater_equal(random::uniform_like(x), rate);
  return where(keep, x * (1.0 / (1.0 - rate)), 0);
}

Tensor Dropout::call(const Tensor& x, bool training) { return training ? dropout(x, rate_) : x; }

ReLU::ReLU(LayerOptions options) : Layer("re_lu", std::move(options.name), std::move(options.input_shape)) {}

Tensor ReLU::call(const Tensor& x, bool) { return relu(x); }

Softmax::Softmax(int64_t axis, LayerOptions options)
    : Layer("softmax", std::move(options.name), std::move(options.input_shape)), axis_(axis) {}

Tensor Softmax::call(const Tensor& x, bool) { return softmax(x, axis_); }

ActivationLayer::ActivationLayer(Activation activation, LayerOptions options)
    : Layer("activation", std::move(options.name), std::move(options.input_shape)),
      activation_(std::move(activation)) {}

Tensor ActivationLayer::call(const Tensor& x, bool) { return activation_(x); }

AlphaActivationLayer::AlphaActivationLayer(std::string_view kind, std::string_view layer, double alpha,
                                           LayerOptions options)
    : Layer(kind, std::move(options.name), std::move(options.input_shape)), alpha_(alpha) {
  if (!std::isfinite(alpha))
    throw InvalidArgument(fmt::format("{} '{}': alpha must be a finite number, got {}", layer, name(), alpha));
}

LeakyReLU::LeakyReLU(double alpha, LayerOptions options)
    : AlphaActivationLayer("leaky_re_lu", "LeakyReLU", alpha, std::move(options)) {}

Tensor LeakyReLU::call(const Tensor& x, bool) { return leaky_relu(x, alpha()); }

ELU::ELU(double alpha, LayerOptions options) : AlphaActivationLayer("elu", "ELU", alpha, std::move(options)) {}

Tensor ELU::call(const Tensor& x, bool) {
  Tensor y = elu(x);
  return alpha() == 1.0 ? y : where(greater(x, 0), x, y * alpha());
}

}  // namespace kiln::nn
