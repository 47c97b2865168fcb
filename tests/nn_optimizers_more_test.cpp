// RMSprop, Adagrad, AdamW, decoupled weight decay and gradient clipping:
// three steps against TF's formulas in double, eagerly and traced.
#include "test_util.h"

#include <cmath>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor_near;

namespace {

const std::vector<std::vector<double>> kGrads{{0.1, -0.2, 0.3}, {1.0, 0.5, -0.5}, {0.0, 0.2, 0.1}};
const std::vector<double> kStart{0.5, -1.0, 2.0};

std::vector<float> as_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// The variable after one step per gradient, eagerly or inside kiln::function.
std::vector<float> run(nn::Optimizer& opt, bool traced, const std::vector<std::vector<double>>& grads = kGrads) {
  Variable var(constant(as_float(kStart)), {.name = "w"});
  auto step = [&](const Tensor& g) {
    opt.apply_gradients({g}, {var});
    return var.read_value();
  };
  auto traced_step = kiln::function(step);
  for (const std::vector<double>& g : grads) traced ? traced_step(constant(as_float(g))) : step(constant(as_float(g)));
  return var.read_value().to_vector<float>();
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want) {
  expect_tensor_near<float>(constant(got), {static_cast<int64_t>(want.size())}, as_float(want), 1e-5);
}

}  // namespace

TEST(NnOptimizersMore, RmspropWithAndWithoutMomentum) {
  for (bool traced : {false, true}) {
    std::vector<double> x = kStart, y = kStart, ms(3, 0), ms2(3, 0), mom(3, 0);
    for (const auto& g : kGrads)
      for (int i = 0; i < 3; ++i) {
        ms[i] = 0.9 * ms[i] + 0.1 * g[i] * g[i];
        x[i] -= 0.01 * g[i] / (std::sqrt(ms[i]) + 1e-7);
        ms2[i] = 0.8 * ms2[i] + 0.2 * g[i] * g[i];
        mom[i] = 0.5 * mom[i] + 0.01 * g[i] / std::sqrt(ms2[i] + 1e-7);
        y[i] -= mom[i];
      }
    nn::RMSprop plain(0.01);
    expect_near(run(plain, traced), x);
    nn::RMSprop with_momentum(0.01, {.rho = 0.8, .momentum = 0.5});
    expect_near(run(with_momentum, traced), y);
  }
}

TEST(NnOptimizersMore, AdagradStartsItsAccumulatorAtTheInitialValue) {
  for (bool traced : {false, true}) {
    std::vector<double> x = kStart, acc(3, 0.1);
    for (const auto& g : kGrads)
      for (int i = 0; i < 3; ++i) {
        acc[i] += g[i] * g[i];
        x[i] -= 0.05 * g[i] / std::sqrt(acc[i] + 1e-7);
      }
    nn::Adagrad adagrad(0.05);
    expect_near(run(adagrad, traced), x);
    EXPECT_EQ(adagrad.variables().back().name(), "Adagrad/w/accumulator:0");
  }
}

TEST(NnOptimizersMore, AdamWDecaysTheWeightsBeforeAdamsStep) {
  for (bool traced : {false, true}) {
    std::vector<double> x = kStart, m(3, 0), v(3, 0);
    for (int t = 1; t <= 3; ++t) {
      const auto& g = kGrads[t - 1];
      double alpha = 0.01 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
      for (int i = 0; i < 3; ++i) {
        x[i] -= x[i] * 0.1 * 0.01;
        m[i] = 0.9 * m[i] + 0.1 * g[i];
        v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
        x[i] -= alpha * m[i] / (std::sqrt(v[i]) + 1e-7);
      }
    }
    nn::AdamW adamw(0.01, 0.1);
    EXPECT_EQ(adamw.name(), "AdamW");
    expect_near(run(adamw, traced), x);
    // Any optimizer decays: SGD's step is var -= var * wd * lr + lr * g.
    std::vector<double> s = kStart;
    for (const auto& g : kGrads)
      for (int i = 0; i < 3; ++i) s[i] -= s[i] * 0.2 * 0.1 + 0.1 * g[i];
    nn::SGD sgd(0.1, {.update = {.weight_decay = 0.2}});
    expect_near(run(sgd, traced), s);
  }
}

TEST(NnOptimizersMore, ClippingByValueNormAndGlobalNorm) {
  const std::vector<std::vector<double>> g{{3.0, -4.0, 0.5}};
  const double norm = std::sqrt(9 + 16 + 0.25);
  for (bool traced : {false, true}) {
    nn::SGD by_value(1.0, {.update = {.clipvalue = 1.0}});
    expect_near(run(by_value, traced, g), {-0.5, 0.0, 1.5});
    nn::SGD by_norm(1.0, {.update = {.clipnorm = 1.0}});
    expect_near(run(by_norm, traced, g), {0.5 - 3 / norm, -1 + 4 / norm, 2 - 0.5 / norm});
    nn::SGD under_norm(1.0, {.update = {.clipnorm = 10.0}});
    expect_near(run(under_norm, traced, g), {-2.5, 3.0, 1.5});
  }
  // One norm over every gradient: sqrt(norm^2 + 12^2).
  Variable a(constant({0.f, 0.f, 0.f})), b(constant({0.f}));
  nn::SGD global(1.0, {.update = {.global_clipnorm = 2.0}});
  auto step = kiln::function([&](const Tensor& ga, const Tensor& gb) { global.apply_gradients({ga, gb}, {a, b}); });
  step(constant({3.f, -4.f, 0.5f}), constant({12.f}));
  double scale = 2 / std::sqrt(norm * norm + 144);
  expect_tensor_near<float>(a.read_value(), {3},
                            {static_cast<float>(-3 * scale), static_cast<float>(4 * scale),
                             static_cast<float>(-0.5 * scale)}, 1e-6);
  expect_tensor_near<float>(b.read_value(), {1}, {static_cast<float>(-12 * scale)}, 1e-6);

  expect_error<InvalidArgument>([] { nn::Adam(0.1, {.update = {.clipnorm = 1.0, .global_clipnorm = 1.0}}); },
                                {"at most one of clipnorm and global_clipnorm"});
  expect_error<InvalidArgument>([] { nn::SGD(0.1, {.update = {.clipvalue = -1.0}}); }, {"clipvalue must be >= 0"});
  expect_error<InvalidArgument>([] { nn::RMSprop(0.1, {.rho = 2}); }, {"rho must be in [0, 1]"});
  expect_error<InvalidArgument>([] { nn::Adagrad(0.1, {.initial_accumulator_value = -1}); },
                                {"initial_accumulator_value must be >= 0"});
}
