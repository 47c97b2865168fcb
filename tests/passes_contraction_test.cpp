// Contraction fusion (src/passes/fuse_contraction.cpp): MatMul / Conv2D /
// DepthwiseConv2dNative + bias (+ relu) become FusedMatMul / FusedConv2D /
// FusedDepthwiseConv2dNative where nothing else reads the intermediates, and
// the fused graph computes the unfused graph's bits.
#include "passes_test_util.h"

#include <cmath>
#include <random>

#include "kiln/kiln.h"
#include "ops/onednn.h"

using namespace kiln;
using namespace kiln::passes_testing;
using kiln::testing::expect_error;
using kiln::testing::expect_golden;

namespace {

// Uniform in [-1, 1), from a fixed seed; `nan_at` (when >= 0) is a NaN.
Tensor values(const Shape& shape, unsigned seed, int64_t nan_at = -1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (float& x : v) x = dist(rng);
  if (nan_at >= 0) v[static_cast<std::size_t>(nan_at)] = NAN;
  return constant(v, shape);
}

// Optimizes `g` with the whole pipeline, checks it holds `fused` nodes of
// `op` and none of the ops they replaced, and compares results bit for bit.
// With `only_fused`, the optimized graph holds no other oneDNN op, and each
// fused op makes one primitive (its contraction's) and no more.
void expect_fused_and_bitwise(const graph::Graph& g, const std::vector<Tensor>& inputs, std::string_view op,
                              int fused, const std::string& what, bool only_fused = true) {
  SCOPED_TRACE(what);
  auto opt = passes::optimize(g, {});
  opt->verify();
  EXPECT_EQ(count_ops(*opt, op), fused) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "BiasAdd"), 0) << opt->to_string();
  std::vector<Tensor> want = run(g, inputs);
  auto& cache = ops::onednn::primitive_cache();
  cache.clear();
  std::vector<Tensor> got = run(*opt, inputs);
  if (only_fused) EXPECT_LE(cache.size(), static_cast<std::size_t>(fused));
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) expect_bitwise(want[i], got[i]);
}

}  // namespace

TEST(ContractionFusion, FusesWhereNothingElseReadsTheIntermediates) {
  auto g = trace_graph({f32(Shape{2, 5, 5, 3}), f32(Shape{3, 3, 3, 4}), f32(Shape{4}), f32(Shape{2, 6}), f32(Shape{6, 4}),
                  {DType::Float64, Shape{2, 6}}, {DType::Float64, Shape{6, 4}}, f32(Shape{4, 6})},
                 [](auto& p) {
                   Tensor conv = relu(nn::bias_add(nn::conv2d(p[0], p[1], 1, nn::Padding::Same), p[2]));
                   Tensor added = matmul(p[3], p[4]) + p[2];             // Add of a per-channel bias
                   Tensor biased = nn::bias_add(matmul(p[3], p[7], false, true), p[2]);
                   Tensor shared_sum = relu(biased);                      // `biased` is a result too: relu stays
                   Tensor product = matmul(p[4], p[4], true, false);     // read twice: not fused
                   Tensor twice = nn::bias_add(product, p[2]) + product;
                   Tensor scalar = matmul(p[3] * 2.f, p[4]) + 1.f;       // not a per-channel bias
                   Tensor wide = nn::bias_add(matmul(p[5], p[6]), cast(p[2], DType::Float64));  // float64
                   return std::vector{conv, added, biased, shared_sum, twice, scalar, wide};
                 });
  expect_golden("passes_contract.txt", before_after(*g, [](graph::Graph& x) { return passes::fuse_contractions(x); }));
  std::vector<Tensor> in{values({2, 5, 5, 3}, 1), values({3, 3, 3, 4}, 2), values({4}, 3), values({2, 6}, 4),
                         values({6, 4}, 5),       cast(values({2, 6}, 6), DType::Float64),
                         cast(values({6, 4}, 7), DType::Float64), values({4, 6}, 8)};
  expect_same_results(*g, in);
}

TEST(ContractionFusion, LeavesNodesTiedByControlEdgesAlone) {
  // A stateful node ordered before the BiasAdd by a control edge: the
  // chain keeps its nodes (and the edge its meaning).
  auto& r = schema::OpRegistry::global();
  auto g = std::make_shared<graph::Graph>("g");
  graph::Value x{g->add_parameter(f32(Shape{2, 3}), "x"), 0};
  graph::Value w{g->add_parameter(f32(Shape{3, 4}), "w"), 0};
  graph::Value b{g->add_parameter(f32(Shape{4}), "b"), 0};
  graph::Node* draw = g->add_node(r.get("RandomUniform"), {},
                                  schema::Attrs{{"shape", Shape{2}}, {"dtype", DType::Float32}}, SourceLocation());
  graph::Value y{g->add_node(r.get("MatMul"), std::array{x, w},
                             schema::Attrs{{"transpose_a", false}, {"transpose_b", false}}, SourceLocation()),
                 0};
  graph::Node* add = g->add_node(r.get("BiasAdd"), std::array{y, b}, {}, SourceLocation());
  add->control_inputs.push_back(draw);
  g->results().push_back({add, 0});
  g->results().push_back({draw, 0});
  g->verify();
  EXPECT_FALSE(passes::fuse_contractions(*g));
}

TEST(ContractionFusion, MatMulIsBitwiseOnManyShapes) {
  struct Case {
    int64_t m, k, n;
    bool ta, tb, relu, add_form;
  };
  const Case cases[] = {{1, 1, 1, false, false, true, false},    {3, 5, 7, false, false, true, false},
                        {4, 3, 2, true, false, false, false},    {4, 3, 2, false, true, true, true},
                        {5, 6, 7, true, true, true, false},      {37, 513, 129, false, false, true, false},
                        {50, 3136, 1024, false, false, true, false}, {50, 1024, 10, false, false, false, false},
                        {256, 64, 10, false, true, false, true}, {3, 0, 4, false, false, true, false},
                        // A few rows: MatMul's own kernel (ops/gemv.h), then BiasAdd and Relu.
                        {1, 3136, 1024, false, false, true, false},  {1, 300, 7, true, false, false, true},
                        {4, 600, 100, false, false, true, false},     {3, 257, 5, true, false, false, true}};
  for (const Case& c : cases) {
    Shape a_shape = c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k};
    Shape b_shape = c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n};
    auto g = trace_graph({f32(a_shape), f32(b_shape), f32(Shape{c.n})}, [&](auto& p) {
      Tensor y = matmul(p[0], p[1], c.ta, c.tb);
      y = c.add_form ? y + p[2] : nn::bias_add(y, p[2]);
      return std::vector{c.relu ? relu(y) : y};
    });
    // A NaN in the first row of a: relu must keep the NaNs it makes.
    std::vector<Tensor> in{values(a_shape, 11, c.k > 0 ? 0 : -1), values(b_shape, 12), values({c.n}, 13)};
    expect_fused_and_bitwise(*g, in, "FusedMatMul", 1,
                             fmt::format("[{},{}]x[{},{}] ta={} tb={} relu={} add={}", c.m, c.k, c.k, c.n, c.ta, c.tb,
                                         c.relu, c.add_form));
  }
}

TEST(ContractionFusion, BatchedMatMulIsBitwise) {
  // b shared by the batch (one GEMM over the rows) and one b per batch.
  for (const Shape& b_shape : {Shape{6, 5}, Shape{2, 6, 5}}) {
    auto g = trace_graph({f32(Shape{2, 3, 6}), f32(b_shape), f32(Shape{5})},
                   [](auto& p) { return std::vector{relu(nn::bias_add(matmul(p[0], p[1]), p[2]))}; });
    expect_fused_and_bitwise(*g, {values({2, 3, 6}, 1, 4), values(b_shape, 2), values({5}, 3)}, "FusedMatMul", 1,
                             "b " + b_shape.to_string());
  }
}

TEST(ContractionFusion, Conv2DIsBitwiseOnManyShapes) {
  struct Case {
    int64_t n, h, w, c, o, kh, kw, stride, dilation;
    const char* padding;
    bool relu;
  };
  const Case cases[] = {{1, 5, 5, 1, 1, 3, 3, 1, 1, "SAME", true},      {2, 7, 7, 3, 5, 3, 3, 1, 1, "VALID", true},
                        {2, 9, 8, 16, 16, 3, 3, 2, 1, "SAME", false},   {3, 11, 11, 17, 48, 1, 1, 1, 1, "VALID", true},
                        {2, 10, 10, 4, 8, 3, 3, 1, 2, "SAME", true},    {50, 28, 28, 1, 32, 5, 5, 1, 1, "SAME", true},
                        {50, 14, 14, 32, 64, 5, 5, 1, 1, "SAME", true}, {1, 6, 9, 64, 3, 2, 4, 3, 1, "VALID", false}};
  for (const Case& c : cases) {
    Shape x_shape{c.n, c.h, c.w, c.c}, f_shape{c.kh, c.kw, c.c, c.o};
    auto g = trace_graph({f32(x_shape), f32(f_shape), f32(Shape{c.o})}, [&](auto& p) {
      Tensor y = nn::bias_add(nn::conv2d(p[0], p[1], c.stride, c.padding, c.dilation), p[2]);
      return std::vector{c.relu ? relu(y) : y};
    });
    std::vector<Tensor> in{values(x_shape, 21, c.c * 3), values(f_shape, 22), values({c.o}, 23)};
    expect_fused_and_bitwise(*g, in, "FusedConv2D", 1,
                             fmt::format("x {} f {} stride {} dilation {} {} relu={}", x_shape.to_string(),
                                         f_shape.to_string(), c.stride, c.dilation, c.padding, c.relu));
  }
}

// MobileNet's depthwise layers (a multiplier of 1, stride 1 and 2) and
// other forms: the depthwise kernel, then bias and relu in one pass, give the
// bits of DepthwiseConv2dNative then BiasAdd (and Relu).
TEST(ContractionFusion, DepthwiseConv2DIsBitwiseOnManyShapes) {
  struct Case {
    int64_t n, h, w, c, multiplier, k, stride, dilation;
    const char* padding;
    bool relu;
  };
  const Case cases[] = {{1, 5, 5, 1, 1, 3, 1, 1, "SAME", true},        {2, 7, 6, 3, 2, 3, 1, 1, "VALID", true},
                        {1, 112, 112, 32, 1, 3, 1, 1, "SAME", true},   {1, 112, 112, 64, 1, 3, 2, 1, "SAME", true},
                        {4, 28, 28, 256, 1, 3, 1, 1, "SAME", false},   {2, 14, 14, 512, 1, 3, 2, 1, "SAME", true},
                        {3, 7, 7, 1024, 1, 3, 1, 1, "SAME", true},     {2, 10, 9, 8, 3, 3, 1, 2, "SAME", true},
                        {2, 9, 9, 17, 1, 5, 2, 1, "VALID", false},     {1, 6, 6, 4, 4, 1, 1, 1, "VALID", true}};
  for (const Case& c : cases) {
    Shape x_shape{c.n, c.h, c.w, c.c}, f_shape{c.k, c.k, c.c, c.multiplier};
    const int64_t out_channels = c.c * c.multiplier;
    auto g = trace_graph({f32(x_shape), f32(f_shape), f32(Shape{out_channels})}, [&](auto& p) {
      Tensor y = nn::bias_add(nn::depthwise_conv2d(p[0], p[1], c.stride, c.padding, c.dilation), p[2]);
      return std::vector{c.relu ? relu(y) : y};
    });
    std::vector<Tensor> in{values(x_shape, 31, c.c * 3), values(f_shape, 32), values({out_channels}, 33)};
    expect_fused_and_bitwise(*g, in, "FusedDepthwiseConv2dNative", 1,
                             fmt::format("x {} f {} stride {} dilation {} {} relu={}", x_shape.to_string(),
                                         f_shape.to_string(), c.stride, c.dilation, c.padding, c.relu));
  }
}

TEST(ContractionFusion, TrainingStepFusesTheForwardPass) {
  // conv -> bias -> relu -> pool -> dense -> relu -> dense, with gradients
  // of every weight in the same graph (as a traced training step), batch
  // unknown. Relu's gradient reads its output, so each chain fuses whole.
  auto g = trace_graph({f32(Shape{None, 8, 8, 2}), f32(Shape{3, 3, 2, 4}), f32(Shape{4}), f32(Shape{64, 16}),
                  f32(Shape{16}), f32(Shape{16, 3}), f32(Shape{3})},
                 [](auto& p) {
                   GradientTape tape;
                   for (std::size_t i = 1; i < p.size(); ++i) tape.watch(p[i]);
                   Tensor h = relu(nn::bias_add(nn::conv2d(p[0], p[1], 1, nn::Padding::Same), p[2]));
                   h = reshape(nn::max_pool2d(h, 2, 2, nn::Padding::Valid), Shape{-1, 64});
                   h = relu(nn::bias_add(matmul(h, p[3]), p[4]));
                   Tensor logits = nn::bias_add(matmul(h, p[5]), p[6]);
                   Tensor loss = kiln::sum(logits * logits);
                   std::vector<Tensor> out{loss};
                   for (const Tensor& d : tape.gradient(loss, {p[1], p[2], p[3], p[4], p[5], p[6]})) out.push_back(d);
                   return out;
                 });
  std::vector<Tensor> in{values({5, 8, 8, 2}, 1), values({3, 3, 2, 4}, 2), values({4}, 3), values({64, 16}, 4),
                         values({16}, 5),         values({16, 3}, 6),       values({3}, 7)};
  auto opt = passes::optimize(*g, {});
  EXPECT_EQ(count_ops(*opt, "FusedConv2D"), 1) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "FusedMatMul"), 2) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "Relu"), 0) << opt->to_string();
  expect_fused_and_bitwise(*g, in, "FusedMatMul", 2, "training step", /*only_fused=*/false);
}

TEST(ContractionFusion, SwitchTurnsItOff) {
  setenv("KILN_DISABLE_PASSES", "contract", 1);
  passes::PassOptions o = passes::PassOptions::from_env();
  unsetenv("KILN_DISABLE_PASSES");
  EXPECT_FALSE(o.contract);
  EXPECT_TRUE(o.fuse && o.cse && o.dce);
  auto g = trace_graph({f32(Shape{2, 3}), f32(Shape{3, 4}), f32(Shape{4})},
                 [](auto& p) { return std::vector{relu(nn::bias_add(matmul(p[0], p[1]), p[2]))}; });
  EXPECT_EQ(count_ops(*passes::optimize(*g, o), "FusedMatMul"), 0);
  EXPECT_EQ(count_ops(*passes::optimize(*g, {}), "FusedMatMul"), 1);
}

TEST(ContractionFusion, RepeatedCallsCreateNoPrimitives) {
  auto g = trace_graph({f32(Shape{8, 8, 8, 3}), f32(Shape{3, 3, 3, 16}), f32(Shape{16}), f32(Shape{16, 5}), f32(Shape{5})},
                 [](auto& p) {
                   Tensor h = relu(nn::bias_add(nn::conv2d(p[0], p[1], 1, nn::Padding::Same), p[2]));
                   return std::vector{relu(nn::bias_add(matmul(reshape(h, Shape{-1, 16}), p[3]), p[4]))};
                 });
  auto opt = passes::optimize(*g, {});
  ASSERT_EQ(count_ops(*opt, "FusedConv2D") + count_ops(*opt, "FusedMatMul"), 2) << opt->to_string();
  std::vector<Tensor> in{values({8, 8, 8, 3}, 1), values({3, 3, 3, 16}, 2), values({16}, 3), values({16, 5}, 4),
                         values({5}, 5)};
  auto& cache = ops::onednn::primitive_cache();
  cache.clear();
  run(*opt, in);
  // The two fused primitives and nothing else: neither fell back to the
  // plain ops (their primitives would be cached too).
  EXPECT_EQ(cache.size(), 2u);
  const uint64_t misses = cache.misses(), hits = cache.hits();
  for (int i = 0; i < 3; ++i) run(*opt, in);
  EXPECT_EQ(cache.misses(), misses);
  EXPECT_GE(cache.hits(), hits + 6);
}

TEST(ContractionFusion, FusedOpsCheckTheirInputsAsTheChainWould) {
  const detail::OpDef& op = schema::OpRegistry::global().get("FusedMatMul");
  auto attrs = [](const char* activation) {
    return schema::Attrs{{"transpose_a", false}, {"transpose_b", false}, {"activation", std::string(activation)}};
  };
  auto call = [&](std::vector<Tensor> in, const char* activation) { runtime::run_eager(op, in, attrs(activation)); };
  Tensor a = values({2, 3}, 1), b = values({3, 4}, 2);
  expect_error<InvalidArgument>([&] { call({a, b, values({3}, 3)}, "relu"); },
                                {"FusedMatMul: BiasAdd: bias has 3 elements but value's last dim is 4"});
  expect_error<InvalidArgument>([&] { call({a, a, values({4}, 3)}, "relu"); },
                                {"FusedMatMul: MatMul: the inner dimensions do not match"});
  expect_error<InvalidArgument>([&] { call({a, b, values({4}, 3)}, "tanh"); },
                                {"FusedMatMul: activation must be \"none\" or \"relu\", got \"tanh\""});
  expect_error<InvalidArgument>([&] { call({a, b}, "relu"); }, {"FusedMatMul: takes 3 inputs", "got 2"});
}

TEST(ContractionFusion, FusesBfloat16ChainsWithTheChainsBits) {
  // bfloat16 contractions run on oneDNN's bf16 kernels (where the CPU has
  // them); the fused bias pass sums in float and rounds once, as BiasAdd.
  const DType bf16 = DType::BFloat16;
  auto conv = trace_graph({{bf16, Shape{2, 9, 9, 3}}, {bf16, Shape{3, 3, 3, 8}}, {bf16, Shape{8}}}, [](auto& p) {
    return std::vector{relu(nn::bias_add(nn::conv2d(p[0], p[1], 1, nn::Padding::Same), p[2]))};
  });
  expect_fused_and_bitwise(*conv, {cast(values({2, 9, 9, 3}, 11), bf16), cast(values({3, 3, 3, 8}, 12), bf16),
                                   cast(values({8}, 13), bf16)},
                           "FusedConv2D", 1, "bf16 conv + bias + relu", /*only_fused=*/false);
  auto dense = trace_graph({{bf16, Shape{50, 64}}, {bf16, Shape{64, 32}}, {bf16, Shape{32}}}, [](auto& p) {
    return std::vector{relu(matmul(p[0], p[1]) + p[2]), nn::bias_add(matmul(p[0], p[1] * 0.5f), p[2])};
  });
  expect_fused_and_bitwise(*dense, {cast(values({50, 64}, 14), bf16), cast(values({64, 32}, 15), bf16),
                                    cast(values({32}, 16), bf16)},
                           "FusedMatMul", 2, "bf16 matmul + bias (+ relu)", /*only_fused=*/false);
  // The bias pass's AVX2 lanes (24 of 27 channels) and its scalar tail on
  // sums that overflow, NaNs of both signs, infinities, signed zeros and
  // ties, with and without relu.
  std::vector<float> bias = {NAN, -NAN, INFINITY, -INFINITY, 0.f, -0.f, 3.3895314e38f, -3.3895314e38f, 1.f};
  for (int i = 0; bias.size() < 27; ++i) bias.push_back(static_cast<float>(i % 7 - 3) * 0.375f);
  bias[25] = -NAN;
  bias[26] = -INFINITY;
  auto specials = trace_graph({{bf16, Shape{6, 16}}, {bf16, Shape{16, 27}}, {bf16, Shape{27}}}, [](auto& p) {
    return std::vector{relu(matmul(p[0], p[1]) + p[2]), nn::bias_add(matmul(p[0], p[1] * 0.5f), p[2])};
  });
  expect_fused_and_bitwise(*specials, {cast(values({6, 16}, 17) * 1e37f, bf16), cast(values({16, 27}, 18), bf16),
                                       cast(constant(bias), bf16)},
                           "FusedMatMul", 2, "bf16 bias pass on special values", /*only_fused=*/false);
}
