// MultiHeadAttention: projections, scaled dot-product attention per head,
// masking, dropout and the output projection.
#include "kiln/nn/attention.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <tuple>
#include <utility>

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

constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyz";

// TF's _build_proj_equation: an EinsumDense equation keeping `free` leading
// dims, contracting `bound` dims with the kernel's first and appending the
// kernel's last `out` dims.
std::string projection_equation(int64_t free, int64_t bound, int64_t out) {
  auto letters = [](int64_t from, int64_t n) { return std::string(kLetters.substr(from, n)); };
  return fmt::format("{0}{1},{1}{2}->{0}{2}", letters(0, free), letters(free, bound), letters(free + bound, out));
}

// TF's _build_attention_equation for projected inputs of `rank` ([batch, ...,
// heads, dim]): the scores' equation (key, query -> [batch dims and heads,
// the query's attended dims, the key's]) and the combination's (scores, value
// -> [batch, ..., heads, dim]).
std::pair<std::string, std::string> attention_equations(int64_t rank, const std::vector<int64_t>& axes) {
  auto attended = [&](int64_t i) { return std::find(axes.begin(), axes.end(), i) != axes.end(); };
  std::string target(kLetters.substr(0, rank)), source, product;
  for (int64_t i = 0, next = rank; i < rank; ++i) source += attended(i) ? kLetters[next++] : target[i];
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (!attended(i)) product += target[i];
  for (int64_t a : axes) product += target[a];
  for (int64_t a : axes) product += source[a];
  return {fmt::format("{},{}->{}", source, target, product), fmt::format("{},{}->{}", product, source, target)};
}

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
  for (int64_t d : options_.output_shape)
    if (d <= 0)
      throw InvalidArgument(fmt::format("{}: output_shape must be positive, got {{{}}}", describe(),
                                        fmt::join(options_.output_shape, ", ")));
}

std::vector<int64_t> MultiHeadAttention::output_dims(const Shape& query_shape) const {
  return options_.output_shape.empty() ? std::vector<int64_t>{last_dim(query_shape)} : options_.output_shape;
}

Shape MultiHeadAttention::compute_output_shape(const Shape& query_shape) const {
  check_rank(query_shape, 3, /*at_least=*/true);
  std::vector<int64_t> dims = query_shape.to_vector();
  dims.pop_back();
  for (int64_t d : output_dims(query_shape)) dims.push_back(d);
  return Shape(dims);
}

void MultiHeadAttention::build(const Shape& query_shape, const Shape& value_shape,
                               const std::optional<Shape>& key_shape) {
  value_shape_ = value_shape;
  key_shape_ = key_shape.value_or(value_shape);
  Layer::build(query_shape);
}

void MultiHeadAttention::build_weights(const Shape& query_shape) {
  const Shape value_shape = value_shape_.value_or(query_shape), key_shape = key_shape_.value_or(value_shape);
  const int64_t rank = query_shape.rank();
  for (auto [what, shape] : {std::pair{"query", &query_shape}, {"value", &value_shape}, {"key", &key_shape}}) {
    check_rank(*shape, 3, /*at_least=*/true);
    if (shape->rank() != rank)
      throw InvalidArgument(fmt::format("{}: the {} must have the query's rank {}, got shape {}", describe(), what,
                                        rank, shape->to_string()));
    if (last_dim(*shape) < 0)
      throw InvalidArgument(fmt::format("{}: the {}'s last dim must be known to build the layer, got shape {}",
                                        describe(), what, shape->to_string()));
  }
  std::vector<int64_t> axes;
  for (int64_t a : options_.attention_axes) axes.push_back(a < 0 ? a + rank : a);
  if (options_.attention_axes.empty())
    for (int64_t a = 1; a + 1 < rank; ++a) axes.push_back(a);
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 1 || axes[i] > rank - 2 || std::find(axes.begin(), axes.begin() + i, axes[i]) != axes.begin() + i)
      throw InvalidArgument(fmt::format("{}: attention_axes {{{}}} must be distinct axes of the rank-{} inputs other "
                                        "than the batch (0) and the features (-1)",
                                        describe(), fmt::join(options_.attention_axes, ", "), rank));
  const std::vector<int64_t> out_dims = output_dims(query_shape);
  rank_ = rank;
  axes_ = axes;
  // Attention over the sequence of [batch, sequence, features] into one output
  // dim runs as batched matmuls (any dims unknown); the rest, TF's einsums.
  einsum_ = rank != 3 || out_dims.size() != 1;
  std::tie(scores_equation_, combine_equation_) = attention_equations(rank + 1, axes_);
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
  // Keras' fans for a kernel of rank 3 or more: the last two dims, each
  // times the product of the others (the receptive field).
  std::vector<int64_t> kernel_dims{num_heads_, value_dim_};
  kernel_dims.insert(kernel_dims.end(), out_dims.begin(), out_dims.end());
  const std::size_t n = kernel_dims.size();
  int64_t receptive = 1;
  for (std::size_t i = 0; i + 2 < n; ++i) receptive *= kernel_dims[i];
  output_kernel_ = add_weight("attention_output/kernel", Shape(kernel_dims), Init::GlorotUniform,
                              kernel_dims[n - 2] * receptive, kernel_dims[n - 1] * receptive, seed(3));
  if (options_.use_bias) output_bias_ = add_weight("attention_output/bias", Shape(out_dims), Init::Zeros);
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
    if (!s.has_known_rank() || s.rank() < 3 || (rank_ && s.rank() != rank_))
      throw InvalidArgument(fmt::format("{}: the {} must have {}, got shape {}", describe(), what,
                                        rank_ ? fmt::format("rank {}", rank_)
                                              : "rank 3 or more [batch, positions..., features]",
                                        s.to_string()));
    if (!*kernel) continue;  // not built yet
    const int64_t built_for = kernel->shape()[0];
    if (last_dim(s) >= 0 && last_dim(s) != built_for)
      throw InvalidArgument(fmt::format("{}: the {}'s last dim is {} but the layer was built for {}", describe(),
                                        what, last_dim(s), built_for));
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
    const int64_t scores_rank = rank_ + static_cast<int64_t>(axes_.size());
    const int64_t most = rank_ == 3 ? 3 : scores_rank;
    if (!m.shape().has_known_rank() || m.shape().rank() < 2 || m.shape().rank() > most)
      throw InvalidArgument(fmt::format("{}: attention_mask must be {}, got shape {}", describe(),
                                        rank_ == 3 ? "[batch, T, S] (or [T, S])"
                                                   : fmt::format("of rank 2 to {}, broadcastable to the scores",
                                                                 scores_rank),
                                        m.shape().to_string()));
    mask = m.dtype() == DType::Bool ? m : not_equal(m, zeros({}, m.dtype()));
  }
  if (options.use_causal_mask && rank_ != 3)
    throw InvalidArgument(fmt::format("{}: use_causal_mask needs [batch, sequence, features] inputs, got rank {}",
                                      describe(), rank_));
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

  const Tensor mask = mask_for(query, value, options);
  if (einsum_) return attend_einsum(query, value, key, mask, options.training);
  // [batch, heads, T | S, dim]; the query scaled first, as Keras'.
  Tensor q = project(query, query_kernel_, query_bias_) * (1.0 / std::sqrt(static_cast<double>(key_dim_)));
  Tensor k = project(key, key_kernel_, key_bias_);
  Tensor v = project(value, value_kernel_, value_bias_);
  Tensor scores = matmul(q, k, false, /*transpose_b=*/true);  // [batch, heads, T, S]
  if (mask.defined()) {
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

AttentionResult MultiHeadAttention::attend_einsum(const Tensor& query, const Tensor& value, const Tensor& key,
                                                  const Tensor& mask, bool training) const {
  auto dense = [](const Tensor& x, const Variable& kernel, const Variable& bias, int64_t out_dims) {
    const int64_t bound = kernel.shape().rank() - out_dims;
    Tensor y = einsum(projection_equation(x.shape().rank() - bound, bound, out_dims), {x, kernel.read_value()});
    return bias ? y + bias.read_value() : y;
  };
  // [batch, ..., heads, dim]; the query scaled first, as Keras'.
  Tensor q = dense(query, query_kernel_, query_bias_, 2) * (1.0 / std::sqrt(static_cast<double>(key_dim_)));
  Tensor k = dense(key, key_kernel_, key_bias_, 2);
  Tensor v = dense(value, value_kernel_, value_bias_, 2);
  Tensor scores = einsum(scores_equation_, {k, q});
  const int64_t attended = static_cast<int64_t>(axes_.size());
  if (mask.defined()) {
    // TF's rule: the mask's missing dims go before the heads.
    Tensor keep = cast(mask, dtype());
    while (keep.shape().rank() < scores.shape().rank()) keep = expand_dims(keep, -2 * attended - 1);
    scores = scores + (1.0 - keep) * kMaskedScore;
  }
  // The softmax over the key's attended axes (the last ones) together.
  Tensor probabilities;
  if (attended == 1) {
    probabilities = softmax(scores, -1);
  } else {
    std::vector<int64_t> last;
    for (int64_t a = -attended; a < 0; ++a) last.push_back(a);
    probabilities = exp(scores - reduce_logsumexp(scores, Axes(last), /*keepdims=*/true));
  }
  Tensor attended_values =
      einsum(combine_equation_, {training ? dropout(probabilities, options_.dropout) : probabilities, v});
  const int64_t out_dims = output_kernel_.shape().rank() - 2;
  return {dense(attended_values, output_kernel_, output_bias_, out_dims), probabilities};
}

}  // namespace kiln::nn
