// Losses and metrics against hand-computed values.
#include "test_util.h"

#include <cmath>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

namespace {
const Tensor kProbs = constant({{0.1f, 0.6f, 0.3f}, {0.2f, 0.2f, 0.6f}});
// log(e + e^2 + e^3) - 3: the cross entropy of logits [1 2 3] at class 2.
const float kLogitLoss = static_cast<float>(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0);
}  // namespace

TEST(NnLosses, SparseCategoricalCrossentropyFromProbabilities) {
  Tensor labels = constant({1, 0});
  float a = -std::log(0.6f), b = -std::log(0.2f);
  expect_tensor_near<float>(nn::sparse_categorical_crossentropy(labels, kProbs), {2}, {a, b});
  nn::SparseCategoricalCrossentropy loss;
  EXPECT_EQ(loss.name(), "sparse_categorical_crossentropy");
  expect_tensor_near<float>(loss(labels, kProbs), {}, {(a + b) / 2});
  // Labels of shape (batch, 1) and of other integer dtypes work too.
  expect_tensor_near<float>(loss(constant({{1}, {0}}, DType::UInt8), kProbs), {}, {(a + b) / 2});
  // Probabilities are renormalised and clipped to [1e-7, 1 - 1e-7], as Keras.
  expect_tensor_near<float>(nn::sparse_categorical_crossentropy(constant({0}), constant({{1.f, 1.f}})), {1},
                            {std::log(2.f)});
  expect_tensor_near<float>(nn::sparse_categorical_crossentropy(constant({0}), constant({{0.f, 1.f}})), {1},
                            {-std::log(1e-7f)}, 1e-4);
  expect_error<InvalidArgument>([&] { loss(constant({1, 3}), kProbs); },
                                {"sparse_categorical_crossentropy", "[0, 3)", "label 3"});
  expect_error<InvalidArgument>([&] { loss(constant({1, 2, 0}), kProbs); }, {"y_true has shape (3,)", "(2,)"});
  expect_error<InvalidArgument>([&] { loss(constant({1}), constant({2})); }, {"y_pred", "float32 or float64"});
}

TEST(NnLosses, SparseCategoricalCrossentropyFromLogits) {
  nn::SparseCategoricalCrossentropy loss({.from_logits = true});
  Tensor logits = constant({{1.f, 2.f, 3.f}, {1.f, 2.f, 3.f}});
  expect_tensor_near<float>(loss(constant({2, 2}), logits), {}, {kLogitLoss});
  nn::SparseCategoricalCrossentropy per_sample({.from_logits = true, .reduction = nn::Reduction::None});
  expect_tensor_near<float>(per_sample(constant({2, 0}), logits), {2}, {kLogitLoss, kLogitLoss + 2});
  nn::SparseCategoricalCrossentropy summed({.from_logits = true, .reduction = nn::Reduction::Sum});
  expect_tensor_near<float>(summed(constant({2, 0}), logits), {}, {2 * kLogitLoss + 2});
  // Large logits stay finite (log_softmax, not log of softmax).
  expect_tensor_near<float>(loss(constant({0}), constant({{1000.f, 0.f}})), {}, {0.f});
}

TEST(NnLosses, CategoricalCrossentropy) {
  Tensor one_hot_labels = constant({{0.f, 1.f, 0.f}, {0.f, 0.f, 1.f}});
  nn::CategoricalCrossentropy loss;
  expect_tensor_near<float>(loss(one_hot_labels, kProbs), {}, {-std::log(0.6f)});
  nn::CategoricalCrossentropy from_logits({.from_logits = true});
  expect_tensor_near<float>(from_logits(constant({{0.f, 0.f, 1.f}}), constant({{1.f, 2.f, 3.f}})), {}, {kLogitLoss});
  // Soft targets: -(0.5 log 0.25 + 0.5 log 0.75).
  expect_tensor_near<float>(nn::categorical_crossentropy(constant({{0.5f, 0.5f}}), constant({{0.25f, 0.75f}})), {1},
                            {-0.5f * (std::log(0.25f) + std::log(0.75f))});
  expect_error<InvalidArgument>([&] { loss(constant({{1.f, 0.f}}), kProbs); }, {"(1, 2)", "(2, 3)"});
}

TEST(NnLosses, MeanSquaredError) {
  Tensor y_true = constant({{0.f, 1.f}, {1.f, 1.f}});
  Tensor y_pred = constant({{1.f, 1.f}, {1.f, 3.f}});
  expect_tensor<float>(nn::mean_squared_error(y_true, y_pred), {2}, {0.5f, 2.f});
  nn::MeanSquaredError mse;
  EXPECT_EQ(mse.name(), "mean_squared_error");
  expect_tensor<float>(mse(y_true, y_pred), {}, {1.25f});
  // Integer targets are cast to the predictions' dtype.
  expect_tensor<float>(mse(constant({{0, 1}, {1, 1}}), y_pred), {}, {1.25f});
}

TEST(NnLosses, LossInsideFunctionMatchesEager) {
  nn::SparseCategoricalCrossentropy loss({.from_logits = true});
  auto f = kiln::function([&](const Tensor& y, const Tensor& logits) { return loss(y, logits); },
                          {.input_signature = std::vector{TensorSpec({None}, DType::Int32), TensorSpec({None, 3})}});
  Tensor logits = constant({{1.f, 2.f, 3.f}, {0.f, 0.f, 5.f}, {2.f, -1.f, 0.f}});
  Tensor labels = constant({2, 1, 0});
  expect_tensor<float>(f(labels, logits), {}, loss(labels, logits).to_vector<float>());
}

TEST(NnMetrics, SparseCategoricalAccuracy) {
  Tensor probs = constant({{0.1f, 0.6f, 0.3f}, {0.2f, 0.2f, 0.6f}, {0.f, 0.f, 1.f}});
  expect_tensor<float>(nn::sparse_categorical_accuracy(constant({1, 0, 2}), probs), {3}, {1.f, 0.f, 1.f});
  nn::SparseCategoricalAccuracy acc;
  EXPECT_EQ(acc.name(), "sparse_categorical_accuracy");
  acc.update_state(constant({1, 0, 2}), probs);
  acc.update_state(constant({{1}}), constant({{0.f, 1.f, 0.f}}));
  expect_tensor<float>(acc.result(), {}, {0.75f});
  EXPECT_EQ(acc.variables().size(), 2u);
  EXPECT_TRUE(acc.trainable_variables().empty());
}

TEST(NnMetrics, MeanIsStatefulEagerAndTraced) {
  nn::Mean mean;
  EXPECT_EQ(mean.name(), "mean");
  expect_tensor<float>(mean.result(), {}, {0.f});  // before any update
  mean.update_state(constant({1.f, 2.f, 3.f}));
  mean.update_state(constant(4.f));
  expect_tensor<float>(mean.result(), {}, {2.5f});
  mean.reset_state();
  expect_tensor<float>(mean.result(), {}, {0.f});
  // Inside a function with an unknown batch size the count comes from the graph.
  auto update = kiln::function([&](const Tensor& v) { mean.update_state(v); },
                               {.input_signature = std::vector{TensorSpec({None})}});
  update(constant({1.f, 2.f}));
  update(constant({6.f, 7.f, 9.f}));
  expect_tensor<float>(mean.result(), {}, {5.f});
  EXPECT_EQ(update.tracing_count(), 1);
}
