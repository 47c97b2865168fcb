// kiln::cond and kiln::while_loop: eager control flow, traced If / While ops,
// the seeds' fizzbuzz and Collatz examples, errors, graph size.
#include "test_util.h"

#include <regex>
#include <sstream>

#include "graph_ops/control_flow_ops.h"
#include "core/tensor_impl.h"
#include "graph/graph.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_golden;
using kiln::testing::expect_tensor;

namespace {

// How many nodes of `g` run `op` (not counting nested graphs).
int count_op(const GraphView& g, const std::string& op) {
  std::string text = g.to_string();
  int n = 0;
  std::string needle = " = " + op + "(";
  // Only top-level lines: two spaces of indent.
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  ", 0) == 0 && line.rfind("   ", 0) != 0 && line.find(needle) != std::string::npos) ++n;
  return n;
}

// The Collatz sequence from n: (steps until 1).
std::tuple<Tensor, Tensor> collatz(const Tensor& n) {
  return kiln::while_loop(
      [](const Tensor& x, const Tensor&) { return x != 1; },
      [](const Tensor& x, const Tensor& steps) {
        return std::tuple<Tensor, Tensor>{where(x % 2 == 0, floordiv(x, 2), 3 * x + 1), steps + 1};
      },
      std::tuple<Tensor, Tensor>{n, constant(0)});
}

}  // namespace

// ---- cond ------------------------------------------------------------------

TEST(ControlFlow, CondEagerRunsOneBranch) {
  int then_calls = 0, else_calls = 0;
  Tensor x = constant(3);
  auto pick = [&](const Tensor& pred) {
    return kiln::cond(
        pred, [&] { ++then_calls; return x * 2; }, [&] { ++else_calls; return -x; });
  };
  expect_tensor<int32_t>(pick(x > 0), {}, {6});
  expect_tensor<int32_t>(pick(x < 0), {}, {-3});
  EXPECT_EQ(then_calls, 1);
  EXPECT_EQ(else_calls, 1);
  // A C++ bool: plain if.
  expect_tensor<int32_t>(kiln::cond(false, [&] { return x; }, [&] { return x + 1; }), {}, {4});
  // void branches.
  int hits = 0;
  kiln::cond(constant(true), [&] { hits += 1; }, [&] { hits += 10; });
  EXPECT_EQ(hits, 1);
  // A shape-(1,) bool is one element: fine.
  expect_tensor<int32_t>(kiln::cond(constant({true}), [&] { return x; }, [&] { return -x; }), {},
                         {3});
}

TEST(ControlFlow, CondRejectsBadPredicates) {
  Tensor x = constant(1.f);
  expect_error<InvalidArgument>([&] { kiln::cond(constant(1), [&] { return x; }, [&] { return x; }); },
                                {"cond: pred must be a bool tensor with one element, got int32 ()"});
  expect_error<InvalidArgument>(
      [&] { kiln::cond(constant({true, false}), [&] { return x; }, [&] { return x; }); },
      {"cond", "bool (2,)"});
  auto f = kiln::function([](const Tensor& x) {
    return kiln::cond(x, [&] { return x; }, [&] { return x; });
  });
  expect_error<InvalidArgument>([&] { f(constant(1.f)); }, {"cond: pred must be a bool", "float32 ()"});
  expect_error<InvalidArgument>([&] { f(constant({true, false})); }, {"cond", "bool (2,)"});
}

TEST(ControlFlow, CondTracesBothBranchesIntoOneIfOp) {
  int then_traces = 0, else_traces = 0;
  auto f = kiln::function([&](const Tensor& x) {
    return kiln::cond(
        x > 0, [&] { ++then_traces; return x * 2; }, [&] { ++else_traces; return -x; });
  });
  expect_tensor<float>(f(constant(3.f)), {}, {6.f});
  expect_tensor<float>(f(constant(-4.f)), {}, {4.f});
  expect_tensor<float>(f(constant(5.f)), {}, {10.f});
  // Both branches were traced once, on the first call; the graph chose.
  EXPECT_EQ(then_traces, 1);
  EXPECT_EQ(else_traces, 1);
  EXPECT_EQ(f.tracing_count(), 1);
  GraphView g = f.get_concrete_function(constant(1.f)).graph();
  EXPECT_EQ(count_op(g, "If"), 1);
  EXPECT_EQ(count_op(g, "Mul"), 0);  // inside the branch, not the outer graph
}

TEST(ControlFlow, CondWithConcretePredicateWhileTracingAddsNoOp) {
  Tensor flag = constant(true);
  int else_traces = 0;
  auto f = kiln::function([&](const Tensor& x) {
    return kiln::cond(flag, [&] { return x + 1; }, [&] { ++else_traces; return x - 1; });
  });
  expect_tensor<int32_t>(f(constant(1)), {}, {2});
  EXPECT_EQ(else_traces, 0);
  GraphView g = f.get_concrete_function(constant(1)).graph();
  EXPECT_EQ(count_op(g, "If"), 0);
  EXPECT_EQ(count_op(g, "Add"), 1);
}

TEST(ControlFlow, CondCapturesOuterTensors) {
  Tensor w = constant({10, 20});  // concrete, outside the function
  auto f = kiln::function([&](const Tensor& x, const Tensor& use_w) {
    Tensor y = x * 3;  // symbolic, of the enclosing graph
    return kiln::cond(use_w, [&] { return x + w; }, [&] { return y - x; });
  });
  expect_tensor<int32_t>(f(constant({1, 2}), constant(true)), {2}, {11, 22});
  expect_tensor<int32_t>(f(constant({1, 2}), constant(false)), {2}, {2, 4});
  EXPECT_EQ(f.tracing_count(), 1);
  // Eager gives the same.
  Tensor x = constant({1, 2});
  Tensor y = x * 3;
  expect_tensor<int32_t>(kiln::cond(constant(false), [&] { return x + w; }, [&] { return y - x; }), {2}, {2, 4});
}

TEST(ControlFlow, CondMergesShapes) {
  auto f = kiln::function([](const Tensor& x, const Tensor& p) {
    return kiln::cond(p, [&] { return x; }, [&] { return concat({x, x}, 0); });
  });
  ConcreteFunction c = f.get_concrete_function(TensorSpec({2}, DType::Int32), TensorSpec({}, DType::Bool));
  EXPECT_EQ(c.outputs()[0].shape, (Shape{None}));
  expect_tensor<int32_t>(f(constant({1, 2}), constant(true)), {2}, {1, 2});
  expect_tensor<int32_t>(f(constant({1, 2}), constant(false)), {4}, {1, 2, 1, 2});
}

TEST(ControlFlow, CondReturnsStructures) {
  auto f = kiln::function([](const Tensor& x) {
    return kiln::cond(
        x > 0, [&] { return std::tuple<Tensor, Tensor>{x, x * 10}; },
        [&] { return std::tuple<Tensor, Tensor>{-x, x * 100}; });
  });
  auto [a, b] = f(constant(2));
  expect_tensor<int32_t>(a, {}, {2});
  expect_tensor<int32_t>(b, {}, {20});
  auto [c, d] = f(constant(-2));
  expect_tensor<int32_t>(c, {}, {2});
  expect_tensor<int32_t>(d, {}, {-200});

  auto g = kiln::function([](const Tensor& x) {
    return kiln::cond(x > 0, [&] { return std::vector<Tensor>{x, x + 1, x + 2}; },
                      [&] { return std::vector<Tensor>{x, x, x}; });
  });
  std::vector<Tensor> v = g(constant(1));
  ASSERT_EQ(v.size(), 3u);
  expect_tensor<int32_t>(v[2], {}, {3});
}

TEST(ControlFlow, CondBranchMismatchesNameTheOutputAndBothTypes) {
  auto f = kiln::function([](const Tensor& x) {
    return kiln::cond(x > 0, [&] { return constant({1, 2}); }, [&] { return constant({1.f, 2.f}); });
  });
  expect_error<InvalidArgument>([&] { f(constant(1)); },
                                {"cond: output 0 is int32 (2,) in then_fn but float32 (2,) in else_fn"});
  auto g = kiln::function([](const Tensor& x) {
    return kiln::cond(x > 0, [&] { return std::vector<Tensor>{x, x}; }, [&] { return std::vector<Tensor>{x}; });
  });
  expect_error<InvalidArgument>([&] { g(constant(1)); },
                                {"cond: then_fn and else_fn return different structures",
                                 "2 tensors in then_fn, 1 in else_fn"});
}

TEST(ControlFlow, PrintInsideBranchesRunsOnEveryCall) {
  std::ostringstream out;
  PrintOptions opts{.stream = &out};
  int traces = 0;
  auto f = kiln::function([&](const Tensor& x) {
    ++traces;
    kiln::cond(x % 2 == 0, [&] { kiln::print("even", x, opts); }, [&] { kiln::print("odd", x, opts); });
  });
  for (int i = 0; i < 4; ++i) f(constant(i));
  EXPECT_EQ(out.str(), "even 0\nodd 1\neven 2\nodd 3\n");
  EXPECT_EQ(traces, 1);
  GraphView g = f.get_concrete_function(constant(0)).graph();
  EXPECT_EQ(count_op(g, "StatefulIf"), 1);
}

TEST(ControlFlow, VariableUpdatesInsideBranches) {
  Variable v(0);
  auto f = kiln::function([&](const Tensor& x) {
    kiln::cond(x > 0, [&] { v.assign_add(x); }, [&] { v.assign_sub(1); });
    return v.read_value();
  });
  expect_tensor<int32_t>(f(constant(5)), {}, {5});
  expect_tensor<int32_t>(f(constant(-5)), {}, {4});
  expect_tensor<int32_t>(f(constant(2)), {}, {6});
  expect_tensor<int32_t>(v.read_value(), {}, {6});
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(ControlFlow, NestedCond) {
  auto sign = kiln::function([](const Tensor& x) {
    return kiln::cond(
        x > 0, [&] { return constant(1); },
        [&] { return kiln::cond(x < 0, [&] { return constant(-1); }, [&] { return constant(0) * x; }); });
  });
  expect_tensor<int32_t>(sign(constant(7)), {}, {1});
  expect_tensor<int32_t>(sign(constant(-7)), {}, {-1});
  expect_tensor<int32_t>(sign(constant(0)), {}, {0});
}

TEST(ControlFlow, CondGraphTextGolden) {
  FunctionOptions o;
  o.name = "relu_or_scale";
  Tensor scale = constant(2.5f);
  auto f = kiln::function([&](const Tensor& x) {
    return kiln::cond(sum(x) > 0.f, [&] { return relu(x); }, [&] { return x * scale; });
  }, o);
  ConcreteFunction c = f.get_concrete_function(TensorSpec({None}));
  expect_golden("control_flow_cond.txt", c.graph().to_string());
}

// ---- while_loop --------------------------------------------------------------

TEST(ControlFlow, WhileLoopEager) {
  // Sum of 1..10, with a tuple of loop variables.
  auto [i, total] = kiln::while_loop(
      [](const Tensor& i, const Tensor&) { return i <= 10; },
      [](const Tensor& i, const Tensor& total) { return std::tuple<Tensor, Tensor>{i + 1, total + i}; },
      std::tuple<Tensor, Tensor>{constant(1), constant(0)});
  expect_tensor<int32_t>(i, {}, {11});
  expect_tensor<int32_t>(total, {}, {55});
  // One tensor.
  Tensor p = kiln::while_loop([](const Tensor& x) { return x < 100; }, [](const Tensor& x) { return x * 2; },
                              constant(1));
  expect_tensor<int32_t>(p, {}, {128});
  // A vector, passed whole; zero trips.
  std::vector<Tensor> v = kiln::while_loop(
      [](const std::vector<Tensor>& v) { return v[0] > 5; },
      [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] - 1, v[1]}; },
      std::vector<Tensor>{constant(3), constant(1.f)});
  expect_tensor<int32_t>(v[0], {}, {3});
  // Collatz from 27 takes 111 steps.
  auto [one, steps] = collatz(constant(27));
  expect_tensor<int32_t>(one, {}, {1});
  expect_tensor<int32_t>(steps, {}, {111});
}

TEST(ControlFlow, WhileLoopTracedIsOneOpWhateverTheTripCount) {
  int body_traces = 0;
  auto f = kiln::function([&](const Tensor& n) {
    ++body_traces;
    return collatz(n);
  });
  for (int n : {1, 6, 27, 97, 871}) {
    auto [one, steps] = f(constant(n));
    auto [eager_one, eager_steps] = collatz(constant(n));
    expect_tensor<int32_t>(one, {}, {1});
    expect_tensor<int32_t>(steps, {}, {eager_steps.item<int32_t>()});
  }
  expect_tensor<int32_t>(std::get<1>(f(constant(871))), {}, {178});
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(body_traces, 1);
  GraphView g = f.get_concrete_function(constant(1)).graph();
  EXPECT_EQ(count_op(g, "While"), 1);
  int nodes = g.num_nodes();

  // A loop whose trip count is a C++ value unrolls; the While op does not.
  auto count_to = kiln::function([](const Tensor& limit) {
    return kiln::while_loop([&](const Tensor& i) { return i < limit; }, [](const Tensor& i) { return i + 1; },
                            constant(0));
  });
  int first = count_to.get_concrete_function(constant(10)).graph().num_nodes();
  expect_tensor<int32_t>(count_to(constant(10)), {}, {10});
  expect_tensor<int32_t>(count_to(constant(10000)), {}, {10000});
  EXPECT_EQ(count_to.get_concrete_function(constant(10000)).graph().num_nodes(), first);
  EXPECT_EQ(count_to.tracing_count(), 1);
  EXPECT_EQ(nodes, g.num_nodes());
}

TEST(ControlFlow, FizzBuzzSeed) {
  // The seed: `for i in tf.range(1, n + 1)` with an if/elif chain of
  // tf.print; Python prints show when tracing happens.
  std::ostringstream out, tracing;
  PrintOptions opts{.stream = &out};
  auto fizzbuzz = kiln::function([&](const Tensor& n) {
    kiln::while_loop(
        [&](const Tensor& i) { return i <= n; },
        [&](const Tensor& i) {
          tracing << "Tracing for loop\n";
          kiln::cond(
              i % 15 == 0,
              [&] {
                tracing << "Tracing fizzbuzz branch\n";
                kiln::print("fizzbuzz", opts);
              },
              [&] {
                kiln::cond(
                    i % 3 == 0,
                    [&] {
                      tracing << "Tracing fizz branch\n";
                      kiln::print("fizz", opts);
                    },
                    [&] {
                      kiln::cond(
                          i % 5 == 0,
                          [&] {
                            tracing << "Tracing buzz branch\n";
                            kiln::print("buzz", opts);
                          },
                          [&] {
                            tracing << "Tracing default branch\n";
                            kiln::print(i, opts);
                          });
                    });
              });
          return i + 1;
        },
        constant(1));
  });
  fizzbuzz(constant(5));
  EXPECT_EQ(tracing.str(),
            "Tracing for loop\nTracing fizzbuzz branch\nTracing fizz branch\nTracing buzz branch\n"
            "Tracing default branch\n");
  EXPECT_EQ(out.str(), "1\n2\nfizz\n4\nbuzz\n");
  out.str("");
  fizzbuzz(constant(20));
  EXPECT_EQ(out.str(),
            "1\n2\nfizz\n4\nbuzz\nfizz\n7\n8\nfizz\nbuzz\n11\nfizz\n13\n14\nfizzbuzz\n16\n17\nfizz\n19\nbuzz\n");
  EXPECT_EQ(fizzbuzz.tracing_count(), 1);
  GraphView g = fizzbuzz.get_concrete_function(constant(5)).graph();
  EXPECT_EQ(count_op(g, "StatefulWhile"), 1);
  // Stream ids depend on which tests printed before.
  expect_golden("control_flow_fizzbuzz.txt",
                std::regex_replace(g.to_string(), std::regex("stream_id=[0-9]+"), "stream_id=N"));
}

TEST(ControlFlow, LoopOverARangeTensor) {
  // Iterating over the elements of kiln::range(...) by index.
  auto total = kiln::function([](const Tensor& xs) {
    Tensor n = sum(ones_like(xs));
    auto [i, acc] = kiln::while_loop(
        [&](const Tensor& i, const Tensor&) { return i < n; },
        [&](const Tensor& i, const Tensor& acc) {
          Tensor x = gather(xs, i);
          Tensor add = kiln::cond(x % 2 == 0, [&] { return x; }, [&] { return x * 0; });
          return std::tuple<Tensor, Tensor>{i + 1, acc + add};
        },
        std::tuple<Tensor, Tensor>{constant(0), constant(0)});
    return acc;
  });
  expect_tensor<int32_t>(total(kiln::range(1, 11)), {}, {30});
  expect_tensor<int32_t>(total(kiln::range(1, 101)), {}, {2550});
  EXPECT_EQ(total.tracing_count(), 2);  // the second relaxes the length
  expect_tensor<int32_t>(total(kiln::range(0, 7)), {}, {12});
  EXPECT_EQ(total.tracing_count(), 2);
}

TEST(ControlFlow, CondInsideWhileMatchesEager) {
  auto step = [](const Tensor& i, const Tensor& x) {
    Tensor next = kiln::cond(x > 10.f, [&] { return x / 2.f; }, [&] { return x * 3.f + 1.f; });
    return std::tuple<Tensor, Tensor>{i + 1, next};
  };
  auto run = [&](const Tensor& x0) {
    return std::get<1>(kiln::while_loop([](const Tensor& i, const Tensor&) { return i < 20; }, step,
                                        std::tuple<Tensor, Tensor>{constant(0), x0}));
  };
  auto f = kiln::function(run);
  for (float x0 : {1.f, 7.5f, 100.f}) {
    Tensor eager = run(constant(x0));
    expect_tensor<float>(f(constant(x0)), {}, {eager.item<float>()});
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

// TF's rule: a traced loop whose body changes a variable's shape raises,
// naming the variable and both shapes and saying how to use shape_invariants
// (the dims were relaxed silently); with an invariant it runs.
TEST(ControlFlow, WhileBodyThatChangesAShapeNeedsAShapeInvariant) {
  auto cond = [](const Tensor& i, const Tensor&) { return i < 3; };
  auto body = [](const Tensor& i, const Tensor& v) { return std::tuple<Tensor, Tensor>{i + 1, concat({v, v}, 0)}; };
  auto f = kiln::function([&](const Tensor& x) {
    return std::get<1>(kiln::while_loop(cond, body, std::tuple<Tensor, Tensor>{constant(0), x}));
  });
  expect_error<InvalidArgument>([&] { f(constant({1, 2})); },
                                {"while_loop: loop variable 1 enters the loop with shape (2,), but has shape (4,) "
                                 "after one iteration", "shape_invariants", "WhileOptions::shape_invariants",
                                 "less-specific shape"});
  int body_traces = 0;
  auto g = kiln::function([&](const Tensor& x) {
    WhileOptions o;
    o.shape_invariants = {std::nullopt, Shape{None}};
    return std::get<1>(kiln::while_loop(
        cond,
        [&](const Tensor& i, const Tensor& v) {
          ++body_traces;
          return body(i, v);
        },
        std::tuple<Tensor, Tensor>{constant(0), x}, o));
  });
  expect_tensor<int32_t>(g(constant({1, 2})), {16}, {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_EQ(body_traces, 1);
  EXPECT_EQ(g.get_concrete_function(constant({1, 2})).outputs()[0].shape, (Shape{None}));
  // A variable inside a vector, and for_range, whose options name its own
  // variables (the counter is not one of them).
  auto h = kiln::function([](const Tensor& x) {
    return kiln::for_range(0, 2, 1, std::tuple<Tensor, std::vector<Tensor>>{x, {x, x}},
                           [](const Tensor&, const Tensor& a, const std::vector<Tensor>& v) {
                             return std::tuple<Tensor, std::vector<Tensor>>{a, {v[0], concat({v[1], v[1]}, 0)}};
                           });
  });
  expect_error<InvalidArgument>([&] { h(constant({1.f})); },
                                {"loop variable 1 (tensor 1 of it) enters the loop with shape (1,), but has shape (2,)"});
  auto k = kiln::function([](const Tensor& x) {
    WhileOptions o;
    o.shape_invariants = {Shape{None}};
    return kiln::for_range(0, 3, 1, x, [](const Tensor&, const Tensor& v) { return concat({v, v}, 0); }, o);
  });
  expect_tensor<float>(k(constant({1.f})), {8}, {1, 1, 1, 1, 1, 1, 1, 1});
  // The body may make a shape more specific, never less: an unknown dim out
  // where the entry's is known is an error too (TF's _ShapeLessThanOrEqual).
  FunctionOptions opts;
  opts.input_signature = std::vector<TensorSpec>{TensorSpec({None}, int32)};
  auto loosen = kiln::function(
      [](const Tensor& n) {
        return kiln::for_range(0, 2, 1, constant({1, 2}), [&](const Tensor&, const Tensor& v) {
          return slice(concat({v, n}, 0), {0}, {-1});
        });
      },
      opts);
  expect_error<InvalidArgument>([&] { loosen(constant({3})); }, {"loop variable 0", "shape (2,)", "shape (None,)"});
  // Eagerly, as TF's eager while_loop, shapes may change.
  expect_tensor<int32_t>(std::get<1>(kiln::while_loop(cond, body, std::tuple<Tensor, Tensor>{constant(1), constant({5})})),
                         {4}, {5, 5, 5, 5});
}

TEST(ControlFlow, WhileLoopErrorsNameTheVariableAndBothTypes) {
  auto dtype_change = [](const Tensor& i, const Tensor& x) {
    return std::tuple<Tensor, Tensor>{i + 1, cast(x, DType::Float32)};
  };
  auto cond = [](const Tensor& i, const Tensor&) { return i < 3; };
  std::tuple<Tensor, Tensor> init{constant(0), constant(1)};
  std::vector<std::string> want{"while_loop: loop variable 1 is int32 () on entry but float32 () after body_fn"};
  expect_error<InvalidArgument>([&] { kiln::while_loop(cond, dtype_change, init); }, want);
  auto f = kiln::function([&](const Tensor& x) { return std::get<1>(kiln::while_loop(cond, dtype_change, init)); });
  expect_error<InvalidArgument>([&] { f(constant(1)); }, want);

  auto rank_change = [](const Tensor& i, const Tensor& x) {
    return std::tuple<Tensor, Tensor>{i + 1, expand_dims(x, 0)};
  };
  auto g = kiln::function([&](const Tensor& x) {
    return std::get<1>(kiln::while_loop(cond, rank_change, std::tuple<Tensor, Tensor>{constant(0), x}));
  });
  expect_error<InvalidArgument>([&] { g(constant({1, 2})); },
                                {"loop variable 1 is int32 (2,) on entry but int32 (1, 2) after body_fn",
                                 "keeps its dtype and rank"});

  auto not_bool = kiln::function([](const Tensor& x) {
    return kiln::while_loop([](const Tensor& x) { return x; }, [](const Tensor& x) { return x - 1; }, x);
  });
  expect_error<InvalidArgument>([&] { not_bool(constant(3)); },
                                {"while_loop: cond_fn must return a bool tensor with one element, got int32 ()"});
  expect_error<InvalidArgument>(
      [&] { kiln::while_loop([](const Tensor& x) { return x; }, [](const Tensor& x) { return x - 1; }, constant(3)); },
      {"while_loop: cond_fn: pred must be a bool tensor with one element, got int32 ()"});

  auto vec_change = kiln::function([](const Tensor& x) {
    return kiln::while_loop([](const std::vector<Tensor>& v) { return v[0] < 3; },
                            [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] + 1}; },
                            std::vector<Tensor>{x, x});
  });
  expect_error<InvalidArgument>([&] { vec_change(constant(0)); },
                                {"while_loop: body_fn returned 1 tensors", "2 loop variables"});
}

TEST(ControlFlow, SymbolicTensorAsBoolPointsToControlFlow) {
  auto f = kiln::function([](const Tensor& x) {
    Tensor y = x;
    while (y > 0) y = y - 1;  // a C++ loop on a tensor value
    return y;
  });
  expect_error<InvalidArgument>([&] { f(constant(3)); }, {"kiln::cond", "kiln::while_loop"});
}

// ---- the ops -----------------------------------------------------------------

TEST(ControlFlow, IfAndWhileOpsInferFromTheirGraphs) {
  const detail::OpDef& op = schema::OpRegistry::global().get("If");
  ASSERT_EQ(&op, &graph_ops::if_op(false));
  EXPECT_TRUE(schema::OpRegistry::global().get("StatefulIf").is(schema::kStateful));
  EXPECT_TRUE(schema::OpRegistry::global().get("StatefulWhile").is(schema::kStateful));
  EXPECT_FALSE(schema::OpRegistry::global().get("While").is(schema::kStateful));
  std::vector<schema::OpSample> samples = op.samples();
  ASSERT_FALSE(samples.empty());
  const schema::Attrs& attrs = samples[0].attrs;
  // Unknown dims in the inputs: outputs come from the branch graphs.
  std::vector<schema::TensorType> types{{DType::Bool, Shape{}}, {DType::Float32, Shape{None}}};
  schema::InferContext ic(op, std::span<const schema::TensorType>(types), attrs);
  op.infer(ic);
  ASSERT_EQ(ic.outputs().size(), 1u);
  EXPECT_EQ(ic.outputs()[0].dtype, DType::Float32);
  EXPECT_EQ(ic.outputs()[0].shape, (Shape{2}));
  // Inputs that do not fit the branches' captures.
  std::vector<schema::TensorType> bad{{DType::Bool, Shape{}}, {DType::Int32, Shape{2}}};
  schema::InferContext ic2(op, std::span<const schema::TensorType>(bad), attrs);
  expect_error<InvalidArgument>([&] { op.infer(ic2); },
                                {"If: input 1 is int32 (2,) but then_branch expects float32 (2,)"});
  std::vector<schema::TensorType> bad_pred{{DType::Int32, Shape{}}, {DType::Float32, Shape{2}}};
  schema::InferContext ic3(op, std::span<const schema::TensorType>(bad_pred), attrs);
  expect_error<InvalidArgument>([&] { op.infer(ic3); }, {"If: pred must be a bool tensor", "int32 ()"});

  // Kernels: run eagerly through the registry.
  runtime::TensorList r = runtime::run_eager(op, samples[0].inputs, attrs);
  expect_tensor<float>(r[0], {2}, {1.f, 4.f});
  r = runtime::run_eager(op, samples[1].inputs, attrs);
  expect_tensor<float>(r[0], {2}, {-1.f, -2.f});

  const detail::OpDef& w = schema::OpRegistry::global().get("While");
  std::vector<schema::OpSample> ws = w.samples();
  r = runtime::run_eager(w, ws[0].inputs, ws[0].attrs);
  expect_tensor<int32_t>(r[0], {}, {3});
  expect_tensor<float>(r[1], {2}, {8.f, 16.f});
  std::vector<schema::TensorType> wbad{{DType::Int32, Shape{}}, {DType::Float32, Shape{3}}, {DType::Int32, Shape{}}};
  schema::InferContext ic4(w, std::span<const schema::TensorType>(wbad), ws[0].attrs);
  expect_error<InvalidArgument>([&] { w.infer(ic4); }, {"While: input 1 is float32 (3,) but body expects float32 (2,)"});
}

TEST(ControlFlow, GraphsWithControlFlowVerify) {
  // kiln::function verifies every traced graph; nested graphs are verified
  // when their op is emitted. Run a graph with If inside While inside If.
  auto f = kiln::function([](const Tensor& x) {
    return kiln::cond(
        x > 0,
        [&] {
          return kiln::while_loop(
              [](const Tensor& v) { return v < 50; },
              [](const Tensor& v) { return kiln::cond(v % 2 == 0, [&] { return v + 3; }, [&] { return v * 2; }); },
              x);
        },
        [&] { return x; });
  });
  // 1 -> 2 -> 5 -> 10 -> 13 -> 26 -> 29 -> 58
  expect_tensor<int32_t>(f(constant(1)), {}, {58});
  expect_tensor<int32_t>(f(constant(-1)), {}, {-1});
  expect_golden("control_flow_nested.txt", f.get_concrete_function(constant(1)).graph().to_string());
}

TEST(ControlFlow, VerifyOptionComparesWholeCondAndWhileOps) {
  // verify replays the callable eagerly: a cond or loop there counts as the
  // one If / While op the graph has at that point.
  FunctionOptions o;
  o.verify = true;
  auto f = kiln::function([](const Tensor& x) {
    Tensor y = x * 2;
    Tensor z = kiln::cond(y > 0, [&] { return y + 1; }, [&] { return y - 1; });
    Tensor w = kiln::while_loop([](const Tensor& v) { return v < 100; }, [](const Tensor& v) { return v + 30; }, z);
    return w + z;
  }, o);
  expect_tensor<int32_t>(f(constant(2)), {}, {125 + 5});
  expect_tensor<int32_t>(f(constant(-2)), {}, {115 - 5});
}

TEST(ControlFlow, NestedGraphsDoNotKeepTheirFunctionAlive) {
  // A branch that captures a symbolic tensor of the enclosing graph must not
  // form a reference cycle with it: when the function goes, its graphs go,
  // and so do the outer tensors they captured.
  Tensor w = constant({1, 2});
  {
    auto f = kiln::function([&](const Tensor& x) {
      Tensor y = x * 2;
      Tensor z = kiln::cond(sum(x) > 0, [&] { return y + w; }, [&] { return y; });
      return kiln::while_loop([&](const Tensor& v) { return sum(v) < sum(y) * 10; },
                              [&](const Tensor& v) { return v + w; }, z);
    });
    expect_tensor<int32_t>(f(constant({1, 1})), {2}, {14, 26});
    EXPECT_FALSE(core::is_exclusively_owned(w));
  }
  EXPECT_TRUE(core::is_exclusively_owned(w));
}

// The fuzz targets' cap on While iterations (set_max_while_iterations): a
// loop may take exactly the limit; one more is ResourceExhausted.
TEST(ControlFlow, WhileIterationLimit) {
  auto count_to = [](int n) {
    return kiln::function([n](const Tensor& start) {
      return kiln::while_loop([n](const Tensor& i) { return i < n; }, [](const Tensor& i) { return i + 1; }, start);
    });
  };
  {
    // Lifted again however the block ends (an unexpected throw included), so
    // no later test of this binary runs under the cap.
    struct Cap {
      Cap() { graph_ops::set_max_while_iterations(5); }
      ~Cap() { graph_ops::set_max_while_iterations(0); }
    } cap;
    expect_tensor<int32_t>(count_to(5)(constant(0)), Shape{}, {5});
    expect_error<ResourceExhausted>([&] { count_to(6)(constant(0)); },
                 {"While: the loop wants more than 5 iterations, the limit set by set_max_while_iterations"});
  }
  expect_tensor<int32_t>(count_to(6)(constant(0)), Shape{}, {6});
}
