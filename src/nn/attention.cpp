// MultiHeadAttention: projections, scaled dot-product attention per head,
// masking, dropout and the output projection.
#include "kiln/nn/attention.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn/layers.h"
#include "kiln/nn_ops.h"
#include "kiln/reduce.h"

namespace kiln::nn {

namespace {

// Keras' _large_compatible_negative for float32 and float64: added to the
// masked scores, it leaves them exp() == 0 after the softmax's max shift.
constexpr double kMaskedScore = -1e9;

int64_t last_dim(const Shape& shape) { return shape.rank() > 0 ? shape[shape.rank() - 1] : -1; }

// Running 1-based positions along `axis` of x's [batch, positions, 1] slice:
// the causal mask compares them, so the sequence lengths may be unknown until
// a traced graph runs.
Tensor positions(const Tensor& x) { return cumsum(ones_like(slice(x, {0, 0, 0}, {-1, -1, 1}), DType::Int32), 1); }

}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options)
    : Layer("multi_head_attention", std::move(options.name), std::nullopt, options.dtype),
      num_heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(options.value_dim.value_or(key_dim)),
      options_(std::move(options)) {
  if (num_heads_ <= 0 || key_dim_ <= 0 || value_dim_ <= 0)
    throw InvalidArgument(fmt::format("{}: num_heads, key_dim and value_dim must be positive, got {}, {} and {}",
                                      describe(), num_heads_, key_dim_, value_dim_));
  if (!(options_.dropout >= 0 && options_.dropout < 1))
    throw InvalidArgument(fmt::format("{}: dropout must be in [0, 1), got {}", describe(), options_.dropout));
  if (options_.output_shape && *options_.output_shape <= 0)
    throw InvalidArgument(fmt::format("{}: output_shape must be positive, got {}", describe(), *options_.output_shape));
  const std::vector<int64_t>& axes = options_.attention_axes;
  if (!axes.empty() && !(axes.size() == 1 && (axes[0] == 1 || axes[0] == -2)))
    throw InvalidArgument(fmt::format("{}: attention over the sequence axis only is supported (attention_axes "
                                      "empty, {{1}} or {{-2}} for [batch, sequence, features] inputs), got {{{}}}",
                                      describe(), fmt::join(axes, ", ")));
}

Shape MultiHeadAttention::compute_output_shape(const Shape& query_shape) const {
  check_rank(query_shape, 3);
  Shape out = query_shape;
  out[2] = options_.output_shape.value_or(query_shape[2]);
  return out;
}

void MultiHeadAttention::build(const Shape& query_shape, const Shape& value_shape,
                               const std::optional<Shape>& key_shape) {
  value_shape_ = value_shape;
  key_shape_ = key_shape.value_or(value_shape);
  Layer::build(query_shape);
}

void MultiHeadAttention::build_weights(const Shape& query_shape) {
  const Shape value_shape = value_shape_.value_or(query_shape), key_shape = key_shape_.value_or(value_shape);
  for (auto [what, shape] : {std::pair{"query", &query_shape}, {"value", &value_shape}, {"key", &key_shape}}) {
    check_rank(*shape, 3);
    if (last_dim(*shape) < 0)
      throw InvalidArgument(fmt::format("{}: the {}'s last dim must be known to build the layer, got shape {}",
                                        describe(), what, shape->to_string()));
  }
  const int64_t out_dim = options_.output_shape.value_or(last_dim(query_shape));
  auto seed = [&](uint64_t k) { return options_.seed ? std::optional(*options_.seed + k) : std::nullopt; };
  // An EinsumDense kernel [features, heads, dim]: Keras' fans for rank 3
  // count the leading dims as the receptive field.
  auto input_kernel = [&](const char* scope, const Shape& input, int64_t dim, uint64_t k, Variable& kernel,
                          Variable& bias) {
    const int64_t features = last_dim(input);
    kernel = add_weight(fmt::format("{}/kernel", scope), Shape{features, num_heads_, dim}, Init::GlorotUniform,
                        num_heads_ * features, dim * features, seed(k));
    if (options_.use_bias) bias = add_weight(fmt::format("{}/bias", scope), Shape{num_heads_, dim}, Init::Zeros);
  };
  input_kernel("query", query_shape, key_dim_, 0, query_kernel_, query_bias_);
  input_kernel("key", key_shape, key_dim_, 1, key_kernel_, key_bias_);
  input_kernel("value", value_shape, value_dim_, 2, value_kernel_, value_bias_);
  output_kernel_ = add_weight("attention_output/kernel", Shape{num_heads_, value_dim_, out_dim}, Init::GlorotUniform,
                              value_dim_ * num_heads_, out_dim * num_heads_, seed(3));
  if (options_.use_bias) output_bias_ = add_weight("attention_output/bias", Shape{out_dim}, Init::Zeros);
  value_shape_.reset();
  key_shape_.reset();
}

Tensor MultiHeadAttention::call(const Tensor&, bool) {
  throw InvalidArgument(fmt::format("{}: a call needs a query and a value: mha(query, value) (mha(x, x) for "
                                    "self-attention)",
                                    describe()));
}

void MultiHeadAttention::check_inputs(const Tensor& query, const Tensor& value, const Tensor& key) const {
  for (auto [what, t, kernel] : {std::tuple{"query", &query, &query_kernel_}, {"value", &value, &value_kernel_},
                                 {"key", &key, &key_kernel_}}) {
    if (!t->defined()) throw InvalidArgument(fmt::format("{}: the {} is a null tensor", describe(), what));
    const Shape& s = t->shape();
    if (!s.has_known_rank() || s.rank() != 3)
      throw InvalidArgument(fmt::format("{}: the {} must have rank 3 [batch, sequence, features], got shape {}",
                                        describe(), what, s.to_string()));
    if (!*kernel) continue;  // not built yet
    const int64_t built_for = kernel->shape()[0];
    if (s[2] >= 0 && s[2] != built_for)
      throw InvalidArgument(fmt::format("{}: the {}'s last dim is {} but the layer was built for {}", describe(),
                                        what, s[2], built_for));
  }
}

Tensor MultiHeadAttention::project(const Tensor& x, const Variable& kernel, const Variable& bias) const {
  // [batch, 1, positions, features] @ [heads, features, dim]: the batch dims
  // broadcast to [batch, heads], so no reshape needs the (maybe unknown) batch
  // and sequence sizes.
  Tensor y = matmul(expand_dims(x, 1), transpose(kernel.read_value(), {1, 0, 2}));
  if (bias) y = y + expand_dims(bias.read_value(), 1);
  return y;
}

Tensor MultiHeadAttention::mask_for(const Tensor& query, const Tensor& value,
                                    const AttentionCallOptions& options) const {
  Tensor mask;
  if (options.attention_mask.defined()) {
    const Tensor& m = options.attention_mask;
    if (!m.shape().has_known_rank() || m.shape().rank() < 2 || m.shape().rank() > 3)
      throw InvalidArgument(fmt::format("{}: attention_mask must be [batch, T, S] (or [T, S]), got shape {}",
                                        describe(), m.shape().to_string()));
    mask = m.dtype() == DType::Bool ? m : not_equal(m, zeros({}, m.dtype()));
  }
  if (options.use_causal_mask) {
    Tensor causal = greater_equal(positions(query), transpose(positions(value), {0, 2, 1}));
    mask = mask.defined() ? logical_and(mask, causal) : causal;
  }
  return mask;
}

Tensor MultiHeadAttention::operator()(const Tensor& query, const Tensor& value, const AttentionCallOptions& options) {
  return call_with_scores(query, value, options).output;
}

AttentionResult MultiHeadAttention::call_with_scores(const Tensor& query_in, const Tensor& value_in,
                                                     const AttentionCallOptions& options) {
  const Tensor& key_in = options.key.defined() ? options.key : value_in;
  // Once: a layer built here has its kernels from these inputs' last dims.
  check_inputs(query_in, value_in, key_in);
  if (!built()) build(query_in.shape(), value_in.shape(), key_in.shape());
  Tensor query = autocast(query_in), value = autocast(value_in), key = autocast(key_in);

  // [batch, heads, T | S, dim]; the query scaled first, as Keras'.
  Tensor q = project(query, query_kernel_, query_bias_) * (1.0 / std::sqrt(static_cast<double>(key_dim_)));
  Tensor k = project(key, key_kernel_, key_bias_);
  Tensor v = project(value, value_kernel_, value_bias_);
  Tensor scores = matmul(q, k, false, /*transpose_b=*/true);  // [batch, heads, T, S]
  if (Tensor mask = mask_for(query, value, options); mask.defined()) {
    // [batch, T, S] -> [batch, 1, T, S]: one mask for every head.
    Tensor adder = (1.0 - cast(expand_dims(mask, -3), dtype())) * kMaskedScore;
    scores = scores + adder;
  }
  Tensor probabilities = softmax(scores, -1);
  // [batch, heads, T, value_dim]
  Tensor attended = matmul(options.training ? dropout(probabilities, options_.dropout) : probabilities, v);
  // Each head through its [value_dim, out] block, summed over the heads.
  Tensor output = sum(matmul(attended, output_kernel_.read_value()), Axes(1));
  if (output_bias_) output = output + output_bias_.read_value();
  return {output, probabilities};
}

}  // namespace kiln::nn
