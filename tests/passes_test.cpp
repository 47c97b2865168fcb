// Graph optimization passes (src/passes): each pass on small traced graphs
// (golden text before and after), the pipeline on nested graphs, and the
// optimized graph computing the same bits as the traced one.
#include "passes_test_util.h"

#include <cstring>
#include <limits>
#include <sstream>

#include "core/allocator.h"
#include "exec/plan.h"
#include "graph_ops/call_op.h"
#include "trace/tracing_context.h"
#include "kiln/kiln.h"
#include "exec/fused_lanes.h"
#include "passes/passes.h"
#include "runtime/dispatch.h"

using namespace kiln;
using namespace kiln::passes_testing;
using kiln::testing::expect_error;
using kiln::testing::expect_golden;
using kiln::testing::expect_tensor;

TEST(Passes, InlineCallsCopiesTheCallee) {
  auto callee = trace_graph({f32(Shape{3})}, [](auto& p) { return std::vector{p[0] * p[0] + 1.f}; }, "square_plus_one");
  auto g = trace_graph({f32(Shape{3})}, [&](auto& p) {
    runtime::TensorList out = runtime::dispatch(graph_ops::call_op(false), std::span<const Tensor>(&p[0], 1),
                                                schema::Attrs{{"f", std::shared_ptr<const graph::Graph>(callee)}},
                                                SourceLocation());
    return std::vector{out[0] - 2.f};
  });
  expect_golden("passes_inline.txt", before_after(*g, [](graph::Graph& x) { return passes::inline_calls(x); }));
  expect_same_results(*g, {constant({1.f, -2.f, 0.5f})});
}

TEST(Passes, InlineKeepsSideEffectsInOrder) {
  // Standard output: a stream of its own would get an id that depends on
  // the tests run before.
  PrintOptions to_out{.stream = &std::cout};
  auto callee = trace_graph({f32(Shape{})}, [&](auto& p) {
    kiln::print(std::string("inner"), p[0], to_out);
    return std::vector{p[0] * 2.f};
  }, "noisy");
  auto g = trace_graph({f32(Shape{})}, [&](auto& p) {
    kiln::print(std::string("before"), to_out);
    runtime::TensorList r = runtime::dispatch(graph_ops::call_op(true), std::span<const Tensor>(&p[0], 1),
                                              schema::Attrs{{"f", std::shared_ptr<const graph::Graph>(callee)}},
                                              SourceLocation());
    kiln::print(std::string("after"), to_out);
    return std::vector{r[0]};
  });
  GraphPtr copy = g->clone("g");
  ASSERT_TRUE(passes::inline_calls(*copy));
  copy->verify();
  expect_golden("passes_inline_stateful.txt", copy->to_string());
  ::testing::internal::CaptureStdout();
  Tensor r = run(*copy, {constant(3.f)})[0];
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "before\ninner 3\nafter\n");
  expect_tensor<float>(r, {}, {6.f});
}

TEST(Passes, ConstantFoldingRespectsTheSizeCap) {
  auto g = trace_graph({f32(Shape{4})}, [](auto& p) {
    Tensor six = constant(2.f) * constant(3.f);
    Tensor big = kiln::ones({2000}) * 2.f;  // over the cap: stays
    return std::vector{p[0] + six, big};
  });
  expect_golden("passes_fold.txt",
                before_after(*g, [](graph::Graph& x) { return passes::fold_constants(x, 1024); }));
  expect_same_results(*g, {constant({1.f, 2.f, 3.f, 4.f})});
}

TEST(Passes, CseMergesPureNodesButNotStatefulOnes) {
  auto g = std::make_shared<graph::Graph>("g");
  auto& r = schema::OpRegistry::global();
  graph::Value x{g->add_parameter(f32(Shape{2}), "x"), 0};
  graph::Value a{g->add_node(r.get("Exp"), std::array{x}, {}, SourceLocation()), 0};
  graph::Value b{g->add_node(r.get("Exp"), std::array{x}, {}, SourceLocation()), 0};
  graph::Value s{g->add_node(r.get("Add"), std::array{a, b}, {}, SourceLocation()), 0};
  graph::Value n1{g->add_node(r.get("RandomUniform"), {}, schema::Attrs{{"shape", Shape{2}}, {"dtype", DType::Float32}},
                              SourceLocation()),
                  0};
  graph::Value n2{g->add_node(r.get("RandomUniform"), {}, schema::Attrs{{"shape", Shape{2}}, {"dtype", DType::Float32}},
                              SourceLocation()),
                  0};
  graph::Value t{g->add_node(r.get("Sub"), std::array{n1, n2}, {}, SourceLocation()), 0};
  g->results() = {s, t};
  expect_golden("passes_cse.txt",
                before_after(*g, [](graph::Graph& x) { return passes::eliminate_common_subexpressions(x); }));
}

TEST(Passes, SimplifyOnlyWhereBitsAreKept) {
  auto g = trace_graph({f32(Shape{2, 3}), {DType::Int32, Shape{2}}}, [](auto& p) {
    const Tensor& x = p[0];
    Tensor a = x * 1.f;                                    // -> x
    Tensor b = 1.f * a;                                    // -> x
    Tensor c = b + 0.f;                                    // stays: -0.0 + 0.0 is +0.0
    Tensor d = c + (-0.f) - 0.f;                           // -> c
    Tensor e = transpose(transpose(d, {1, 0}), {1, 0});    // -> d
    Tensor f = cast(cast(e, DType::Float64), DType::Float32);  // -> e
    Tensor h = cast(cast(f, DType::Int32), DType::Float32);    // stays: truncates
    Tensor k = reshape(reshape(h, Shape{3, 2}), Shape{6});     // one reshape
    Tensor m = x * constant({1.f, 1.f, 1.f});              // stays: not a single element
    Tensor i = p[1] + 0;                                   // -> p[1]
    return std::vector{k, m, i};
  });
  expect_golden("passes_simplify.txt", before_after(*g, [](graph::Graph& x) { return passes::simplify(x); }));
  expect_same_results(*g, {constant({{-0.f, 1.5f, -2.f}, {3.f, -0.f, 7.25f}}), constant({4, -5})});
}

TEST(Passes, DeadCodeGoesButSideEffectsStay) {
  auto g = trace_graph({f32(Shape{2})}, [&](auto& p) {
    Tensor unused = exp(p[0]) * 3.f;
    kiln::print(std::string("side effect"));
    return std::vector{p[0] + 1.f};
  });
  // The trace keeps `unused` (the executor skips it); DCE removes it.
  expect_golden("passes_dce.txt", before_after(*g, [](graph::Graph& x) { return passes::eliminate_dead_code(x); }));
}

TEST(Passes, FusionMakesOneNodePerChain) {
  auto g = trace_graph({f32(Shape{1000}), f32(Shape{1000}), f32(Shape{4, 250})}, [](auto& p) {
    Tensor y = tanh(p[0] * 2.f + p[1]);                  // one chain
    Tensor shared = exp(p[1]);                            // used by a reduction too: kept as a value
    Tensor total = kiln::sum(shared);
    Tensor z = cast(shared * y, DType::Float64) - 1.0;    // second chain, through a cast
    Tensor w = reshape(p[2], Shape{1000}) * y;            // reshape is not elementwise
    return std::vector{z, total, w};
  });
  GraphPtr copy = g->clone("g");
  ASSERT_TRUE(passes::fuse_elementwise(*copy, 2));
  copy->verify();
  expect_golden("passes_fuse.txt", "before:\n" + g->to_string() + "after:\n" + copy->to_string());
  std::vector<Tensor> in;
  for (int i = 0; i < 3; ++i) in.push_back(kiln::random::uniform(i == 2 ? Shape{4, 250} : Shape{1000}, -2.f, 2.f));
  std::vector<Tensor> want = run(*g, in), got = run(*copy, in);
  for (std::size_t i = 0; i < want.size(); ++i) expect_bitwise(want[i], got[i]);
}

TEST(Passes, FusedKernelTilesAndBroadcastsScalars) {
  // Sizes around the tile (512) and over the parallel grain; a scalar input;
  // an output over 8 MB, written with non-temporal stores (an odd tail).
  for (int64_t n : {1, 7, 512, 513, 5000, 100003, 2500003}) {
    auto g = trace_graph({f32(Shape{n}), f32(Shape{}), {DType::Int32, Shape{n}}}, [](auto& p) {
      Tensor a = sigmoid(p[0] * p[1] - 0.5f);
      Tensor b = cast(p[2] % 7, DType::Float32);
      return std::vector{where(a > 0.5f, a / (b + 1.f), -a)};
    });
    std::vector<Tensor> in{kiln::random::uniform(Shape{n}, -3.f, 3.f), constant(1.75f),
                           cast(kiln::random::uniform(Shape{n}, 0.f, 100.f), DType::Int32)};
    passes::PassOptions o;
    auto opt = passes::optimize(*g, o);
    EXPECT_EQ(count_ops(*opt, "FusedElementwise"), 1) << opt->to_string();
    std::vector<Tensor> want = run(*g, in), got = run(*opt, in);
    expect_bitwise(want[0], got[0]);
  }
}

TEST(Passes, FusedKernelFallsBackForGeneralBroadcasts) {
  // Unknown dims: the pass cannot tell that [?] and [?] broadcast as [3,1]
  // and [4]; the kernel then runs the body op by op.
  auto g = trace_graph({f32(Shape{None, None}), f32(Shape{None, None})},
                 [](auto& p) { return std::vector{exp(p[0] + p[1]) * 2.f}; });
  auto opt = passes::optimize(*g, {});
  EXPECT_EQ(count_ops(*opt, "FusedElementwise"), 1) << opt->to_string();
  std::vector<Tensor> in{constant({{1.f}, {2.f}, {3.f}}), constant({{0.5f, 1.f, 1.5f, 2.f}})};
  std::vector<Tensor> want = run(*g, in), got = run(*opt, in);
  expect_bitwise(want[0], got[0]);
  EXPECT_EQ(got[0].shape(), (Shape{3, 4}));
}

namespace {

// n float32 values: specials first (NaNs of both signs, zeros, infinities,
// denormals, tanh's and exp's branch points), then a spread of magnitudes.
Tensor awkward_values(int64_t n, uint32_t seed) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> specials{nan, -nan, 0.f, -0.f, inf, -inf, 1e-40f, -1e-40f, 0.625f, -0.6249999f,
                              9.01f, -20.f, 88.8f, -104.f, 1.f, -1.f, 3.4e38f, 1e-30f};
  std::vector<float> v(static_cast<std::size_t>(n));
  uint32_t state = seed;
  for (std::size_t i = 0; i < v.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    const float u = static_cast<float>(state >> 8) / 16777216.f;  // [0, 1)
    v[i] = (i + seed) % 3 == 0 && i < 3 * specials.size() ? specials[(i / 3 + seed) % specials.size()]
                                                          : (u - 0.5f) * std::exp2(static_cast<float>(state % 12) - 4.f);
  }
  return constant(v, Shape{n});
}

const std::vector<int64_t> kLaneSizes{1, 5, 8, 16, 17, 31, 32, 33, 100, 256, 257};

}  // namespace

TEST(Passes, FusedLaneFormsMatchTheLoopsBitwise) {
  // Small float32 outputs run on registers, each op by its lane form; every
  // op with one is here, alone (fused by itself) on awkward values, against
  // a tensor and against a broadcast scalar.
  using UnaryFn = Tensor (*)(Tensor, SourceLocation);
  using BinaryFn = Tensor (*)(const Operand&, const Operand&, SourceLocation);
  const std::vector<std::pair<const char*, UnaryFn>> unary{
      {"Abs", kiln::abs},   {"Square", kiln::square}, {"Relu", kiln::relu}, {"Sqrt", kiln::sqrt},
      {"Rsqrt", kiln::rsqrt}, {"Exp", kiln::exp},     {"Log", kiln::log},   {"Log1p", kiln::log1p},
      {"Tanh", kiln::tanh}, {"Sigmoid", kiln::sigmoid}};
  const std::vector<std::pair<const char*, BinaryFn>> binary{
      {"Add", kiln::add}, {"Sub", kiln::subtract}, {"Mul", kiln::multiply}, {"RealDiv", kiln::divide},
      {"Maximum", kiln::maximum}, {"Minimum", kiln::minimum}};
  // Each op names its lane form.
  std::vector<std::string> names{"Neg"};
  for (const auto& u : unary) names.push_back(u.first);
  for (const auto& b : binary) names.push_back(b.first);
  for (const std::string& name : names)
    EXPECT_NE(schema::OpRegistry::global().get(name).lane_form, schema::LaneForm::kNone) << name;
  passes::PassOptions one_op;
  one_op.fuse_min_nodes = 1;
  for (int64_t n : kLaneSizes) {
    auto g = trace_graph({f32(Shape{n}), f32(Shape{n}), f32(Shape{})}, [&](auto& p) {
      std::vector<Tensor> out{-p[0]};
      for (const auto& u : unary) out.push_back(u.second(p[0], SourceLocation::current()));
      for (const auto& b : binary) {
        out.push_back(b.second(p[0], p[1], SourceLocation::current()));
        out.push_back(b.second(p[2], p[0], SourceLocation::current()));
      }
      return out;
    });
    auto opt = passes::optimize(*g, one_op);
    EXPECT_EQ(count_ops(*opt, "FusedElementwise"), 1 + static_cast<int>(unary.size() + 2 * binary.size()));
    for (uint32_t seed : {1u, 2u}) {
      std::vector<Tensor> in{awkward_values(n, seed), awkward_values(n, seed + 7), awkward_values(1, seed + 3)};
      std::vector<Tensor> want = run(*g, in), got = run(*opt, in);
      for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE("n=" + std::to_string(n) + " result " + std::to_string(i));
        expect_bitwise(want[i], got[i]);
      }
    }
  }
}

TEST(Passes, FusedChainOnRegistersMatchesEagerBitwise) {
  // One chain whose values leave the registers and come back: a value read
  // again two steps later, x * x from the previous step, a broadcast scalar,
  // an op without a lane form (Sin runs its loop on the registers' memory)
  // and its result read twice, the output written over an input.
  auto chain = [](const Tensor& x, const Tensor& y, const Tensor& s) {
    Tensor a = x * y;
    Tensor b = tanh(a) + s;
    Tensor c = maximum(b, a);
    Tensor d = sin(c);
    Tensor e = d * d - d;
    Tensor f = sqrt(abs(e * e)) * 0.5f;
    return sigmoid(f - x) / (y + 3.f);
  };
  for (int64_t n : kLaneSizes) {
    auto g = trace_graph({f32(Shape{n}), f32(Shape{n}), f32(Shape{})},
                   [&](auto& p) { return std::vector{chain(p[0], p[1], p[2])}; });
    auto opt = passes::optimize(*g, {});
    ASSERT_EQ(count_ops(*opt, "FusedElementwise"), 1) << opt->to_string();
    std::vector<Tensor> in{awkward_values(n, 3), awkward_values(n, 4), constant(0.25f)};
    SCOPED_TRACE("n=" + std::to_string(n));
    const Tensor want = chain(in[0], in[1], in[2]);
    expect_bitwise(want, run(*opt, in)[0]);
    // Through kiln::function with x a temporary (a gather's result), which
    // the plan may hand the fused kernel as its output buffer.
    std::vector<int32_t> order(static_cast<std::size_t>(n));
    for (int32_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    const Tensor index = constant(order, Shape{n});
    auto f = kiln::function([&](const Tensor& x, const Tensor& y) { return chain(gather(x, index), y, constant(0.25f)); });
    expect_bitwise(want, f(in[0], in[1]));
  }
}

TEST(Passes, PipelineOptimizesNestedGraphs) {
  auto loop = [](const Tensor& x) {
    return kiln::while_loop([](const Tensor& v) { return kiln::sum(v) < 100.f; },
                            [](const Tensor& v) { return v * 1.f * 1.5f + 1.f; }, x);
  };
  auto g = trace_graph({f32(Shape{2})}, [&](auto& p) { return std::vector{loop(p[0])}; });
  auto opt = passes::optimize(*g, {});
  expect_golden("passes_nested.txt", opt->to_string());
  Tensor x = constant({1.f, 2.f});
  expect_same_results(*g, {x});
  expect_bitwise(loop(x), run(*opt, {x})[0]);
}

TEST(Passes, NestedGraphSharedByInlinedCallsIsOptimizedOnce) {
  auto loop = [](const Tensor& x) {
    return kiln::while_loop([](const Tensor& v) { return kiln::sum(v) < 100.f; },
                            [](const Tensor& v) { return v * 1.f * 1.5f + 1.f; }, x);
  };
  auto callee = trace_graph({f32(Shape{2})}, [&](auto& p) { return std::vector{loop(p[0])}; }, "grow");
  auto call = [&](const Tensor& x) {
    return runtime::dispatch(graph_ops::call_op(false), std::span<const Tensor>(&x, 1),
                             schema::Attrs{{"f", std::shared_ptr<const graph::Graph>(callee)}}, SourceLocation())[0];
  };
  auto g = trace_graph({f32(Shape{2}), f32(Shape{2})}, [&](auto& p) { return std::vector{call(p[0]), call(p[1])}; });
  auto opt = passes::optimize(*g, {});
  std::vector<const graph::Graph*> bodies;
  for (const auto& n : opt->nodes())
    if (n->op->name == "While") bodies.push_back(n->attrs.get<std::shared_ptr<const graph::Graph>>("body").get());
  ASSERT_EQ(bodies.size(), 2u) << opt->to_string();
  EXPECT_EQ(bodies[0], bodies[1]);
  EXPECT_EQ(count_ops(*bodies[0], "FusedElementwise"), 1) << bodies[0]->to_string();
  expect_same_results(*g, {constant({1.f, 2.f}), constant({-3.f, 0.5f})});
}

TEST(Passes, EachPassCanBeTurnedOff) {
  setenv("KILN_DISABLE_PASSES", "fold,fuse", 1);
  passes::PassOptions o = passes::PassOptions::from_env();
  EXPECT_FALSE(o.fold_constants);
  EXPECT_FALSE(o.fuse);
  EXPECT_TRUE(o.cse && o.simplify && o.dce && o.inline_calls && o.contract);
  setenv("KILN_DISABLE_PASSES", "all", 1);
  o = passes::PassOptions::from_env();
  EXPECT_FALSE(o.fold_constants || o.fuse || o.cse || o.simplify || o.dce || o.inline_calls || o.contract);
  unsetenv("KILN_DISABLE_PASSES");
  // With every pass off the optimized graph is a copy of the traced one.
  auto g = trace_graph({f32(Shape{3})}, [](auto& p) { return std::vector{p[0] * 1.f + p[0]}; });
  EXPECT_EQ(passes::optimize(*g, o)->to_string(), g->to_string());
}

TEST(Passes, DumpWritesTheGraphAfterEachPass) {
  auto g = trace_graph({f32(Shape{3})}, [](auto& p) { return std::vector{exp(p[0] * 1.f) + 2.f}; });
  passes::PassOptions o;
  o.dump = true;
  ::testing::internal::CaptureStderr();
  passes::optimize(*g, o);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--- graph 'g' after pass simplify ---"), std::string::npos) << err;
  EXPECT_NE(err.find("--- graph 'g' after pass fuse ---"), std::string::npos) << err;
  EXPECT_EQ(err.find("after pass cse"), std::string::npos) << "cse changed nothing: " << err;
}

TEST(Passes, StaticCallsAllocateNoNewBuffersAfterTheFirst) {
  // A fused chain on static shapes: after the first call, every buffer comes
  // from the caching allocator (the result's, reused once the caller drops
  // it) and the fused kernel's tile scratch is kept per thread.
  auto f = kiln::function([](const Tensor& x, const Tensor& y) {
    Tensor z = x;
    for (int i = 0; i < 20; ++i) z = tanh(z * 1.5f + y);
    return kiln::sum(z) + z;
  });
  Tensor x = kiln::random::uniform(Shape{4096}, -1.0, 1.0), y = kiln::random::uniform(Shape{4096}, -1.0, 1.0);
  { Tensor warm = f(x, y); }
  { Tensor warm = f(x, y); }
  core::AllocatorStats before = core::allocator_stats();
  for (int i = 0; i < 10; ++i) {
    Tensor r = f(x, y);
    ASSERT_EQ(r.size(), 4096);
  }
  core::AllocatorStats after = core::allocator_stats();
  EXPECT_EQ(after.system_allocations, before.system_allocations);
  EXPECT_GT(after.cache_hits, before.cache_hits);
}

namespace {
int builds = 0;
std::shared_ptr<const void> counting_builder(const graph::Graph&) { return std::make_shared<int>(++builds); }
std::shared_ptr<const void> other_builder(const graph::Graph&) { return std::make_shared<int>(0); }
}  // namespace

TEST(Passes, CompiledFormIsBuiltOncePerGraphByOneBuilder) {
  auto g = trace_graph({f32(Shape{3})}, [](auto& p) { return std::vector{exp(p[0])}; });
  builds = 0;
  const void* first = g->compiled(counting_builder);
  EXPECT_EQ(g->compiled(counting_builder), first);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(*static_cast<const int*>(first), 1);
  // A clone is a graph of its own: it compiles again.
  GraphPtr copy = g->clone("copy");
  EXPECT_NE(copy->compiled(counting_builder), first);
  EXPECT_EQ(builds, 2);
  expect_error<Internal>([&] { g->compiled(other_builder); }, {"graph 'g'", "compiled by another builder"});
}
