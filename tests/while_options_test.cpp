// while_loop's options (docs/design-notes.md, "Control flow and TensorArray"): shape invariants and
// maximum_iterations, eagerly and traced.
#include "test_util.h"

#include "kiln/control_flow.h"
#include "kiln/function.h"
#include "kiln/tensor_array.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

namespace {

using Pair = std::tuple<Tensor, Tensor>;

auto doubling_loop(int& body_traces, WhileOptions options) {
  return [&body_traces, options](const Tensor& x) {
    return std::get<1>(kiln::while_loop(
        [](const Tensor& i, const Tensor&) { return i < 3; },
        [&](const Tensor& i, const Tensor& v) {
          ++body_traces;
          return Pair{i + 1, concat({v, v}, 0)};
        },
        Pair{constant(0), x}, options));
  };
}

}  // namespace

TEST(WhileOptions, ShapeInvariantRelaxesADimUpFront) {
  int body_traces = 0;
  auto f = kiln::function(doubling_loop(body_traces, {.shape_invariants = {std::nullopt, Shape{None}}}));
  expect_tensor<int32_t>(f(constant({1, 2})), {16}, {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_EQ(body_traces, 1);  // no second trace to relax the dim
  EXPECT_EQ(f.get_concrete_function(constant({1, 2})).outputs()[0].shape, (Shape{None}));
  // The same options eagerly.
  int eager_traces = 0;
  expect_tensor<int32_t>(doubling_loop(eager_traces, {.shape_invariants = {std::nullopt, Shape{None}}})(constant({7})),
                         {8}, std::vector<int32_t>(8, 7));
}

TEST(WhileOptions, ShapeInvariantViolationsNameTheVariableAndBothShapes) {
  int traces = 0;
  auto fixed = doubling_loop(traces, {.shape_invariants = {std::nullopt, Shape{2}}});
  std::vector<std::string> after{
      "while_loop: loop variable 1 has shape (4,) after body_fn, which does not fit its shape invariant (2,)"};
  expect_error<InvalidArgument>([&] { fixed(constant({1, 2})); }, after);
  auto traced = kiln::function(fixed);
  expect_error<InvalidArgument>([&] { traced(constant({1, 2})); }, after);

  std::vector<std::string> entry{
      "while_loop: loop variable 1 enters with shape (3,), which does not fit its shape invariant (2,)"};
  expect_error<InvalidArgument>([&] { fixed(constant({1, 2, 3})); }, entry);
  expect_error<InvalidArgument>([&] { traced(constant({1, 2, 3})); }, entry);

  auto rank = doubling_loop(traces, {.shape_invariants = {Shape{None}, std::nullopt}});
  expect_error<InvalidArgument>([&] { rank(constant({1})); },
                                {"loop variable 0 enters with shape ()", "shape invariant (None,)"});
  auto count = doubling_loop(traces, {.shape_invariants = {Shape{}}});
  expect_error<InvalidArgument>([&] { count(constant({1})); }, {"while_loop: 1 shape invariants for 2 loop variables"});

  auto not_a_tensor = [] {
    kiln::while_loop([](const Tensor& i, const TensorArray&) { return i < 1; },
                     [](const Tensor& i, const TensorArray& a) { return std::tuple<Tensor, TensorArray>{i + 1, a}; },
                     std::tuple<Tensor, TensorArray>{constant(0), TensorArray(DType::Float32, 1)},
                     {.shape_invariants = {std::nullopt, Shape{None}}});
  };
  expect_error<InvalidArgument>(not_a_tensor, {"loop variable 1 has a shape invariant but is not a Tensor"});
}

TEST(WhileOptions, MaximumIterationsEagerAndTraced) {
  auto doubling = [](const Tensor& x, const Tensor& limit) {
    return kiln::while_loop([](const Tensor& v) { return v < 1000; }, [](const Tensor& v) { return v * 2; }, x,
                            {.maximum_iterations = limit});
  };
  auto traced = kiln::function(doubling);
  for (int limit : {0, 1, 3, 100}) {
    int32_t expected = 1;
    for (int k = 0; k < limit && expected < 1000; ++k) expected *= 2;
    expect_tensor<int32_t>(doubling(constant(1), constant(limit)), {}, {expected});
    expect_tensor<int32_t>(traced(constant(1), constant(limit)), {}, {expected});
  }
  EXPECT_EQ(traced.tracing_count(), 1);
  expect_error<InvalidArgument>([&] { doubling(constant(1), constant(2.f)); },
                                {"while_loop: maximum_iterations must be an int32 scalar, got float32 ()"});
  // A traced cond_fn that does not return bool still gets the loop's message.
  auto not_bool = kiln::function([](const Tensor& x) {
    return kiln::while_loop([](const Tensor& v) { return v; }, [](const Tensor& v) { return v - 1; }, x,
                            {.maximum_iterations = constant(3)});
  });
  expect_error<InvalidArgument>([&] { not_bool(constant(5)); },
                                {"while_loop: cond_fn must return a bool tensor with one element, got int32 ()"});
}

TEST(WhileOptions, MaximumIterationsWithFunctionVerify) {
  auto f = kiln::function(
      [](const Tensor& x) {
        return kiln::while_loop([](const Tensor& v) { return v < 100; }, [](const Tensor& v) { return v + 7; }, x,
                                {.maximum_iterations = constant(4)});
      },
      {.verify = true});
  expect_tensor<int32_t>(f(constant(1)), {}, {29});
}
