// SGD, SGD with momentum and Adam: updates against hand-computed values,
// lazily created state, and the same steps inside kiln::function.
#include "test_util.h"

#include <cmath>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

using kiln::testing::names;

TEST(NnOptimizers, SgdSteps) {
  Variable w(constant({1.f, 2.f}), {.name = "w"});
  nn::SGD sgd(0.1);
  EXPECT_EQ(sgd.name(), "SGD");
  EXPECT_FALSE(sgd.iterations());  // no state before the first apply
  sgd.apply_gradients({constant({0.5f, -1.f})}, {w});
  expect_tensor_near<float>(w.read_value(), {2}, {0.95f, 2.1f});
  sgd.apply_gradients({constant({1.f, 1.f})}, {w});
  expect_tensor_near<float>(w.read_value(), {2}, {0.85f, 2.0f});
  EXPECT_EQ(sgd.iterations().read_value().item<int64_t>(), 2);
  EXPECT_EQ(names(sgd.variables()), (std::vector<std::string>{"SGD/iter:0", "SGD/learning_rate:0"}));
  EXPECT_FALSE(sgd.slot(w, "momentum"));  // plain SGD keeps no velocity
}

TEST(NnOptimizers, SgdMomentumSteps) {
  Variable w(1.f, {.name = "w"}), n(1.f, {.name = "n"});
  nn::SGD momentum(0.1, {.momentum = 0.9});
  nn::SGD nesterov(0.1, {.momentum = 0.9, .nesterov = true});
  // v = 0.9 v - 0.1 g; w += v  (g = 1):  v = -0.1, -0.19, -0.271
  const float expected[] = {0.9f, 0.71f, 0.439f};
  // nesterov: w += 0.9 v - 0.1 g:  -0.19, -0.271, -0.3439
  const float expected_nesterov[] = {0.81f, 0.539f, 0.1951f};
  for (int step = 0; step < 3; ++step) {
    momentum.apply_gradients({constant(1.f)}, {w});
    nesterov.apply_gradients({constant(1.f)}, {n});
    expect_tensor_near<float>(w.read_value(), {}, {expected[step]});
    expect_tensor_near<float>(n.read_value(), {}, {expected_nesterov[step]});
  }
  Variable velocity = momentum.slot(w, "momentum");
  ASSERT_TRUE(velocity);
  EXPECT_EQ(velocity.name(), "SGD/w/momentum:0");
  expect_tensor_near<float>(velocity.read_value(), {}, {-0.271f});
}

TEST(NnOptimizers, AdamSteps) {
  Variable w(constant({1.f, -2.f}), {.name = "dense/kernel:0"});
  nn::Adam adam(0.1);
  // The first step moves each weight by about lr against its gradient's sign:
  // m = 0.1 g, v = 0.001 g^2, lr_t = 0.1 * sqrt(0.001) / 0.1.
  adam.apply_gradients({constant({3.f, -0.5f})}, {w});
  expect_tensor_near<float>(w.read_value(), {2}, {0.9f, -1.9f}, 1e-5);
  // Two more steps, against Keras' formula in double precision.
  double ref[2] = {0.9, -1.9}, m[2], v[2];
  const double g1[2] = {3, -0.5}, g2[2] = {-1, 2}, g3[2] = {0.5, 0.25};
  for (int i = 0; i < 2; ++i) m[i] = 0.1 * g1[i], v[i] = 0.001 * g1[i] * g1[i];
  for (int t = 2; t <= 3; ++t) {
    const double* g = t == 2 ? g2 : g3;
    double alpha = 0.1 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
    for (int i = 0; i < 2; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      ref[i] -= alpha * m[i] / (std::sqrt(v[i]) + 1e-7);
    }
    adam.apply_gradients({constant({static_cast<float>(g[0]), static_cast<float>(g[1])})}, {w});
    expect_tensor_near<float>(w.read_value(), {2}, {static_cast<float>(ref[0]), static_cast<float>(ref[1])}, 1e-5);
  }
  EXPECT_EQ(adam.iterations().read_value().item<int64_t>(), 3);
  EXPECT_EQ(names(adam.variables()), (std::vector<std::string>{"Adam/iter:0", "Adam/learning_rate:0",
                                                               "Adam/dense/kernel/m:0", "Adam/dense/kernel/v:0"}));
  expect_tensor_near<float>(adam.slot(w, "m").read_value(), {2},
                            {static_cast<float>(m[0]), static_cast<float>(m[1])});
}

TEST(NnOptimizers, Float64VariablesAndLearningRateChanges) {
  Variable w(constant({1.0}), {.name = "w"});
  nn::SGD sgd(0.5);
  sgd.apply_gradients({constant({1.0})}, {w});
  expect_tensor<double>(w.read_value(), {1}, {0.5});
  sgd.set_learning_rate(0.25);
  EXPECT_EQ(sgd.learning_rate(), 0.25);
  sgd.apply_gradients({constant({1.0})}, {w});
  expect_tensor<double>(w.read_value(), {1}, {0.25});
}

// Once made, the "learning_rate" variable is the rate, as Keras': assigning
// it (a user's assign, a restore of saved values) is what learning_rate()
// reports and what the next step applies.
TEST(NnOptimizers, TheLearningRateVariableIsTheRate) {
  Variable w(constant({1.0}), {.name = "w"});
  nn::SGD sgd(0.5);
  sgd.set_learning_rate(0.125);  // before the state exists: its initial value
  EXPECT_EQ(sgd.learning_rate(), 0.125);
  sgd.apply_gradients({constant({1.0})}, {w});
  expect_tensor<double>(w.read_value(), {1}, {0.875});
  Variable rate = sgd.variables()[1];
  ASSERT_EQ(rate.name(), "SGD/learning_rate:0");
  EXPECT_EQ(rate.read_value().item<float>(), 0.125f);
  rate.assign(constant(0.25f));
  EXPECT_EQ(sgd.learning_rate(), 0.25);
  sgd.apply_gradients({constant({1.0})}, {w});
  expect_tensor<double>(w.read_value(), {1}, {0.625});
}

// apply_gradients computes the step's rate once per dtype and shares it among
// the variables: each variable still moves as it does when trained alone.
TEST(NnOptimizers, AdamOverMixedDtypesMovesEachVariableAsAlone) {
  Variable a(constant({1.f, -2.f}), {.name = "a"}), b(constant({0.5, 3.0}), {.name = "b"}),
      c(constant({4.f}), {.name = "c"});
  Variable a_alone(constant({1.f, -2.f}), {.name = "a"}), b_alone(constant({0.5, 3.0}), {.name = "b"}),
      c_alone(constant({4.f}), {.name = "c"});
  nn::Adam together(0.1), for_a(0.1), for_b(0.1), for_c(0.1);
  for (int step = 0; step < 3; ++step) {
    Tensor ga = constant({0.3f * static_cast<float>(step + 1), -1.f});
    Tensor gb = constant({2.0, -0.25 * step}), gc = constant({1.f - static_cast<float>(step)});
    together.apply_gradients({ga, gb, gc}, {a, b, c});
    for_a.apply_gradients({ga}, {a_alone});
    for_b.apply_gradients({gb}, {b_alone});
    for_c.apply_gradients({gc}, {c_alone});
    expect_tensor<float>(a.read_value(), {2}, a_alone.read_value().to_vector<float>());
    expect_tensor<double>(b.read_value(), {2}, b_alone.read_value().to_vector<double>());
    expect_tensor<float>(c.read_value(), {1}, c_alone.read_value().to_vector<float>());
  }
  EXPECT_NE(a.read_value().to_vector<float>()[0], 1.f);
  EXPECT_NE(b.read_value().to_vector<double>()[0], 0.5);
}

TEST(NnOptimizers, SkipsUndefinedGradientsAndRejectsBadInput) {
  Variable a(1.f, {.name = "a"}), b(constant({1.f, 1.f}), {.name = "b"});
  nn::Adam adam;
  adam.apply_gradients({Tensor(), constant({1.f, 1.f})}, {a, b});
  expect_tensor<float>(a.read_value(), {}, {1.f});  // skipped
  EXPECT_LT(b.read_value().to_vector<float>()[0], 1.f);
  EXPECT_TRUE(adam.slot(a, "m"));  // slots exist for every variable given
  expect_error<InvalidArgument>([&] { adam.apply_gradients({constant(1.f)}, {a, b}); },
                                {"Adam.apply_gradients", "1 gradients for 2 variables"});
  expect_error<InvalidArgument>([&] { adam.apply_gradients({constant(1.0)}, {a}); },
                                {"gradient 0", "float64", "'a'", "float32"});
  expect_error<InvalidArgument>([&] { adam.apply_gradients({constant({1.f, 2.f, 3.f})}, {b}); },
                                {"gradient 0", "(3,)", "'b'", "(2,)"});
  expect_error<InvalidArgument>([&] { adam.apply_gradients({Tensor()}, {a}); }, {"no gradient"});
  // The failed calls left the state alone.
  EXPECT_EQ(adam.iterations().read_value().item<int64_t>(), 1);
  expect_error<InvalidArgument>([] { nn::SGD(0.1, {.momentum = 1.5}); }, {"momentum", "1.5"});
}

TEST(NnOptimizers, TracedStepsEqualEagerSteps) {
  for (bool use_adam : {false, true}) {
    SCOPED_TRACE(use_adam ? "Adam" : "SGD momentum");
    Variable eager_w(constant({{1.f, 2.f}, {3.f, 4.f}}), {.name = "w"}), eager_b(constant({0.5f}), {.name = "b"});
    Variable graph_w(constant({{1.f, 2.f}, {3.f, 4.f}}), {.name = "w"}), graph_b(constant({0.5f}), {.name = "b"});
    std::unique_ptr<nn::Optimizer> eager_opt, graph_opt;
    if (use_adam) {
      eager_opt = std::make_unique<nn::Adam>(0.01);
      graph_opt = std::make_unique<nn::Adam>(0.01);
    } else {
      eager_opt = std::make_unique<nn::SGD>(0.01, nn::SGDOptions{.momentum = 0.9});
      graph_opt = std::make_unique<nn::SGD>(0.01, nn::SGDOptions{.momentum = 0.9});
    }
    auto step = kiln::function([&](const std::vector<Tensor>& grads) {
      graph_opt->apply_gradients(grads, {graph_w, graph_b});
    });
    for (int i = 0; i < 3; ++i) {
      std::vector<Tensor> grads = {constant({{0.1f * i, -1.f}, {2.f, 0.5f}}), constant({1.f - i})};
      eager_opt->apply_gradients(grads, {eager_w, eager_b});
      step(grads);
      expect_tensor<float>(graph_w.read_value(), {2, 2}, eager_w.read_value().to_vector<float>());
      expect_tensor<float>(graph_b.read_value(), {1}, eager_b.read_value().to_vector<float>());
    }
    EXPECT_EQ(graph_opt->iterations().read_value().item<int64_t>(), 3);
    EXPECT_EQ(graph_opt->variables().size(), eager_opt->variables().size());
    // The state was created by the first trace only; no retrace since.
    EXPECT_EQ(step.cache_info().entries, 1);
    EXPECT_EQ(step.tracing_count(), 1);
  }
}

TEST(NnOptimizers, StateHasValuesWhenTheFirstTraceNeverRuns) {
  Variable w(constant({1.f, 2.f}), {.name = "w"});
  nn::Adam adam(0.1);
  auto step = kiln::function([&](const Tensor& g) { adam.apply_gradients({g}, {w}); });
  step.get_concrete_function(TensorSpec({2}));
  expect_tensor<float>(adam.slot(w, "m").read_value(), {2}, {0.f, 0.f});
  EXPECT_EQ(adam.iterations().read_value().item<int64_t>(), 0);
  step(constant({1.f, -1.f}));
  expect_tensor_near<float>(w.read_value(), {2}, {0.9f, 2.1f}, 1e-5);
  EXPECT_EQ(adam.iterations().read_value().item<int64_t>(), 1);
}

TEST(NnOptimizers, LinearRegressionTrainsInsideAFunction) {
  // y = 2x + 1 learned by a Dense(1) with hand-written MSE gradients (no
  // GradientTape needed): d/dk = 2/N x^T (pred - y), d/db = 2/N sum(pred - y).
  nn::Dense dense(1, {.seed = 3});
  nn::MeanSquaredError mse;
  nn::SGD sgd(0.1, {.momentum = 0.5});
  auto train_step = kiln::function([&](const Tensor& x, const Tensor& y) {
    Tensor pred = dense(x);
    Tensor err = (pred - y) * (2.0f / static_cast<float>(x.shape()[0]));
    std::vector<Tensor> grads = {matmul(x, err, /*transpose_a=*/true), sum(err, 0)};
    sgd.apply_gradients(grads, {dense.kernel(), dense.bias()});
    return mse(y, pred);
  });
  Tensor x = constant({{-1.f}, {0.f}, {1.f}, {2.f}});
  Tensor y = x * 2 + 1;
  float first = train_step(x, y).item<float>();
  float last = first;
  for (int i = 0; i < 100; ++i) last = train_step(x, y).item<float>();
  EXPECT_LT(last, first * 1e-4);
  expect_tensor_near<float>(dense.kernel().read_value(), {1, 1}, {2.f}, 1e-3);
  expect_tensor_near<float>(dense.bias().read_value(), {1}, {1.f}, 1e-3);
  EXPECT_EQ(train_step.tracing_count(), 1);
  EXPECT_EQ(sgd.iterations().read_value().item<int64_t>(), 101);
}
