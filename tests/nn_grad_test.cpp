// Gradients of the nn ops (docs/design-notes.md, "Autodiff") at op level: every gradient function
// against central finite differences in float64 (tests/grad_check.h), traced
// like eager, the backward kernels' float32 paths (oneDNN) against their
// float64 loops, TF's tie rule of max pooling, and the backward ops' errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kiln/kiln.h>

#include "grad_check.h"
#include "op_test_util.h"
#include "ops/nn_internal.h"
#include "ops/onednn.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"
#include "test_util.h"

using kiln::DType;
using kiln::None;
using kiln::Shape;
using kiln::Tensor;
using kiln::schema::Attrs;
using kiln::testing::check_op_gradient;
using kiln::testing::check_op_gradient_traces;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::random_tensor;
namespace detail = kiln::detail;
namespace ops = kiln::ops;
namespace runtime = kiln::runtime;
namespace schema = kiln::schema;

namespace {

Attrs matmul_attrs(bool ta, bool tb) { return Attrs{{"transpose_a", ta}, {"transpose_b", tb}}; }

Attrs conv_attrs(std::vector<int64_t> strides, const char* padding,
                 std::vector<int64_t> dilations = {1, 1}) {
  return Attrs{{"strides", std::move(strides)},
               {"padding", std::string(padding)},
               {"dilations", std::move(dilations)}};
}

Attrs pool_attrs(std::vector<int64_t> ksize, std::vector<int64_t> strides, const char* padding) {
  return Attrs{{"ksize", std::move(ksize)},
               {"strides", std::move(strides)},
               {"padding", std::string(padding)}};
}

Tensor rnd(const Shape& shape, uint32_t seed) { return random_tensor(shape, seed); }

// The output shape of an op on these inputs (eager).
Shape output_shape(const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  std::vector<Tensor> args = inputs;
  return runtime::run_eager(schema::OpRegistry::global().get(op), args, attrs)[0].shape();
}

struct ConvCase {
  Shape input, filters;
  Attrs attrs;
};

std::vector<ConvCase> conv_cases() {
  return {
      {{2, 5, 5, 3}, {3, 3, 3, 4}, conv_attrs({1, 1}, "SAME")},
      {{1, 7, 6, 2}, {3, 2, 2, 3}, conv_attrs({2, 2}, "VALID")},
      {{2, 6, 7, 2}, {2, 3, 2, 2}, conv_attrs({2, 1}, "SAME")},
      {{1, 7, 7, 2}, {2, 2, 2, 3}, conv_attrs({1, 1}, "SAME", {2, 2})},
      {{1, 8, 7, 1}, {3, 2, 1, 2}, conv_attrs({2, 3}, "VALID", {2, 1})},
      {{3, 4, 4, 5}, {1, 1, 5, 2}, conv_attrs({1, 1}, "VALID")},
  };
}

struct PoolCase {
  Shape input;
  Attrs attrs;
};

std::vector<PoolCase> pool_cases() {
  return {
      {{2, 4, 4, 3}, pool_attrs({2, 2}, {2, 2}, "VALID")},
      {{1, 5, 5, 2}, pool_attrs({2, 2}, {2, 2}, "SAME")},
      {{1, 5, 6, 2}, pool_attrs({3, 3}, {2, 2}, "SAME")},
      {{2, 5, 4, 1}, pool_attrs({3, 2}, {1, 1}, "VALID")},
      {{1, 7, 7, 2}, pool_attrs({2, 2}, {3, 3}, "VALID")},
      {{1, 6, 5, 2}, pool_attrs({3, 2}, {1, 2}, "SAME")},
  };
}

// ---- Finite differences -----------------------------------------------------

TEST(NnGrad, MatMulAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "transpose_a=" << ta << " transpose_b=" << tb);
      Tensor a = rnd(ta ? Shape{4, 3} : Shape{3, 4}, 1);
      Tensor b = rnd(tb ? Shape{5, 4} : Shape{4, 5}, 2);
      check_op_gradient("MatMul", {a, b}, matmul_attrs(ta, tb));
    }
  }
}

TEST(NnGrad, MatMulBatched) {
  check_op_gradient("MatMul", {rnd({2, 3, 4}, 3), rnd({2, 4, 2}, 4)}, matmul_attrs(false, false));
  check_op_gradient("MatMul", {rnd({2, 4, 3}, 5), rnd({2, 2, 4}, 6)}, matmul_attrs(true, true));
}

TEST(NnGrad, MatMulBroadcastBatchDims) {
  // a's batch dims (2, 1) against b's (3,): both operands are broadcast.
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "transpose_a=" << ta << " transpose_b=" << tb);
      Tensor a = rnd(ta ? Shape{2, 1, 4, 3} : Shape{2, 1, 3, 4}, 7);
      Tensor b = rnd(tb ? Shape{3, 2, 4} : Shape{3, 4, 2}, 8);
      check_op_gradient("MatMul", {a, b}, matmul_attrs(ta, tb));
    }
  }
  // One matrix against a batch (the layer case).
  check_op_gradient("MatMul", {rnd({2, 3, 4}, 9), rnd({4, 5}, 10)}, matmul_attrs(false, false));
}

TEST(NnGrad, Conv2D) {
  uint32_t seed = 20;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.input.to_string() + " * " + c.filters.to_string());
    check_op_gradient("Conv2D", {rnd(c.input, seed), rnd(c.filters, seed + 1)}, c.attrs);
    seed += 2;
  }
}

TEST(NnGrad, Conv2DBackpropOps) {
  uint32_t seed = 40;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.input.to_string() + " * " + c.filters.to_string());
    Tensor x = rnd(c.input, seed), f = rnd(c.filters, seed + 1);
    Tensor dy = rnd(output_shape("Conv2D", {x, f}, c.attrs), seed + 2);
    check_op_gradient("Conv2DBackpropInput", {x, f, dy}, c.attrs);
    check_op_gradient("Conv2DBackpropFilter", {x, f, dy}, c.attrs);
    seed += 3;
  }
}

TEST(NnGrad, Pools) {
  uint32_t seed = 60;
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(c.input.to_string());
    check_op_gradient("MaxPool", {rnd(c.input, seed)}, c.attrs);
    check_op_gradient("AvgPool", {rnd(c.input, seed + 1)}, c.attrs);
    seed += 2;
  }
}

TEST(NnGrad, PoolGradOps) {
  uint32_t seed = 80;
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(c.input.to_string());
    Tensor x = rnd(c.input, seed);
    Tensor dy = rnd(output_shape("MaxPool", {x}, c.attrs), seed + 1);
    check_op_gradient("MaxPoolGrad", {x, dy}, c.attrs);
    check_op_gradient("AvgPoolGrad", {x, dy}, c.attrs);
    check_op_gradient("MaxPoolGradGrad", {x, rnd(c.input, seed + 2)}, c.attrs);
    seed += 3;
  }
}

TEST(NnGrad, BiasAdd) {
  check_op_gradient("BiasAdd", {rnd({3, 4}, 100), rnd({4}, 101)});
  check_op_gradient("BiasAdd", {rnd({2, 3, 2, 5}, 102), rnd({5}, 103)});
  check_op_gradient("BiasAdd", {rnd({3}, 104), rnd({3}, 105)});
}

TEST(NnGrad, SoftmaxAndLogSoftmax) {
  struct Case {
    Shape shape;
    int64_t axis;
  };
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    uint32_t seed = 110;
    for (const Case& c : {Case{{3, 5}, -1}, Case{{4, 3}, 0}, Case{{2, 4, 3}, 1}, Case{{6}, 0}}) {
      SCOPED_TRACE(std::string(op) + " " + c.shape.to_string());
      // Spread logits (scale 3) so that the outputs are far from uniform.
      check_op_gradient(op, {random_tensor(c.shape, seed++, DType::Float64, -3, 3)},
                        Attrs{{"axis", c.axis}});
    }
  }
}

// ---- Traced gradients equal eager ones ---------------------------------------

TEST(NnGrad, GradientFunctionsTrace) {
  check_op_gradient_traces("MatMul", {rnd({2, 3, 4}, 1), rnd({2, 5, 4}, 2)},
                           matmul_attrs(false, true));
  check_op_gradient_traces("MatMul", {rnd({3, 4}, 1), rnd({5, 3}, 2)}, matmul_attrs(true, true));
  // Broadcast batch dims are seen only in static shapes (see sum_to_operand).
  check_op_gradient_traces("MatMul", {rnd({2, 1, 3, 4}, 3), rnd({3, 4, 2}, 4)},
                           matmul_attrs(false, false), 0, /*unknown_dims=*/false);
  ConvCase c = conv_cases()[2];
  Tensor x = rnd(c.input, 5), f = rnd(c.filters, 6);
  Tensor dy = rnd(output_shape("Conv2D", {x, f}, c.attrs), 7);
  check_op_gradient_traces("Conv2D", {x, f}, c.attrs);
  check_op_gradient_traces("Conv2DBackpropInput", {x, f, dy}, c.attrs);
  check_op_gradient_traces("Conv2DBackpropFilter", {x, f, dy}, c.attrs);
  PoolCase p = pool_cases()[2];
  Tensor px = rnd(p.input, 8);
  Tensor pdy = rnd(output_shape("MaxPool", {px}, p.attrs), 9);
  for (const char* op : {"MaxPool", "AvgPool"}) check_op_gradient_traces(op, {px}, p.attrs);
  for (const char* op : {"MaxPoolGrad", "AvgPoolGrad"})
    check_op_gradient_traces(op, {px, pdy}, p.attrs);
  check_op_gradient_traces("MaxPoolGradGrad", {px, rnd(p.input, 10)}, p.attrs);
  check_op_gradient_traces("BiasAdd", {rnd({2, 3, 4}, 11), rnd({4}, 12)});
  check_op_gradient_traces("Softmax", {rnd({2, 4, 3}, 13)}, Attrs{{"axis", int64_t(1)}});
  check_op_gradient_traces("LogSoftmax", {rnd({3, 5}, 14)}, Attrs{{"axis", int64_t(-1)}});
}

// A gradient the caller does not want is not computed (conv2d's first layer
// needs no image gradient).
TEST(NnGrad, GradientFunctionsSkipUnwantedInputs) {
  const detail::OpDef& conv = schema::OpRegistry::global().get("Conv2D");
  Attrs attrs = conv_attrs({1, 1}, "SAME");
  std::vector<Tensor> inputs = {rnd({1, 4, 4, 1}, 1), rnd({3, 3, 1, 2}, 2)};
  std::vector<Tensor> args = inputs;
  runtime::TensorList outputs = runtime::run_eager(conv, args, attrs);
  std::vector<Tensor> dys = {rnd({1, 4, 4, 2}, 3)};
  const bool wanted[] = {false, true};
  schema::GradContext ctx{conv, inputs, outputs, attrs, dys,
                          detail::SmallVector<Tensor, 4>(2), wanted};
  conv.gradient(ctx);
  EXPECT_FALSE(ctx.input_grads[0].defined());
  ASSERT_TRUE(ctx.input_grads[1].defined());
  EXPECT_EQ(ctx.input_grads[1].shape(), (Shape{3, 3, 1, 2}));
}

// ---- float32 backward kernels against float64 ones ---------------------------

// Runs `op` on float32 inputs and on the same values as float64; the results
// agree to float precision (relative to the largest magnitude).
void expect_float32_matches_float64(const char* op, const std::vector<Tensor>& inputs32,
                                    const Attrs& attrs) {
  const detail::OpDef& def = schema::OpRegistry::global().get(op);
  std::vector<Tensor> args32 = inputs32, args64;
  for (const Tensor& t : inputs32) args64.push_back(kiln::cast(t, DType::Float64));
  Tensor y32 = runtime::run_eager(def, args32, attrs)[0];
  Tensor y64 = runtime::run_eager(def, args64, attrs)[0];
  ASSERT_EQ(y32.dtype(), DType::Float32) << op;
  ASSERT_EQ(y32.shape(), y64.shape()) << op;
  std::vector<double> a = kiln::cast(y32, DType::Float64).to_vector<double>();
  std::vector<double> b = y64.to_vector<double>();
  double scale = 1e-30;
  for (double v : b) scale = std::max(scale, std::abs(v));
  for (std::size_t k = 0; k < a.size(); ++k)
    ASSERT_NEAR(a[k], b[k], 2e-5 * scale) << op << " element " << k << " of " << a.size();
}

Tensor rnd32(const Shape& shape, uint32_t seed) {
  return random_tensor(shape, seed, DType::Float32);
}

TEST(NnGrad, ConvBackpropFloat32MatchesFloat64) {
  std::vector<ConvCase> cases = conv_cases();
  // The MNIST model's second convolution (5x5, 32 -> 64, SAME at 14x14).
  cases.push_back({{4, 14, 14, 32}, {5, 5, 32, 64}, conv_attrs({1, 1}, "SAME")});
  uint32_t seed = 200;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.input.to_string() + " * " + c.filters.to_string());
    Tensor x = rnd32(c.input, seed), f = rnd32(c.filters, seed + 1);
    Tensor dy = rnd32(output_shape("Conv2D", {x, f}, c.attrs), seed + 2);
    expect_float32_matches_float64("Conv2DBackpropInput", {x, f, dy}, c.attrs);
    expect_float32_matches_float64("Conv2DBackpropFilter", {x, f, dy}, c.attrs);
    seed += 3;
  }
}

// The float32 backprop kernels run on oneDNN: each builds (and caches) its
// primitive rather than falling back to the plain loops, for every case.
TEST(NnGrad, ConvBackpropFloat32RunsOnOneDnn) {
  auto& cache = ops::onednn::primitive_cache();
  uint32_t seed = 250;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.input.to_string() + " * " + c.filters.to_string());
    Tensor x = rnd32(c.input, seed), f = rnd32(c.filters, seed + 1);
    Tensor dy = rnd32(output_shape("Conv2D", {x, f}, c.attrs), seed + 2);
    cache.clear();
    ops::conv2d_backprop_input(x, f, dy, c.attrs);
    EXPECT_EQ(cache.size(), 1u);
    ops::conv2d_backprop_filter(x, f, dy, c.attrs);
    EXPECT_EQ(cache.size(), 2u);
    uint64_t hits = cache.hits();
    ops::conv2d_backprop_filter(x, f, dy, c.attrs);
    EXPECT_EQ(cache.hits(), hits + 1);
    seed += 3;
  }
}

TEST(NnGrad, PoolGradFloat32MatchesFloat64) {
  std::vector<PoolCase> cases = pool_cases();
  cases.push_back({{4, 28, 28, 32}, pool_attrs({2, 2}, {2, 2}, "SAME")});
  uint32_t seed = 300;
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(c.input.to_string());
    Tensor x = rnd32(c.input, seed);
    Tensor dy = rnd32(output_shape("MaxPool", {x}, c.attrs), seed + 1);
    expect_float32_matches_float64("MaxPoolGrad", {x, dy}, c.attrs);
    expect_float32_matches_float64("AvgPoolGrad", {x, dy}, c.attrs);
    expect_float32_matches_float64("MaxPoolGradGrad", {x, rnd32(c.input, seed + 2)}, c.attrs);
    seed += 3;
  }
}

// ---- Exact values ------------------------------------------------------------

TEST(NnGrad, MaxPoolGradGoesToTheFirstMaximum) {
  // One 2x2 window per image; the maximum 3 appears twice (row-major first at
  // (0, 1)), and in the second channel all four values tie.
  Tensor x = kiln::constant(std::vector<float>{1, 5, 3, 5, 3, 5, 2, 5}, Shape{1, 2, 2, 2});
  Tensor dy = kiln::constant(std::vector<float>{10, 20}, Shape{1, 1, 1, 2});
  Tensor dx = ops::max_pool_grad(x, dy, pool_attrs({2, 2}, {2, 2}, "VALID"));
  expect_tensor<float>(dx, Shape{1, 2, 2, 2}, {0, 20, 10, 0, 0, 0, 0, 0});
  Tensor g = kiln::constant(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, Shape{1, 2, 2, 2});
  expect_tensor<float>(ops::max_pool_grad_grad(x, g, pool_attrs({2, 2}, {2, 2}, "VALID")),
                       Shape{1, 1, 1, 2}, {3, 2});
}

TEST(NnGrad, AvgPoolGradDividesByTheWindowInsideTheInput) {
  // 3x3 input, 2x2 windows, stride 2, SAME: windows hold 4, 2, 2 and 1 pixels.
  Tensor x = kiln::zeros(Shape{1, 3, 3, 1}, DType::Float64);
  Tensor dy = kiln::constant(std::vector<double>{1, 2, 3, 4}, Shape{1, 2, 2, 1});
  Tensor dx = ops::avg_pool_grad(x, dy, pool_attrs({2, 2}, {2, 2}, "SAME"));
  expect_tensor<double>(dx, Shape{1, 3, 3, 1}, {0.25, 0.25, 1, 0.25, 0.25, 1, 1.5, 1.5, 4});
}

TEST(NnGrad, Conv2DBackpropInputOfOnesCountsTheWindows) {
  // All-ones filters and dy: each input pixel receives one term per window
  // (output position x filter tap) holding it.
  Tensor x = kiln::zeros(Shape{1, 3, 3, 1}, DType::Float64);
  Tensor f = kiln::ones(Shape{2, 2, 1, 1}, DType::Float64);
  Tensor dy = kiln::ones(Shape{1, 2, 2, 1}, DType::Float64);
  expect_tensor<double>(ops::conv2d_backprop_input(x, f, dy, conv_attrs({1, 1}, "VALID")),
                        Shape{1, 3, 3, 1}, {1, 2, 1, 2, 4, 2, 1, 2, 1});
  Tensor df = ops::conv2d_backprop_filter(kiln::ones(Shape{1, 3, 3, 1}, DType::Float64), f, dy,
                                          conv_attrs({1, 1}, "VALID"));
  expect_tensor<double>(df, Shape{2, 2, 1, 1}, {4, 4, 4, 4});
}

// ---- Errors and inference ------------------------------------------------------

TEST(NnGrad, BackwardOpsRejectMismatchedShapes) {
  Tensor x = kiln::zeros(Shape{1, 5, 5, 2});
  Tensor f = kiln::zeros(Shape{3, 3, 2, 4});
  Attrs same = conv_attrs({1, 1}, "SAME");
  expect_error<kiln::InvalidArgument>(
      [&] { ops::conv2d_backprop_input(x, f, kiln::zeros(Shape{1, 4, 5, 4}), same); },
      {"Conv2DBackpropInput", "dy has shape (1, 4, 5, 4)", "gives shape (1, 5, 5, 4)"});
  expect_error<kiln::InvalidArgument>(
      [&] { ops::conv2d_backprop_filter(x, f, kiln::zeros(Shape{1, 5, 5, 3}), same); },
      {"Conv2DBackpropFilter", "dy has shape (1, 5, 5, 3)"});
  expect_error<kiln::InvalidArgument>(
      [&] {
        ops::conv2d_backprop_input(x, f, kiln::zeros(Shape{1, 5, 5, 4}, DType::Float64), same);
      },
      {"Conv2DBackpropInput", "dy must have the dtype of input and filters (float32), got float64"});
  expect_error<kiln::InvalidArgument>(
      [&] { ops::conv2d_backprop_input(x, kiln::zeros(Shape{3, 3, 3, 4}), x, same); },
      {"input has 2 channels but filters expect 3"});
  Attrs pool = pool_attrs({2, 2}, {2, 2}, "VALID");
  expect_error<kiln::InvalidArgument>(
      [&] { ops::max_pool_grad(x, kiln::zeros(Shape{1, 3, 3, 2}), pool); },
      {"MaxPoolGrad", "dy has shape (1, 3, 3, 2) but must have shape (1, 2, 2, 2)"});
  expect_error<kiln::InvalidArgument>(
      [&] { ops::avg_pool_grad(x, kiln::zeros(Shape{1, 2, 2}), pool); },
      {"AvgPoolGrad", "dy must have rank 4"});
  expect_error<kiln::InvalidArgument>(
      [&] { ops::max_pool_grad_grad(x, kiln::zeros(Shape{1, 2, 2, 2}), pool); },
      {"MaxPoolGradGrad", "g has shape (1, 2, 2, 2) but must have shape (1, 5, 5, 2)"});
}

TEST(NnGrad, BackwardOpsInferWithUnknownDims) {
  Attrs same = conv_attrs({1, 1}, "SAME");
  using kiln::testing::infer1;
  schema::TensorType dx = infer1(
      "Conv2DBackpropInput",
      {{DType::Float32, Shape{None, 28, 28, None}}, {DType::Float32, Shape{5, 5, 1, 32}},
       {DType::Float32, Shape{50, 28, 28, 32}}},
      same);
  // The channels are not the filters' (grouped filters hold a divisor of them).
  EXPECT_EQ(dx.shape, (Shape{50, 28, 28, None}));
  schema::TensorType df = infer1(
      "Conv2DBackpropFilter",
      {{DType::Float32, Shape{None, 14, 14, 32}}, {DType::Float32, Shape::unknown_rank()},
       {DType::Float32, Shape{None, 14, 14, 64}}},
      same);
  EXPECT_EQ(df.shape, (Shape{None, None, None, 64}));  // nor the filters' the input's
  schema::TensorType px = infer1(
      "MaxPoolGrad",
      {{DType::Float32, Shape{None, 28, 28, 32}}, {DType::Float32, Shape{None, 14, 14, 32}}},
      pool_attrs({2, 2}, {2, 2}, "SAME"));
  EXPECT_EQ(px.shape, (Shape{None, 28, 28, 32}));
}

}  // namespace
