// MultiHeadAttention: values against a double-precision reference of Keras'
// equations written here and a closed-form case, masks (given, causal,
// both), the scores, dropout, traced = eager with unknown dims, gradients
// against finite differences, TF's weight names and shapes, a saved-model
// round trip, the errors, and a small Transformer block that trains.
#include "test_util.h"
#include "wave_values.h"

#include <cmath>

#include <kiln/saved_model.h>

#include "kiln/kiln.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::wave;
using kiln::testing::expect_tensor_near;
using kiln::testing::TempDir;

namespace {

using Values = std::vector<double>;  // row-major

constexpr int64_t kBatch = 2, kT = 3, kS = 4, kQueryDim = 5, kValueDim = 3, kKeyDim = 4, kHeads = 2, kHead = 3;

Tensor wave_tensor(const Shape& shape, double freq, double phase, DType dtype = DType::Float64) {
  return constant(wave(shape.num_elements(), freq, phase), shape, dtype);
}

struct Weights {
  Values wq, bq, wk, bk, wv, bv, wo, bo;
};

// Gives every weight of a built layer values from `wave`; returns them.
Weights set_weights(nn::MultiHeadAttention& mha) {
  Weights w;
  double phase = 0.1;
  auto fill = [&](const Variable& v, Values& out) {
    out = wave(v.shape().num_elements(), 0.71, phase += 0.37, 0.5);
    v.assign(constant(out, v.shape(), v.dtype()));
  };
  fill(mha.query_kernel(), w.wq);
  fill(mha.query_bias(), w.bq);
  fill(mha.key_kernel(), w.wk);
  fill(mha.key_bias(), w.bk);
  fill(mha.value_kernel(), w.wv);
  fill(mha.value_bias(), w.bv);
  fill(mha.output_kernel(), w.wo);
  fill(mha.output_bias(), w.bo);
  return w;
}

struct Reference {
  Values output, scores;
};

// Keras' MultiHeadAttention in double: x [B, L, C] projected by kernel
// [C, N, D] + bias [N, D] to [B, N, L, D]; scores = softmax(q k^T / sqrt(D)
// + (1 - mask) * -1e9); output = sum over heads of (scores v) @ wo[n] + bo.
Reference reference(const Weights& w, const Values& query, const Values& value, const Values& key,
                    const std::vector<bool>& mask, int64_t out_dim) {
  auto project = [](const Values& x, int64_t len, int64_t features, const Values& kernel, const Values& bias,
                    int64_t dim) {
    Values y(static_cast<std::size_t>(kBatch * kHeads * len * dim));
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t n = 0; n < kHeads; ++n)
        for (int64_t l = 0; l < len; ++l)
          for (int64_t d = 0; d < dim; ++d) {
            double s = bias[n * dim + d];
            for (int64_t c = 0; c < features; ++c)
              s += x[(b * len + l) * features + c] * kernel[(c * kHeads + n) * dim + d];
            y[((b * kHeads + n) * len + l) * dim + d] = s;
          }
    return y;
  };
  Values q = project(query, kT, kQueryDim, w.wq, w.bq, kHead);
  Values k = project(key, kS, kKeyDim, w.wk, w.bk, kHead);
  Values v = project(value, kS, kValueDim, w.wv, w.bv, kHead);
  Reference r{Values(static_cast<std::size_t>(kBatch * kT * out_dim)),
              Values(static_cast<std::size_t>(kBatch * kHeads * kT * kS))};
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t n = 0; n < kHeads; ++n)
      for (int64_t t = 0; t < kT; ++t) {
        double* row = &r.scores[((b * kHeads + n) * kT + t) * kS];
        double top = -1e300, total = 0;
        for (int64_t s = 0; s < kS; ++s) {
          double dot = 0;
          for (int64_t d = 0; d < kHead; ++d)
            dot += q[((b * kHeads + n) * kT + t) * kHead + d] * k[((b * kHeads + n) * kS + s) * kHead + d];
          row[s] = dot / std::sqrt(double(kHead)) + (mask.empty() || mask[(b * kT + t) * kS + s] ? 0 : -1e9);
          top = std::max(top, row[s]);
        }
        for (int64_t s = 0; s < kS; ++s) total += row[s] = std::exp(row[s] - top);
        for (int64_t s = 0; s < kS; ++s) row[s] /= total;
        for (int64_t d = 0; d < kHead; ++d) {
          double a = 0;
          for (int64_t s = 0; s < kS; ++s) a += row[s] * v[((b * kHeads + n) * kS + s) * kHead + d];
          for (int64_t o = 0; o < out_dim; ++o) r.output[(b * kT + t) * out_dim + o] += a * w.wo[(n * kHead + d) * out_dim + o];
        }
      }
  for (int64_t i = 0; i < kBatch * kT; ++i)
    for (int64_t o = 0; o < out_dim; ++o) r.output[i * out_dim + o] += w.bo[o];
  return r;
}

Tensor query() { return wave_tensor({kBatch, kT, kQueryDim}, 1.3, 0.2); }
Tensor value() { return wave_tensor({kBatch, kS, kValueDim}, 0.9, 0.4); }
Tensor key() { return wave_tensor({kBatch, kS, kKeyDim}, 1.7, 0.6); }

// A [batch, T, S] mask hiding a few keys (never a whole row).
std::vector<bool> some_mask() {
  std::vector<bool> m(kBatch * kT * kS, true);
  m[1] = m[6] = m[7] = m[12 + 0] = m[12 + 11] = false;
  return m;
}

Tensor mask_tensor(const std::vector<bool>& m) {
  std::vector<float> v(m.begin(), m.end());
  return constant(v, Shape{kBatch, kT, kS});
}

nn::MultiHeadAttention float64_layer(std::vector<int64_t> output_shape = {}) {
  return nn::MultiHeadAttention(kHeads, kHead, {.output_shape = output_shape, .dtype = DType::Float64});
}

}  // namespace

TEST(NnAttention, OneHeadWithIdentityWeightsIsSoftmaxAttention) {
  // key_dim = features, identity kernels, zero biases: softmax(q k^T / sqrt 2) v.
  nn::MultiHeadAttention mha(1, 2, {.dtype = DType::Float64});
  Tensor q = constant(std::vector<double>{1, 0, 0, 0}, Shape{1, 2, 2});
  Tensor v = constant(std::vector<double>{1, 2, 3, 4}, Shape{1, 2, 2});
  mha.build(q.shape(), v.shape());
  Tensor eye = constant(std::vector<double>{1, 0, 0, 1}, Shape{2, 1, 2});
  for (const Variable* k : {&mha.query_kernel(), &mha.key_kernel(), &mha.value_kernel()}) k->assign(eye);
  mha.output_kernel().assign(reshape(eye, Shape{1, 2, 2}));
  // Query [1, 0] scores keys [1, 2] and [3, 4] as 1/sqrt2 and 3/sqrt2; query [0, 0] weighs them equally.
  double a = 1 / (1 + std::exp(2 / std::sqrt(2.0)));
  nn::AttentionResult r = mha.call_with_scores(q, v);
  expect_tensor_near<double>(r.scores, {1, 1, 2, 2}, {a, 1 - a, 0.5, 0.5}, 1e-12);
  expect_tensor_near<double>(r.output, {1, 2, 2}, {a * 1 + (1 - a) * 3, a * 2 + (1 - a) * 4, 2, 3}, 1e-12);
}

TEST(NnAttention, MatchesKerasEquationsWithKeyMaskAndOutputShape) {
  for (bool masked : {false, true}) {
    nn::MultiHeadAttention mha = float64_layer(/*output_shape=*/{7});
    std::vector<bool> mask = masked ? some_mask() : std::vector<bool>{};
    mha.build(query().shape(), value().shape(), key().shape());
    Weights w = set_weights(mha);
    Reference want = reference(w, query().to_vector<double>(), value().to_vector<double>(), key().to_vector<double>(),
                               mask, 7);
    nn::AttentionResult got = mha.call_with_scores(
        query(), value(), {.key = key(), .attention_mask = masked ? mask_tensor(mask) : Tensor()});
    expect_tensor_near<double>(got.output, {kBatch, kT, 7}, want.output, 1e-12);
    expect_tensor_near<double>(got.scores, {kBatch, kHeads, kT, kS}, want.scores, 1e-12);
  }
}

TEST(NnAttention, MaskedKeysGetZeroWeight) {
  nn::MultiHeadAttention mha(kHeads, kHead, {.seed = 1});
  std::vector<bool> mask = some_mask();
  // A bool mask and a numeric one are the same mask.
  Tensor as_bool = cast(constant(std::vector<float>(mask.begin(), mask.end()), Shape{kBatch, kT, kS}), DType::Bool);
  nn::AttentionResult r =
      mha.call_with_scores(query(), value(), {.key = key(), .attention_mask = as_bool});
  std::vector<float> scores = r.scores.to_vector<float>();
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t n = 0; n < kHeads; ++n)
      for (int64_t t = 0; t < kT; ++t) {
        float total = 0;
        for (int64_t s = 0; s < kS; ++s) {
          float p = scores[((b * kHeads + n) * kT + t) * kS + s];
          total += p;
          if (!mask[(b * kT + t) * kS + s]) EXPECT_EQ(p, 0.0f) << b << n << t << s;
          else EXPECT_GT(p, 0.0f);
        }
        EXPECT_NEAR(total, 1.0f, 1e-6);
      }
  Tensor numeric = mha(query(), value(), {.key = key(), .attention_mask = mask_tensor(mask)});
  expect_tensor_near<float>(numeric, r.output.shape(), r.output.to_vector<float>(), 0);
}

TEST(NnAttention, CausalMaskHidesLaterPositionsAndCombinesWithTheMask) {
  nn::MultiHeadAttention mha = float64_layer();
  Tensor x = wave_tensor({kBatch, kS, kValueDim}, 0.8, 0.3);
  mha.build(x.shape(), x.shape());
  set_weights(mha);
  std::vector<bool> causal(kBatch * kS * kS);
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < kS; ++t)
      for (int64_t s = 0; s < kS; ++s) causal[(b * kS + t) * kS + s] = s <= t;
  nn::AttentionResult got = mha.call_with_scores(x, x, {.use_causal_mask = true});
  // Explicitly the same lower-triangular mask, as a tensor.
  std::vector<double> explicit_mask(causal.begin(), causal.end());
  nn::AttentionResult given =
      mha.call_with_scores(x, x, {.attention_mask = constant(explicit_mask, Shape{kBatch, kS, kS})});
  expect_tensor_near<double>(got.scores, given.scores.shape(), given.scores.to_vector<double>(), 0);
  expect_tensor_near<double>(got.output, given.output.shape(), given.output.to_vector<double>(), 0);
  std::vector<double> p = got.scores.to_vector<double>();
  for (int64_t i = 0; i < kBatch * kHeads; ++i)
    for (int64_t t = 0; t < kS; ++t)
      for (int64_t s = t + 1; s < kS; ++s) EXPECT_EQ(p[(i * kS + t) * kS + s], 0.0);
  // Changing the last position's input leaves the earlier outputs as they were.
  std::vector<double> changed = x.to_vector<double>();
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t c = 0; c < kValueDim; ++c) changed[(b * kS + kS - 1) * kValueDim + c] += 5;
  Tensor y = mha(constant(changed, x.shape()), constant(changed, x.shape()), {.use_causal_mask = true});
  std::vector<double> before = got.output.to_vector<double>(), after = y.to_vector<double>();
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t + 1 < kS; ++t)
      for (int64_t c = 0; c < kValueDim; ++c)
        EXPECT_NEAR(after[(b * kS + t) * kValueDim + c], before[(b * kS + t) * kValueDim + c], 1e-12);
  // Both masks: a key hidden by either gets no weight.
  std::vector<double> hide(kBatch * kS * kS, 1.0);
  hide[(0 * kS + 3) * kS + 1] = 0;
  nn::AttentionResult combined =
      mha.call_with_scores(x, x, {.attention_mask = constant(hide, Shape{kBatch, kS, kS}), .use_causal_mask = true});
  std::vector<double> pc = combined.scores.to_vector<double>();
  for (int64_t n = 0; n < kHeads; ++n) {
    EXPECT_EQ(pc[((0 * kHeads + n) * kS + 3) * kS + 1], 0.0);
    EXPECT_EQ(pc[((0 * kHeads + n) * kS + 1) * kS + 2], 0.0);
  }
}

// Attention over several axes of rank-N inputs against the sequence form on
// the same values reshaped: `layer` attends `x` ([batch, ..., features]);
// `sequence` attends `rows` ([rows, positions, features]) with the same
// weights; the outputs and the scores agree once reshaped.
void expect_same_as_sequences(nn::MultiHeadAttention& layer, const Tensor& x, const Tensor& mask,
                              nn::MultiHeadAttention& sequence, const Tensor& rows, const Tensor& row_mask,
                              const Shape& row_scores) {
  layer.build(x.shape(), x.shape());
  sequence.build(rows.shape(), rows.shape());
  set_weights(layer);
  set_weights(sequence);
  nn::AttentionResult got = layer.call_with_scores(x, x, {.attention_mask = mask});
  nn::AttentionResult want = sequence.call_with_scores(rows, rows, {.attention_mask = row_mask});
  expect_tensor_near<double>(reshape(got.output, rows.shape()), rows.shape(), want.output.to_vector<double>(), 1e-12);
  expect_tensor_near<double>(reshape(got.scores, row_scores), row_scores, want.scores.to_vector<double>(), 1e-12);
  // Traced for any batch size: one trace, the eager values.
  auto f = kiln::function([&](const Tensor& v) { return layer(v, v, {.attention_mask = mask}); },
                          {.input_signature = std::vector{TensorSpec(Shape(std::vector<int64_t>{
                               None, x.shape()[1], x.shape()[2], x.shape()[3]}), DType::Float64)}});
  expect_tensor_near<double>(f(x), got.output.shape(), got.output.to_vector<double>(), 0);
}

Tensor some_bools(const Shape& shape) {
  std::vector<double> v = wave(shape.num_elements(), 2.9, 0.3);
  for (double& e : v) e = e > -0.6 ? 1 : 0;
  return cast(constant(v, shape), DType::Bool);
}

TEST(NnAttention, AttentionOverTwoAxesIsAttentionOverTheirFlattenedPositions) {
  // [2, 3, 2, features] over axes {1, 2}: [2, 6, features] over its sequence.
  nn::MultiHeadAttention grid(kHeads, kHead, {.attention_axes = {1, 2}, .dtype = DType::Float64});
  nn::MultiHeadAttention sequence = float64_layer();
  Tensor x = wave_tensor({2, 3, 2, kQueryDim}, 1.3, 0.2);
  Tensor mask = some_bools({2, 6, 6});
  expect_same_as_sequences(grid, x, reshape(mask, Shape{2, 3, 2, 3, 2}), sequence, reshape(x, Shape{2, 6, kQueryDim}),
                           mask, Shape{2, kHeads, 6, 6});
  EXPECT_EQ(grid.call_with_scores(x, x).scores.shape(), (Shape{2, kHeads, 3, 2, 3, 2}));
  // Every axis but the batch and the features is TF's default.
  nn::MultiHeadAttention by_default(kHeads, kHead, {.dtype = DType::Float64});
  EXPECT_EQ(by_default.call_with_scores(x, x).scores.shape(), (Shape{2, kHeads, 3, 2, 3, 2}));
}

TEST(NnAttention, AttentionOverTheColumnsIsAttentionWithinEachRow) {
  // [2, 3, 4, features] over axis {2} (or {-2}): 6 rows [4, features] each.
  for (int64_t axis : {2, -2}) {
    nn::MultiHeadAttention columns(kHeads, kHead, {.attention_axes = {axis}, .dtype = DType::Float64});
    nn::MultiHeadAttention sequence = float64_layer();
    Tensor x = wave_tensor({2, 3, 4, kQueryDim}, 0.7, 0.5);
    Tensor mask = some_bools({6, 4, 4});
    // Scores [2, 3, heads, 4, 4]: the rows are a batch dim before the heads.
    expect_same_as_sequences(columns, x, reshape(mask, Shape{2, 3, 4, 4}), sequence, reshape(x, Shape{6, 4, kQueryDim}),
                             mask, Shape{6, kHeads, 4, 4});
  }
}

TEST(NnAttention, AnOutputShapeOfSeveralDimsReshapesTheOutputProjection) {
  nn::MultiHeadAttention split = float64_layer({2, 3}), joined = float64_layer({6});
  split.build(query().shape(), value().shape(), key().shape());
  joined.build(query().shape(), value().shape(), key().shape());
  set_weights(joined);
  set_weights(split);
  EXPECT_EQ(split.output_kernel().shape(), (Shape{kHeads, kHead, 2, 3}));
  EXPECT_EQ(split.output_bias().shape(), (Shape{2, 3}));
  EXPECT_EQ(split.compute_output_shape(Shape{None, 9, kQueryDim}), (Shape{None, 9, 2, 3}));
  split.output_kernel().assign(reshape(joined.output_kernel().read_value(), Shape{kHeads, kHead, 2, 3}));
  split.output_bias().assign(reshape(joined.output_bias().read_value(), Shape{2, 3}));
  Tensor mask = mask_tensor(some_mask());
  Tensor got = split(query(), value(), {.key = key(), .attention_mask = mask, .use_causal_mask = true});
  Tensor want = joined(query(), value(), {.key = key(), .attention_mask = mask, .use_causal_mask = true});
  EXPECT_EQ(got.shape(), (Shape{kBatch, kT, 2, 3}));
  expect_tensor_near<double>(reshape(got, Shape{kBatch, kT, 6}), want.shape(), want.to_vector<double>(), 1e-12);
}

TEST(NnAttention, DropoutActsOnTheWeightsWhileTrainingOnly) {
  random::set_seed(3);
  nn::MultiHeadAttention mha(kHeads, kHead, {.dropout = 0.5, .seed = 2});
  Tensor q = wave_tensor({kBatch, kT, kQueryDim}, 1.3, 0.2, DType::Float32);
  nn::AttentionResult inference = mha.call_with_scores(q, q);
  nn::AttentionResult again = mha.call_with_scores(q, q);
  expect_tensor_near<float>(again.output, inference.output.shape(), inference.output.to_vector<float>(), 0);
  nn::AttentionResult training = mha.call_with_scores(q, q, {.training = true});
  // The scores returned are the softmax before dropout (Keras'); the output changes.
  expect_tensor_near<float>(training.scores, inference.scores.shape(), inference.scores.to_vector<float>(), 0);
  std::vector<float> a = training.output.to_vector<float>(), b = inference.output.to_vector<float>();
  double moved = 0;
  for (std::size_t i = 0; i < a.size(); ++i) moved += std::abs(a[i] - b[i]);
  EXPECT_GT(moved, 1e-3);
}

TEST(NnAttention, WeightsHaveTfNamesShapesAndInitializers) {
  nn::clear_session();
  nn::MultiHeadAttention mha(kHeads, kHead, {.value_dim = 6, .output_shape = {8}});
  mha(query(), value(), {.key = key()});
  std::vector<std::string> want_names{
      "multi_head_attention/query/kernel:0",           "multi_head_attention/query/bias:0",
      "multi_head_attention/key/kernel:0",             "multi_head_attention/key/bias:0",
      "multi_head_attention/value/kernel:0",           "multi_head_attention/value/bias:0",
      "multi_head_attention/attention_output/kernel:0", "multi_head_attention/attention_output/bias:0"};
  EXPECT_EQ(kiln::testing::names(mha.trainable_variables()), want_names);
  EXPECT_EQ(mha.query_kernel().shape(), (Shape{kQueryDim, kHeads, kHead}));
  EXPECT_EQ(mha.key_kernel().shape(), (Shape{kKeyDim, kHeads, kHead}));
  EXPECT_EQ(mha.value_kernel().shape(), (Shape{kValueDim, kHeads, 6}));
  EXPECT_EQ(mha.value_bias().shape(), (Shape{kHeads, 6}));
  EXPECT_EQ(mha.output_kernel().shape(), (Shape{kHeads, 6, 8}));
  EXPECT_EQ(mha.output_bias().shape(), (Shape{8}));
  EXPECT_EQ(mha.count_params(), 5 * 6 + 6 + 4 * 6 + 6 + 3 * 12 + 12 + 12 * 8 + 8);
  EXPECT_EQ(mha.compute_output_shape(Shape{None, 9, kQueryDim}), (Shape{None, 9, 8}));
  // Glorot uniform with Keras' fans for [features, heads, dim]: fan_in = heads *
  // features, fan_out = dim * features.
  double limit = std::sqrt(6.0 / (kHeads * kQueryDim + kHead * kQueryDim));
  std::vector<float> k = mha.query_kernel().read_value().to_vector<float>();
  double largest = 0;
  for (float v : k) largest = std::max(largest, double(std::abs(v)));
  EXPECT_LE(largest, limit);
  EXPECT_GT(largest, 0.5 * limit);
  EXPECT_EQ(sum(abs(mha.query_bias().read_value())).item<float>(), 0.0f);
  // Seeded kernels repeat; without bias, 4 weights.
  nn::MultiHeadAttention a(1, 2, {.use_bias = false, .seed = 7}), b(1, 2, {.use_bias = false, .seed = 7});
  a(query(), query());
  b(query(), query());
  EXPECT_EQ(a.trainable_variables().size(), 4u);
  expect_tensor_near<float>(b.key_kernel().read_value(), a.key_kernel().shape(),
                            a.key_kernel().read_value().to_vector<float>(), 0);
}

TEST(NnAttention, TracedEqualsEagerAndUnknownDimsTraceOnce) {
  nn::MultiHeadAttention mha(kHeads, kHead, {.seed = 4});
  auto f = kiln::function(
      [&](const Tensor& q, const Tensor& v) { return mha(q, v, {.use_causal_mask = true}); },
      {.input_signature = std::vector{TensorSpec({None, None, kQueryDim}), TensorSpec({None, None, kValueDim})}});
  for (int64_t len : {1, 3, 6}) {
    Tensor q = wave_tensor({2, len, kQueryDim}, 1.1, 0.1 * len, DType::Float32);
    Tensor v = wave_tensor({2, len + 1, kValueDim}, 0.7, 0.3, DType::Float32);
    Tensor eager = mha(q, v, {.use_causal_mask = true});
    Tensor traced = f(q, v);
    EXPECT_EQ(traced.shape(), (Shape{2, len, kQueryDim}));
    expect_tensor_near<float>(traced, eager.shape(), eager.to_vector<float>(), 1e-6);
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(NnAttention, GradientsMatchFiniteDifferencesEagerAndTraced) {
  nn::MultiHeadAttention mha = float64_layer();
  std::vector<bool> mask = some_mask();
  Tensor m = mask_tensor(mask);
  Tensor q = query(), v = value(), k = key();
  mha.build(q.shape(), v.shape(), k.shape());
  set_weights(mha);
  Tensor w = wave_tensor({kBatch, kT, kQueryDim}, 0.9, 0.5);
  std::vector<Variable> vars = mha.trainable_variables();
  auto loss_of = [&](const Tensor& qi, const Tensor& vi, const Tensor& ki) {
    return sum(mha(qi, vi, {.key = ki, .attention_mask = m}) * w);
  };
  auto grads_of = [&](const Tensor& qi, const Tensor& vi, const Tensor& ki) {
    GradientTape tape;
    for (const Tensor* t : {&qi, &vi, &ki}) tape.watch(*t);
    std::vector<GradientSource> sources{qi, vi, ki};
    for (const Variable& var : vars) sources.emplace_back(var);
    return tape.gradient(loss_of(qi, vi, ki), sources);
  };
  std::vector<Tensor> eager = grads_of(q, v, k);
  std::vector<Tensor> traced = kiln::function(grads_of)(q, v, k);
  const double h = 1e-6;
  std::vector<Tensor> inputs{q, v, k};
  for (std::size_t s = 0; s < eager.size(); ++s) {
    ASSERT_TRUE(eager[s].defined()) << "source " << s;
    Tensor base = s < 3 ? inputs[s] : vars[s - 3].read_value();
    std::vector<double> x = base.to_vector<double>(), g = eager[s].to_vector<double>();
    std::vector<double> gt = traced[s].to_vector<double>();
    for (std::size_t i = 0; i < x.size(); i += 2) {
      auto moved = [&](double delta) {
        std::vector<double> y = x;
        y[i] += delta;
        Tensor t = constant(y, base.shape());
        if (s >= 3) {
          vars[s - 3].assign(t);
          double l = loss_of(q, v, k).item<double>();
          vars[s - 3].assign(base);
          return l;
        }
        std::vector<Tensor> in = inputs;
        in[s] = t;
        return loss_of(in[0], in[1], in[2]).item<double>();
      };
      double numeric = (moved(h) - moved(-h)) / (2 * h);
      EXPECT_NEAR(g[i], numeric, 1e-6 * (1 + std::abs(numeric))) << "source " << s << " at " << i;
      EXPECT_NEAR(gt[i], g[i], 1e-10 * (1 + std::abs(g[i]))) << "traced, source " << s;
    }
  }
}

TEST(NnAttention, SavedAndLoaded) {
  TempDir tmp;
  nn::MultiHeadAttention mha(kHeads, kHead, {.seed = 5});
  auto call = kiln::function(
      [&](const Tensor& q, const Tensor& v) { return mha(q, v, {.use_causal_mask = true}); },
      {.input_signature = std::vector{TensorSpec({None, None, kQueryDim}), TensorSpec({None, None, kValueDim})},
       .name = "call"});
  Tensor q = wave_tensor({kBatch, kT, kQueryDim}, 1.3, 0.2, DType::Float32);
  Tensor v = wave_tensor({kBatch, kS, kValueDim}, 0.9, 0.4, DType::Float32);
  Tensor want = call(q, v);
  saved_model::save(mha, tmp.path("mha"), {{"serving_default", {call, {"query", "value"}}}});
  saved_model::Loaded loaded = saved_model::load(tmp.path("mha"));
  expect_tensor_near<float>(loaded.signature("serving_default")({{"query", q}, {"value", v}}).at("output_0"),
                            want.shape(), want.to_vector<float>(), 0);
  EXPECT_EQ(loaded.variables().size(), 8u);
}

// call_with_scores casts floating query, value and key to the layer's dtype.
TEST(NnAttention, FloatingInputsAreCastToTheLayersDtype) {
  nn::MultiHeadAttention mha(kHeads, kHead, {.seed = 5});
  Tensor q = wave_tensor({kBatch, kT, 3}, 0.7, 0.1), v = wave_tensor({kBatch, kS, 3}, 1.1, 0.4);
  nn::AttentionResult got = mha.call_with_scores(q, v, {.key = v});
  EXPECT_EQ(got.output.dtype(), DType::Float32);
  EXPECT_EQ(got.scores.dtype(), DType::Float32);
  Tensor q32 = cast(q, DType::Float32), v32 = cast(v, DType::Float32);
  EXPECT_EQ(got.output.to_vector<float>(), mha(q32, v32, {.key = v32}).to_vector<float>());
}

TEST(NnAttention, BadArgumentsAndInputsAreNamed) {
  nn::clear_session();
  expect_error<InvalidArgument>([] { nn::MultiHeadAttention(0, 4); },
                                {"MultiHeadAttention 'multi_head_attention'", "must be positive, got 0, 4 and 4"});
  expect_error<InvalidArgument>([] { nn::MultiHeadAttention(2, 4, {.dropout = 1.0}); },
                                {"dropout must be in [0, 1), got 1"});
  expect_error<InvalidArgument>(
      [] { nn::MultiHeadAttention(2, 4, {.attention_axes = {1, 2}})(zeros({1, 2, 3}), zeros({1, 2, 3})); },
      {"attention_axes {1, 2} must be distinct axes of the rank-3 inputs"});
  expect_error<InvalidArgument>([] { nn::MultiHeadAttention(2, 4, {.output_shape = {2, 0}}); },
                                {"output_shape must be positive, got {2, 0}"});
  expect_error<InvalidArgument>([] { nn::MultiHeadAttention(2, 4)(zeros({1, 2, 3, 4}), zeros({1, 2, 4})); },
                                {"the value must have"});
  nn::MultiHeadAttention mha(2, 4, {.name = "mha"});
  expect_error<InvalidArgument>([&] { mha(zeros({2, 3}), zeros({2, 3, 5})); },
                                {"MultiHeadAttention 'mha'", "the query must have rank 3 or more", "(2, 3)"});
  mha(zeros({2, 3, 5}), zeros({2, 4, 6}));
  expect_error<InvalidArgument>([&] { mha(zeros({2, 3, 5}), zeros({2, 4, 7})); },
                                {"the value's last dim is 7 but the layer was built for 6"});
  expect_error<InvalidArgument>([&] { mha(zeros({2, 3, 5}), zeros({2, 4, 6}), {.key = zeros({2, 4, 5})}); },
                                {"the key's last dim is 5 but the layer was built for 6"});
  expect_error<InvalidArgument>([&] { mha(zeros({2, 3, 5}), zeros({2, 4, 6}), {.attention_mask = zeros({4})}); },
                                {"attention_mask must be [batch, T, S]"});
  nn::Layer& as_layer = mha;
  expect_error<InvalidArgument>([&] { as_layer(zeros({2, 3, 5})); }, {"needs a query and a value"});
}

namespace {

// A post-norm Transformer encoder block and a classifier on its mean over time.
struct TinyTransformer : Module {
  std::shared_ptr<nn::MultiHeadAttention> attention = track(nn::MultiHeadAttention(2, 4, {.seed = 11}));
  std::shared_ptr<nn::LayerNormalization> norm1 = track(nn::LayerNormalization());
  std::shared_ptr<nn::Dense> hidden = track(nn::Dense(16, {.activation = "relu", .seed = 12}));
  std::shared_ptr<nn::Dense> back = track(nn::Dense(4, {.seed = 13}));
  std::shared_ptr<nn::LayerNormalization> norm2 = track(nn::LayerNormalization());
  std::shared_ptr<nn::Dense> classify = track(nn::Dense(2, {.seed = 14}));
  TinyTransformer() : Module("tiny_transformer") {}

  Tensor operator()(const Tensor& x, bool training) {
    Tensor h = (*norm1)(x + (*attention)(x, x, {.training = training}));
    h = (*norm2)(h + (*back)((*hidden)(h)));
    return (*classify)(mean(h, Axes(1)));
  }
};

}  // namespace

TEST(NnAttention, ATinyTransformerBlockTrainsInATracedStep) {
  // Which of two feature channels has the larger sum over the sequence?
  const int64_t n = 32, steps = 6, features = 4;
  Values xs = wave(n * steps * features, 2.3, 0.1);
  std::vector<int32_t> labels(n);
  for (int64_t b = 0; b < n; ++b) {
    double a = 0, c = 0;
    for (int64_t t = 0; t < steps; ++t) {
      a += xs[(b * steps + t) * features];
      c += xs[(b * steps + t) * features + 1];
    }
    labels[b] = a > c;
  }
  Tensor x = constant(xs, Shape{n, steps, features}, DType::Float32);
  Tensor y = constant(labels, Shape{n});
  TinyTransformer model;
  nn::Adam adam(0.01);
  auto train_step = kiln::function([&](const Tensor& inputs, const Tensor& targets) {
    GradientTape tape;
    Tensor loss = mean(nn::sparse_categorical_crossentropy(targets, model(inputs, true), true));
    adam.apply_gradients(tape.gradient(loss, model.trainable_variables()), model.trainable_variables());
    return loss;
  });
  std::vector<float> losses;
  for (int i = 0; i < 40; ++i) losses.push_back(train_step(x, y).item<float>());
  EXPECT_EQ(train_step.tracing_count(), 1);
  EXPECT_EQ(model.trainable_variables().size(), 8u + 5u * 2u);
  EXPECT_LT(losses.back(), 0.5f * losses.front()) << "first " << losses.front() << ", last " << losses.back();
}
