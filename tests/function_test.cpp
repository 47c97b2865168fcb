// kiln::function: tracing, the cache, signatures, concrete functions.
#include "test_util.h"

#include <atomic>
#include <functional>
#include <sstream>
#include <thread>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_golden;
using kiln::testing::expect_tensor;

TEST(Function, TracesOncePerSignatureAndComputesLikeEager) {
  int traces = 0;
  auto f = kiln::function([&](const Tensor& x) {
    ++traces;  // a C++ side effect: happens only while tracing
    return x * x + 1;
  });
  expect_tensor<float>(f(constant({1.f, 2.f})), {2}, {2.f, 5.f});
  expect_tensor<float>(f(constant({3.f, 4.f})), {2}, {10.f, 17.f});
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(f.tracing_count(), 1);
  // A new dtype traces again.
  expect_tensor<int32_t>(f(constant({3, 4})), {2}, {10, 17});
  EXPECT_EQ(f.tracing_count(), 2);
  CacheInfo info = f.cache_info();
  EXPECT_EQ(info.hits, 1);
  EXPECT_EQ(info.misses, 2);
  EXPECT_EQ(info.traces, 2);
  EXPECT_EQ(info.entries, 2);
}

TEST(Function, RewrappingStartsWithAnEmptyCache) {
  auto body = [](const Tensor& x) { return x + x; };
  auto f1 = kiln::function(body);
  auto f2 = kiln::function(body);
  f1(constant(1));
  f2(constant(1));
  EXPECT_EQ(f1.tracing_count(), 1);
  EXPECT_EQ(f2.tracing_count(), 1);
}

TEST(Function, CppScalarsAreKeyedByValue) {
  auto f = kiln::function([](const Tensor& x, int n) { return x * n; });
  expect_tensor<float>(f(constant(2.f), 3), {}, {6.f});
  expect_tensor<float>(f(constant(2.f), 3), {}, {6.f});
  EXPECT_EQ(f.tracing_count(), 1);
  expect_tensor<float>(f(constant(2.f), 4), {}, {8.f});
  EXPECT_EQ(f.tracing_count(), 2);
  auto log = f.retrace_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].cause, RetraceCause::Value);
  EXPECT_EQ(log[0].path, "arg 1");
  EXPECT_EQ(log[0].text(), "trace 2: arg 1: 3 -> 4 (value changed; C++ values are part of the trace key)");
}

TEST(Function, ShapesRelaxAfterOneRetrace) {
  auto f = kiln::function([](const Tensor& x) { return x * 2; });
  for (int n = 1; n <= 100; ++n) {
    Tensor y = f(zeros({n, 3}));
    ASSERT_EQ(y.shape(), (Shape{n, 3}));
  }
  EXPECT_EQ(f.tracing_count(), 2);
  auto log = f.retrace_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].cause, RetraceCause::Relaxed);
  EXPECT_EQ(log[0].text(),
            "trace 2: arg 0: float32 (1, 3) -> float32 (2, 3) (shape changed; traced again with "
            "those dims unknown)");
  auto g = f.get_concrete_function(zeros({7, 3}));
  EXPECT_EQ(g.inputs()[0].shape, (Shape{None, 3}));
}

// TF's FunctionCache generalizes against every trace it holds: a new size
// relaxes the trace of the same structure even when another structure was
// traced in between.
TEST(Function, ShapesRelaxAgainstAnyTraceOfTheSameStructure) {
  auto f = kiln::function([](const Tensor& x, bool twice) { return twice ? x * 2 : x; });
  f(zeros({2}), true);
  f(zeros({3}), false);  // another structure: traced as it is
  EXPECT_EQ(f.tracing_count(), 2);
  f(zeros({4}), true);  // relaxes the (2,) trace although the last trace was (3,) false
  EXPECT_EQ(f.tracing_count(), 3);
  EXPECT_EQ(f.retrace_log().back().cause, RetraceCause::Relaxed);
  for (int n = 5; n < 9; ++n) expect_tensor<float>(f(ones({n}), true), {n}, std::vector<float>(n, 2.f));
  f(zeros({6}), false);  // and the false structure relaxes its own (3,) trace
  f(zeros({7}), false);
  EXPECT_EQ(f.tracing_count(), 4);
}

// A spec of unknown rank accepts tensors of any rank, on the call path and on
// a ConcreteFunction alike (one matching rule).
TEST(Function, UnknownRankSignatureAcceptsAnyRank) {
  auto f = kiln::function([](const Tensor& x) { return x + 1; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec(Shape::unknown_rank(), float32)}});
  expect_tensor<float>(f(constant(1.f)), {}, {2.f});
  expect_tensor<float>(f(constant({{1.f, 2.f}})), {1, 2}, {2.f, 3.f});
  EXPECT_EQ(f.tracing_count(), 1);
  ConcreteFunction c = f.get_concrete_function(TensorSpec(Shape::unknown_rank(), float32));
  expect_tensor<float>(c(constant({1.f, 2.f, 3.f}))[0], {3}, {2.f, 3.f, 4.f});
  expect_error<InvalidArgument>([&] { f(constant(1)); }, {"do not fit its input_signature"});
}

TEST(Function, ExactShapesTracesEveryShape) {
  FunctionOptions o;
  o.exact_shapes = true;
  auto f = kiln::function([](const Tensor& x) { return x * 2; }, o);
  for (int n = 1; n <= 4; ++n) f(zeros({n}));
  EXPECT_EQ(f.tracing_count(), 4);
  EXPECT_EQ(f.retrace_log()[0].cause, RetraceCause::Shape);
}

TEST(Function, InputSignatureFixesOneTraceAndRejectsMisfits) {
  FunctionOptions o;
  o.name = "next_collatz";
  o.input_signature = std::vector<TensorSpec>{TensorSpec({None}, int32)};
  auto f = kiln::function(
      [](const Tensor& x) { return where(x % 2 == 0, floordiv(x, 2), 3 * x + 1); }, o);
  expect_tensor<int32_t>(f(constant({3, 4})), {2}, {10, 2});
  expect_tensor<int32_t>(f(constant({8, 5, 6})), {3}, {4, 16, 3});
  EXPECT_EQ(f.tracing_count(), 1);
  expect_error<InvalidArgument>([&] { f(constant({{1, 2}, {3, 4}})); },
                                {"next_collatz", "input_signature", "int32 (2, 2)",
                                 "TensorSpec(shape=(None,), dtype=int32)"});
  expect_error<InvalidArgument>([&] { f(constant({1.f})); }, {"float32 (1,)", "int32"});
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Function, ConcreteFunctionsCheckInputsStrictly) {
  FunctionOptions o;
  o.name = "double_strings";
  auto f = kiln::function([](const Tensor& a) { return a + a; }, o);
  ConcreteFunction c = f.get_concrete_function(TensorSpec({}, kiln::string));
  Tensor aa = c(constant("a"));
  EXPECT_EQ(aa.item<std::string>(), "aa");
  EXPECT_EQ(Tensor(c(constant("b"))).item<std::string>(), "bb");
  expect_error<InvalidArgument>([&] { c(constant(1)); },
                                {"double_strings", "arg 0", "string", "int32"});
  EXPECT_EQ(c.inputs().size(), 1u);
  EXPECT_EQ(c.outputs()[0].dtype, kiln::string);
  EXPECT_EQ(c.to_string(), "double_strings(arg0: string ()) -> (string ())");
  EXPECT_EQ(f.tracing_count(), 1);
  // The same spec again: no new trace.
  f.get_concrete_function(TensorSpec({}, kiln::string));
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Function, CapturesOuterTensorsAsImplicitInputs) {
  Tensor outer = constant({10.f, 20.f});
  auto f = kiln::function([&](const Tensor& x) { return x + outer; });
  expect_tensor<float>(f(constant({1.f, 2.f})), {2}, {11.f, 22.f});
  ConcreteFunction c = f.get_concrete_function(constant({1.f, 2.f}));
  EXPECT_EQ(c.inputs().size(), 1u);
  EXPECT_NE(c.graph().to_string().find("captures(capture: float32[2])"), std::string::npos)
      << c.graph().to_string();
}

TEST(Function, CommonSubexpressionsAreOneNode) {
  auto f = kiln::function([](const Tensor& x) { return (x * 2) + (x * 2); });
  ConcreteFunction c = f.get_concrete_function(TensorSpec({3}));
  // arg0, const 2, mul, add
  EXPECT_EQ(c.graph().num_nodes(), 4) << c.graph().to_string();
}

TEST(Function, ReturnsStructures) {
  auto f = kiln::function([](const Tensor& x) {
    return std::make_tuple(x + 1, std::vector<Tensor>{x, x * 2, x * 3});
  });
  auto [a, list] = f(constant(1));
  expect_tensor<int32_t>(a, {}, {2});
  ASSERT_EQ(list.size(), 3u);
  expect_tensor<int32_t>(list[2], {}, {3});
}

struct Pair {
  Tensor weight;
  float scale = 1;
  KILN_FIELDS(weight, scale)
};

TEST(Function, TakesContainersAndStructs) {
  auto f = kiln::function([](const std::vector<Tensor>& xs, const Pair& p,
                             const std::map<std::string, Tensor>& m) {
    Tensor sum = m.at("bias");
    for (const Tensor& x : xs) sum = sum + x * p.weight * p.scale;
    return sum;
  });
  Pair p{constant(2.f), 3.f};
  std::map<std::string, Tensor> m{{"bias", constant(1.f)}};
  expect_tensor<float>(f(std::vector<Tensor>{constant(1.f), constant(2.f)}, p, m), {}, {19.f});
  expect_tensor<float>(f(std::vector<Tensor>{constant(2.f), constant(2.f)}, p, m), {}, {25.f});
  EXPECT_EQ(f.tracing_count(), 1);
  f(std::vector<Tensor>{constant(1.f)}, p, m);
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(f.retrace_log()[0].cause, RetraceCause::Structure);
  p.scale = 4;
  f(std::vector<Tensor>{constant(1.f)}, p, m);
  EXPECT_EQ(f.retrace_log()[1].cause, RetraceCause::Value);
}

TEST(Function, SymbolicTensorsPrintWithNodeNames) {
  std::string seen;
  auto f = kiln::function([&](const Tensor& x) {
    Tensor y = x + x;
    std::ostringstream os;
    os << y;
    seen = os.str();
    return y;
  });
  f(zeros({2, 2}));
  EXPECT_EQ(seen, "Tensor(\"add:0\", shape=(2, 2), dtype=float32)");
  f(zeros({3, 2}));
  EXPECT_EQ(seen, "Tensor(\"add:0\", shape=(None, 2), dtype=float32)");
}

TEST(Function, SymbolicTensorAsBoolPointsToCond) {
  auto f = kiln::function([](const Tensor& x) {
    if (x > 0) return x;
    return -x;
  });
  expect_error<InvalidArgument>([&] { f(constant(1)); }, {"kiln::cond", "kiln::while_loop"});
}

TEST(Function, EscapedSymbolicTensorsFailClearly) {
  std::vector<Tensor> leaked;
  auto f = kiln::function([&](const Tensor& x) {
    leaked.push_back(x * 2);
    return x;
  });
  f(constant(1.f));
  f(constant(2.f));
  ASSERT_EQ(leaked.size(), 1u);  // pushed only while tracing
  EXPECT_TRUE(leaked[0].is_symbolic());
  expect_error<InvalidArgument>([&] { leaked[0] + 1; }, {"symbolic tensor", "outside"});
}

TEST(Function, RunFunctionsEagerly) {
  int runs = 0;
  auto f = kiln::function([&](const Tensor& x) {
    ++runs;
    return x + 1;
  });
  config::run_functions_eagerly(true);
  f(constant(1));
  f(constant(1));
  config::run_functions_eagerly(false);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(f.tracing_count(), 0);
  f(constant(1));
  f(constant(1));
  EXPECT_EQ(runs, 3);
}

TEST(Function, ExpectMaxTracesPinsABudget) {
  FunctionOptions o;
  o.name = "budgeted";
  auto f = kiln::function([](const Tensor& x, int k) { return x * k; }, o);
  f.expect_max_traces(2);
  f(constant(1), 1);
  f(constant(1), 2);
  expect_error<FailedPrecondition>([&] { f(constant(1), 3); }, {"budgeted", "3", "budget of 2"});
}

TEST(Function, WarnsOnceWhenAnArgumentKeepsChanging) {
  FunctionOptions o;
  o.name = "noisy";
  auto f = kiln::function([](const Tensor& x, int k) { return x * k; }, o);
  ::testing::internal::CaptureStderr();
  for (int k = 0; k < 8; ++k) f(constant(1), k);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("function 'noisy' has traced 6 times; 'arg 1' keeps changing"), std::string::npos) << err;
  EXPECT_EQ(err.find("warning", err.find("warning") + 1), std::string::npos) << "warned twice: " << err;
}

TEST(Function, GraphTextGolden) {
  FunctionOptions o;
  o.name = "affine";
  auto f = kiln::function([](const Tensor& x, const Tensor& w) { return relu(x * w + 1.5f); }, o);
  ConcreteFunction c = f.get_concrete_function(TensorSpec({None, 4}), TensorSpec({4}));
  expect_golden("function_affine.txt", c.graph().to_string());
  expect_golden("function_affine.dot", c.graph().to_dot());
}

TEST(Function, ConcurrentCallsTraceOnce) {
  std::atomic<int> traces{0};
  auto f = kiln::function([&](const Tensor& x) {
    ++traces;
    return x * 3;
  });
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i)
        if (f(constant(float(t))).item<float>() != 3.f * t) ++bad;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(traces.load(), 1);
  EXPECT_EQ(bad.load(), 0);
}

TEST(Function, TheCacheIsBounded) {
  FunctionOptions o;
  o.max_cache_entries = 2;
  auto f = kiln::function([](const Tensor& x, int k) { return x * k; }, o);
  f(constant(1), 1);
  f(constant(1), 2);
  f(constant(1), 3);  // evicts k=1, the least recently used
  EXPECT_EQ(f.cache_info().entries, 2);
  f(constant(1), 3);
  f(constant(1), 2);
  EXPECT_EQ(f.tracing_count(), 3);
  expect_tensor<int32_t>(f(constant(1), 1), {}, {1});  // traced again
  EXPECT_EQ(f.tracing_count(), 4);
  EXPECT_EQ(f.cache_info().entries, 2);
}

TEST(Function, RecursionWhileTracingIsAnErrorNotADeadlock) {
  FunctionOptions o;
  o.name = "recursive";
  std::function<Tensor(const Tensor&)> body;
  auto f = kiln::function([&](const Tensor& x) { return body(x); }, o);
  body = [&](const Tensor& x) { return f(x - 1); };
  expect_error<Unimplemented>([&] { f(constant(3)); }, {"recursive", "called itself", "while_loop"});
  EXPECT_EQ(f.tracing_count(), 0);
}
