// The stacks of a while_loop gradient's re-run (graph_ops/while_gradient.cpp):
// sized once from the loop's trip count when its graphs show it
// (graph_ops/while_trip_count.h), taken over by the While kernel from the
// plan (kConsumesInputs) and never merged with one another (kFreshOutputs),
// so that every TensorArrayWrite updates its stack in place. Which ops
// declare the two flags: WhileAccumulators.TheOpsThatDeclareTheFlags.
#include "graph_test_util.h"
#include "test_util.h"

#include <optional>

#include "graph/graph.h"
#include "graph_ops/control_flow_ops.h"
#include "graph_ops/while_trip_count.h"
#include "ops/creation.h"
#include "kiln/kiln.h"
#include "runtime/dispatch.h"
#include "trace/tracing_context.h"

using namespace kiln;
using kiln::testing::expect_tensor_near;

namespace {

using GraphPtr = std::shared_ptr<const graph::Graph>;

// Traces `loop` (which builds one while_loop, and may read the int32
// parameter `n`) into a graph, and returns trip_count of its While node for
// the concrete loop variables `vars`, with n = `n_value` (the captures: n,
// or the constants for_range captures).
template <class Loop>
std::optional<int32_t> trip_count_of(Loop&& loop, std::vector<Tensor> inputs, int32_t n_value = 7) {
  auto g = std::make_shared<graph::Graph>("trip_count_test");
  trace::TracingContext ctx(g);
  Tensor n = ctx.add_parameter({DType::Int32, Shape{}}, "n");
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    loop(n);
  }
  const graph::Node* w = nullptr;
  for (const auto& node : g->nodes())
    if (node->op == &graph_ops::while_op(false)) w = node.get();
  if (!w) throw std::runtime_error("no While node traced");
  const GraphPtr& cond = w->attrs.get<GraphPtr>("cond");
  const GraphPtr& body = w->attrs.get<GraphPtr>("body");
  // The captures, from the While node's inputs after the loop variables
  // (a nested graph forgets its captures' outer tensors).
  const std::size_t vars = inputs.size();
  for (std::size_t k = vars; k < w->inputs.size(); ++k) {
    const graph::Node* outer = w->inputs[k].node;
    if (outer->op == &ops::placeholder_op()) inputs.push_back(constant(n_value));
    else inputs.push_back(outer->attrs.get<Tensor>("value"));  // a Const
  }
  std::optional<Tensor> count = graph_ops::trip_count(*cond, *body, inputs, vars);
  if (!count) return std::nullopt;
  return count->item<int32_t>();
}

}  // namespace

TEST(WhileTripCount, ACounterBelowAConstantLimit) {
  auto loop = [](const Tensor&) {
    while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
               [](const Tensor& i, const Tensor& y) { return std::tuple{i + 1, y * 2.f}; },
               std::tuple{constant(0), constant(1.f)});
  };
  EXPECT_EQ(trip_count_of(loop, {constant(0), constant(1.f)}), 3);
  EXPECT_EQ(trip_count_of(loop, {constant(1), constant(1.f)}), 2);
  // A start past the limit runs no iteration, never a negative count.
  EXPECT_EQ(trip_count_of(loop, {constant(5), constant(1.f)}), 0);
}

TEST(WhileTripCount, ForRangeToACapturedLimit) {
  // for_range(2, n): the limit is a capture; the counter starts at 2.
  auto loop = [](const Tensor& n) { for_range(2, n, 1, constant(1.f), [](const Tensor&, const Tensor& y) { return y * 2.f; }); };
  EXPECT_EQ(trip_count_of(loop, {constant(2), constant(1.f)}), 5);
}

TEST(WhileTripCount, LoopsItCannotCountGiveNothing) {
  // A step of 2.
  auto by_two = [](const Tensor& n) { for_range(0, n, 2, constant(1.f), [](const Tensor&, const Tensor& y) { return y * 2.f; }); };
  EXPECT_EQ(trip_count_of(by_two, {constant(0), constant(1.f)}), std::nullopt);
  // A condition that also reads a value.
  auto also_value = [](const Tensor& n) {
    while_loop([&](const Tensor& i, const Tensor& y) { return logical_and(i < n, y < 100.f); },
               [](const Tensor& i, const Tensor& y) { return std::tuple{i + 1, y * 2.f}; },
               std::tuple{constant(0), constant(1.f)});
  };
  EXPECT_EQ(trip_count_of(also_value, {constant(0), constant(1.f)}), std::nullopt);
  // A limit that moves: (i, m) -> (i + 1, m + 1) while i < m.
  auto moving = [](const Tensor&) {
    while_loop([](const Tensor& i, const Tensor& m) { return i < m; },
               [](const Tensor& i, const Tensor& m) { return std::tuple{i + 1, m + 1}; },
               std::tuple{constant(0), constant(4)});
  };
  EXPECT_EQ(trip_count_of(moving, {constant(0), constant(4)}), std::nullopt);
  // A counter that goes down.
  auto down = [](const Tensor&) {
    while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
               [](const Tensor& i, const Tensor& y) { return std::tuple{i - 1, y * 2.f}; },
               std::tuple{constant(0), constant(1.f)}, {.maximum_iterations = constant(4)});
  };
  EXPECT_EQ(trip_count_of(down, {constant(0), constant(1.f), constant(0)}), std::nullopt);
}

namespace {

// A recurrent-like loop (x_t W + h tanh over T steps) and its gradient,
// traced; returns the profile of one call and its value.
struct Profiled {
  profiler::Profile profile;
  std::vector<Tensor> grads;
};

constexpr int64_t kT = 12, kB = 16, kU = 32;

template <class Cond>
Profiled profile_rnn_gradient(const Tensor& x, const Tensor& w0, Cond&& make_limit) {
  auto eager = [&](const Tensor& xs, const Tensor& w) {
    GradientTape tape;
    tape.watch(w);
    TensorArray in = TensorArray(DType::Float32, kT).unstack(xs);
    auto [i, h] = while_loop([&](const Tensor& i, const Tensor& h) { return make_limit(i, h); },
                             [&](const Tensor& i, const Tensor& h) {
                               return std::tuple{i + 1, tanh(matmul(h, w) + in.read(i))};
                             },
                             std::tuple{constant(0), zeros(Shape{kB, kU})});
    Tensor loss = sum(h * h);
    return tape.gradient(loss, w);
  };
  auto step = function(eager);
  Tensor warm = step(x, w0);  // traces
  profiler::start();
  Tensor g = step(x, w0);
  profiler::Profile p = profiler::stop();
  return {std::move(p), {warm, g, eager(x, w0)}};
}

int64_t bytes_of(const profiler::Profile& p, const std::string& op, int* calls) {
  int64_t bytes = 0;
  *calls = 0;
  for (const profiler::Event& e : p.events())
    if (e.op == op) {
      bytes += e.bytes_allocated;
      ++*calls;
    }
  return bytes;
}

}  // namespace

TEST(WhileStacks, ARerunOfKnownTripCountWritesItsStacksInPlace) {
  const Tensor x = random::uniform(Shape{kT, kB, kU}, -1.f, 1.f, DType::Float32, /*seed=*/3);
  const Tensor w = random::uniform(Shape{kU, kU}, -0.3f, 0.3f, DType::Float32, /*seed=*/4);
  Profiled r = profile_rnn_gradient(x, w, [](const Tensor& i, const Tensor&) { return i < 12; });
  int calls = 0;
  const int64_t bytes = bytes_of(r.profile, "TensorArrayWrite", &calls);
  // The re-run stacks h and the matmul (accumulator) per iteration: 12
  // iterations, 2 stacks. A row is 16 x 32 floats (2 KB); in place, a write
  // allocates only its int32 size (a buffer header and one element).
  ASSERT_GE(calls, 24);
  EXPECT_LT(bytes, calls * 256) << "a write copied its stack";
  // The same gradient as a loop whose trip count is not plain (the stacks
  // then grow by doubling, copying), bit for bit.
  Profiled grown = profile_rnn_gradient(
      x, w, [](const Tensor& i, const Tensor& h) { return logical_and(i < 12, sum(h) > -1e30f); });
  int grown_calls = 0;
  const int64_t grown_bytes = bytes_of(grown.profile, "TensorArrayWrite", &grown_calls);
  EXPECT_GT(grown_bytes, int64_t(2048) * grown_calls / 2);
  kiln::testing::expect_bitwise(r.grads[0], r.grads[1], "the traced step's two calls");
  kiln::testing::expect_bitwise(r.grads[1], r.grads[2], "traced and eager");
  kiln::testing::expect_bitwise(grown.grads[1], grown.grads[2], "traced and eager, grown");
  kiln::testing::expect_bitwise(r.grads[1], grown.grads[1], "sized and grown stacks");
}

TEST(WhileStacks, TwoArraysOfOneShapeAreNotMerged) {
  // Equal TensorArrayNew nodes would share one buffer, and the first write
  // to either would copy it: tracing keeps them apart (kFreshOutputs).
  auto f = function([](const Tensor& v) {
    TensorArray a(DType::Float32, 4, {.element_shape = Shape{256}});
    TensorArray b(DType::Float32, 4, {.element_shape = Shape{256}});
    auto [ra, rb] = for_range(0, 4, 1, std::tuple{a, b}, [&](const Tensor& i, const TensorArray& a, const TensorArray& b) {
      Tensor row = v * cast(i, DType::Float32);
      return std::tuple{a.write(i, row), b.write(i, row + 1.f)};
    });
    return std::tuple{ra.stack(), rb.stack()};
  });
  Tensor v = fill(Shape{256}, 2.f);
  auto warm = f(v);
  profiler::start();
  auto [sa, sb] = f(v);
  profiler::Profile p = profiler::stop();
  int calls = 0;
  const int64_t bytes = bytes_of(p, "TensorArrayWrite", &calls);
  EXPECT_EQ(calls, 8);
  EXPECT_LT(bytes, calls * 256) << "a write copied its array";
  expect_tensor_near<float>(sa[3], Shape{256}, std::vector<float>(256, 6.f), 0.f);
  expect_tensor_near<float>(sb[2], Shape{256}, std::vector<float>(256, 5.f), 0.f);
}
