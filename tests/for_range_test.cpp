// kiln::for_range (docs/design-notes.md, "Control flow and TensorArray"): a counted loop built on while_loop.
#include "test_util.h"

#include <sstream>

#include "kiln/control_flow.h"
#include "kiln/function.h"
#include "kiln/math.h"
#include "kiln/print.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

namespace {

int count_top_level_op(const GraphView& g, const std::string& op) {
  std::istringstream in(g.to_string());
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  ", 0) == 0 && line.rfind("   ", 0) != 0 && line.find(" = " + op + "(") != std::string::npos)
      ++n;
  return n;
}

Tensor sum_of_squares(const Operand& start, const Operand& limit, const Operand& delta) {
  return kiln::for_range(start, limit, delta, constant(0),
                         [](const Tensor& i, const Tensor& acc) { return acc + i * i; });
}

}  // namespace

TEST(ForRange, EagerAccumulates) {
  expect_tensor<int32_t>(sum_of_squares(0, 5, 1), {}, {30});
  expect_tensor<int32_t>(sum_of_squares(1, 10, 3), {}, {1 + 16 + 49});
  expect_tensor<int32_t>(sum_of_squares(5, 0, -2), {}, {25 + 9 + 1});
  expect_tensor<int32_t>(sum_of_squares(5, 5, 1), {}, {0});
  expect_tensor<int32_t>(sum_of_squares(5, 0, 1), {}, {0});
  expect_tensor<int32_t>(sum_of_squares(constant(2), constant(4), constant(1)), {}, {4 + 9});
}

TEST(ForRange, TupleVariablesAreUnpacked) {
  // Fibonacci: (a, b) -> (b, a + b), and the indices visited.
  auto [a, b] = kiln::for_range(0, 10, 1, std::tuple<Tensor, Tensor>{constant(0), constant(1)},
                                [](const Tensor&, const Tensor& x, const Tensor& y) {
                                  return std::tuple<Tensor, Tensor>{y, x + y};
                                });
  expect_tensor<int32_t>(a, {}, {55});
  expect_tensor<int32_t>(b, {}, {89});
}

TEST(ForRange, VoidBodyRunsEagerly) {
  std::vector<int32_t> seen;
  kiln::for_range(3, -3, -2, [&](const Tensor& i) { seen.push_back(i.item<int32_t>()); });
  EXPECT_EQ(seen, (std::vector<int32_t>{3, 1, -1}));
}

TEST(ForRange, TracedIsOneWhileOpWhateverTheTripCount) {
  int traces = 0;
  auto f = kiln::function([&](const Tensor& n) {
    ++traces;
    return sum_of_squares(0, n, 1);
  });
  for (int n : {0, 1, 5, 100}) {
    int32_t expected = 0;
    for (int i = 0; i < n; ++i) expected += i * i;
    expect_tensor<int32_t>(f(constant(n)), {}, {expected});
    expect_tensor<int32_t>(sum_of_squares(0, n, 1), {}, {expected});
  }
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(f.tracing_count(), 1);
  GraphView small = f.get_concrete_function(constant(3)).graph();
  GraphView large = f.get_concrete_function(constant(3000)).graph();
  EXPECT_EQ(count_top_level_op(small, "While"), 1);
  EXPECT_EQ(small.num_nodes(), large.num_nodes());

  // C++ int bounds while tracing still make a While op, not an unrolled loop.
  auto g = kiln::function([](const Tensor& x) { return kiln::for_range(0, 1000, 1, x, [](const Tensor&, const Tensor& v) { return v + 1; }); });
  expect_tensor<int32_t>(g(constant(5)), {}, {1005});
  EXPECT_EQ(count_top_level_op(g.get_concrete_function(constant(0)).graph(), "While"), 1);
  EXPECT_LT(g.get_concrete_function(constant(0)).graph().num_nodes(), 20);
}

TEST(ForRange, SymbolicDeltaMatchesEager) {
  auto f = kiln::function([](const Tensor& start, const Tensor& limit, const Tensor& delta) {
    return sum_of_squares(start, limit, delta);
  });
  for (auto [s, l, d] : {std::tuple{0, 5, 1}, std::tuple{5, 0, -1}, std::tuple{-4, 7, 3}, std::tuple{7, -4, -3},
                         std::tuple{2, 2, 1}, std::tuple{3, 9, -1}}) {
    Tensor traced = f(constant(s), constant(l), constant(d));
    Tensor eager = sum_of_squares(s, l, d);
    expect_tensor<int32_t>(traced, {}, {eager.item<int32_t>()});
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(ForRange, TupleVariablesTracedMatchEager) {
  auto fib = [](const Tensor& n) {
    return kiln::for_range(0, n, 1, std::tuple<Tensor, Tensor>{constant(0.0f), constant(1.0f)},
                           [](const Tensor&, const Tensor& x, const Tensor& y) {
                             return std::tuple<Tensor, Tensor>{y, x + y};
                           });
  };
  auto f = kiln::function(fib);
  for (int n : {0, 1, 7, 20}) {
    auto [ta, tb] = f(constant(n));
    auto [ea, eb] = fib(constant(n));
    expect_tensor<float>(ta, {}, {ea.item<float>()});
    expect_tensor<float>(tb, {}, {eb.item<float>()});
  }
}

TEST(ForRange, PrintInsideRunsOnEveryCall) {
  std::ostringstream out;
  PrintOptions opts{.stream = &out};
  int traces = 0;
  auto f = kiln::function([&](const Tensor& n) {
    ++traces;
    kiln::for_range(0, n, 1, [&](const Tensor& i) { kiln::print("i", i, opts); });
  });
  f(constant(2));
  f(constant(3));
  EXPECT_EQ(out.str(), "i 0\ni 1\ni 0\ni 1\ni 2\n");
  EXPECT_EQ(traces, 1);
}

TEST(ForRange, Errors) {
  expect_error<InvalidArgument>([] { sum_of_squares(0, 5, 0); }, {"for_range", "delta must not be 0"});
  expect_error<InvalidArgument>([] { sum_of_squares(0, 1.5, 1); }, {"for_range", "limit"});
  expect_error<InvalidArgument>([] { sum_of_squares(constant(0.0f), 5, 1); },
                                {"for_range", "start", "int32 scalar", "float32"});
  expect_error<InvalidArgument>([] { sum_of_squares(0, constant({1, 2}), 1); }, {"for_range", "limit"});
}

TEST(ForEach, OverTheRowsOfATensorEagerAndTracedWithAnUnknownLength) {
  // for x in xs: total += x * x, and count the rows.
  auto body = [](const Tensor& x, const Tensor& total, const Tensor& count) {
    return std::tuple{total + x * x, count + 1};
  };
  Tensor xs = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  auto [total, count] = for_each(xs, std::tuple{zeros({2}), constant(0)}, body);
  expect_tensor<float>(total, Shape{2}, {35.f, 56.f});
  expect_tensor<int32_t>(count, Shape{}, {3});

  auto traced = function([&](const Tensor& rows) { return std::get<0>(for_each(rows, std::tuple{zeros({2}), constant(0)}, body)); },
                         {.input_signature = std::vector{TensorSpec({None, 2})}});
  expect_tensor<float>(traced(xs), Shape{2}, {35.f, 56.f});
  expect_tensor<float>(traced(constant({{2.f, 1.f}})), Shape{2}, {4.f, 1.f});
  EXPECT_EQ(traced.tracing_count(), 1);
  expect_error<InvalidArgument>([] { for_each(constant(1.f), zeros({}), [](const Tensor& x, const Tensor& t) { return t + x; }); },
                                {"rank >= 1"});
}

TEST(ForEach, ShapeOfGivesDimsKnownOnlyAtRunTime) {
  expect_tensor<int32_t>(shape_of(zeros({2, 3})), Shape{2}, {2, 3});
  expect_tensor<int32_t>(shape_of(constant(1)), Shape{0}, {});
  auto f = function([](const Tensor& x) { return shape_of(x); }, {.input_signature = std::vector{TensorSpec({None, 3})}});
  expect_tensor<int32_t>(f(zeros({5, 3})), Shape{2}, {5, 3});
}
