// The nn layers: shapes and values against hand-computed cases, lazy
// building, initializers, layers inside kiln::function, and saved-model
// round trips.
#include "layer_saved_model_check.h"
#include "test_util.h"

#include <cmath>
#include <limits>

using namespace kiln;
using kiln::testing::check_layer_saved_model;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

namespace {
// 1, 2, ..., h*w as a [1, h, w, 1] image.
Tensor image(int64_t h, int64_t w) {
  std::vector<float> v(static_cast<std::size_t>(h * w));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return constant(v, Shape{1, h, w, 1});
}
}  // namespace

TEST(NnLayers, DenseBuildsOnFirstCallAndComputes) {
  nn::clear_session();
  nn::Dense dense(2, {.activation = "relu"});
  EXPECT_EQ(dense.name(), "dense");
  EXPECT_FALSE(dense.built());
  EXPECT_TRUE(dense.variables().empty());
  Tensor x = constant({{1.f, 2.f, 3.f}, {-1.f, -2.f, -3.f}});
  Tensor y = dense(x);  // builds: kernel (3, 2), bias (2,)
  ASSERT_TRUE(dense.built());
  EXPECT_EQ(dense.kernel().shape(), (Shape{3, 2}));
  EXPECT_EQ(dense.kernel().name(), "dense/kernel:0");
  EXPECT_EQ(dense.bias().name(), "dense/bias:0");
  EXPECT_EQ(dense.build_input_shape(), (Shape{None, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(dense.count_params(), 8);

  dense.kernel().assign(constant({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}}));
  dense.bias().assign(constant({0.5f, -1.f}));
  // [1 2 3] @ k = [4 5] + b = [4.5 4]; the second row is negative -> relu 0.
  expect_tensor<float>(dense(x), {2, 2}, {4.5f, 4.f, 0.f, 0.f});
  // Rank 3 inputs multiply on the last dim.
  expect_tensor<float>(dense(constant({{{1.f, 2.f, 3.f}}})), {1, 1, 2}, {4.5f, 4.f});
  EXPECT_EQ(dense.compute_output_shape(Shape{None, 7, 3}), (Shape{None, 7, 2}));
  expect_error<InvalidArgument>([&] { dense(constant({{1.f, 2.f}})); },
                                {"Dense 'dense'", "last dim is 2", "built for 3"});
  expect_error<FailedPrecondition>([&] { dense.build(Shape{None, 3}); }, {"already built"});
}

TEST(NnLayers, DenseOptionsAndNames) {
  nn::clear_session();
  nn::Dense a(1), b(1, {.use_bias = false, .name = "head"}), c(1);
  EXPECT_EQ(a.name(), "dense");
  EXPECT_EQ(b.name(), "head");
  EXPECT_EQ(c.name(), "dense_1");
  b(constant({{1.f, 1.f}}));
  EXPECT_EQ(b.variables().size(), 1u);
  EXPECT_FALSE(b.bias());
  // Floating inputs are cast to the layer's dtype (Keras' autocast).
  Tensor y = c(constant({{1.0, 2.0}}));
  EXPECT_EQ(y.dtype(), DType::Float32);
  expect_error<InvalidArgument>([] { nn::Dense(0); }, {"units must be positive", "0"});
  expect_error<InvalidArgument>([] { nn::Dense(1, {.activation = "swishy"}); },
                                {"unknown activation 'swishy'", "known: linear, relu, sigmoid, tanh, softmax, elu"});
  Tensor x = constant({-1.5f, 0.5f, 2.f});
  const std::pair<const char*, Tensor> by_name[] = {
      {"elu", elu(x)}, {"selu", selu(x)},           {"softplus", softplus(x)}, {"softsign", softsign(x)},
      {"gelu", nn::gelu(x)}, {"swish", nn::silu(x)}, {"silu", nn::silu(x)},   {"exponential", exp(x)}};
  for (const auto& [name, want] : by_name)
    EXPECT_EQ(nn::Activation(name)(x).to_vector<float>(), want.to_vector<float>()) << name;
  expect_error<FailedPrecondition>([] { nn::Dense(3).count_params(); }, {"count_params() needs the layer built"});
  nn::Dense custom(1, {.activation = nn::Activation([](const Tensor& t) { return t * 2; }, "double")});
  custom.build(Shape{None, 1});
  custom.kernel().assign(constant({{3.f}}));
  expect_tensor<float>(custom(constant({{1.f}})), {1, 1}, {6.f});
}

TEST(NnLayers, GlorotUniformKernelsAndSeeds) {
  nn::Dense a(50, {.seed = 7}), b(50, {.seed = 7}), c(50);
  a.build(Shape{None, 100});
  b.build(Shape{None, 100});
  c.build(Shape{None, 100});
  std::vector<float> ka = a.kernel().read_value().to_vector<float>();
  double limit = std::sqrt(6.0 / 150.0);
  float lo = 1, hi = -1;
  for (float w : ka) lo = std::min(lo, w), hi = std::max(hi, w);
  EXPECT_GE(lo, -limit);
  EXPECT_LE(hi, limit);
  EXPECT_LT(lo, -0.9 * limit);  // 5000 draws fill the range
  EXPECT_GT(hi, 0.9 * limit);
  EXPECT_EQ(ka, b.kernel().read_value().to_vector<float>());
  EXPECT_NE(ka, c.kernel().read_value().to_vector<float>());
  expect_tensor<float>(a.bias().read_value(), {50}, std::vector<float>(50, 0.f));
  // Without a seed, kiln::random::set_seed makes the values reproducible.
  random::set_seed(3);
  nn::Dense d(4);
  d.build(Shape{None, 4});
  random::set_seed(3);
  nn::Dense e(4);
  e.build(Shape{None, 4});
  EXPECT_EQ(d.kernel().read_value().to_vector<float>(), e.kernel().read_value().to_vector<float>());
}

TEST(NnLayers, Conv2DValidSameAndStrides) {
  nn::clear_session();
  nn::Conv2D conv(1, 2, {.activation = "relu"});
  EXPECT_EQ(conv.name(), "conv2d");
  Tensor x = image(3, 3);
  conv.build(x.shape());
  EXPECT_EQ(conv.kernel().shape(), (Shape{2, 2, 1, 1}));
  conv.kernel().assign(ones({2, 2, 1, 1}));
  conv.bias().assign(constant({1.f}));
  // Sums of each 2x2 window of 1..9, plus 1.
  expect_tensor<float>(conv(x), {1, 2, 2, 1}, {13.f, 17.f, 25.f, 29.f});

  nn::Conv2D same(1, {2, 2}, {.padding = "same"});
  same.build(x.shape());
  same.kernel().assign(ones({2, 2, 1, 1}));
  // SAME pads after: the last row and column see fewer pixels.
  expect_tensor<float>(same(x), {1, 3, 3, 1}, {12.f, 16.f, 9.f, 24.f, 28.f, 15.f, 15.f, 17.f, 9.f});

  nn::Conv2D strided(1, 2, {.strides = 2});
  Tensor x4 = image(4, 4);
  strided.build(x4.shape());
  strided.kernel().assign(ones({2, 2, 1, 1}));
  expect_tensor<float>(strided(x4), {1, 2, 2, 1}, {14.f, 22.f, 46.f, 54.f});
  EXPECT_EQ(strided.compute_output_shape(Shape{None, 28, 28, 1}), (Shape{None, 14, 14, 1}));
  EXPECT_EQ(same.compute_output_shape(Shape{None, 5, 7, 1}), (Shape{None, 5, 7, 1}));
  EXPECT_EQ(conv.compute_output_shape(Shape{None, 5, 7, 1}), (Shape{None, 4, 6, 1}));
}

TEST(NnLayers, Conv2DTransposeSpreadsEachPixelOverItsWindow) {
  nn::clear_session();
  nn::Conv2DTranspose up(1, 2, {.strides = 2});
  EXPECT_EQ(up.name(), "conv2d_transpose");
  Tensor x = constant(std::vector<float>{1.f, 2.f, 3.f, 4.f}, Shape{1, 2, 2, 1});
  up.build(x.shape());
  EXPECT_EQ(up.kernel().shape(), (Shape{2, 2, 1, 1}));  // [kh, kw, filters, in], as Keras
  up.kernel().assign(constant(std::vector<float>{1.f, 10.f, 100.f, 1000.f}, Shape{2, 2, 1, 1}));
  up.bias().assign(constant({0.5f}));
  // Stride 2 with a 2x2 window: each pixel becomes its own 2x2 block of pixel * kernel.
  expect_tensor<float>(up(x), {1, 4, 4, 1},
                       {1.5f, 10.5f, 2.5f, 20.5f, 100.5f, 1000.5f, 200.5f, 2000.5f,
                        3.5f, 30.5f, 4.5f, 40.5f, 300.5f, 3000.5f, 400.5f, 4000.5f});
  // VALID: in * stride + max(k - stride, 0); SAME: in * stride.
  nn::Conv2DTranspose valid(3, {3, 2}, {.strides = {2, 3}});
  EXPECT_EQ(valid.compute_output_shape(Shape{None, 5, 4, 6}), (Shape{None, 11, 12, 3}));
  nn::Conv2DTranspose same(3, 3, {.strides = 2, .padding = "same"});
  Tensor y = same(zeros({2, 5, 4, 6}));
  EXPECT_EQ(y.shape(), (Shape{2, 10, 8, 3}));
  EXPECT_EQ(same.kernel().shape(), (Shape{3, 3, 3, 6}));
  expect_error<InvalidArgument>([&] { same(zeros({2, 5, 4, 2})); }, {"2 channels", "built for 6"});
}

TEST(NnLayers, Conv2DChannelsAreHWIO) {
  nn::Conv2D conv(3, 1);
  Tensor x = constant(std::vector<float>{1.f, 2.f}, Shape{1, 1, 1, 2});
  conv.build(x.shape());
  EXPECT_EQ(conv.kernel().shape(), (Shape{1, 1, 2, 3}));
  EXPECT_EQ(conv.count_params(), 2 * 3 + 3);
  conv.kernel().assign(constant(std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, Shape{1, 1, 2, 3}));
  conv.bias().assign(constant({0.f, 0.f, 1.f}));
  // out[o] = x0 * k[0][o] + x1 * k[1][o] + b[o]
  expect_tensor<float>(conv(x), {1, 1, 1, 3}, {9.f, 12.f, 16.f});
  expect_error<InvalidArgument>([&] { conv(constant({1.f, 2.f})); }, {"Conv2D", "rank 4"});
  expect_error<InvalidArgument>([&] { conv(zeros({1, 2, 2, 5})); }, {"5 channels", "built for 2"});
  expect_error<InvalidArgument>([] { nn::Conv2D(1, 3, {.padding = "full"}); }, {"padding", "full"});
  expect_error<InvalidArgument>([] { nn::Conv2D(1, {1, 2, 3}); }, {"kernel_size", "3 values"});
}

TEST(NnLayers, Pooling) {
  nn::clear_session();
  nn::MaxPool2D max_pool;
  nn::AvgPool2D avg_pool;
  EXPECT_EQ(max_pool.name(), "max_pooling2d");
  EXPECT_EQ(avg_pool.name(), "average_pooling2d");
  EXPECT_EQ(max_pool.class_name(), "MaxPooling2D");
  Tensor x = image(4, 4);
  expect_tensor<float>(max_pool(x), {1, 2, 2, 1}, {6.f, 8.f, 14.f, 16.f});
  expect_tensor<float>(avg_pool(x), {1, 2, 2, 1}, {3.5f, 5.5f, 11.5f, 13.5f});
  EXPECT_EQ(max_pool.count_params(), 0);
  // SAME: the windows at the edge average only the pixels inside.
  nn::AvgPool2D same(2, {.padding = "same"});
  expect_tensor<float>(same(image(3, 3)), {1, 2, 2, 1}, {3.f, 4.5f, 7.5f, 9.f});
  nn::MaxPool2D overlapping(3, {.strides = 1});
  expect_tensor<float>(overlapping(image(4, 4)), {1, 2, 2, 1}, {11.f, 12.f, 15.f, 16.f});
  EXPECT_EQ(max_pool.compute_output_shape(Shape{None, 7, 7, 64}), (Shape{None, 3, 3, 64}));
  expect_error<InvalidArgument>([&] { nn::MaxPool2D(3).compute_output_shape(Shape{None, 2, 2, 1}); },
                                {"height 2", "smaller than the window 3"});
}

TEST(NnLayers, FlattenAndReshape) {
  nn::Flatten flatten;
  Tensor x = zeros({2, 3, 4, 5});
  EXPECT_EQ(flatten(x).shape(), (Shape{2, 60}));
  EXPECT_EQ(flatten.compute_output_shape(Shape{None, 7, 7, 64}), (Shape{None, 3136}));
  expect_tensor<float>(flatten(constant({1.f, 2.f})), {2, 1}, {1.f, 2.f});

  nn::Reshape reshape(Shape{3, -1});
  expect_tensor<float>(reshape(constant({{1.f, 2.f, 3.f, 4.f, 5.f, 6.f}})), {1, 3, 2},
                       {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  EXPECT_EQ(reshape.compute_output_shape(Shape{None, 2, 6}), (Shape{None, 3, 4}));
  EXPECT_EQ(nn::Reshape(Shape{3136}).compute_output_shape(Shape{None, 7, 7, 64}), (Shape{None, 3136}));
  expect_error<InvalidArgument>([&] { reshape.compute_output_shape(Shape{None, 5}); }, {"5 elements", "(3, None)"});
  expect_error<InvalidArgument>([] { nn::Reshape(Shape{-1, -1}); }, {"at most one"});
  expect_error<InvalidArgument>([] { nn::Reshape(Shape{4}).compute_output_shape(Shape{None, 5}); },
                                {"(None, 5)", "(4,)"});
}

TEST(NnLayers, ActivationLayers) {
  nn::clear_session();
  nn::ReLU relu_layer;
  nn::Softmax softmax_layer;
  EXPECT_EQ(relu_layer.name(), "re_lu");  // Keras' snake case of ReLU
  expect_tensor<float>(relu_layer(constant({-1.f, 0.f, 2.f})), {3}, {0.f, 0.f, 2.f});
  float e = std::exp(1.f);
  expect_tensor_near<float>(softmax_layer(constant({{0.f, 1.f}})), {1, 2}, {1 / (1 + e), e / (1 + e)});
}

// Activation, LeakyReLU and ELU against their closed forms, in double.
TEST(NnLayers, ActivationLeakyReluAndEluLayers) {
  nn::clear_session();
  const std::vector<double> xs{-2.0, -0.5, 0.0, 1.5};
  Tensor x = cast(constant(xs), DType::Float32);
  auto closed = [&](auto f) {
    std::vector<float> out;
    for (double v : xs) out.push_back(static_cast<float>(f(v)));
    return out;
  };

  nn::ActivationLayer tanh_layer("tanh");
  EXPECT_EQ(tanh_layer.name(), "activation");
  EXPECT_EQ(tanh_layer.class_name(), "Activation");
  EXPECT_EQ(tanh_layer.activation().name(), "tanh");
  expect_tensor_near<float>(tanh_layer(x), {4}, closed([](double v) { return std::tanh(v); }), 1e-6);
  nn::ActivationLayer linear("linear");
  EXPECT_EQ(linear.name(), "activation_1");
  expect_tensor<float>(linear(x), {4}, x.to_vector<float>());
  nn::ActivationLayer twice(nn::Activation([](const Tensor& t) { return t * 2; }, "twice"));
  expect_tensor<float>(twice(x), {4}, {-4.f, -1.f, 0.f, 3.f});
  // Any named activation: the layer gives what the activation gives.
  for (const char* name : {"relu", "sigmoid", "softmax", "elu", "selu", "softplus", "softsign", "gelu", "swish",
                           "exponential"})
    EXPECT_EQ(nn::ActivationLayer(name)(x).to_vector<float>(), nn::Activation(name)(x).to_vector<float>()) << name;
  EXPECT_EQ(nn::ActivationLayer("sigmoid", {.input_shape = Shape{4}}).compute_output_shape(Shape{None, 4}),
            (Shape{None, 4}));

  nn::LeakyReLU leaky;
  EXPECT_EQ(leaky.name(), "leaky_re_lu");
  EXPECT_EQ(leaky.class_name(), "LeakyReLU");
  EXPECT_EQ(leaky.alpha(), 0.3);  // Keras' default
  expect_tensor_near<float>(leaky(x), {4}, closed([](double v) { return v > 0 ? v : 0.3 * v; }), 1e-7);
  nn::LeakyReLU steep(1.5);
  expect_tensor_near<float>(steep(x), {4}, closed([](double v) { return v > 0 ? v : 1.5 * v; }), 1e-7);

  nn::ELU elu_layer;
  EXPECT_EQ(elu_layer.name(), "elu");
  EXPECT_EQ(elu_layer.class_name(), "ELU");
  EXPECT_EQ(elu_layer.alpha(), 1.0);
  auto elu_ref = [](double alpha) { return [alpha](double v) { return v > 0 ? v : alpha * std::expm1(v); }; };
  expect_tensor_near<float>(elu_layer(x), {4}, closed(elu_ref(1.0)), 1e-6);
  // alpha 1 is kiln::elu itself.
  EXPECT_EQ(elu_layer(x).to_vector<float>(), elu(x).to_vector<float>());
  nn::ELU half(0.5);
  expect_tensor_near<float>(half(x), {4}, closed(elu_ref(0.5)), 1e-6);
  // Rank 2 and float64 inputs (cast to the layer's float32, as every layer's).
  Tensor x2 = constant({{-1.0, 2.0}, {0.25, -3.0}});
  Tensor y2 = half(x2);
  EXPECT_EQ(y2.dtype(), DType::Float32);
  expect_tensor_near<float>(y2, {2, 2},
                            {static_cast<float>(0.5 * std::expm1(-1.0)), 2.f, 0.25f,
                             static_cast<float>(0.5 * std::expm1(-3.0))},
                            1e-6);

  expect_error<InvalidArgument>([] { nn::LeakyReLU(std::numeric_limits<double>::quiet_NaN()); },
                                {"LeakyReLU 'leaky_re_lu", "alpha must be a finite number"});
  expect_error<InvalidArgument>([] { nn::ELU(std::numeric_limits<double>::infinity()); },
                                {"ELU 'elu", "alpha must be a finite number", "inf"});
  expect_error<InvalidArgument>([] { nn::ActivationLayer("swishy"); }, {"unknown activation 'swishy'"});
}

// The weightless elementwise layers, saved and loaded: the signature's batch
// dim stays unknown.
TEST(NnLayers, ActivationLayersSavedAndLoaded) {
  Tensor x = constant({{-2.f, -0.5f, 0.f, 1.5f}, {3.f, -1.f, 0.25f, -4.f}});
  Tensor one = constant({{0.5f, -0.75f, 2.f, -0.1f}});
  nn::ReLU relu_layer;
  nn::Softmax softmax_layer;
  nn::ActivationLayer gelu_layer("gelu");
  nn::LeakyReLU leaky(0.2);
  nn::ELU elu_layer, half(0.5);
  for (nn::Layer* layer : std::initializer_list<nn::Layer*>{&relu_layer, &softmax_layer, &gelu_layer, &leaky,
                                                             &elu_layer, &half}) {
    SCOPED_TRACE(layer->class_name());
    check_layer_saved_model(*layer, x, TensorSpec({None, 4}), {one});
  }
}

TEST(NnLayers, Conv2DTransposeSavedAndLoaded) {
  nn::Conv2DTranspose same(3, 3, {.strides = 2, .padding = "same", .activation = "relu", .seed = 4});
  nn::Conv2DTranspose valid(2, {3, 2}, {.strides = {2, 3}, .seed = 5});
  std::vector<float> v(2 * 3 * 3 * 2);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.7 * static_cast<double>(i)));
  Tensor x = constant(v, Shape{2, 3, 3, 2});
  Tensor one = constant(std::vector<float>(v.begin(), v.begin() + 18), Shape{1, 3, 3, 2});
  for (nn::Conv2DTranspose* layer : {&same, &valid}) {
    SCOPED_TRACE(layer->name());
    check_layer_saved_model(*layer, x, TensorSpec({None, 3, 3, 2}), {one});
    EXPECT_EQ(layer->variables().size(), 2u);  // kernel, bias
  }
}

TEST(NnLayers, DropoutOnlyWhileTraining) {
  nn::Dropout dropout(0.5);
  Tensor x = ones({1000});
  expect_tensor<float>(dropout(x), {1000}, std::vector<float>(1000, 1.f));  // inference: identity
  std::vector<float> y = dropout(x, /*training=*/true).to_vector<float>();
  int zeros_seen = 0;
  for (float v : y) {
    EXPECT_TRUE(v == 0.f || v == 2.f) << v;  // kept values are scaled by 1 / (1 - rate)
    zeros_seen += v == 0.f;
  }
  EXPECT_GT(zeros_seen, 400);
  EXPECT_LT(zeros_seen, 600);
  // A new mask on every call; kiln::random::set_seed repeats the sequence.
  random::set_seed(11);
  std::vector<float> first = dropout(x, true).to_vector<float>();
  std::vector<float> second = dropout(x, true).to_vector<float>();
  EXPECT_NE(first, second);
  random::set_seed(11);
  EXPECT_EQ(dropout(x, true).to_vector<float>(), first);
  expect_error<InvalidArgument>([] { nn::Dropout(1.0); }, {"rate", "[0, 1)"});
}

TEST(NnLayers, DenseInsideFunctionCreatesVariablesOnFirstTraceOnly) {
  nn::Dense dense(2, {.seed = 1});
  auto f = kiln::function([&](const Tensor& x) { return dense(x); });
  Tensor x = constant({{1.f, 2.f, 3.f}});
  Tensor traced = f(x);  // the first trace builds the layer
  ASSERT_TRUE(dense.built());
  EXPECT_EQ(dense.variables().size(), 2u);
  expect_tensor<float>(traced, {1, 2}, dense(x).to_vector<float>());
  // Seeded initializers give the same kernel as an eager build.
  nn::Dense eager(2, {.seed = 1});
  eager.build(Shape{None, 3});
  EXPECT_EQ(dense.kernel().read_value().to_vector<float>(), eager.kernel().read_value().to_vector<float>());
  // Later calls reuse the graph and see updates to the variables.
  dense.kernel().assign(ones({3, 2}));
  int traces = f.tracing_count();
  expect_tensor<float>(f(x), {1, 2}, {6.f, 6.f});
  expect_tensor<float>(f(constant({{1.f, 1.f, 1.f}})), {1, 2}, {3.f, 3.f});
  EXPECT_EQ(f.tracing_count(), traces);
}

TEST(NnLayers, CnnInsideFunctionMatchesEager) {
  nn::Sequential model;
  model.add(nn::Conv2D(4, 3, {.padding = "same", .activation = "relu", .seed = 1}));
  model.add(nn::MaxPool2D(2));
  model.add(nn::Flatten());
  model.add(nn::Dense(3, {.seed = 2}));
  model.add(nn::Softmax());
  auto f = kiln::function([&](const Tensor& x) { return model(x); },
                          {.input_signature = std::vector{TensorSpec({None, 6, 6, 1})}});
  Tensor x = random::uniform({2, 6, 6, 1}, 0, 1, DType::Float32, 5);
  Tensor traced = f(x);
  Tensor eager = model(x);
  expect_tensor<float>(traced, {2, 3}, eager.to_vector<float>());
  EXPECT_EQ(f(random::uniform({5, 6, 6, 1})).shape(), (Shape{5, 3}));
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(model.variables().size(), 4u);
}

TEST(NnLayers, WeightsHaveValuesWhenTheFirstTraceNeverRuns) {
  // get_concrete_function traces without running: the weights' initial
  // values are computed eagerly (InitScope), so they exist at once.
  nn::Dense dense(2, {.seed = 1});
  auto f = kiln::function([&](const Tensor& x) { return dense(x); });
  ConcreteFunction cf = f.get_concrete_function(TensorSpec({None, 3}));
  ASSERT_TRUE(dense.built());
  nn::Dense eager(2, {.seed = 1});
  eager.build(Shape{None, 3});
  EXPECT_EQ(dense.kernel().read_value().to_vector<float>(), eager.kernel().read_value().to_vector<float>());
  Tensor x = constant({{1.f, 2.f, 3.f}});
  expect_tensor<float>(cf(x), {1, 2}, eager(x).to_vector<float>());
  expect_tensor<float>(f(x), {1, 2}, eager(x).to_vector<float>());
  // The initializer is not part of the graph.
  EXPECT_EQ(cf.graph().to_string().find("RandomUniform"), std::string::npos) << cf.graph().to_string();
}

TEST(NnLayers, ALayerMadeOnEveryCallInsideAFunctionIsAnError) {
  // TF's rule: variables only on the first trace. A layer built inside the
  // function makes new weights on every trace.
  auto bad = kiln::function([](const Tensor& x) {
    nn::Dense fresh(1);
    return fresh(x);
  });
  expect_error<FailedPrecondition>([&] { bad(constant({{1.f}})); }, {"created variables on trace 2"});
}

TEST(NnLayers, DropoutInsideFunction) {
  nn::Dropout dropout(0.5);
  auto f = kiln::function([&](const Tensor& x, bool training) { return dropout(x, training); });
  Tensor x = ones({4, 100});
  expect_tensor<float>(f(x, false), {4, 100}, std::vector<float>(400, 1.f));
  // A new mask on every call of the graph.
  EXPECT_NE(f(x, true).to_vector<float>(), f(x, true).to_vector<float>());
  // An unknown batch size: the mask takes its shape when the graph runs.
  auto relaxed = kiln::function([&](const Tensor& x) { return dropout(x, true); },
                                {.input_signature = std::vector{TensorSpec({None, 100})}});
  for (int64_t batch : {3, 7}) {
    std::vector<float> y = relaxed(ones({batch, 100})).to_vector<float>();
    ASSERT_EQ(y.size(), static_cast<std::size_t>(batch * 100));
    int kept = 0;
    for (float v : y) {
      EXPECT_TRUE(v == 0.f || v == 2.f);
      kept += v != 0.f;
    }
    EXPECT_GT(kept, batch * 30);
    EXPECT_LT(kept, batch * 70);
  }
  EXPECT_EQ(relaxed.tracing_count(), 1);
}
