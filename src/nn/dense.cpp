// Dense: activation(x @ kernel + bias).
#include <fmt/format.h>

#include "kiln/error.h"
#include "kiln/nn/layers.h"

namespace kiln::nn {

Dense::Dense(int64_t units, DenseOptions options)
    : Layer("dense", std::move(options.name), std::move(options.input_shape), options.dtype),
      units_(units),
      activation_(std::move(options.activation)),
      use_bias_(options.use_bias),
      seed_(options.seed) {
  if (units <= 0) throw InvalidArgument(fmt::format("Dense '{}': units must be positive, got {}", name(), units));
}

Shape Dense::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 2, /*at_least=*/true);
  Shape out = input_shape;
  out[out.rank() - 1] = units_;
  return out;
}

void Dense::build_weights(const Shape& input_shape) {
  check_rank(input_shape, 2, /*at_least=*/true);
  int64_t in = input_shape[input_shape.rank() - 1];
  if (in < 0)
    throw InvalidArgument(fmt::format("{}: the last dim of the inputs must be known to build the kernel, got shape {}",
                                      describe(), input_shape.to_string()));
  kernel_ = add_weight("kernel", Shape{in, units_}, Init::GlorotUniform, in, units_, seed_);
  if (use_bias_) bias_ = add_weight("bias", Shape{units_}, Init::Zeros);
}

Tensor Dense::call(const Tensor& x, bool) {
  const Shape& s = x.shape();
  check_rank(s, 2, /*at_least=*/true);
  int64_t in = kernel_.shape()[0];
  if (s.has_known_rank() && s[s.rank() - 1] >= 0 && s[s.rank() - 1] != in)
    throw InvalidArgument(fmt::format("{}: the inputs' last dim is {} but the layer was built for {} (shape {})",
                                      describe(), s[s.rank() - 1], in, build_input_shape().to_string()));
  Tensor y = matmul(x, kernel_.read_value());
  if (use_bias_) y = bias_add(y, bias_.read_value());
  return activation_(y);
}

}  // namespace kiln::nn
