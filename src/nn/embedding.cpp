// Embedding: rows of a trainable table picked by integer indices.
#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn/layers.h"
#include "kiln/random.h"

namespace kiln::nn {

Embedding::Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options)
    : Layer("embedding", std::move(options.name), std::move(options.input_shape), options.dtype),
      input_dim_(input_dim),
      output_dim_(output_dim),
      seed_(options.seed) {
  if (input_dim <= 0 || output_dim <= 0)
    throw InvalidArgument(fmt::format(
        "Embedding '{}': both input_dim and output_dim should be positive, got input_dim={} and output_dim={}", name(),
        input_dim, output_dim));
}

Shape Embedding::compute_output_shape(const Shape& input_shape) const {
  if (!input_shape.has_known_rank()) return Shape::unknown_rank();
  Shape out = input_shape;
  out.push_back(output_dim_);
  return out;
}

void Embedding::build_weights(const Shape&) {
  const Shape shape{input_dim_, output_dim_};
  // Keras' "uniform" initializer: U(-0.05, 0.05).
  embeddings_ = add_variable("embeddings", [&] {
    if (seed_) return random::stateless_uniform(shape, *seed_, -0.05, 0.05, dtype());
    return random::uniform(shape, -0.05, 0.05, dtype());
  });
}

Tensor Embedding::call(const Tensor& x, bool) {
  // Float indices (Keras feeds them too) are truncated, as Keras' cast to int32.
  Tensor indices = is_floating(x.dtype()) || x.dtype() == DType::Bool ? cast(x, DType::Int32) : x;
  if (!is_integer(indices.dtype()))
    throw InvalidArgument(fmt::format("{}: the inputs must be integer indices, got {}", describe(),
                                      dtype_name(x.dtype())));
  return gather(embeddings_.read_value(), indices, 0);
}

}  // namespace kiln::nn
