// Issue #45 on the engine side: a slice step near +-2^63 (signed overflow
// made it empty), and the deadline / cancellation of graph calls
// (kiln/cancellation.h) that bounds a loop a hostile model never ends.
#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

#include "kiln/cancellation.h"
#include "kiln/kiln.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// NumPy's answers: np.arange(5)[::2**63-1] == [0], [::-2**63] == [4],
// [3::2**63-1] == [3], [::-(2**63-1)] == [4], [1:4:-2**63] == [] ...
TEST(HostileSlices, StepsNearTwoToThe63TakeOneElement) {
  Tensor x = constant({0, 1, 2, 3, 4});
  struct Case {
    Slice slice;
    std::vector<int32_t> want;
  };
  const std::vector<Case> cases = {
      {Slice(None, None, kMax), {0}}, {Slice(None, None, kMin), {4}},     {Slice(3, None, kMax), {3}},
      {Slice(None, None, -kMax), {4}}, {Slice(4, 0, kMin), {4}},          {Slice(1, 4, kMin), {}},
      {Slice(kMin, kMax, kMax), {0}},  {Slice(kMax, kMin, kMin), {4}},    {Slice(None, None, kMax - 1), {0}},
      {Slice(None, None, 2), {0, 2, 4}}};
  for (const Case& c : cases) {
    Tensor eager = x[c.slice];
    EXPECT_EQ(eager.to_vector<int32_t>(), c.want) << c.slice.step;
    // In a graph: inference and the kernel agree.
    auto f = kiln::function([&](const Tensor& t) { return t[c.slice]; },
                            {.input_signature = std::vector<TensorSpec>{TensorSpec({5}, DType::Int32)}});
    EXPECT_EQ(f(x).to_vector<int32_t>(), c.want) << c.slice.step;
  }
  // The gradient writes the one element back.
  Variable v(constant({1.f, 2.f, 3.f}));
  GradientTape tape;
  Tensor y = sum(v.read_value()[Slice(None, None, kMin)] * 5.f);
  EXPECT_EQ(tape.gradient(y, {v})[0].to_vector<float>(), (std::vector<float>{0.f, 0.f, 5.f}));
}

// A graph loop that never ends by itself (its counter only grows).
auto endless_function() {
  return kiln::function(
      [](const Tensor& x) {
        auto [i, acc] = while_loop([](const Tensor& i, const Tensor&) { return i >= 0.f; },
                                   [](const Tensor& i, const Tensor& a) { return std::tuple{i + 1.f, a + i}; },
                                   std::tuple{x, x});
        return acc;
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({})}});
}

TEST(Cancellation, DeadlineStopsAnEndlessLoopBetweenOps) {
  auto f = endless_function();
  Clock::time_point start = Clock::now();
  {
    CancellationScope scope({.timeout = std::chrono::milliseconds(100)});
    expect_error<DeadlineExceeded>([&] { f(constant(0.f)); },
                                   {"the call ran past its deadline of 0.1 s, before ", "raised by node '"});
  }
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(took, 0.1);
  EXPECT_LT(took, 2.0);
  // The scope has ended: calls run unbounded again.
  auto bounded = kiln::function([](const Tensor& x) { return x * 2.f; });
  EXPECT_EQ(bounded(constant(3.f)).to_vector<float>(), std::vector<float>{6.f});
  EXPECT_EQ(kiln::detail::current_cancellation, nullptr);
}

TEST(Cancellation, InnerScopesCannotExtendOuterDeadlines) {
  auto f = endless_function();
  CancellationScope outer({.timeout = std::chrono::milliseconds(100)});
  CancellationScope inner({.timeout = std::chrono::hours(1)});
  Clock::time_point start = Clock::now();
  expect_error<DeadlineExceeded>([&] { f(constant(0.f)); }, {"deadline of 0.1 s"});
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
}

TEST(Cancellation, AFlagFromAnotherThreadCancels) {
  auto f = endless_function();
  std::atomic<bool> stop{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop.store(true);
  });
  {
    CancellationScope scope({.cancel = &stop});
    expect_error<Cancelled>([&] { f(constant(0.f)); }, {"the call was cancelled"});
  }
  canceller.join();
}

TEST(Cancellation, ZeroNegativeAndHugeTimeouts) {
  auto f = kiln::function([](const Tensor& x) { return x + 1.f; });
  {
    CancellationScope scope({.timeout = std::chrono::seconds(0)});
    expect_error<DeadlineExceeded>([&] { f(constant(1.f)); }, {"deadline of 0 s"});
    // Eager ops are not checked.
    EXPECT_EQ((constant(1.f) + 1.f).to_vector<float>(), std::vector<float>{2.f});
  }
  expect_error<InvalidArgument>([] { CancellationScope({.timeout = std::chrono::duration<double>(-1)}); },
                                {"the timeout must be at least 0 seconds, got -1"});
  expect_error<InvalidArgument>(
      [] { CancellationScope({.timeout = std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN())}); },
      {"the timeout must be at least 0 seconds"});
  CancellationScope forever({.timeout = std::chrono::duration<double>(1e300)});
  EXPECT_EQ(f(constant(1.f)).to_vector<float>(), std::vector<float>{2.f});
}

}  // namespace
