// Gradients through cond and while_loop (docs/design-notes.md, "Autodiff"), eagerly (plain C++
// control flow recorded op by op) and traced (the If / While ops' gradients),
// with the same values both ways.
#include "test_util.h"

#include <cmath>

#include "kiln/gradient.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// d/dx of f(x), eagerly and inside a Function, for each x.
template <class F> void expect_grad_both_ways(F f, const std::vector<float>& xs, const std::vector<float>& want) {
  auto traced = function([&](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = f(x);
    return tape.gradient(y, x);
  });
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Tensor x = constant(xs[i]);
    GradientTape tape;
    tape.watch(x);
    Tensor eager = tape.gradient(f(x), x);
    // Eagerly only the branch taken runs: one that does not use x leaves
    // the gradient undefined (TF's None); the traced If gives zeros.
    if (!eager.defined()) eager = zeros_like(x);
    expect_tensor_near<float>(eager, Shape{}, {want[i]}, 1e-4f);
    expect_tensor_near<float>(traced(x), Shape{}, {want[i]}, 1e-4f);
  }
  EXPECT_EQ(traced.tracing_count(), 1);
}

}  // namespace

TEST(ControlFlowGradient, CondTakesTheBranchTaken) {
  // The seeds' square_if_positive: x*x for x > 0, else 0.
  auto square_if_positive = [](const Tensor& x) { return cond(x > 0, [&] { return x * x; }, [&] { return zeros_like(x); }); };
  expect_grad_both_ways(square_if_positive, {3.f, -2.f}, {6.f, 0.f});
}

TEST(ControlFlowGradient, CondWithDifferentUsesOfCapturedTensors) {
  Tensor w = constant(5.f);
  auto f = [&](const Tensor& x) { return cond(x > 1, [&] { return x * w; }, [&] { return sin(x); }); };
  expect_grad_both_ways(f, {2.f, 0.5f}, {5.f, std::cos(0.5f)});
}

TEST(ControlFlowGradient, WhileLoopRepeatedSquaring) {
  // x -> x^8 by three squarings: 8 x^7.
  auto f = [](const Tensor& x) {
    auto [i, y] = while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
                             [](const Tensor& i, const Tensor& y) { return std::tuple{i + 1, y * y}; },
                             std::tuple{constant(0), x});
    return y;
  };
  expect_grad_both_ways(f, {1.1f, 0.9f}, {8 * std::pow(1.1f, 7.f), 8 * std::pow(0.9f, 7.f)});
}

TEST(ControlFlowGradient, WhileLoopTanhSeed) {
  // The seeds' loop: while sum(x) > 1: x = tanh(x); d/dx through the taken steps.
  auto f = [](const Tensor& x) {
    return while_loop([](const Tensor& v) { return sum(v) > 1.f; }, [](const Tensor& v) { return tanh(v); }, x);
  };
  std::vector<float> want;
  for (float x0 : {3.f, 0.5f}) {
    float v = x0, d = 1;
    while (v > 1) {
      d *= 1 - std::tanh(v) * std::tanh(v);
      v = std::tanh(v);
    }
    want.push_back(d);
  }
  expect_grad_both_ways(f, {3.f, 0.5f}, want);
}

TEST(ControlFlowGradient, WhileLoopCapturedTensorGetsSummedGradient) {
  // y = x * w^n: dy/dw = n x w^(n-1), with w captured by the body.
  Tensor n = constant(4);
  auto traced = function([&](const Tensor& x, const Tensor& w) {
    GradientTape tape;
    tape.watch(w);
    auto [i, y] = while_loop([&](const Tensor& i, const Tensor&) { return i < n; },
                             [&](const Tensor& i, const Tensor& y) { return std::tuple{i + 1, y * w}; },
                             std::tuple{constant(0), x});
    return tape.gradient(y, w);
  });
  expect_tensor_near<float>(traced(constant(2.f), constant(1.5f)), Shape{}, {4 * 2 * 1.5f * 1.5f * 1.5f}, 1e-4f);
}

TEST(ControlFlowGradient, NestedCondInsideWhileInsideAFunctionUnderAnEagerTape) {
  // Collatz-like: halve when > 1, else add 3, three times; the Function is
  // called eagerly under a tape (one Call op, its backward graph traced).
  auto f = function([](const Tensor& x) {
    auto [i, y] = while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
                             [](const Tensor& i, const Tensor& y) {
                               return std::tuple{i + 1, cond(y > 1, [&] { return y * 0.5f; }, [&] { return y * y + 3.f; })};
                             },
                             std::tuple{constant(0), x});
    return y;
  });
  Tensor x = constant(8.f);  // 8 -> 4 -> 2 -> 1: y = x / 8
  GradientTape tape;
  tape.watch(x);
  Tensor y = f(x);
  expect_tensor<float>(y, Shape{}, {1.f});
  expect_tensor_near<float>(tape.gradient(y, x), Shape{}, {0.125f}, 1e-6f);
}

TEST(ControlFlowGradient, VariableReadInsideALoopBody) {
  Variable w(constant(2.f), {.name = "w"});
  auto step = function([&](const Tensor& x) {
    GradientTape tape;
    Tensor y = for_range(0, 3, 1, x, [&](const Tensor&, const Tensor& v) { return v * w.read_value(); });
    return tape.gradient(y, w);  // d(x w^3)/dw = 3 x w^2
  });
  expect_tensor_near<float>(step(constant(1.f)), Shape{}, {12.f}, 1e-5f);
}
