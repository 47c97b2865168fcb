// ApplyAdam: the same bits as the composite formula it replaces (eagerly and
// in graphs, float32 and float64), copy-on-write for values a reader holds,
// and its errors.
#include "test_util.h"

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "graph_test_util.h"

using namespace kiln;
using kiln::testing::expect_bitwise;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

namespace {

constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-7;

// Adam::apply_dense before it used the fused op.
void composite_adam(const Variable& var, const Variable& m_slot, const Variable& v_slot, const Tensor& grad,
                    const Tensor& alpha) {
  Tensor m = m_slot.read_value() * kBeta1 + grad * (1 - kBeta1);
  Tensor v = v_slot.read_value() * kBeta2 + square(grad) * (1 - kBeta2);
  m_slot.assign(m);
  v_slot.assign(v);
  var.assign_sub(alpha * m / (sqrt(v) + kEpsilon));
}

struct Slots {
  Variable var, m, v;
  Slots(const Tensor& var0, const Tensor& m0, const Tensor& v0)
      : var(var0, {.name = "var"}), m(m0, {.name = "m"}), v(v0, {.name = "v"}) {}
};

}  // namespace

// Several steps with random gradients and a changing alpha; the size is
// above the kernel's parallel grain, so its threads are covered too.
TEST(TrainingOps, ApplyAdamHasTheCompositeFormulasBits) {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (bool traced : {false, true}) {
      std::string what = fmt::format("{} {}", dtype_name(dtype), traced ? "traced" : "eager");
      Shape shape{300, 401};
      Tensor var0 = random::normal(shape, 0, 1, dtype, 1), m0 = random::normal(shape, 0, 0.1, dtype, 2);
      Tensor v0 = random::uniform(shape, 0, 0.01, dtype, 3);
      Slots fused(var0, m0, v0), composite(var0, m0, v0);
      auto both = [&](const Tensor& g, const Tensor& alpha) {
        apply_adam(fused.var, fused.m, fused.v, g, alpha, kBeta1, kBeta2, kEpsilon);
        composite_adam(composite.var, composite.m, composite.v, g, alpha);
      };
      auto graph = kiln::function(both);
      for (int step = 1; step <= 4; ++step) {
        Tensor g = random::normal(shape, 0, step, dtype, 10 + static_cast<uint64_t>(step));
        Tensor alpha = cast(constant(1e-3 * std::sqrt(1 - std::pow(kBeta2, step)) / (1 - std::pow(kBeta1, step))), dtype);
        if (traced) graph(g, alpha);
        else both(g, alpha);
        std::string at = fmt::format("{} step {}", what, step);
        expect_bitwise(fused.var.read_value(), composite.var.read_value(), at + " var");
        expect_bitwise(fused.m.read_value(), composite.m.read_value(), at + " m");
        expect_bitwise(fused.v.read_value(), composite.v.read_value(), at + " v");
      }
      if (traced) EXPECT_EQ(graph.tracing_count(), 1);
    }
  }
}

TEST(TrainingOps, ApplyAdamOnHandComputedValues) {
  Slots s(constant({1.f, -2.f}), constant({0.f, 0.f}), constant({0.f, 0.f}));
  apply_adam(s.var, s.m, s.v, constant({3.f, -0.5f}), constant(0.5f), 0.5, 0.75, 1.0);
  // m = g/2, v = g^2/4, var -= 0.5 * m / (|g|/2 + 1).
  expect_tensor<float>(s.m.read_value(), {2}, {1.5f, -0.25f});
  expect_tensor<float>(s.v.read_value(), {2}, {2.25f, 0.0625f});
  expect_tensor<float>(s.var.read_value(), {2}, {1.f - 0.75f / 2.5f, -2.f + 0.125f / 1.25f});
}

// A value read before the update keeps its value (the update writes a new
// buffer); with no reader left, the next update writes in place.
TEST(TrainingOps, ApplyAdamCopiesValuesThatReadersHold) {
  Slots s(constant({1.0, 2.0}), constant({0.5, 0.5}), constant({1.0, 1.0}));
  Tensor var_before = s.var.read_value(), m_before = s.m.read_value(), v_before = s.v.read_value();
  apply_adam(s.var, s.m, s.v, constant({1.0, -1.0}), constant(0.1), kBeta1, kBeta2, kEpsilon);
  expect_tensor<double>(var_before, {2}, {1.0, 2.0});
  expect_tensor<double>(m_before, {2}, {0.5, 0.5});
  expect_tensor<double>(v_before, {2}, {1.0, 1.0});
  EXPECT_NE(s.var.read_value().to_vector<double>(), var_before.to_vector<double>());

  const double* buffer = s.var.read_value().data<double>();  // the read is dropped at once
  apply_adam(s.var, s.m, s.v, constant({1.0, -1.0}), constant(0.1), kBeta1, kBeta2, kEpsilon);
  EXPECT_EQ(s.var.read_value().data<double>(), buffer);

  // Inside a graph: the value read before the op is the one returned.
  auto step = kiln::function([&](const Tensor& g) {
    Tensor before = s.var.read_value();
    apply_adam(s.var, s.m, s.v, g, constant(0.1), kBeta1, kBeta2, kEpsilon);
    return before;
  });
  std::vector<double> expected = s.var.read_value().to_vector<double>();
  expect_tensor<double>(step(constant({2.0, 3.0})), {2}, expected);
  EXPECT_NE(s.var.read_value().to_vector<double>(), expected);
}

TEST(TrainingOps, ApplyAdamErrors) {
  Slots s(constant({1.f, 2.f}), constant({0.f, 0.f}), constant({0.f, 0.f}));
  Tensor alpha = constant(0.1f);
  auto adam = [&](const Tensor& g, const Tensor& a) { apply_adam(s.var, s.m, s.v, g, a, kBeta1, kBeta2, kEpsilon); };
  expect_error<InvalidArgument>([&] { adam(constant({1.f, 2.f, 3.f}), alpha); },
                                {"ApplyAdam", "shape (2,)", "gradient has shape (3,)"});
  expect_error<InvalidArgument>([&] { adam(constant({1.0, 2.0}), alpha); },
                                {"ApplyAdam", "variables are float32", "gradient is float64"});
  expect_error<InvalidArgument>([&] { adam(constant({1.f, 2.f}), constant(0.1)); },
                                {"ApplyAdam", "alpha is float64"});
  expect_error<InvalidArgument>([&] { adam(constant({1.f, 2.f}), constant({0.1f, 0.2f})); },
                                {"ApplyAdam", "alpha must be a scalar", "(2,)"});
  Variable wide(constant({0.f, 0.f, 0.f}), {.name = "wide"}), doubles(constant({0.0, 0.0}), {.name = "doubles"});
  expect_error<InvalidArgument>(
      [&] { apply_adam(s.var, wide, s.v, constant({1.f, 2.f}), alpha, kBeta1, kBeta2, kEpsilon); },
      {"ApplyAdam: m ('wide') is float32 (3,) but var ('var') is float32 (2,)"});
  expect_error<InvalidArgument>(
      [&] { apply_adam(s.var, s.m, doubles, constant({1.f, 2.f}), alpha, kBeta1, kBeta2, kEpsilon); },
      {"ApplyAdam: v ('doubles') is float64"});
  expect_error<InvalidArgument>(
      [&] { apply_adam(s.var, s.m, s.m, constant({1.f, 2.f}), alpha, kBeta1, kBeta2, kEpsilon); },
      {"three different variables", "'var', 'm', 'm'"});
  Variable ints(constant({1, 2}), {.name = "ints"});
  expect_error<InvalidArgument>(
      [&] { apply_adam(ints, ints, ints, constant({1, 2}), constant(1), kBeta1, kBeta2, kEpsilon); },
      {"ApplyAdam", "float32 or float64, got int32"});
  // The same checks while tracing.
  auto traced = kiln::function([&](const Tensor& g) { adam(g, alpha); });
  expect_error<InvalidArgument>([&] { traced(constant({1.f, 2.f, 3.f})); }, {"ApplyAdam", "gradient has shape (3,)"});
  // Nothing changed.
  expect_tensor<float>(s.var.read_value(), {2}, {1.f, 2.f});
  expect_tensor<float>(s.m.read_value(), {2}, {0.f, 0.f});
}
