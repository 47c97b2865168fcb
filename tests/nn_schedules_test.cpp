// Learning-rate schedules: ExponentialDecay and CosineDecay against their
// closed forms, optimizers driven by them for N eager and N traced steps (one
// trace), the state a saved training step carries on with, and the errors.
#include "test_util.h"

#include <cmath>
#include <numbers>

#include <kiln/saved_model.h>

#include "kiln/kiln.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::TempDir;

namespace {

double exponential(double step, bool staircase) {
  double p = step / 10;
  return 0.1 * std::pow(0.5, staircase ? std::floor(p) : p);
}

double cosine(double step) {
  double done = std::min(step, 8.0) / 8;
  return 0.2 * ((1 - 0.25) * 0.5 * (1 + std::cos(std::numbers::pi * done)) + 0.25);
}

// A scalar weight that every step moves by the step's rate (gradient 1):
// after n steps w = 1 - rate(0) - ... - rate(n - 1).
struct Trained : Module {
  Variable w = add_variable("w", constant(1.0f));
  std::shared_ptr<nn::SGD> sgd;
  Method<Tensor()> step = method<Tensor()>("step", [this] {
    sgd->apply_gradients({constant(1.0f)}, {w});
    return w.read_value();
  });
  explicit Trained(nn::LearningRate rate) : Module("trained"), sgd(track(nn::SGD(std::move(rate)))) {}
  Trained(Trained&&) = delete;
};

template <class Rate>
void expect_sgd_follows(nn::LearningRate rate, Rate closed_form) {
  Trained eager(rate), traced(rate);
  double want = 1;
  for (int n = 0; n < 24; ++n) {
    EXPECT_NEAR(eager.sgd->learning_rate(), closed_form(n), 1e-7) << "before step " << n;
    eager.sgd->apply_gradients({constant(1.0f)}, {eager.w});
    traced.step();
    want -= closed_form(n);
    EXPECT_NEAR(eager.w.read_value().item<float>(), want, 1e-5) << "after step " << n;
    EXPECT_EQ(traced.w.read_value().item<float>(), eager.w.read_value().item<float>()) << "after step " << n;
  }
  EXPECT_EQ(traced.step.tracing_count(), 1);
  EXPECT_EQ(traced.sgd->iterations().read_value().item<int64_t>(), 24);
}

}  // namespace

TEST(NnSchedules, ExponentialDecayIsItsClosedForm) {
  for (bool staircase : {false, true}) {
    nn::ExponentialDecay schedule(0.1, 10, 0.5, staircase);
    for (int64_t step : {0, 1, 5, 10, 15, 25, 100}) {
      Tensor rate = schedule(constant(step));
      EXPECT_EQ(rate.dtype(), DType::Float32);
      double want = exponential(double(step), staircase);
      EXPECT_NEAR(rate.item<float>(), want, 1e-7 * want) << step;  // float32
    }
  }
}

TEST(NnSchedules, CosineDecayIsItsClosedFormAndStaysAtAlphaAfterwards) {
  nn::CosineDecay schedule(0.2, 8, 0.25);
  for (int64_t step : {0, 2, 4, 8, 9, 50}) EXPECT_NEAR(schedule(constant(step)).item<float>(), cosine(double(step)), 1e-7);
  EXPECT_NEAR(schedule(constant(int64_t{50})).item<float>(), 0.2 * 0.25, 1e-8);
  EXPECT_NEAR(nn::CosineDecay(1.0, 4)(constant(2.0f)).item<float>(), 0.5, 1e-7);
}

TEST(NnSchedules, OptimizersFollowTheScheduleEagerAndTracedWithOneTrace) {
  expect_sgd_follows(nn::ExponentialDecay(0.1, 10, 0.5), [](int n) { return exponential(n, false); });
  expect_sgd_follows(nn::ExponentialDecay(0.1, 10, 0.5, true), [](int n) { return exponential(n, true); });
  expect_sgd_follows(nn::CosineDecay(0.2, 8, 0.25), [](int n) { return cosine(n); });
}

TEST(NnSchedules, AdamScalesTheScheduledRate) {
  // Adam's first step moves a weight by its rate against the gradient's sign.
  Variable w(constant(1.0f), {.name = "w"});
  nn::Adam adam(nn::ExponentialDecay(0.1, 1, 0.5));
  adam.apply_gradients({constant(3.0f)}, {w});
  EXPECT_NEAR(w.read_value().item<float>(), 1 - 0.1, 1e-6);
  EXPECT_NEAR(adam.learning_rate(), 0.05, 1e-8);
}

TEST(NnSchedules, ASavedTrainingStepCarriesTheScheduleOn) {
  TempDir tmp;
  Trained model(nn::ExponentialDecay(0.1, 10, 0.5));
  for (int n = 0; n < 3; ++n) model.step();
  saved_model::save(model, tmp.path("trained"));
  saved_model::Loaded loaded = saved_model::load(tmp.path("trained"));
  const saved_model::LoadedObject& sgd = loaded.child("SGD");
  EXPECT_EQ(sgd.variable("iter").read_value().item<int64_t>(), 3);
  EXPECT_NEAR(sgd.variable("learning_rate").read_value().item<float>(), exponential(2, false), 1e-8);
  // The loaded step computes the rate from the loaded count: steps 3 and 4.
  float w = loaded.variable("w").read_value().item<float>();
  loaded.function("step")();
  loaded.function("step")();
  EXPECT_NEAR(loaded.variable("w").read_value().item<float>(), w - exponential(3, false) - exponential(4, false),
              1e-6);
  EXPECT_EQ(sgd.variable("iter").read_value().item<int64_t>(), 5);
}

TEST(NnSchedules, BadArgumentsAreNamed) {
  expect_error<InvalidArgument>([] { nn::ExponentialDecay(0.1, 0, 0.5); },
                                {"ExponentialDecay", "`decay_steps` must be > 0", "decay_steps=0"});
  expect_error<InvalidArgument>([] { nn::CosineDecay(0.1, -3); }, {"CosineDecay", "decay_steps=-3"});
  nn::SGD sgd(nn::CosineDecay(0.1, 10));
  expect_error<FailedPrecondition>([&] { sgd.set_learning_rate(0.5); },
                                   {"SGD", "created with a CosineDecay", "not settable"});
  ASSERT_TRUE(sgd.learning_rate_schedule());
  EXPECT_EQ(sgd.learning_rate_schedule()->class_name(), "CosineDecay");
  EXPECT_FALSE(nn::SGD(0.1).learning_rate_schedule());
}
