// Memory planning (src/exec/memory_plan.cpp): values of static-shape plans
// share one arena per call at planned offsets; what can escape the call
// stays out of it; a kernel that keeps a value it should not is caught.
#include <cstring>

#include "counting_allocator.h"
#include "exec/plan.h"
#include "function/traced_graph.h"
#include "graph_test_util.h"
#include "kiln/kiln.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::count_heap_allocations;
using kiln::testing::expect_bitwise;
using kiln::testing::expect_tensor;
using kiln::testing::f32;
using kiln::testing::trace_graph;

namespace {

using GraphPtr = std::shared_ptr<const graph::Graph>;

// Allocations whose bytes overlap must have disjoint lifetimes; all lie in
// the data region, 64-byte aligned.
void expect_valid(const exec::MemoryPlan& m) {
  for (std::size_t i = 0; i < m.allocations.size(); ++i) {
    const auto& a = m.allocations[i];
    EXPECT_EQ(a.offset % 64, 0);
    EXPECT_LE(a.offset + a.bytes, m.data_bytes);
    EXPECT_LE(a.first_step, a.last_step);
    for (std::size_t j = i + 1; j < m.allocations.size(); ++j) {
      const auto& b = m.allocations[j];
      bool bytes_overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      bool times_overlap = a.first_step <= b.last_step && b.first_step <= a.last_step;
      EXPECT_FALSE(bytes_overlap && times_overlap) << "allocations " << i << " and " << j;
    }
  }
  EXPECT_EQ(m.arena_bytes, m.data_start + m.data_bytes);
}

// Ten matmuls in a row: each product is read once, by the next one, so two
// buffers take turns.
std::vector<Tensor> matmul_chain(const std::vector<Tensor>& p) {
  Tensor y = p[0];
  for (int i = 0; i < 10; ++i) y = matmul(y, p[1]);
  return {sum(y)};
}

const exec::Plan& plan_of(const ConcreteFunction& f) { return *f.impl()->plan; }

}  // namespace

TEST(MemoryPlan, ChainTakesTwoBuffersAndComputesLikeEager) {
  auto g = trace_graph({f32(Shape{16, 16}), f32(Shape{16, 16})}, matmul_chain);
  exec::Plan plan(g);
  const exec::MemoryPlan& m = plan.memory_plan();
  ASSERT_EQ(m.allocations.size(), 10u);  // the ten products; the sum is the result
  EXPECT_EQ(m.total_bytes, 10 * 1024);
  EXPECT_EQ(m.data_bytes, 2 * 1024);
  expect_valid(m);
  Tensor x = random::normal(Shape{16, 16}, 0, 0.3, DType::Float32, 1), w = random::normal(Shape{16, 16}, 0, 0.3, DType::Float32, 2);
  std::vector<Tensor> eager = matmul_chain({x, w});
  for (int call = 0; call < 3; ++call) expect_bitwise(plan.run(std::vector<Tensor>{x, w})[0], eager[0]);
}

TEST(MemoryPlan, ResultsAndTheirViewsStayOutOfTheArena) {
  auto body = [](const std::vector<Tensor>& p) {
    Tensor h = tanh(matmul(p[0], p[0]));     // tanh overwrites the product
    Tensor kept = reshape(h * 2.f, Shape{-1});  // a view of h*2 is returned
    return std::vector<Tensor>{kept, sum(h)};
  };
  // Planned: the product (with h, written over it); not h*2, which a result views.
  exec::Plan plan(trace_graph({f32(Shape{8, 8})}, body));
  const exec::MemoryPlan& m = plan.memory_plan();
  ASSERT_EQ(m.allocations.size(), 1u);
  EXPECT_EQ(m.allocations[0].first_step, 0);
  expect_valid(m);

  // Returned values survive later calls (each call has its own arena, and
  // results are not in it).
  auto f = kiln::function([&](const Tensor& x) { return body({x}); });
  Tensor x1 = random::normal(Shape{8, 8}, 0, 1, DType::Float32, 3), x2 = random::normal(Shape{8, 8}, 0, 1, DType::Float32, 4);
  std::vector<Tensor> r1 = f(x1);
  Tensor copy = r1[0] + 0.f;
  std::vector<Tensor> r2 = f(x2);
  std::vector<Tensor> r3 = f(x1);
  expect_bitwise(r1[0], copy);
  expect_bitwise(r3[0], r1[0]);
  expect_bitwise(r1[1], body({x1})[1]);
}

TEST(MemoryPlan, PlansOfATrainingStepAreValid) {
  Variable w(random::normal(Shape{32, 10}, 0, 0.1, DType::Float32, 5)), b(zeros(Shape{10}));
  auto step = kiln::function([&](const Tensor& x, const Tensor& labels) {
    GradientTape tape;
    Tensor logits = matmul(x, w.read_value()) + b.read_value();
    Tensor loss = mean(nn::sparse_categorical_crossentropy(labels, logits, /*from_logits=*/true));
    std::vector<Tensor> grads = tape.gradient(loss, std::vector<Variable>{w, b});
    w.assign_sub(grads[0] * 0.1f);
    b.assign_sub(grads[1] * 0.1f);
    return loss;
  });
  Tensor x = random::normal(Shape{20, 32}, 0, 1, DType::Float32, 6);
  Tensor labels = cast(random::uniform(Shape{20}, 0, 10, DType::Float32, 7), DType::Int32);
  Tensor first = step(x, labels);
  Tensor second = step(x, labels);
  EXPECT_LT(second.item<float>(), first.item<float>());
  ConcreteFunction concrete = step.get_concrete_function(x, labels);
  const exec::MemoryPlan& m = plan_of(concrete).memory_plan();
  EXPECT_GT(m.allocations.size(), 3u);
  EXPECT_LT(m.data_bytes, m.total_bytes);
  expect_valid(m);
}

// No oneDNN op here: oneDNN's execute builds small descriptor objects on the
// heap at every call, which Kiln does not control.
std::vector<Tensor> mixed_ops(const std::vector<Tensor>& p) {
  Tensor y = tanh(p[0] * 2.f + 1.f);
  Tensor t = transpose(y) - y;
  Tensor s = nn::softmax(reshape(t, Shape{32, 128}));
  Tensor c = concat({s, s * s}, 0);
  return {sum(c, {1}) + max(c)};
}

TEST(MemoryPlan, StaticCallMakesNoHeapAllocation) {
  exec::Plan plan(trace_graph({f32(Shape{64, 64})}, mixed_ops));
  EXPECT_GE(plan.memory_plan().allocations.size(), 5u);
  std::vector<Tensor> inputs{random::normal(Shape{64, 64}, 0, 1, DType::Float32, 8)};
  std::vector<Tensor> expected = mixed_ops(inputs);
  for (int warm = 0; warm < 2; ++warm) plan.run(inputs);
  detail::ResultLeaves out;
  int64_t n = count_heap_allocations([&] { out = plan.run(inputs); });
  EXPECT_EQ(n, 0);
  expect_bitwise(out[0], expected[0]);

  // Through kiln::function (flatten, trace key, cache lookup, plan, results).
  auto f = kiln::function([](const Tensor& x) { return mixed_ops({x})[0]; });
  for (int warm = 0; warm < 2; ++warm) f(inputs[0]);
  Tensor y;
  n = count_heap_allocations([&] { y = f(inputs[0]); });
  EXPECT_EQ(n, 0);
  expect_bitwise(y, expected[0]);
}

TEST(MemoryPlan, LoopIterationsMakeNoHeapAllocation) {
  // A traced while_loop: each iteration runs the cond and body plans.
  auto f = kiln::function([](const Tensor& n, const Tensor& x) {
    auto [i, y] = kiln::while_loop(
        [&](const Tensor& i, const Tensor&) { return i < n; },
        [](const Tensor& i, const Tensor& y) { return std::tuple<Tensor, Tensor>{i + 1, tanh(y) * 0.5f + y}; },
        std::tuple<Tensor, Tensor>{constant(0), x});
    return y;
  });
  Tensor x = random::normal(Shape{32}, 0, 1, DType::Float32, 9);
  // The counts are made before the measured calls: a scalar made for the
  // first time enters the thread's scalar cache (ops/creation_ops.cpp,
  // make_scalar) and stays, one buffer the calls would be charged for, or
  // not, by what earlier tests happened to cache.
  Tensor hundred = constant(100), ten = constant(10), thousand = constant(1000);
  for (int warm = 0; warm < 2; ++warm) f(hundred, x);
  int64_t few = count_heap_allocations([&] { f(ten, x); });
  int64_t many = count_heap_allocations([&] { f(thousand, x); });
  EXPECT_EQ(many, few) << "allocations grow with the iterations";
}

namespace {

// A kernel that breaks the rules: it keeps its input (as only stateful ops
// may), so the input's bytes are not free when the plan thinks they are.
Tensor kept_by_kernel;
void keep_infer(schema::InferContext& c) { c.add_output(c.dtype(0), Shape{}); }
void keep_kernel(schema::KernelContext& c) {
  kept_by_kernel = c.inputs[0];
  *c.out<float>(0) = 0.f;
}
constexpr detail::OpDef kKeepInput{
    .name = "TestKeepInput", .infer = keep_infer, .kernel = keep_kernel, .flags = schema::kNotDifferentiable};

}  // namespace

TEST(MemoryPlan, AValueAKernelKeptIsNotOverwritten) {
  auto& r = schema::OpRegistry::global();
  auto g = std::make_shared<graph::Graph>("keeps");
  graph::Value x{g->add_parameter(f32(Shape{8}), "x"), 0};
  auto node = [&](const detail::OpDef& op, std::vector<graph::Value> in, schema::Attrs attrs = {}) {
    return graph::Value{g->add_node(op, in, std::move(attrs), SourceLocation()), 0};
  };
  graph::Value square = node(r.get("Mul"), {x, x});  // step 0
  graph::Value zero = node(kKeepInput, {square});   // step 1: keeps x*x
  graph::Value twice = node(r.get("Add"), {x, x});  // step 2: planned over x*x
  graph::Value total =
      node(r.get("Sum"), {twice}, schema::Attrs{{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  g->results().push_back(node(r.get("Add"), {total, zero}));
  exec::Plan plan(g);
  const exec::MemoryPlan& m = plan.memory_plan();
  ASSERT_EQ(m.allocations.size(), 2u);
  ASSERT_EQ(m.allocations[0].offset, m.allocations[1].offset) << "the test needs x+x planned over x*x";
  Tensor in = constant({1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f});
  expect_tensor<float>(plan.run(std::vector<Tensor>{in})[0], Shape{}, {72.f});
  expect_tensor<float>(kept_by_kernel, Shape{8}, {1.f, 4.f, 9.f, 16.f, 25.f, 36.f, 49.f, 64.f});
  kept_by_kernel = Tensor();
}
