// Pool-gradient fusion (src/passes/fuse_pool_grad.cpp): MaxPoolGrad followed
// by Relu's gradient becomes FusedMaxPoolGrad where nothing else reads the
// pooling gradient, and the fused graph computes the unfused graph's bits.
#include "passes_test_util.h"

#include <cmath>
#include <random>

#include <omp.h>

#include "kiln/kiln.h"
#include "kernel_test_util.h"
#include "ops/nn_internal.h"

using namespace kiln;
using namespace kiln::passes_testing;

namespace {

// relu -> max pool -> a weighted sum, and the gradient with respect to the
// relu's input, as a traced training step computes it.
GraphPtr pool_after_relu_gradient(const Shape& x_shape, const Shape& w_shape, int ksize, int stride,
                                  nn::Padding padding, DType dtype = DType::Float32, bool return_pool_grad = false) {
  return trace_graph({{dtype, x_shape}, {dtype, w_shape}}, [=](auto& p) {
    GradientTape tape;
    tape.watch(p[0]);
    Tensor y = relu(p[0]);
    Tensor pooled = nn::max_pool2d(y, ksize, stride, padding);
    Tensor loss = kiln::sum(pooled * p[1]);
    // The gradient with respect to y too: the MaxPoolGrad is then read twice.
    if (return_pool_grad) return tape.gradient(loss, {p[0], y});
    return tape.gradient(loss, {p[0]});
  });
}

// bias_add -> relu -> max pool -> a weighted sum, and the gradients with
// respect to the input and the bias, as a convolution layer's training step
// computes them (the bias gradient is a SumToShapeOf of the relu's gradient).
GraphPtr biased_pool_gradient(const Shape& x_shape, const Shape& w_shape, int ksize, int stride, nn::Padding padding,
                              DType dtype = DType::Float32) {
  const Shape bias_shape{x_shape[x_shape.rank() - 1]};
  return trace_graph({{dtype, x_shape}, {dtype, bias_shape}, {dtype, w_shape}}, [=](auto& p) {
    GradientTape tape;
    tape.watch(p[0]);
    tape.watch(p[1]);
    Tensor y = relu(nn::bias_add(p[0], p[1]));
    Tensor loss = kiln::sum(nn::max_pool2d(y, ksize, stride, padding) * p[2]);
    return tape.gradient(loss, {p[0], p[1]});
  });
}

// A pooling of input [n, h, w, c] by ksize/stride windows, and its dtype.
struct PoolCase {
  int64_t n, h, w, c;
  int ksize, stride;
  nn::Padding padding;
  DType dtype;

  Shape x_shape() const { return Shape{n, h, w, c}; }
  Shape pooled_shape() const {
    auto out = [&](int64_t in) {
      return padding == nn::Padding::Same ? (in + stride - 1) / stride : (in - ksize) / stride + 1;
    };
    return Shape{n, out(h), out(w), c};
  }
  std::string describe() const {
    return fmt::format("[{},{},{},{}] k={} s={} same={} {}", n, h, w, c, ksize, stride, padding == nn::Padding::Same,
                       dtype_name(dtype));
  }
};

}  // namespace

TEST(PoolGradFusion, ReluGradientJoinsTheMaxPoolGradient) {
  auto g = pool_after_relu_gradient(Shape{2, 6, 8, 3}, Shape{2, 3, 4, 3}, 2, 2, nn::Padding::Valid);
  auto opt = passes::optimize(*g, {});
  opt->verify();
  EXPECT_EQ(count_ops(*opt, "FusedMaxPoolGrad"), 1) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "MaxPoolGrad"), 0) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "FusedElementwise"), 0) << opt->to_string();
  expect_same_results(*g, {values_with_ties({2, 6, 8, 3}, 1), values_with_ties({2, 3, 4, 3}, 2)});
}

// The MNIST shapes ([50,28,28,32] and [4,14,14,64], 2x2/2 windows tiling the
// image, channels a multiple of 8) take the fused kernel's AVX2 path; the
// others its general loops.
TEST(PoolGradFusion, BitwiseOnManyShapes) {
  const PoolCase cases[] = {
      {1, 4, 4, 1, 2, 2, nn::Padding::Valid, DType::Float32},   {3, 7, 9, 5, 2, 2, nn::Padding::Same, DType::Float32},
      {2, 9, 9, 4, 3, 2, nn::Padding::Same, DType::Float32},    {2, 8, 8, 2, 3, 1, nn::Padding::Valid, DType::Float64},
      {50, 28, 28, 32, 2, 2, nn::Padding::Same, DType::Float32}, {4, 14, 14, 64, 2, 2, nn::Padding::Valid, DType::Float32},
      // mixed_bfloat16's step: the native bf16 kernel, and the widened loops.
      {50, 28, 28, 32, 2, 2, nn::Padding::Same, DType::BFloat16},
      {4, 14, 14, 64, 2, 2, nn::Padding::Valid, DType::BFloat16},
      {3, 7, 9, 5, 2, 2, nn::Padding::Same, DType::BFloat16},
  };
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(c.describe());
    const Shape x_shape = c.x_shape(), w_shape = c.pooled_shape();
    auto g = pool_after_relu_gradient(x_shape, w_shape, c.ksize, c.stride, c.padding, c.dtype);
    EXPECT_EQ(count_ops(*passes::optimize(*g, {}), "FusedMaxPoolGrad"), 1);
    expect_same_results(*g, {values_with_ties(x_shape, 3, c.dtype), values_with_ties(w_shape, 4, c.dtype)});
  }
}

TEST(PoolGradFusion, LeavesAPoolGradientReadElsewhere) {
  auto g = pool_after_relu_gradient(Shape{1, 4, 4, 2}, Shape{1, 2, 2, 2}, 2, 2, nn::Padding::Valid, DType::Float32,
                                    /*return_pool_grad=*/true);
  auto opt = passes::optimize(*g, {});
  EXPECT_EQ(count_ops(*opt, "FusedMaxPoolGrad"), 0) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "MaxPoolGrad"), 1) << opt->to_string();
  expect_same_results(*g, {values_with_ties({1, 4, 4, 2}, 5), values_with_ties({1, 2, 2, 2}, 6)});
}

TEST(PoolGradFusion, LeavesOtherMasksAlone) {
  // where(y > 0.5, g, 0) is not Relu's gradient; where(y > 0, g, -0) writes -0.
  auto g = trace_graph({f32(Shape{1, 4, 4, 2}), f32(Shape{1, 2, 2, 2})}, [](auto& p) {
    Tensor g = ops::max_pool_grad(p[0], p[1],
                                  schema::Attrs{{"ksize", std::vector<int64_t>{2, 2}},
                                                {"strides", std::vector<int64_t>{2, 2}},
                                                {"padding", std::string("VALID")}});
    Tensor g2 = ops::max_pool_grad(p[0], p[1] * 2.f,
                                   schema::Attrs{{"ksize", std::vector<int64_t>{2, 2}},
                                                 {"strides", std::vector<int64_t>{2, 2}},
                                                 {"padding", std::string("VALID")}});
    return std::vector{where(p[0] > 0.5f, g, 0.f), where(p[0] > 0.f, g2, -0.f)};
  });
  EXPECT_FALSE(passes::fuse_pool_gradients(*g->clone("copy")));
}

TEST(PoolGradFusion, SwitchTurnsItOff) {
  setenv("KILN_DISABLE_PASSES", "poolgrad", 1);
  passes::PassOptions o = passes::PassOptions::from_env();
  unsetenv("KILN_DISABLE_PASSES");
  EXPECT_FALSE(o.pool_grad);
  EXPECT_TRUE(o.contract && o.fuse);
  auto g = pool_after_relu_gradient(Shape{1, 4, 4, 2}, Shape{1, 2, 2, 2}, 2, 2, nn::Padding::Valid);
  EXPECT_EQ(count_ops(*passes::optimize(*g, o), "FusedMaxPoolGrad"), 0);
  EXPECT_EQ(count_ops(*passes::optimize(*g, {}), "FusedMaxPoolGrad"), 1);
}

// The bias gradient joins the fused node as its second output, with
// SumToShapeOf's bits: on the AVX2 path (2x2/2 tiling, channels a multiple of
// 8: the MNIST shapes; blocks of rows shared out by rows, then summed by bands
// of channels) and on the general loops (odd channels, overlapping windows,
// float64); at one, two and three threads.
TEST(PoolGradFusion, BiasGradientJoinsWithTheSumsBits) {
  const PoolCase cases[] = {
      {50, 28, 28, 32, 2, 2, nn::Padding::Valid, DType::Float32},  // MNIST's conv1
      {50, 14, 14, 64, 2, 2, nn::Padding::Valid, DType::Float32},  // and conv2
      {40, 16, 16, 24, 2, 2, nn::Padding::Valid, DType::Float32},  // a band of one vector
      {2, 4, 4, 8, 2, 2, nn::Padding::Valid, DType::Float32},      // one block, one thread
      {64, 32, 32, 8, 2, 2, nn::Padding::Valid, DType::Float32},   // fewer channel lines than threads
      {40, 10, 10, 136, 2, 2, nn::Padding::Valid, DType::Float32}, // bands wider than the registers' 64
      {3, 7, 9, 5, 2, 2, nn::Padding::Same, DType::Float32},       // the general loops
      {2, 9, 9, 4, 3, 2, nn::Padding::Same, DType::Float64},
      // mixed_bfloat16's: float32 sums rounded once, as the widened SumToShapeOf.
      {50, 28, 28, 32, 2, 2, nn::Padding::Valid, DType::BFloat16},
      {50, 14, 14, 64, 2, 2, nn::Padding::Valid, DType::BFloat16},
      {40, 10, 10, 136, 2, 2, nn::Padding::Valid, DType::BFloat16},
      {3, 7, 9, 5, 2, 2, nn::Padding::Same, DType::BFloat16},
  };
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(c.describe());
    const Shape x_shape = c.x_shape(), w_shape = c.pooled_shape();
    const Tensor dy = c.dtype == DType::BFloat16 ? cast(random::normal(w_shape, 0, 1, DType::Float32, 9), c.dtype)
                                                 : random::normal(w_shape, 0, 1, c.dtype, 9);
    auto g = biased_pool_gradient(x_shape, w_shape, c.ksize, c.stride, c.padding, c.dtype);
    auto opt = passes::optimize(*g, {});
    EXPECT_EQ(count_ops(*opt, "FusedMaxPoolGrad"), 1) << opt->to_string();
    EXPECT_EQ(count_ops(*opt, "SumToShapeOf"), 0) << opt->to_string();
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(fmt::format("{} threads", threads));
      kiln::testing::ThreadCount scope(threads);
      // dy of many magnitudes, so that a sum in another order rounds
      // otherwise (sums of quarters would be exact in any order).
      expect_same_results(*g, {values_with_ties(x_shape, 7, c.dtype), values_with_ties(Shape{c.c}, 8, c.dtype), dy});
    }
  }
}

// Summed down to anything but the last dim, the gradient stays a SumToShapeOf.
TEST(PoolGradFusion, OtherSumsStayApart) {
  auto g = trace_graph({f32(Shape{2, 4, 4, 8}), f32(Shape{4, 1}), f32(Shape{2, 2, 2, 8})}, [](auto& p) {
    GradientTape tape;
    tape.watch(p[0]);
    tape.watch(p[1]);
    Tensor y = relu(p[0] + p[1]);  // p[1] broadcasts along the width
    Tensor loss = kiln::sum(nn::max_pool2d(y, 2, 2, nn::Padding::Valid) * p[2]);
    return tape.gradient(loss, {p[0], p[1]});
  });
  auto opt = passes::optimize(*g, {});
  EXPECT_EQ(count_ops(*opt, "FusedMaxPoolGrad"), 1) << opt->to_string();
  EXPECT_EQ(count_ops(*opt, "SumToShapeOf"), 1) << opt->to_string();
  expect_same_results(*g, {values_with_ties({2, 4, 4, 8}, 10), values_with_ties({4, 1}, 11),
                           values_with_ties({2, 2, 2, 8}, 12)});
}

// Called from inside another team's parallel region, the fused kernel runs
// alone on each caller, without barriers (which would bind to the outer
// team, whose two threads here run graphs of different sizes: 20 blocks of
// rows and 1; without that rule this test hangs): the bits are the same.
TEST(PoolGradFusion, BiasGradientInsideAnotherParallelRegion) {
  const Shape shapes[2][2] = {{{50, 28, 28, 32}, {50, 14, 14, 32}}, {{2, 8, 8, 32}, {2, 4, 4, 32}}};
  GraphPtr graphs[2];
  std::shared_ptr<const graph::Graph> optimized[2];
  std::vector<Tensor> inputs[2], want[2], got[2];
  for (int i = 0; i < 2; ++i) {
    const auto& [x_shape, w_shape] = shapes[i];
    graphs[i] = biased_pool_gradient(x_shape, w_shape, 2, 2, nn::Padding::Valid);
    optimized[i] = passes::optimize(*graphs[i], {});
    inputs[i] = {values_with_ties(x_shape, 13), values_with_ties(Shape{32}, 14),
                 random::normal(w_shape, 0, 1, DType::Float32, 15)};
    want[i] = run(*graphs[i], inputs[i]);
  }
  int team = 0;
#pragma omp parallel num_threads(2)
  {
    const int i = omp_get_thread_num();
    if (i == 0) team = omp_get_num_threads();
    got[i] = run(*optimized[i], inputs[i]);
  }
  ASSERT_EQ(team, 2);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(got[i].size(), want[i].size());
    for (std::size_t k = 0; k < want[i].size(); ++k) expect_bitwise(want[i][k], got[i][k]);
  }
}
