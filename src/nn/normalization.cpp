// BatchNormalization and LayerNormalization.
#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn/normalization.h"
#include "kiln/reduce.h"

namespace kiln::nn {

namespace {

// `axis` of a rank-`rank` input, from the end when negative; `who` starts the error.
int64_t resolve_axis(int64_t axis, int rank, const std::string& who) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw InvalidArgument(fmt::format("{}: axis {} is out of range for inputs of rank {}", who, axis, rank));
  return a;
}

// Every axis of a rank-`rank` input but `keep`.
std::vector<int64_t> other_axes(int rank, int64_t keep) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != keep) axes.push_back(i);
  return axes;
}

// The features size of `input_shape` at `axis`: known, as the weights' shape.
int64_t features(const Shape& input_shape, int64_t axis, const std::string& who) {
  if (!input_shape.has_known_rank())
    throw InvalidArgument(fmt::format("{}: the inputs' rank must be known to build the layer", who));
  int64_t n = input_shape[resolve_axis(axis, input_shape.rank(), who)];
  if (n < 0)
    throw InvalidArgument(fmt::format("{}: the inputs' axis {} must be known to build the layer, got shape {}", who,
                                      axis, input_shape.to_string()));
  return n;
}

// A [features] tensor shaped to broadcast against rank-`rank` inputs along `axis`.
Tensor along(const Tensor& v, int rank, int64_t axis) {
  if (axis == rank - 1) return v;
  std::vector<int64_t> dims(static_cast<std::size_t>(rank), 1);
  dims[static_cast<std::size_t>(axis)] = v.shape()[0];
  return reshape(v, Shape(dims));
}

// x * inv + (beta - mean * inv) with inv = gamma / sqrt(variance + epsilon):
// tf.nn.batch_normalization's arithmetic, so the values match TF's.
Tensor normalize(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& gamma, const Tensor& beta,
                 double epsilon) {
  Tensor inv = rsqrt(variance + epsilon);
  if (gamma.defined()) inv = inv * gamma;
  Tensor shift = beta.defined() ? beta - mean * inv : -mean * inv;
  return x * inv + shift;
}

}  // namespace

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer("batch_normalization", std::move(options.name), std::move(options.input_shape), options.dtype),
      options_(std::move(options)) {
  if (!(options_.epsilon > 0))
    throw InvalidArgument(fmt::format("BatchNormalization '{}': epsilon must be positive, got {}", name(),
                                      options_.epsilon));
  if (!(options_.momentum >= 0 && options_.momentum <= 1))
    throw InvalidArgument(fmt::format("BatchNormalization '{}': momentum must be in [0, 1], got {}", name(),
                                      options_.momentum));
}

void BatchNormalization::build_weights(const Shape& input_shape) {
  Shape params{features(input_shape, options_.axis, describe())};
  if (options_.scale) gamma_ = add_weight("gamma", params, Init::Ones);
  if (options_.center) beta_ = add_weight("beta", params, Init::Zeros);
  moving_mean_ = add_weight("moving_mean", params, Init::Zeros, 0, 0, std::nullopt, /*trainable=*/false);
  moving_variance_ = add_weight("moving_variance", params, Init::Ones, 0, 0, std::nullopt, /*trainable=*/false);
}

Tensor BatchNormalization::call(const Tensor& x, bool training) {
  if (!x.shape().has_known_rank())
    throw InvalidArgument(fmt::format("{}: the inputs' rank must be known", describe()));
  const int rank = x.shape().rank();
  const int64_t axis = resolve_axis(options_.axis, rank, describe());
  if (int64_t n = x.shape()[axis]; n >= 0 && n != moving_mean_.shape()[0])
    throw InvalidArgument(fmt::format("{}: the inputs' axis {} has {} features but the layer was built for {}",
                                      describe(), options_.axis, n, moving_mean_.shape()[0]));
  auto b = [&](const Variable& v) { return v ? along(v.read_value(), rank, axis) : Tensor(); };
  if (!training) return normalize(x, b(moving_mean_), b(moving_variance_), b(gamma_), b(beta_), options_.epsilon);
  auto [mean, variance] = kiln::moments(x, other_axes(rank, axis), /*keepdims=*/true);
  const Shape params = moving_mean_.shape();
  const double decay = 1.0 - options_.momentum;
  moving_mean_.assign_sub((moving_mean_.read_value() - reshape(mean, params)) * decay);
  moving_variance_.assign_sub((moving_variance_.read_value() - reshape(variance, params)) * decay);
  return normalize(x, mean, variance, b(gamma_), b(beta_), options_.epsilon);
}

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer("layer_normalization", std::move(options.name), std::move(options.input_shape), options.dtype),
      options_(std::move(options)) {
  if (!(options_.epsilon > 0))
    throw InvalidArgument(fmt::format("LayerNormalization '{}': epsilon must be positive, got {}", name(),
                                      options_.epsilon));
}

void LayerNormalization::build_weights(const Shape& input_shape) {
  Shape params{features(input_shape, options_.axis, describe())};
  if (options_.scale) gamma_ = add_weight("gamma", params, Init::Ones);
  if (options_.center) beta_ = add_weight("beta", params, Init::Zeros);
}

Tensor LayerNormalization::call(const Tensor& x, bool) {
  if (!x.shape().has_known_rank())
    throw InvalidArgument(fmt::format("{}: the inputs' rank must be known", describe()));
  const int rank = x.shape().rank();
  const int64_t axis = resolve_axis(options_.axis, rank, describe());
  auto [mean, variance] = kiln::moments(x, Axes(axis), /*keepdims=*/true);
  auto b = [&](const Variable& v) { return v ? along(v.read_value(), rank, axis) : Tensor(); };
  return normalize(x, mean, variance, b(gamma_), b(beta_), options_.epsilon);
}

}  // namespace kiln::nn
