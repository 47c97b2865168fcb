#pragma once
// Keras' MultiHeadAttention (Vaswani et al., 2017) over [batch, sequence,
// features] inputs (or any axes of rank-N inputs), with TF's weights,
// arguments and masking.
//
//   kiln::nn::MultiHeadAttention mha(/*num_heads=*/4, /*key_dim=*/16);
//   kiln::Tensor y = mha(x, x, {.use_causal_mask = true});   // self-attention
//   auto [out, scores] = mha.call_with_scores(q, v);        // scores [batch, heads, T, S]
//   // Over the rows and columns of [batch, H, W, C] images together:
//   kiln::nn::MultiHeadAttention image(2, 8, {.attention_axes = {1, 2}});
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/nn/layer.h"

namespace kiln::nn {

struct MultiHeadAttentionOptions {
  // The size of each head of the value projection (default: key_dim).
  std::optional<int64_t> value_dim;
  // Dropout on the attention probabilities while training.
  double dropout = 0.0;
  bool use_bias = true;
  // The output's trailing dims, replacing the query's last (default: the
  // query's last dim): {8} gives [batch, T, 8], {2, 4} [batch, T, 2, 4].
  std::vector<int64_t> output_shape;
  // The axes attention runs over, together (TF's attention_axes): empty is
  // every axis but the batch and the features ({1} for [batch, sequence,
  // features]); a negative axis counts from the inputs' last.
  std::vector<int64_t> attention_axes;
  std::string name;
  // Seeds the kernels' Glorot-uniform values (each kernel its own stream);
  // without one they come from kiln::random's global generator.
  std::optional<uint64_t> seed;
  DType dtype = DType::Float32;
};

// What a call takes besides the query and the value (tf.keras's call arguments).
struct AttentionCallOptions {
  // [batch, S, key features]; undefined: the value is the key.
  Tensor key;
  // [batch, T, S] (or broadcastable to it), bool or numbers: true / nonzero
  // where query position t may attend key position s. Masked scores get
  // -1e9 added before the softmax, as Keras', so a masked key gets zero
  // weight (a row with every key masked is uniform). For other attention
  // axes: broadcastable to the scores, its missing dims inserted before the
  // heads (TF's rule).
  Tensor attention_mask;
  bool training = false;
  // Query position t attends key positions s <= t only (with the mask, both);
  // [batch, sequence, features] inputs only.
  bool use_causal_mask = false;
};

struct AttentionResult {
  Tensor output;  // [batch, T, output_shape...]
  // The softmax, before dropout: [batch, num_heads, T, S]; for other
  // attention axes [batch, axes not attended..., num_heads, the query's
  // attended axes..., the key's attended axes...].
  Tensor scores;
};

// softmax(q k^T / sqrt(key_dim) + mask) v per head, with TF's EinsumDense
// weights: query/kernel [query features, num_heads, key_dim] (bias
// [num_heads, key_dim]), key/kernel likewise, value/kernel [value features,
// num_heads, value_dim], attention_output/kernel [num_heads, value_dim,
// output_shape...] (bias [output_shape...]); Glorot uniform with Keras' fans
// for rank-3 kernels, zero biases. The weights are made on the first call
// from the query's, value's and key's last dims; the three have one rank.
class MultiHeadAttention : public Layer {
 public:
  MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options = {});
  std::string class_name() const override { return "MultiHeadAttention"; }
  Shape compute_output_shape(const Shape& query_shape) const override;

  Tensor operator()(const Tensor& query, const Tensor& value, const AttentionCallOptions& options = {});
  // The output and the attention scores (Keras' return_attention_scores=True).
  AttentionResult call_with_scores(const Tensor& query, const Tensor& value,
                                   const AttentionCallOptions& options = {});
  // Builds for these inputs' shapes (Layer::build(shape) builds for
  // self-attention: value and key of the query's shape).
  void build(const Shape& query_shape, const Shape& value_shape, const std::optional<Shape>& key_shape = {});
  using Layer::build;

  int64_t num_heads() const { return num_heads_; }
  int64_t key_dim() const { return key_dim_; }
  int64_t value_dim() const { return value_dim_; }
  // Null until built (the biases also without use_bias).
  const Variable& query_kernel() const { return query_kernel_; }
  const Variable& key_kernel() const { return key_kernel_; }
  const Variable& value_kernel() const { return value_kernel_; }
  const Variable& output_kernel() const { return output_kernel_; }
  const Variable& query_bias() const { return query_bias_; }
  const Variable& key_bias() const { return key_bias_; }
  const Variable& value_bias() const { return value_bias_; }
  const Variable& output_bias() const { return output_bias_; }

 protected:
  void build_weights(const Shape& query_shape) override;
  // A layer needs a value: reached only through Layer::operator()(x), an error.
  Tensor call(const Tensor& x, bool training) override;

 private:
  // [batch, heads, positions, dim] projection of [batch, positions, features].
  Tensor project(const Tensor& x, const Variable& kernel, const Variable& bias) const;
  Tensor mask_for(const Tensor& query, const Tensor& value, const AttentionCallOptions& options) const;
  void check_inputs(const Tensor& query, const Tensor& value, const Tensor& key) const;
  std::vector<int64_t> output_dims(const Shape& query_shape) const;
  // TF's einsum formulation, for attention other than over the sequence of
  // rank-3 inputs into one output dim (which runs as batched matmuls).
  AttentionResult attend_einsum(const Tensor& query, const Tensor& value, const Tensor& key, const Tensor& mask,
                                bool training) const;

  int64_t num_heads_, key_dim_, value_dim_;
  MultiHeadAttentionOptions options_;
  // Set by build_weights: the inputs' rank, the attended axes (non-negative)
  // and, for the einsum form, TF's scores and combination equations.
  int64_t rank_ = 0;
  std::vector<int64_t> axes_;
  bool einsum_ = false;
  std::string scores_equation_, combine_equation_;
  // The value's and key's shapes for build_weights (the query's by default).
  std::optional<Shape> value_shape_, key_shape_;
  Variable query_kernel_, query_bias_, key_kernel_, key_bias_, value_kernel_, value_bias_, output_kernel_,
      output_bias_;
};

}  // namespace kiln::nn
