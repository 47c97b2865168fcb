// host_function, check_numerics, source lines in graph errors, nesting.
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

TEST(HostFunction, RunsEagerlyAndOnEveryGraphCall) {
  std::vector<float> seen;
  auto cb = [&](const std::vector<Tensor>& in) {
    seen.push_back(in[0].item<float>());
    return std::vector<Tensor>{in[0] * 10};
  };
  expect_tensor<float>(host_function(cb, {constant(1.f)}, {float32})[0], {}, {10.f});
  auto f = kiln::function([&](const Tensor& x) { return host_function(cb, {x + 1}, {float32})[0] + 1; });
  expect_tensor<float>(f(constant(1.f)), {}, {21.f});
  expect_tensor<float>(f(constant(2.f)), {}, {31.f});
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(seen, (std::vector<float>{1.f, 2.f, 3.f}));
}

TEST(HostFunction, ResultsAreChecked) {
  auto cb = [](const std::vector<Tensor>&) { return std::vector<Tensor>{constant(1)}; };
  expect_error<InvalidArgument>([&] { host_function(cb, {}, {float32}); },
                                {"host_function", "result 0", "int32", "float32"});
  expect_error<InvalidArgument>([&] { host_function(cb, {}, {int32, int32}); },
                                {"host_function", "returned 1 tensors, 2 expected"});
}

TEST(HostFunction, CallbackErrorsInGraphsNameTheSourceLine) {
  auto f = kiln::function([](const Tensor& x) {
    return host_function(
        [](const std::vector<Tensor>& in) -> std::vector<Tensor> {
          if (in[0].item<int32_t>() > 1) throw OutOfRange("too big");
          return {in[0]};
        },
        {x}, {int32})[0];
  });
  f(constant(1));
  int line = __LINE__ - 8;  // the host_function call above
  expect_error<OutOfRange>([&] { f(constant(2)); },
                           {"too big", "HostFunction", "debugging_test.cpp:" + std::to_string(line)});
}

TEST(CheckNumerics, EagerAndGraphErrorsNameTheOpAndLine) {
  debugging::enable_check_numerics();
  expect_error<InvalidArgument>([] { log(constant({-1.f, 1.f})); }, {"check_numerics", "Log", "NaN"});
  auto f = kiln::function([](const Tensor& x) {
    Tensor y = x * 2;
    return log(y);
  });
  int line = __LINE__ - 2;
  EXPECT_NO_THROW(f(constant(1.f)));
  expect_error<InvalidArgument>([&] { f(constant(0.f)); },
                                {"check_numerics", "Log", "Inf", "debugging_test.cpp:" + std::to_string(line)});
  debugging::disable_check_numerics();
  EXPECT_TRUE(std::isinf(f(constant(0.f)).item<float>()));
}

TEST(NestedFunctions, AFunctionCalledWhileTracingIsOneCallNode) {
  // Seed: dense_layer calls add.
  auto add = kiln::function([](const Tensor& a, const Tensor& b) { return a + b; });
  auto dense_layer = kiln::function(
      [&](const Tensor& x, const Tensor& w, const Tensor& b) { return add(matmul(x, w), b); });
  Tensor y = dense_layer(ones({3, 2}), ones({2, 2}), ones({2}));
  expect_tensor<float>(y, {3, 2}, {3, 3, 3, 3, 3, 3});
  EXPECT_EQ(dense_layer.tracing_count(), 1);
  EXPECT_EQ(add.tracing_count(), 1);  // traced once, as its own graph
  ConcreteFunction c = dense_layer.get_concrete_function(ones({3, 2}), ones({2, 2}), ones({2}));
  std::string text = c.graph().to_string();
  EXPECT_NE(text.find("call = Call(mat_mul, arg2)"), std::string::npos) << text;
  EXPECT_NE(text.find("add = Add(arg0, arg1)"), std::string::npos) << text;  // the callee, below
  // Eager use of the inner function reuses its trace.
  expect_tensor<float>(add(ones({3, 2}) * 2, ones({2})), {3, 2}, {3, 3, 3, 3, 3, 3});
  EXPECT_EQ(add.tracing_count(), 1);
  // A callee with side effects is a StatefulCall: it runs even when unused.
  Variable counter(0);
  auto bump = kiln::function([&] { counter.assign_add(1); });
  auto outer = kiln::function([&](const Tensor& x) {
    bump();
    return x + 1;
  });
  outer(constant(1));
  outer(constant(2));
  EXPECT_EQ(counter.read_value().item<int32_t>(), 2);
  EXPECT_NE(outer.get_concrete_function(constant(1)).graph().to_string().find("stateful_call = StatefulCall(capture)"), std::string::npos);
}

TEST(Verify, PassesWhenGraphAndEagerAgree) {
  FunctionOptions o;
  o.verify = true;
  auto f = kiln::function([](const Tensor& x) { return tanh(x * 3) + sum(x); }, o);
  Tensor y = f(constant({0.5f, -1.f}));
  EXPECT_EQ(y.shape(), Shape{2});
  EXPECT_NO_THROW(f(constant({1.f, 2.f})));
}

TEST(Verify, NamesTheFirstOpThatDiffers) {
  FunctionOptions o;
  o.verify = true;
  o.name = "noisy";
  auto f = kiln::function([](const Tensor& x) {
    Tensor a = x * 2;
    Tensor r = random::normal({2});  // stateful: fresh numbers on each run
    return a + r;
  }, o);
  int line = __LINE__ - 3;
  expect_error<InvalidArgument>([&] { f(constant({1.f, 2.f})); },
                                {"verify", "noisy", "RandomNormal", "debugging_test.cpp:" + std::to_string(line),
                                 "different values"});
}

TEST(GraphErrors, ABadGatherIndexNamesTheSourceLine) {
  auto f = kiln::function([](const Tensor& params, const Tensor& idx) { return gather(params, idx); });
  int line = __LINE__ - 1;
  expect_tensor<float>(f(constant({1.f, 2.f, 3.f}), constant({2, 0})), {2}, {3.f, 1.f});
  expect_error<InvalidArgument>([&] { f(constant({1.f, 2.f, 3.f}), constant({0, 5})); },
                                {"Gather", "indices[1] = 5 is not in [0, 3)",
                                 "debugging_test.cpp:" + std::to_string(line)});
}
