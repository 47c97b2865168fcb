// merge_while_replays: a while_loop's results taken from its gradient's
// replay, the forward loop dropped; results bit for bit the traced graph's.
#include "passes_test_util.h"

#include "kiln/kiln.h"
#include "passes/passes.h"

using namespace kiln;
using namespace kiln::passes_testing;

namespace {

// h <- tanh(h * w + x[t]) over the rows of x, and the gradient of sum(h)
// with respect to w and x: a forward loop, its replay, a backward loop.
GraphPtr loop_and_gradient() {
  return trace_graph({f32(Shape{5, 3}), f32(Shape{3})}, [](auto& p) {
    const Tensor &x = p[0], &w = p[1];
    GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    Tensor h = for_range(0, 5, 1, zeros({3}), [&](const Tensor& t, const Tensor& h) { return tanh(h * w + gather(x, t)); });
    std::vector<Tensor> g = tape.gradient(sum(h), std::vector<GradientSource>{x, w});
    return std::vector{h, g[0], g[1]};
  });
}

}  // namespace

TEST(PassesWhileReplays, TheForwardLoopComesFromTheReplay) {
  GraphPtr g = loop_and_gradient();
  ASSERT_EQ(count_ops(*g, "While"), 3);
  GraphPtr copy = g->clone("g");
  ASSERT_TRUE(passes::merge_while_replays(*copy));
  copy->verify();
  ASSERT_TRUE(passes::eliminate_dead_code(*copy));
  EXPECT_EQ(count_ops(*copy, "While"), 2);
  std::vector<Tensor> inputs{reshape(cast(range(0, 15), DType::Float32) * 0.1f - 0.7f, Shape{5, 3}),
                             constant({0.5f, -1.2f, 0.9f})};
  std::vector<Tensor> want = run(*g, inputs), got = run(*copy, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) expect_bitwise(want[i], got[i]);
  // The whole pipeline, with and without the pass: the same bits.
  expect_same_results(*g, inputs);
  expect_same_results(*g, inputs, {.replays = false});
  EXPECT_EQ(count_ops(*passes::optimize(*g, {}), "While"), 2);
  EXPECT_EQ(count_ops(*passes::optimize(*g, {.replays = false}), "While"), 3);
}

TEST(PassesWhileReplays, ALoopWithoutGradientIsLeftAlone) {
  GraphPtr g = trace_graph({f32(Shape{3})}, [](auto& p) {
    Tensor h = for_range(0, 4, 1, p[0], [](const Tensor&, const Tensor& h) { return h * 2.f; });
    return std::vector{h};
  });
  GraphPtr copy = g->clone("g");
  EXPECT_FALSE(passes::merge_while_replays(*copy));
}
