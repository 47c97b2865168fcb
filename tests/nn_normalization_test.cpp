// BatchNormalization and LayerNormalization: values against hand-computed
// statistics, moving statistics traced vs eager, saved-model round trips.
#include "test_util.h"

#include <cmath>
#include <cstring>

#include <kiln/saved_model.h>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor_near;
using kiln::testing::TempDir;

namespace {

// [rows, cols] of cos-spread values, as float32.
Tensor sample(int64_t rows, int64_t cols, double phase = 0.3) {
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(2 * std::cos(1.7 * i + phase) + 0.1 * i);
  return constant(v, Shape{rows, cols});
}

// Per-column (axis 0 reduced) or per-row mean and biased variance, in double.
struct Stats {
  std::vector<double> mean, variance;
};
Stats column_stats(const std::vector<float>& x, int64_t rows, int64_t cols, bool per_row) {
  int64_t groups = per_row ? rows : cols, n = per_row ? cols : rows;
  Stats s{std::vector<double>(groups), std::vector<double>(groups)};
  for (int64_t g = 0; g < groups; ++g) {
    auto at = [&](int64_t k) { return static_cast<double>(x[per_row ? g * cols + k : k * cols + g]); };
    for (int64_t k = 0; k < n; ++k) s.mean[g] += at(k) / n;
    for (int64_t k = 0; k < n; ++k) s.variance[g] += (at(k) - s.mean[g]) * (at(k) - s.mean[g]) / n;
  }
  return s;
}

// The same float bits, element by element (kiln's rule: a traced graph
// computes what eager ops do, bit for bit).
void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    uint32_t ia, ib;
    std::memcpy(&ia, &a[i], 4);
    std::memcpy(&ib, &b[i], 4);
    EXPECT_EQ(ia, ib) << "element " << i << ": " << a[i] << " vs " << b[i];
  }
}

}  // namespace

TEST(NnNormalization, BatchNormalizationTrainingUsesBatchStatisticsAndMovesTheMovingOnes) {
  nn::BatchNormalization bn({.momentum = 0.9, .epsilon = 1e-3});
  Tensor x = sample(6, 3);
  Tensor y = bn(x, /*training=*/true);
  std::vector<float> xv = x.to_vector<float>();
  Stats s = column_stats(xv, 6, 3, /*per_row=*/false);
  std::vector<float> want;
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t c = 0; c < 3; ++c)
      want.push_back(static_cast<float>((xv[r * 3 + c] - s.mean[c]) / std::sqrt(s.variance[c] + 1e-3)));
  expect_tensor_near<float>(y, {6, 3}, want, 1e-5);
  // moving = moving - (moving - batch) * 0.1 from 0 (mean) and 1 (variance).
  std::vector<float> mean, var;
  for (int c = 0; c < 3; ++c) {
    mean.push_back(static_cast<float>(0.1 * s.mean[c]));
    var.push_back(static_cast<float>(1 - 0.1 * (1 - s.variance[c])));
  }
  expect_tensor_near<float>(bn.moving_mean().read_value(), {3}, mean, 1e-5);
  expect_tensor_near<float>(bn.moving_variance().read_value(), {3}, var, 1e-5);
  EXPECT_FALSE(bn.moving_mean().trainable());
  EXPECT_EQ(bn.trainable_variables().size(), 2u);  // gamma, beta
  EXPECT_EQ(bn.variables().size(), 4u);
  EXPECT_EQ(bn.moving_variance().name(), bn.name() + "/moving_variance:0");
}

TEST(NnNormalization, BatchNormalizationInferenceUsesTheMovingStatisticsAndScaleAndCenter) {
  nn::BatchNormalization bn({.epsilon = 0.5});
  Tensor x = constant({{1.f, 2.f}, {3.f, 4.f}});
  bn.build(x.shape());
  bn.moving_mean().assign(constant({1.f, -1.f}));
  bn.moving_variance().assign(constant({3.5f, 0.5f}));
  bn.gamma().assign(constant({2.f, 3.f}));
  bn.beta().assign(constant({0.5f, -0.5f}));
  // (x - mean) / sqrt(var + 0.5) * gamma + beta: sqrt 2 and 1.
  expect_tensor_near<float>(bn(x), {2, 2}, {0.5f, 8.5f, 2.5f, 14.5f}, 1e-6);
  expect_tensor_near<float>(bn(x, false), {2, 2}, {0.5f, 8.5f, 2.5f, 14.5f}, 1e-6);
  // Inference leaves the moving statistics alone.
  expect_tensor_near<float>(bn.moving_mean().read_value(), {2}, {1.f, -1.f}, 0);

  nn::BatchNormalization plain({.center = false, .scale = false});
  plain(x);
  EXPECT_FALSE(plain.gamma());
  EXPECT_FALSE(plain.beta());
  EXPECT_EQ(plain.variables().size(), 2u);
}

// axis=1 of NCHW-like [2, 3, 2] inputs: statistics over dims 0 and 2.
TEST(NnNormalization, BatchNormalizationAlongAnInnerAxis) {
  nn::BatchNormalization bn({.axis = 1, .momentum = 0.0});
  Tensor x = reshape(cast(range(0, 12, 1), DType::Float32), Shape{2, 3, 2});
  bn(x, true);
  // Channel c holds 2c, 2c+1, 6+2c, 7+2c: mean 2c + 3.5, variance 9.25.
  expect_tensor_near<float>(bn.moving_mean().read_value(), {3}, {3.5f, 5.5f, 7.5f}, 1e-5);
  expect_tensor_near<float>(bn.moving_variance().read_value(), {3}, {9.25f, 9.25f, 9.25f}, 1e-5);
  float d = static_cast<float>(1 / std::sqrt(9.25 + 1e-3));
  expect_tensor_near<float>(bn(x), {2, 3, 2},
                            {-3.5f * d, -2.5f * d, -3.5f * d, -2.5f * d, -3.5f * d, -2.5f * d,
                             2.5f * d, 3.5f * d, 2.5f * d, 3.5f * d, 2.5f * d, 3.5f * d}, 1e-5);
}

// The seed's check: N traced training steps move the statistics exactly as
// N eager ones, bit for bit (the traced step fuses the moving-average update
// and the normalization into FusedElementwise chains), for [batch, features]
// inputs and for images (statistics over batch, height and width).
TEST(NnNormalization, BatchNormalizationMovingStatisticsTracedEqualEager) {
  for (const Shape& shape : {Shape{8, 4}, Shape{6, 5, 7, 3}}) {
    SCOPED_TRACE(shape.to_string());
    const int64_t features = shape[shape.rank() - 1];
    nn::BatchNormalization eager({.momentum = 0.9}), traced({.momentum = 0.9});
    auto step = kiln::function([&](const Tensor& x) { return traced(x, true); });
    for (int i = 0; i < 5; ++i) {
      Tensor x = reshape(sample(shape.num_elements() / features, features, 0.5 * i), shape);
      expect_same_bits(step(x).to_vector<float>(), eager(x, true).to_vector<float>());
    }
    EXPECT_EQ(step.tracing_count(), 1);
    expect_same_bits(traced.moving_mean().read_value().to_vector<float>(),
                     eager.moving_mean().read_value().to_vector<float>());
    expect_same_bits(traced.moving_variance().read_value().to_vector<float>(),
                     eager.moving_variance().read_value().to_vector<float>());
  }
}

TEST(NnNormalization, BatchNormalizationSavedAndLoadedKeepsTrainingAndInference) {
  TempDir tmp;
  nn::BatchNormalization bn({.momentum = 0.5});
  auto train = kiln::function([&](const Tensor& x) { return bn(x, true); },
                              {.input_signature = std::vector{TensorSpec({None, 3})}, .name = "train"});
  auto predict = kiln::function([&](const Tensor& x) { return bn(x, false); },
                                {.input_signature = std::vector{TensorSpec({None, 3})}, .name = "predict"});
  train(sample(5, 3));
  saved_model::Object root = saved_model::module_object(bn);
  root.add("train", train).add("predict", predict);
  saved_model::save(root, tmp.path("bn"), {{"serving_default", {predict, {"x"}}}});
  saved_model::Loaded loaded = saved_model::load(tmp.path("bn"));

  Tensor probe = sample(4, 3, 1.1);
  expect_tensor_near<float>(loaded.signature("serving_default")({{"x", probe}}).at("output_0"), {4, 3},
                            predict(probe).to_vector<float>(), 0);
  // Training the loaded copy moves its statistics as the original's.
  Tensor batch = sample(7, 3, 2.0);
  expect_tensor_near<float>(loaded.function("train")(batch)[0], {7, 3}, train(batch).to_vector<float>(), 0);
  int moving = 0;
  for (const Variable& v : loaded.variables()) {
    if (v.name() == bn.moving_mean().name()) {
      expect_tensor_near<float>(v.read_value(), {3}, bn.moving_mean().read_value().to_vector<float>(), 0);
      EXPECT_FALSE(v.trainable());
      ++moving;
    }
  }
  EXPECT_EQ(moving, 1);
}

TEST(NnNormalization, LayerNormalizationNormalizesEachSample) {
  nn::LayerNormalization ln;
  Tensor x = sample(3, 5);
  std::vector<float> xv = x.to_vector<float>();
  Stats s = column_stats(xv, 3, 5, /*per_row=*/true);
  std::vector<float> want;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 5; ++c)
      want.push_back(static_cast<float>((xv[r * 5 + c] - s.mean[r]) / std::sqrt(s.variance[r] + 1e-3)));
  expect_tensor_near<float>(ln(x, true), {3, 5}, want, 1e-5);
  expect_tensor_near<float>(ln(x), {3, 5}, want, 1e-5);
  ln.gamma().assign(fill({5}, 2.f));
  ln.beta().assign(fill({5}, 1.f));
  for (float& w : want) w = 2 * w + 1;
  expect_tensor_near<float>(ln(x), {3, 5}, want, 1e-5);
  EXPECT_EQ(ln.trainable_variables().size(), 2u);

  // Traced: the same values; saved and loaded: the same again.
  auto f = kiln::function([&](const Tensor& in) { return ln(in); },
                          {.input_signature = std::vector{TensorSpec({None, 5})}, .name = "call"});
  expect_tensor_near<float>(f(x), {3, 5}, want, 1e-5);
  TempDir tmp;
  saved_model::save(ln, tmp.path("ln"), {{"serving_default", {f, {"x"}}}});
  expect_tensor_near<float>(saved_model::load(tmp.path("ln")).signature("serving_default")({{"x", x}}).at("output_0"),
                            {3, 5}, f(x).to_vector<float>(), 0);
}

TEST(NnNormalization, BadArgumentsAreNamed) {
  expect_error<InvalidArgument>([] { nn::BatchNormalization({.epsilon = 0}); }, {"epsilon must be positive"});
  expect_error<InvalidArgument>([] { nn::BatchNormalization({.momentum = 1.5}); }, {"momentum must be in [0, 1]"});
  expect_error<InvalidArgument>([] { nn::LayerNormalization({.epsilon = -1}); }, {"epsilon must be positive"});
  nn::BatchNormalization bn({.axis = 3});
  expect_error<InvalidArgument>([&] { bn(ones({2, 3})); }, {"axis 3 is out of range for inputs of rank 2"});
  nn::LayerNormalization ln;
  ln(ones({2, 3}));
  nn::BatchNormalization built;
  built(ones({2, 3}));
  expect_error<InvalidArgument>([&] { built(ones({2, 4})); }, {"has 4 features but the layer was built for 3"});
}
