// depthwise_conv2d: a hand-computed case (oneDNN's float32 and the float64
// loops), equality with conv2d through a block-diagonal filter (values and
// both gradients), shape inference and TF's errors; the registry walk checks
// its samples (finite differences, traced, saved and loaded). conv2d with
// grouped filters (the same kernels) against a conv2d per group. The
// DepthwiseConv2D layer: values, shapes, gradients, a saved-model round trip.
#include <gtest/gtest.h>

#include <vector>

#include <kiln/kiln.h>
#include <kiln/saved_model.h>

#include "op_test_util.h"
#include "test_util.h"

using kiln::None;
using kiln::Shape;
using kiln::Tensor;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;
using kiln::testing::infer1;
using kiln::testing::TempDir;
namespace nn = kiln::nn;

namespace {

// filter [kh, kw, c, m] -> conv2d's [kh, kw, c, c * m + m'] with zeros off
// each channel's own block: conv2d with it is depthwise_conv2d with filter.
std::vector<double> block_diagonal(const std::vector<double>& f, int64_t k, int64_t c, int64_t m) {
  std::vector<double> out(static_cast<std::size_t>(k * c * c * m), 0.0);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t mi = 0; mi < m; ++mi) out[(p * c + ci) * c * m + ci * m + mi] = f[(p * c + ci) * m + mi];
  return out;
}

// A 3x3 image whose channel 0 holds 1..9 and channel 1 holds 10..90.
std::vector<float> two_channel_image() {
  std::vector<float> x;
  for (int i = 1; i <= 9; ++i) x.insert(x.end(), {float(i), float(10 * i)});
  return x;
}

// filter[kh, kw, c, m] (2x2x2x2): c0 m0 all ones (window sums), c0 m1 the
// top-left pixel, c1 m0 twice the bottom-right one, c1 m1 minus the top-right
// one.
const std::vector<float> kFilter{1, 1, 0, 0, /* kh0 kw0 */ 1, 0, 0, -1, /* kh0 kw1 */
                                 1, 0, 0, 0, /* kh1 kw0 */ 1, 0, 2, 0 /* kh1 kw1 */};
// Its VALID output [1, 2, 2, 4], channels c0m0, c0m1, c1m0, c1m1 per pixel.
const std::vector<float> kWant{12, 1, 100, -20, 16, 2, 120, -30, 24, 4, 160, -50, 28, 5, 180, -60};

TEST(NnOpsDepthwiseConv2D, HandComputedChannelsAndMultipliers) {
  const std::vector<float> x = two_channel_image(), &f = kFilter, &want = kWant;
  expect_tensor<float>(nn::depthwise_conv2d(kiln::constant(x, Shape{1, 3, 3, 2}), kiln::constant(f, Shape{2, 2, 2, 2}),
                                            1, "VALID"),
                       {1, 2, 2, 4}, want);
  std::vector<double> xd(x.begin(), x.end()), fd(f.begin(), f.end());
  expect_tensor<double>(nn::depthwise_conv2d(kiln::constant(xd, Shape{1, 3, 3, 2}),
                                             kiln::constant(fd, Shape{2, 2, 2, 2}), 1, "VALID"),
                        {1, 2, 2, 4}, std::vector<double>(want.begin(), want.end()));
}

TEST(NnOpsDepthwiseConv2D, IsConv2DWithABlockDiagonalFilterValuesAndGradients) {
  struct Case {
    Shape x;
    int64_t kh, kw, m;
    std::vector<int64_t> strides;
    const char* padding;
    int64_t dilation;
  };
  for (const Case& p : {Case{{2, 6, 5, 3}, 3, 3, 2, {1, 1}, "SAME", 1}, Case{{1, 7, 7, 4}, 2, 3, 1, {2, 3}, "VALID", 1},
                        Case{{1, 6, 6, 2}, 2, 2, 3, {1, 1}, "SAME", 2}}) {
    const int64_t c = p.x[3];
    for (kiln::DType dtype : {kiln::float64, kiln::float32}) {
      Tensor x = kiln::cast(kiln::random::uniform(p.x, -1, 1, kiln::float64), dtype);
      Tensor f64 = kiln::random::uniform({p.kh, p.kw, c, p.m}, -1, 1, kiln::float64);
      Tensor f = kiln::cast(f64, dtype);
      Tensor wide = kiln::cast(kiln::constant(block_diagonal(f64.to_vector<double>(), p.kh * p.kw, c, p.m),
                                              Shape{p.kh, p.kw, c, c * p.m}),
                               dtype);
      kiln::GradientTape tape({.persistent = true});
      tape.watch(x), tape.watch(f), tape.watch(wide);
      Tensor y = nn::depthwise_conv2d(x, f, p.strides, p.padding, p.dilation);
      Tensor ref = nn::conv2d(x, wide, p.strides, p.padding, p.dilation);
      ASSERT_EQ(y.shape(), ref.shape());
      const double tol = dtype == kiln::float64 ? 1e-12 : 1e-5;
      expect_tensor_near<double>(kiln::cast(y, kiln::float64), ref.shape(),
                                 kiln::cast(ref, kiln::float64).to_vector<double>(), tol);
      Tensor dy = kiln::cast(kiln::random::uniform(y.shape(), -1, 1, kiln::float64), dtype);
      auto grads = tape.gradient(std::vector<Tensor>{y}, std::vector<kiln::GradientSource>{x, f}, {dy});
      auto ref_grads = tape.gradient(std::vector<Tensor>{ref}, std::vector<kiln::GradientSource>{x, wide}, {dy});
      expect_tensor_near<double>(kiln::cast(grads[0], kiln::float64), p.x,
                                 kiln::cast(ref_grads[0], kiln::float64).to_vector<double>(), tol);
      // The filter's gradient is the wide filter's on each channel's block.
      std::vector<double> wide_grad = kiln::cast(ref_grads[1], kiln::float64).to_vector<double>(), want;
      for (int64_t k = 0; k < p.kh * p.kw; ++k)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t mi = 0; mi < p.m; ++mi) want.push_back(wide_grad[(k * c + ci) * c * p.m + ci * p.m + mi]);
      expect_tensor_near<double>(kiln::cast(grads[1], kiln::float64), f.shape(), want, tol);
    }
  }
}

TEST(NnOpsDepthwiseConv2D, InfersShapesWithUnknownDims) {
  kiln::schema::Attrs attrs{{"strides", std::vector<int64_t>{2, 2}},
                            {"padding", std::string("SAME")},
                            {"dilations", std::vector<int64_t>{1, 1}}};
  auto t = infer1("DepthwiseConv2dNative", {{kiln::float32, Shape{None, 28, 28, 3}}, {kiln::float32, Shape{3, 3, 3, 2}}},
                  attrs);
  EXPECT_EQ(t.shape, (Shape{None, 14, 14, 6}));
  t = infer1("DepthwiseConv2dNative", {{kiln::float32, Shape{4, 9, 9, None}}, {kiln::float32, Shape{3, 3, 5, 2}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{4, 5, 5, 10}));
  t = infer1("DepthwiseConv2dNative", {{kiln::float32, Shape{4, 9, 9, 5}}, {kiln::float32, Shape{3, 3, 5, None}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{4, 5, 5, None}));
  // The filter gradient's multiplier from dy's channels.
  t = infer1("DepthwiseConv2dNativeBackpropFilter",
             {{kiln::float32, Shape{4, 9, 9, 5}}, {kiln::float32, Shape::unknown_rank()}, {kiln::float32, Shape{4, 5, 5, 15}}},
             attrs);
  EXPECT_EQ(t.shape, (Shape{None, None, 5, 3}));
}

TEST(NnOpsDepthwiseConv2D, ErrorsAsTensorFlow) {
  Tensor x = kiln::zeros(Shape{1, 5, 5, 3});
  expect_error<kiln::InvalidArgument>([&] { nn::depthwise_conv2d(x, kiln::zeros(Shape{3, 3, 2, 1}), 1, "SAME"); },
                                      {"DepthwiseConv2dNative", "input and filter must have the same depth: 3 vs 2",
                                       "(1, 5, 5, 3)", "(3, 3, 2, 1)"});
  expect_error<kiln::InvalidArgument>([&] { nn::depthwise_conv2d(kiln::zeros(Shape{5, 5, 3}), kiln::zeros(Shape{3, 3, 3, 1}), 1, "SAME"); },
                                      {"DepthwiseConv2dNative", "input must be 4-dimensional", "(5, 5, 3)"});
  expect_error<kiln::InvalidArgument>([&] { nn::depthwise_conv2d(x, kiln::zeros(Shape{3, 3, 3}), 1, "SAME"); },
                                      {"DepthwiseConv2dNative", "filter must be 4-dimensional", "(3, 3, 3)"});
  expect_error<kiln::InvalidArgument>([&] { nn::depthwise_conv2d(x, kiln::zeros(Shape{3, 3, 3, 1}, kiln::float64), 1, "SAME"); },
                                      {"DepthwiseConv2dNative", "same dtype", "float32", "float64"});
  expect_error<kiln::InvalidArgument>([&] { nn::depthwise_conv2d(x, kiln::zeros(Shape{3, 3, 3, 1}), 1, "FULL"); },
                                      {"DepthwiseConv2dNative", "padding", "FULL"});
  expect_error<kiln::InvalidArgument>([&] { nn::depthwise_conv2d(x, kiln::zeros(Shape{7, 3, 3, 1}), 1, "VALID"); },
                                      {"DepthwiseConv2dNative", "computed output height would be negative"});
}

TEST(NnOpsDepthwiseConv2D, EmptyChannelsAndMultiplier) {
  Tensor y = nn::depthwise_conv2d(kiln::ones(Shape{1, 4, 4, 2}), kiln::ones(Shape{3, 3, 2, 0}), 1, "SAME");
  EXPECT_EQ(y.shape(), (Shape{1, 4, 4, 0}));
  Tensor x = kiln::ones(Shape{1, 4, 4, 2});
  kiln::GradientTape tape;
  tape.watch(x);
  Tensor z = kiln::sum(nn::depthwise_conv2d(x, kiln::ones(Shape{3, 3, 2, 0}), 1, "SAME"));
  expect_tensor<float>(tape.gradient(z, x), {1, 4, 4, 2}, std::vector<float>(32, 0.f));
}

// conv2d with filters [KH, KW, C / G, O] (TF's grouped form) is the concat of
// G convolutions, each of C / G input channels to O / G outputs.
TEST(NnOpsGroupedConv2D, IsAConv2DPerGroupValuesAndGradients) {
  struct Case {
    Shape x, f;
    std::vector<int64_t> strides;
    const char* padding;
    int64_t dilation;
  };
  for (const Case& p : {Case{{2, 6, 5, 6}, {3, 3, 2, 9}, {1, 1}, "SAME", 1}, Case{{1, 7, 7, 8}, {2, 3, 2, 4}, {2, 3}, "VALID", 1},
                        Case{{1, 6, 6, 4}, {2, 2, 2, 6}, {1, 1}, "SAME", 2}}) {
    const int64_t groups = p.x[3] / p.f[2], og = p.f[3] / groups;
    for (kiln::DType dtype : {kiln::float64, kiln::float32}) {
      Tensor x = kiln::random::uniform(p.x, -1, 1, dtype), f = kiln::random::uniform(p.f, -1, 1, dtype);
      kiln::GradientTape tape({.persistent = true});
      tape.watch(x), tape.watch(f);
      Tensor y = nn::conv2d(x, f, p.strides, p.padding, p.dilation);
      std::vector<Tensor> parts;
      for (int64_t g = 0; g < groups; ++g) {
        Tensor xg = kiln::slice(x, {0, 0, 0, g * p.f[2]}, {-1, -1, -1, p.f[2]});
        Tensor fg = kiln::slice(f, {0, 0, 0, g * og}, {-1, -1, -1, og});
        parts.push_back(nn::conv2d(xg, fg, p.strides, p.padding, p.dilation));
      }
      Tensor ref = kiln::concat(parts, 3);
      const double tol = dtype == kiln::float64 ? 1e-12 : 1e-5;
      auto as64 = [](const Tensor& t) { return kiln::cast(t, kiln::float64).to_vector<double>(); };
      expect_tensor_near<double>(kiln::cast(y, kiln::float64), ref.shape(), as64(ref), tol);
      Tensor dy = kiln::random::uniform(y.shape(), -1, 1, dtype);
      auto grads = tape.gradient(std::vector<Tensor>{y}, std::vector<kiln::GradientSource>{x, f}, {dy});
      auto want = tape.gradient(std::vector<Tensor>{ref}, std::vector<kiln::GradientSource>{x, f}, {dy});
      expect_tensor_near<double>(kiln::cast(grads[0], kiln::float64), p.x, as64(want[0]), tol);
      expect_tensor_near<double>(kiln::cast(grads[1], kiln::float64), p.f, as64(want[1]), tol);
    }
  }
  Tensor x = kiln::zeros(Shape{1, 5, 5, 6});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, kiln::zeros(Shape{3, 3, 4, 8}), 1, "SAME"); },
                                      {"Conv2D", "input has 6 channels but filters expect 4",
                                       "evenly divisible by the filter depth"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, kiln::zeros(Shape{3, 3, 2, 4}), 1, "SAME"); },
                                      {"Conv2D", "output depth must be evenly divisible by number of groups: 4 vs 3"});
}

TEST(NnDepthwiseConv2DLayer, ValuesShapesAndErrors) {
  nn::clear_session();
  nn::DepthwiseConv2D layer(2, {.depth_multiplier = 2, .activation = "relu"});
  EXPECT_EQ(layer.name(), "depthwise_conv2d");
  Tensor x = kiln::constant(two_channel_image(), Shape{1, 3, 3, 2});
  layer.build(x.shape());
  EXPECT_EQ(layer.depthwise_kernel().shape(), (Shape{2, 2, 2, 2}));  // [kh, kw, in, depth_multiplier], as Keras
  EXPECT_EQ(layer.bias().shape(), (Shape{4}));
  EXPECT_EQ(layer.count_params(), 16 + 4);
  layer.depthwise_kernel().assign(kiln::constant(kFilter, Shape{2, 2, 2, 2}));
  layer.bias().assign(kiln::constant({0.5f, 0.f, -100.f, 25.f}));
  std::vector<float> want;
  const float bias[] = {0.5f, 0.f, -100.f, 25.f};
  for (std::size_t i = 0; i < kWant.size(); ++i) want.push_back(std::max(0.f, kWant[i] + bias[i % 4]));
  expect_tensor<float>(layer(x), {1, 2, 2, 4}, want);

  nn::DepthwiseConv2D same(3, {.strides = 2, .padding = "same", .depth_multiplier = 3});
  EXPECT_EQ(same.compute_output_shape(Shape{None, 8, 7, 4}), (Shape{None, 4, 4, 12}));
  EXPECT_EQ(same.compute_output_shape(Shape{None, 8, 7, None}), (Shape{None, 4, 4, None}));
  EXPECT_EQ(same(kiln::zeros({2, 8, 7, 4})).shape(), (Shape{2, 4, 4, 12}));
  EXPECT_EQ(same.depthwise_kernel().shape(), (Shape{3, 3, 4, 3}));
  expect_error<kiln::InvalidArgument>([&] { same(kiln::zeros({2, 8, 7, 5})); }, {"5 channels", "built for 4"});
  expect_error<kiln::InvalidArgument>([] { nn::DepthwiseConv2D(3, {.depth_multiplier = 0}); },
                                      {"DepthwiseConv2D", "depth_multiplier must be positive", "0"});
}

TEST(NnDepthwiseConv2DLayer, GradientsAreTheOpsAndTheBiasSums) {
  nn::DepthwiseConv2D layer(3, {.padding = "same", .depth_multiplier = 2, .seed = 4});
  Tensor x = kiln::random::uniform({2, 5, 4, 3}, -1, 1);
  Tensor w = kiln::random::uniform({2, 5, 4, 6}, -1, 1);
  kiln::GradientTape tape;
  Tensor loss = kiln::sum(layer(x) * w);
  auto grads = tape.gradient(loss, {layer.depthwise_kernel(), layer.bias()});
  kiln::GradientTape op_tape;
  Tensor kernel = layer.depthwise_kernel().read_value();
  op_tape.watch(kernel);
  Tensor op_loss = kiln::sum(nn::depthwise_conv2d(x, kernel, 1, "SAME") * w);
  expect_tensor_near<float>(grads[0], {3, 3, 3, 2}, op_tape.gradient(op_loss, kernel).to_vector<float>(), 1e-5);
  expect_tensor_near<float>(grads[1], {6}, kiln::sum(w, {0, 1, 2}).to_vector<float>(), 1e-5);
}

TEST(NnDepthwiseConv2DLayer, SavedAndLoaded) {
  TempDir tmp;
  nn::DepthwiseConv2D layer(3, {.strides = 2, .padding = "same", .depth_multiplier = 2, .seed = 7});
  auto call = kiln::function([&](const Tensor& x) { return layer(x); },
                             {.input_signature = std::vector{kiln::TensorSpec({None, 6, 6, 3})}, .name = "call"});
  Tensor x = kiln::random::uniform({2, 6, 6, 3}, -1, 1);
  kiln::saved_model::save(layer, tmp.path("dw"), {{"serving_default", {call, {"x"}}}});
  kiln::saved_model::Loaded loaded = kiln::saved_model::load(tmp.path("dw"));
  expect_tensor<float>(loaded.signature("serving_default")({{"x", x}}).at("output_0"), {2, 3, 3, 6},
                       call(x).to_vector<float>());
}

}  // namespace
