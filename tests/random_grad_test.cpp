// The gradient of a Call or If whose graph draws random numbers uses the
// forward run's draws, not new ones (a Dropout mask must be the same both
// ways). Each forward returns x * mask for a random 0/1 mask; with x = ones
// the output is the mask, and the gradient of sum(output) must equal it.
#include "test_util.h"

#include "kiln/gradient.h"
#include "kiln/random.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

Tensor masked(const Tensor& x) { return x * cast(random::uniform_like(x) < 0.5, DType::Float32); }

// Many elements, so that a mask drawn again differs from the forward's one
// with overwhelming probability.
Tensor ones_x() { return ones(Shape{256}); }

void expect_same(const Tensor& grad, const Tensor& mask) {
  ASSERT_TRUE(grad.defined());
  std::vector<float> m = mask.to_vector<float>();
  float kept = 0;
  for (float v : m) kept += v;
  ASSERT_GT(kept, 0.f);
  ASSERT_LT(kept, static_cast<float>(m.size()));
  expect_tensor(grad, Shape{256}, m);
}

TEST(RandomGrad, EagerCallUnderTapeUsesTheForwardDraw) {
  auto f = function([](const Tensor& x) { return masked(x); });
  Tensor x = ones_x();
  for (int step = 0; step < 3; ++step) {  // the backward graph is cached; the draw is not
    GradientTape tape;
    tape.watch(x);
    Tensor y = f(x);
    expect_same(tape.gradient(sum(y), x), y);
  }
}

TEST(RandomGrad, CallInsideATracedFunctionUsesTheForwardDraw) {
  auto f = function([](const Tensor& x) { return masked(x); });
  auto g = function([&](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = f(x);
    return std::tuple{y, tape.gradient(sum(y), x)};
  });
  for (int step = 0; step < 2; ++step) {
    auto [y, dx] = g(ones_x());
    expect_same(dx, y);
  }
}

TEST(RandomGrad, CondUsesTheForwardDrawInEitherBranch) {
  auto g = function([](const Tensor& x, const Tensor& pred) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = cond(pred, [&] { return masked(x); }, [&] { return masked(x) * 3.f; });
    return std::tuple{y, tape.gradient(sum(y), x)};
  });
  auto [y, dx] = g(ones_x(), constant(true));
  expect_same(dx, y);
  auto [y3, dx3] = g(ones_x(), constant(false));
  expect_same(dx3 * (1.f / 3.f), y3 * (1.f / 3.f));
}

}  // namespace
