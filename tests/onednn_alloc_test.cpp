// Calls of cached oneDNN primitives on static shapes allocate nothing on
// Kiln's side once warm (src/ops/onednn.h, Executable): a plan of a small CNN
// training step (conv2d, max_pool, matmul and their gradients) and one of
// fused contractions make no heap allocation per call of their own.
// oneDNN's own execute allocates its argument map at every call
// (counting_allocator.h); the tests count those apart and report them.
#include <thread>

#include "counting_allocator.h"
#include "exec/plan.h"
#include "kiln/kiln.h"
#include "ops/onednn.h"
#include "passes_test_util.h"

using namespace kiln;
using kiln::passes_testing::count_ops;
using kiln::testing::expect_bitwise;
using kiln::testing::f32;
using kiln::testing::trace_graph;

namespace {

struct Counts {
  int64_t kiln = 0;    // outside oneDNN's execute
  int64_t onednn = 0;  // inside it
  int64_t executes = 0;
};

template <class F>
Counts count(F&& body) {
  int64_t total = kiln::testing::heap_allocations();
  int64_t inside = kiln::testing::onednn_execute_allocations();
  int64_t executes = kiln::testing::onednn_executes();
  body();
  Counts c;
  c.onednn = kiln::testing::onednn_execute_allocations() - inside;
  c.kiln = kiln::testing::heap_allocations() - total - c.onednn;
  c.executes = kiln::testing::onednn_executes() - executes;
  return c;
}

// Loss and its gradients with respect to the image, the filters and the dense
// weights: Conv2D, Relu, MaxPool, Reshape, MatMul forward; MatMul,
// MaxPoolGrad, ReluGrad, Conv2DBackpropInput/Filter backward.
std::vector<Tensor> cnn_step(const std::vector<Tensor>& p) {
  GradientTape tape;
  for (const Tensor& t : p) tape.watch(t);
  Tensor h = relu(nn::conv2d(p[0], p[1], 1, nn::Padding::Same));
  Tensor pooled = nn::max_pool2d(h, 2, 2, nn::Padding::Same);
  Tensor logits = matmul(reshape(pooled, Shape{4, 64}), p[2]);
  Tensor loss = mean(logits * logits);
  std::vector<Tensor> grads = tape.gradient(loss, {p[0], p[1], p[2]});
  return {loss, grads[0], grads[1], grads[2]};
}

std::vector<Tensor> cnn_inputs() {
  return {random::normal(Shape{4, 8, 8, 3}, 0, 1, DType::Float32, 11),
          random::normal(Shape{3, 3, 3, 4}, 0, 0.3, DType::Float32, 12),
          random::normal(Shape{64, 5}, 0, 0.2, DType::Float32, 13)};
}

}  // namespace

TEST(OneDnnAlloc, TrainingStepPlanAllocatesNothing) {
  exec::Plan plan(trace_graph({f32(Shape{4, 8, 8, 3}), f32(Shape{3, 3, 3, 4}), f32(Shape{64, 5})}, cnn_step));
  std::vector<Tensor> inputs = cnn_inputs();
  std::vector<Tensor> expected = cnn_step(inputs);
  for (int warm = 0; warm < 2; ++warm) plan.run(inputs);
  detail::ResultLeaves out;
  Counts n = count([&] { out = plan.run(inputs); });
  EXPECT_EQ(n.kiln, 0);
  // conv, its two backprops, max_pool, the three matmuls: 7 at least (plus
  // weight reorders where oneDNN wants another filter layout).
  EXPECT_GE(n.executes, 7);
  RecordProperty("onednn_executes", std::to_string(n.executes));
  RecordProperty("onednn_internal_allocations", std::to_string(n.onednn));
  ASSERT_EQ(out.size(), expected.size());
  for (std::size_t i = 0; i < out.size(); ++i) expect_bitwise(out[i], expected[i]);
}

// FusedConv2D and FusedMatMul (the contraction, then the bias pass in place)
// after the pass pipeline.
TEST(OneDnnAlloc, FusedContractionsAllocateNothing) {
  auto g = trace_graph({f32(Shape{2, 6, 6, 3}), f32(Shape{3, 3, 3, 8}), f32(Shape{8}), f32(Shape{8, 4}), f32(Shape{4})},
                 [](const std::vector<Tensor>& p) {
                   Tensor h = relu(nn::bias_add(nn::conv2d(p[0], p[1], 1, nn::Padding::Same), p[2]));
                   Tensor flat = reshape(h, Shape{-1, 8});
                   return std::vector<Tensor>{sum(nn::bias_add(matmul(flat, p[3]), p[4]))};
                 });
  auto opt = passes::optimize(*g, {});
  ASSERT_EQ(count_ops(*opt, "FusedConv2D"), 1) << opt->to_string();
  ASSERT_EQ(count_ops(*opt, "FusedMatMul"), 1) << opt->to_string();
  exec::Plan plan(opt);
  std::vector<Tensor> inputs{random::normal(Shape{2, 6, 6, 3}, 0, 1, DType::Float32, 21),
                             random::normal(Shape{3, 3, 3, 8}, 0, 0.3, DType::Float32, 22),
                             random::normal(Shape{8}, 0, 1, DType::Float32, 23),
                             random::normal(Shape{8, 4}, 0, 0.3, DType::Float32, 24),
                             random::normal(Shape{4}, 0, 1, DType::Float32, 25)};
  detail::ResultLeaves expected = exec::Plan(g).run(inputs);
  for (int warm = 0; warm < 2; ++warm) plan.run(inputs);
  detail::ResultLeaves out;
  Counts n = count([&] { out = plan.run(inputs); });
  EXPECT_EQ(n.kiln, 0);
  EXPECT_GE(n.executes, 2);
  expect_bitwise(out[0], expected[0]);
}

// Threads running one cached primitive at once each get their own memory
// objects (a set is claimed per call) and the right values.
TEST(OneDnnAlloc, ThreadsShareAPrimitiveSafely) {
  std::vector<Tensor> inputs = cnn_inputs();
  std::vector<Tensor> expected = cnn_step(inputs);
  exec::Plan plan(trace_graph({f32(Shape{4, 8, 8, 3}), f32(Shape{3, 3, 3, 4}), f32(Shape{64, 5})}, cnn_step));
  std::vector<detail::ResultLeaves> got(6);
  {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 20; ++i) got[t] = plan.run(inputs);
      });
    for (std::thread& t : threads) t.join();
  }
  for (const auto& out : got) {
    ASSERT_EQ(out.size(), expected.size());
    for (std::size_t i = 0; i < out.size(); ++i) expect_bitwise(out[i], expected[i]);
  }
}
