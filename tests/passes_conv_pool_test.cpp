// Convolution-pooling fusion (src/passes/fuse_conv_pool.cpp): a 2x2 MaxPool
// of stride 2 reading a FusedConv2D becomes that node's second output, and
// the fused graph computes the unfused graph's bits (MaxPool's NaN and signed
// zero rules included) whatever the thread count; other poolings stay.
#include "passes_test_util.h"

#include <cmath>
#include <limits>
#include <random>

#include "exec/fused_contraction.h"
#include "kiln/kiln.h"
#include "kernel_test_util.h"

using namespace kiln;
using namespace kiln::passes_testing;

namespace {

// Inputs: values_with_ties (passes_test_util.h), quarters with -0 and NaN.
// Not infinities: a convolution then makes the default NaN (-NaN) of
// inf * 0, and where the bias holds a +NaN for that channel, which of the two
// NaNs the bias addition keeps is the compiler's choice (design notes, "Graph
// passes": BiasAdd and the fused pass differ there).
// conv2d (SAME) -> bias_add -> relu (or not) -> max pool; returns the pooled
// value and, when asked, the convolution's output too.
GraphPtr conv_then_pool(const Shape& x, const Shape& w, bool relu, int ksize = 2, int stride = 2,
                        nn::Padding pool_padding = nn::Padding::Valid, bool return_conv_output = true) {
  return trace_graph({{DType::Float32, x}, {DType::Float32, w}, {DType::Float32, Shape{w[3]}}}, [=](auto& p) -> std::vector<Tensor> {
    Tensor y = nn::bias_add(nn::conv2d(p[0], p[1], 1, nn::Padding::Same), p[2]);
    if (relu) y = kiln::relu(y);
    Tensor pooled = nn::max_pool2d(y, ksize, stride, pool_padding);
    return return_conv_output ? std::vector<Tensor>{pooled, y} : std::vector<Tensor>{pooled};
  });
}

int pooling_convolutions(const graph::Graph& g) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op == &exec::fused_conv2d_op() && exec::has_max_pool(node->attrs);
  return n;
}

struct ConvCase {
  int64_t n, h, w, c, filters, k;
  bool relu;
};

}  // namespace

TEST(ConvPoolFusion, TheMaxPoolBecomesTheConvolutionsSecondOutput) {
  GraphPtr g = conv_then_pool({2, 6, 8, 3}, {3, 3, 3, 4}, true);
  auto opt = passes::optimize(*g, {});
  EXPECT_EQ(count_ops(*opt, "MaxPool"), 0) << opt->to_string();
  EXPECT_EQ(pooling_convolutions(*opt), 1) << opt->to_string();
  expect_same_results(*g, {values_with_ties({2, 6, 8, 3}, 1), values_with_ties({3, 3, 3, 4}, 2), values_with_ties({4}, 3)});
}

TEST(ConvPoolFusion, BitwiseOnManyShapesAndThreadCounts) {
  const ConvCase cases[] = {{1, 2, 2, 1, 1, 1, false}, {3, 6, 8, 3, 5, 3, true},  {2, 4, 10, 2, 8, 3, false},
                            {50, 28, 28, 1, 32, 5, true}, {50, 14, 14, 32, 64, 5, true}, {1, 16, 2, 4, 9, 1, true}};
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << "[" << c.n << "," << c.h << "," << c.w << "," << c.c << "] -> " << c.filters
                                    << " k=" << c.k << " relu=" << c.relu);
    const Shape x{c.n, c.h, c.w, c.c}, w{c.k, c.k, c.c, c.filters};
    GraphPtr g = conv_then_pool(x, w, c.relu);
    EXPECT_EQ(pooling_convolutions(*passes::optimize(*g, {})), 1);
    for (int threads : {1, 2, 3}) {
      kiln::testing::ThreadCount scope(threads);
      expect_same_results(*g, {values_with_ties(x, 4), values_with_ties(w, 5), values_with_ties(Shape{c.filters}, 6)});
    }
  }
}

// MaxPool's rules for the values a window can hold, one window per case: a
// NaN in each position, a NaN window, +0 against -0 both ways, infinities.
// A 1x1 convolution of one channel by the filter 1, with a -0 bias and no
// relu, passes the values through.
TEST(ConvPoolFusion, WindowsWithNanAndSignedZerosPoolAsMaxPoolDoes) {
  const float nan = NAN, inf = INFINITY, lowest = std::numeric_limits<float>::lowest();
  const std::vector<std::array<float, 4>> windows = {
      {nan, 1, 2, 3},  {1, nan, 2, 3}, {1, 2, nan, 3},     {1, 2, 3, nan},        {nan, nan, nan, nan},
      {0.f, -0.f, -0.f, -0.f}, {-0.f, 0.f, 0.f, 0.f}, {-0.f, -0.f, -0.f, 0.f}, {-inf, -inf, -inf, -inf},
      {lowest, -inf, nan, -inf}, {3, nan, 1, 2}, {inf, nan, -inf, 0.f}};
  const int64_t count = static_cast<int64_t>(windows.size());
  // Image [1, 2, 2 * count, 1]: window i covers columns 2i and 2i + 1.
  std::vector<float> x(static_cast<std::size_t>(4 * count));
  for (int64_t i = 0; i < count; ++i) {
    x[2 * i] = windows[i][0];
    x[2 * i + 1] = windows[i][1];
    x[2 * count + 2 * i] = windows[i][2];
    x[2 * count + 2 * i + 1] = windows[i][3];
  }
  GraphPtr g = conv_then_pool({1, 2, 2 * count, 1}, {1, 1, 1, 1}, false);
  EXPECT_EQ(pooling_convolutions(*passes::optimize(*g, {})), 1);
  expect_same_results(*g, {constant(x, Shape{1, 2, 2 * count, 1}), constant(std::vector<float>{1.f}, Shape{1, 1, 1, 1}), constant({-0.f})});
}

TEST(ConvPoolFusion, LeavesOtherPoolingsAlone) {
  const Shape x{2, 6, 6, 2}, w{3, 3, 2, 3};
  const std::vector<Tensor> in{values_with_ties(x, 7), values_with_ties(w, 8), values_with_ties(Shape{3}, 9)};
  // Other windows, strides and padding.
  for (auto [ksize, stride, padding] : {std::tuple{3, 2, nn::Padding::Valid}, std::tuple{2, 1, nn::Padding::Valid},
                                        std::tuple{2, 2, nn::Padding::Same}}) {
    GraphPtr g = conv_then_pool(x, w, true, ksize, stride, padding);
    auto opt = passes::optimize(*g, {});
    EXPECT_EQ(count_ops(*opt, "MaxPool"), 1) << "k=" << ksize << " s=" << stride;
    expect_same_results(*g, in);
  }
  // An odd height does not tile into windows.
  GraphPtr odd = conv_then_pool({2, 5, 6, 2}, w, true);
  EXPECT_EQ(count_ops(*passes::optimize(*odd, {}), "MaxPool"), 1);
  // A convolution without a bias is not a FusedConv2D.
  GraphPtr no_bias = trace_graph({{DType::Float32, x}, {DType::Float32, w}}, [](auto& p) -> std::vector<Tensor> {
    return {nn::max_pool2d(kiln::relu(nn::conv2d(p[0], p[1], 1, nn::Padding::Same)), 2, 2, nn::Padding::Valid)};
  });
  EXPECT_EQ(count_ops(*passes::optimize(*no_bias, {}), "MaxPool"), 1);
}

TEST(ConvPoolFusion, SwitchTurnsItOff) {
  GraphPtr g = conv_then_pool({1, 4, 4, 2}, {3, 3, 2, 2}, true);
  setenv("KILN_DISABLE_PASSES", "convpool", 1);
  passes::PassOptions o = passes::PassOptions::from_env();
  unsetenv("KILN_DISABLE_PASSES");
  EXPECT_EQ(count_ops(*passes::optimize(*g, o), "MaxPool"), 1);
  EXPECT_EQ(pooling_convolutions(*passes::optimize(*g, o)), 0);
  EXPECT_EQ(pooling_convolutions(*passes::optimize(*g, {})), 1);
}

TEST(ConvPoolFusion, ThePooledOpChecksItsOutput) {
  const detail::OpDef& op = schema::OpRegistry::global().get("FusedConv2D");
  const schema::Attrs attrs{{"strides", std::vector<int64_t>{1, 1}},
                            {"padding", std::string("SAME")},
                            {"dilations", std::vector<int64_t>{1, 1}},
                            {"activation", std::string("relu")},
                            {"max_pool", true}};
  auto call = [&](const Shape& x, DType dtype) {
    const Tensor in[] = {cast(values_with_ties(x, 10), dtype), cast(values_with_ties({3, 3, 2, 2}, 11), dtype), cast(values_with_ties({2}, 12), dtype)};
    runtime::run_eager(op, in, attrs);
  };
  kiln::testing::expect_error<InvalidArgument>([&] { call({1, 5, 4, 2}, DType::Float32); },
                                               {"FusedConv2D: max_pool needs an output of even height and width",
                                                "got (1, 5, 4, 2)"});
  kiln::testing::expect_error<InvalidArgument>([&] { call({1, 4, 4, 2}, DType::Float64); },
                                               {"FusedConv2D: max_pool needs float32, got float64"});
}
