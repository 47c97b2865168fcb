// Variables eagerly and in graphs; the seeds' rules for variables and side
// effects inside kiln::function.
#include "test_util.h"

#include <optional>
#include <sstream>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

TEST(Variable, EagerReadAssignUpdate) {
  Variable v(constant({1.f, 2.f}), {.name = "w"});
  EXPECT_EQ(v.name(), "w");
  EXPECT_EQ(v.dtype(), float32);
  EXPECT_EQ(v.shape(), Shape{2});
  EXPECT_TRUE(v.trainable());
  Tensor before = v.read_value();
  v.assign_add(constant({10.f, 10.f}));
  expect_tensor<float>(v.read_value(), {2}, {11.f, 12.f});
  expect_tensor<float>(before, {2}, {1.f, 2.f});  // a read is a value, not a view
  v.assign_sub(1);
  expect_tensor<float>(v, {2}, {10.f, 11.f});
  v.assign(constant({0.f, 5.f}));
  expect_tensor<float>(v * 2, {2}, {0.f, 10.f});
  Variable s(3);  // a C++ number: int32
  EXPECT_EQ(s.dtype(), int32);
}

TEST(Variable, BadUpdatesAreClearErrorsAndLeaveTheValue) {
  Variable v(constant({1.f, 2.f}), {.name = "w"});
  expect_error<InvalidArgument>([&] { v.assign(constant({1, 2})); },
                                {"AssignVariable", "float32", "int32"});
  expect_error<InvalidArgument>([&] { v.assign(constant({1.f, 2.f, 3.f})); },
                                {"AssignVariable", "(2,)", "(3,)"});
  expect_error<InvalidArgument>([&] { v.assign_add(1.5, SourceLocation::current()); v.assign_add(constant(1)); },
                                {"AssignAddVariable", "int32"});
  expect_tensor<float>(v, {2}, {2.5f, 3.5f});
  Variable null;
  EXPECT_FALSE(null);
  expect_error<FailedPrecondition>([&] { null.read_value(); }, {"null"});
}

TEST(Variable, GraphUpdatesAreSeenOutside) {
  // Seed: g() prints 1, 2, 3.
  Variable v(0);
  std::ostringstream out;
  auto g = kiln::function([&] {
    v.assign_add(1);
    kiln::print(v, PrintOptions{.stream = &out});
  });
  g();
  g();
  g();
  EXPECT_EQ(out.str(), "1\n2\n3\n");
  EXPECT_EQ(v.read_value().item<int32_t>(), 3);
  EXPECT_EQ(g.tracing_count(), 1);
}

TEST(Variable, OuterVariableIsCapturedAsAResource) {
  Variable x(1.0f);
  std::ostringstream out;
  auto outer_var = kiln::function([&] {
    x.assign_add(1.0f);
    kiln::print(x, PrintOptions{.stream = &out});
    return x;
  });
  expect_tensor<float>(outer_var(), {}, {2.f});
  expect_tensor<float>(outer_var(), {}, {3.f});
  EXPECT_EQ(out.str(), "2\n3\n");
}

TEST(Variable, CreatingAVariableOnEveryCallFailsOnTheFirstCall) {
  FunctionOptions o;
  o.name = "inner_var";
  auto inner_var = kiln::function(
      [] {
        Variable x(1.0f);
        x.assign_add(1.0f);
        return x;
      },
      o);
  expect_error<FailedPrecondition>([&] { inner_var(); },
                                   {"inner_var", "created variables", "eager and graph",
                                    "if (!v) v = kiln::Variable"});
}

TEST(Variable, CreateOncePatternWorks) {
  std::optional<Variable> b;
  Variable lazy;
  std::ostringstream out;
  auto f = kiln::function([&] {
    Tensor a = constant({{10.f, 10.f}, {11.f, 1.f}});
    Tensor x = constant({{1.f, 0.f}, {0.f, 1.f}});
    if (!b) b = Variable(12.f);
    if (!lazy) lazy = Variable(constant(0.f));
    lazy.assign_add(1.f);
    Tensor y = matmul(a, x) + *b;
    kiln::print("TF-PRINT:", y, PrintOptions{.stream = &out});
    return y;
  });
  expect_tensor<float>(f(), {2, 2}, {22.f, 22.f, 23.f, 13.f});
  expect_tensor<float>(f(), {2, 2}, {22.f, 22.f, 23.f, 13.f});
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(out.str(), "TF-PRINT: [[22 22]\n [23 13]]\nTF-PRINT: [[22 22]\n [23 13]]\n");
  // Each call ran its assign once (the first call ran the first trace only).
  EXPECT_EQ(lazy.read_value().item<float>(), 2.f);
}

TEST(Variable, InitialValuesFromArgumentsAreSetByTheGraph) {
  std::vector<Variable> state;
  auto fn = kiln::function([&](const Tensor& x) {
    if (state.empty()) {
      state.push_back(Variable(2.0f * x));
      state.push_back(Variable(state[0] * 3.0f));
    }
    return state[0] * x * state[1];
  });
  expect_tensor<float>(fn(constant(1.0f)), {}, {12.f});
  expect_tensor<float>(fn(constant(3.0f)), {}, {36.f});
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].read_value().item<float>(), 2.f);
  EXPECT_EQ(state[1].read_value().item<float>(), 6.f);
}

TEST(Variable, LaterTracesMayNotCreateVariables) {
  FunctionOptions o;
  o.name = "grows";
  std::vector<Variable> made;
  auto f = kiln::function(
      [&](const Tensor& x) {
        if (x.shape().rank() == 2) made.push_back(Variable(constant(1.f)));
        return x + 1;
      },
      o);
  f(constant(1.f));
  expect_error<FailedPrecondition>([&] { f(constant({{1.f}})); }, {"grows", "trace 2", "created variables"});
}

TEST(Variable, VariablesAsArgumentsAreKeyedByDTypeAndShape) {
  auto f = kiln::function([](const Variable& v, const Tensor& delta) {
    v.assign_add(delta);
    return v.read_value() * 2;
  });
  Variable a(constant({1.f, 1.f})), b(constant({5.f, 5.f}));
  expect_tensor<float>(f(a, constant({1.f, 2.f})), {2}, {4.f, 6.f});
  expect_tensor<float>(f(b, constant({1.f, 2.f})), {2}, {12.f, 14.f});
  EXPECT_EQ(f.tracing_count(), 1);
  expect_tensor<float>(a, {2}, {2.f, 3.f});
  expect_tensor<float>(b, {2}, {6.f, 7.f});
  Variable c(constant({1, 2}));
  f(c, constant({1, 1}));
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(f.retrace_log()[0].cause, RetraceCause::DType);
}

TEST(SideEffects, OnlyGraphEffectsRepeat) {
  std::ostringstream cout_like, tf_print;
  std::vector<int> pushed;
  auto f = kiln::function([&](const Tensor& x) {
    cout_like << "PRINT " << x << "\n";  // C++ side effect: only while tracing
    pushed.push_back(1);
    kiln::print("TF-PRINT", x, PrintOptions{.stream = &tf_print});
    return x;
  });
  f(constant(1));
  f(constant(2));
  f(constant(3));
  EXPECT_EQ(cout_like.str(), "PRINT Tensor(\"arg0:0\", shape=(), dtype=int32)\n");
  EXPECT_EQ(pushed.size(), 1u);
  EXPECT_EQ(tf_print.str(), "TF-PRINT 1\nTF-PRINT 2\nTF-PRINT 3\n");
}

TEST(SideEffects, StatefulOpsRunInProgramOrderEvenWhenUnused) {
  Variable v(0);
  std::ostringstream out;
  auto f = kiln::function([&] {
    kiln::print("before", v, PrintOptions{.stream = &out});
    v.assign(10);
    kiln::print("after", v, PrintOptions{.stream = &out});
    v.assign_add(1);
  });
  f();
  EXPECT_EQ(out.str(), "before 0\nafter 10\n");
  EXPECT_EQ(v.read_value().item<int32_t>(), 11);
}

TEST(SideEffects, RandomIsFreshOnEveryGraphCall) {
  auto f = kiln::function([] { return random::normal({3, 3}); });
  auto a = f().to_vector<float>();
  auto b = f().to_vector<float>();
  EXPECT_NE(a, b);
  EXPECT_EQ(f.tracing_count(), 1);
  // A C++ random number is frozen into the graph at trace time.
  auto g = kiln::function([] { return constant(static_cast<float>(std::rand())); });
  EXPECT_EQ(g().item<float>(), g().item<float>());
}
