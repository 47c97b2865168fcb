// Gradients through the nn layers (issue 6): the tape's gradient of
// sum(w * layer(x)) with respect to the input and to every trainable weight,
// against central finite differences (float64 where the layer computes in
// float64), eagerly and inside kiln::function.
#include "layer_gradient_check.h"
#include "test_util.h"

#include <cmath>

#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// Checks up to `max_elements` elements of each gradient, spread over it,
// with the layer called in `training` mode.
void check_layer(nn::Layer& layer, const Tensor& x, double h, double tol, int max_elements = 40,
                 bool training = false) {
  check_layer_gradients(layer, x, {.h = h, .tol = tol, .max_elements = max_elements, .training = training});
}

Tensor ramp(const Shape& shape, DType dtype) {
  std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::cos(1.3 * static_cast<double>(i)) * 0.8;
  return cast(constant(v, shape), dtype);
}

}  // namespace

TEST(NnLayerGradient, DenseWithActivationFloat64) {
  nn::Dense dense(3, {.activation = "tanh", .seed = 7, .dtype = DType::Float64});
  check_layer(dense, ramp({4, 5}, DType::Float64), 1e-6, 1e-6);
}

TEST(NnLayerGradient, Conv2DSameAndValidFloat64) {
  nn::Conv2D same(3, 3, {.padding = nn::Padding::Same, .activation = "relu", .seed = 3, .dtype = DType::Float64});
  check_layer(same, ramp({2, 5, 5, 2}, DType::Float64), 1e-6, 1e-6);
  nn::Conv2D valid(2, {2, 3}, {.strides = 2, .seed = 4, .dtype = DType::Float64});
  check_layer(valid, ramp({1, 6, 7, 3}, DType::Float64), 1e-6, 1e-6);
}

TEST(NnLayerGradient, Conv2DTransposeSameAndValidFloat64) {
  nn::Conv2DTranspose same(3, 3, {.strides = 2, .padding = nn::Padding::Same, .activation = "tanh", .seed = 5,
                                  .dtype = DType::Float64});
  check_layer(same, ramp({2, 3, 3, 2}, DType::Float64), 1e-6, 1e-6);
  nn::Conv2DTranspose valid(2, {2, 3}, {.strides = {2, 1}, .seed = 6, .dtype = DType::Float64});
  check_layer(valid, ramp({1, 3, 4, 3}, DType::Float64), 1e-6, 1e-6);
}

TEST(NnLayerGradient, PoolingFlattenReshapeReluSoftmax) {
  // These layers compute in float32: coarser differences and tolerance.
  nn::MaxPool2D max_pool(2);
  // Values 0.05 apart: no window holds two within the finite-difference step.
  check_layer(max_pool, reshape(cast(range(0, 96, 1), DType::Float32) * 0.05f - 2.f, Shape{2, 4, 4, 3}), 1e-3, 2e-2);
  nn::AvgPool2D avg_pool(2, {.strides = 1});
  check_layer(avg_pool, ramp({1, 3, 4, 2}, DType::Float32), 1e-3, 2e-2);
  nn::Flatten flatten;
  check_layer(flatten, ramp({2, 3, 2}, DType::Float32), 1e-3, 2e-2);
  nn::Reshape reshape(Shape{3, 2});
  check_layer(reshape, ramp({2, 6}, DType::Float32), 1e-3, 2e-2);
  nn::ReLU relu;
  check_layer(relu, ramp({3, 4}, DType::Float32), 1e-3, 2e-2);
  nn::Softmax softmax;
  check_layer(softmax, ramp({3, 4}, DType::Float32), 1e-3, 2e-2);
}

// Activation, LeakyReLU and ELU (float32, as ReLU and Softmax); no input lies
// within the step of the kink at 0.
TEST(NnLayerGradient, ActivationLeakyReluEluFloat32) {
  Tensor x = ramp({3, 4}, DType::Float32) * 2.f;
  nn::ActivationLayer tanh_layer("tanh");
  check_layer(tanh_layer, x, 1e-3, 2e-2);
  nn::ActivationLayer gelu_layer("gelu");
  check_layer(gelu_layer, x, 1e-3, 2e-2);
  nn::LeakyReLU leaky;
  check_layer(leaky, x, 1e-3, 2e-2);
  nn::ELU elu_layer;
  check_layer(elu_layer, x, 1e-3, 2e-2);
  nn::ELU half(0.5);
  check_layer(half, x, 1e-3, 2e-2);
}

// Training mode differentiates through the batch statistics; inference mode
// is affine in the input. Both checked with non-trivial gamma and beta.
TEST(NnLayerGradient, NormalizationLayersFloat64) {
  for (bool training : {true, false}) {
    nn::BatchNormalization bn({.dtype = DType::Float64});
    Tensor x = ramp({5, 3}, DType::Float64) * 2.0 + 0.3;
    bn.build(x.shape());
    bn.gamma().assign(constant({1.5, -0.5, 2.0}));
    bn.beta().assign(constant({0.1, 0.2, -0.3}));
    bn.moving_variance().assign(constant({0.7, 1.3, 2.1}));
    check_layer(bn, x, 1e-6, 1e-6, 40, training);
  }
  nn::BatchNormalization image_bn({.dtype = DType::Float64});
  check_layer(image_bn, ramp({2, 3, 3, 2}, DType::Float64), 1e-6, 1e-6, 40, /*training=*/true);
  nn::LayerNormalization ln({.dtype = DType::Float64});
  Tensor x = ramp({3, 4}, DType::Float64);
  ln.build(x.shape());
  ln.gamma().assign(constant({1.5, -0.5, 2.0, 0.7}));
  ln.beta().assign(constant({0.1, 0.2, -0.3, 0.4}));
  check_layer(ln, x, 1e-6, 1e-6);
}

TEST(NnLayerGradient, DropoutPassesGradientThroughKeptUnitsScaled) {
  random::set_seed(5);
  nn::Dropout dropout(0.5);
  Tensor x = ones({4, 8});
  GradientTape tape;
  tape.watch(x);
  Tensor y = dropout(x, /*training=*/true);
  Tensor g = tape.gradient(y, x);
  // Kept units are scaled by 1 / (1 - rate); the gradient is that scale where
  // the unit was kept and 0 where it was dropped: exactly y / x here.
  std::vector<float> yv = y.to_vector<float>(), gv = g.to_vector<float>();
  int kept = 0;
  for (std::size_t i = 0; i < yv.size(); ++i) {
    EXPECT_FLOAT_EQ(gv[i], yv[i]);
    EXPECT_TRUE(yv[i] == 0.f || yv[i] == 2.f);
    kept += yv[i] != 0.f;
  }
  EXPECT_GT(kept, 4);
  EXPECT_LT(kept, 28);
}

TEST(NnLayerGradient, SequentialModelGradientsMatchTracedAndReachEveryWeight) {
  nn::Sequential model;
  model.add(nn::Conv2D(2, 3, {.padding = nn::Padding::Same, .activation = "relu", .seed = 1, .dtype = DType::Float64}));
  model.add(nn::Flatten());
  model.add(nn::Dense(3, {.seed = 2, .dtype = DType::Float64}));
  // Sequential computes in float32 (Keras' autocast of its inputs), so the
  // differences are float32's.
  check_layer(model, ramp({2, 4, 4, 1}, DType::Float64), 1e-3, 2e-2, 12);
  EXPECT_EQ(model.trainable_variables().size(), 4u);
}

TEST(GradientTapeSeeds, DenseLayerFunctionWithVariables) {
  // The seed: tape.gradient(dense_layer(x, w, b), [w, b]) with dense_layer a
  // tf.function calling another (add).
  auto add = function([](const Tensor& a, const Tensor& b) { return a + b; });
  auto dense_layer = function([&](const Tensor& x, const Variable& w, const Variable& b) {
    return add(matmul(x, w.read_value()), b.read_value());
  });
  expect_tensor<float>(dense_layer(ones({3, 2}), Variable(ones({2, 2})), Variable(ones({2}))), Shape{3, 2},
                       {3.f, 3.f, 3.f, 3.f, 3.f, 3.f});
  Variable w(random::normal({3, 2})), b(random::normal({2}));
  Tensor x = constant({{1.f, 2.f, 3.f}});
  GradientTape tape;
  Tensor result = dense_layer(x, w, b);
  std::vector<Tensor> g = tape.gradient(result, {w, b});
  expect_tensor<float>(g[0], Shape{3, 2}, {1.f, 1.f, 2.f, 2.f, 3.f, 3.f});
  expect_tensor<float>(g[1], Shape{2}, {1.f, 1.f});
}

TEST(GradientTapeSeeds, IntegerBoolAndStringResultsAreNotDifferentiable) {
  Tensor x = constant({1.5f, -2.f});
  GradientTape tape({.persistent = true});
  tape.watch(x);
  Tensor as_int = cast(x, DType::Int32);
  Tensor positive = x > 0.f;
  Tensor index = argmax(x, 0);
  for (const Tensor& y : {as_int, cast(positive, DType::Int32), index}) EXPECT_FALSE(tape.gradient(y, x).defined());
  Tensor s = constant({"a", "b"});
  tape.watch(s);
  EXPECT_FALSE(tape.gradient(s + constant("c"), s).defined());
}
