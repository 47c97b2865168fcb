// Sequential: building from input_shape, calls, the seed's summary and
// freezing of layer 0, nesting.
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::names;
using kiln::testing::expect_golden;
using kiln::testing::expect_tensor;

namespace {

// The seed: Dense 10 -> 4 -> 2 -> 1.
void build_seed_model(nn::Sequential& model) {
  model.add(nn::Dense(4, {.input_shape = Shape{10}}));
  model.add(nn::Dense(2));
  model.add(nn::Dense(1));
}

}  // namespace

TEST(NnSequential, SeedSummary) {
  nn::clear_session();
  nn::Sequential model;
  build_seed_model(model);
  EXPECT_EQ(model.name(), "sequential");
  EXPECT_EQ(model.name_scope(), "sequential");
  ASSERT_EQ(model.layers().size(), 3u);
  EXPECT_EQ(model.layers()[0]->count_params(), 44);
  EXPECT_EQ(model.layers()[1]->count_params(), 10);
  EXPECT_EQ(model.layers()[2]->count_params(), 3);
  EXPECT_EQ(model.count_params(), 57);
  expect_golden("nn_summary_dense.txt", model.summary());
  EXPECT_EQ(names(model.variables()),
            (std::vector<std::string>{"dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
                                      "dense_2/kernel:0", "dense_2/bias:0"}));
  EXPECT_EQ(model.variables()[0].shape(), (Shape{10, 4}));
  EXPECT_EQ(model.submodules().size(), 3u);
}

TEST(NnSequential, SeedFreezingLayerZero) {
  nn::clear_session();
  nn::Sequential model;
  build_seed_model(model);
  model.layers()[0]->set_trainable(false);
  EXPECT_EQ(names(model.trainable_variables()),
            (std::vector<std::string>{"dense_1/kernel:0", "dense_1/bias:0", "dense_2/kernel:0", "dense_2/bias:0"}));
  EXPECT_EQ(names(model.non_trainable_variables()), (std::vector<std::string>{"dense/kernel:0", "dense/bias:0"}));
  std::string summary = model.summary();
  EXPECT_NE(summary.find("Total params: 57 (228.00 Byte)\nTrainable params: 13 (52.00 Byte)\n"
                         "Non-trainable params: 44 (176.00 Byte)\n"),
            std::string::npos)
      << summary;
}

TEST(NnSequential, CnnSummaryWrapsLongNames) {
  // The seeds' MNIST CNN, as a Sequential.
  nn::clear_session();
  nn::Sequential model;
  model.add(nn::Conv2D(32, 5, {.padding = "same", .activation = "relu", .input_shape = Shape{28, 28, 1}}));
  model.add(nn::MaxPool2D(2, {.strides = 2}));
  model.add(nn::Conv2D(64, 5, {.padding = "same", .activation = "relu"}));
  model.add(nn::MaxPool2D(2, {.strides = 2}));
  model.add(nn::Reshape(Shape{7 * 7 * 64}));
  model.add(nn::Dense(1024, {.activation = "relu"}));
  model.add(nn::Dense(10));
  expect_golden("nn_summary_cnn.txt", model.summary());
}

TEST(NnSequential, CallBuildsWithoutInputShape) {
  nn::clear_session();
  nn::Sequential model;
  model.add(nn::Dense(3, {.activation = "relu"}));
  model.add(nn::Dense(1));
  EXPECT_FALSE(model.built());
  expect_error<FailedPrecondition>([&] { model.summary(); }, {"Sequential 'sequential'", "summary() needs the model built"});
  auto& first = static_cast<nn::Dense&>(*model.layers()[0]);
  auto& second = static_cast<nn::Dense&>(*model.layers()[1]);
  Tensor y = model(constant({{1.f, 2.f}, {3.f, 4.f}}));
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(model.build_input_shape(), (Shape{None, 2}));  // the batch dim is left free
  first.kernel().assign(constant({{1.f, 0.f, -1.f}, {0.f, 1.f, 0.f}}));
  second.kernel().assign(constant({{1.f}, {10.f}, {100.f}}));
  second.bias().assign(constant({0.5f}));
  // relu([1 2] @ k1) = [1 2 0] -> 1 + 20 + 0.5; relu([3 4] @ k1) = [3 4 0] -> 43.5
  expect_tensor<float>(model(constant({{1.f, 2.f}, {3.f, 4.f}})), {2, 1}, {21.5f, 43.5f});
  EXPECT_NE(model.summary().find("(None, 3)"), std::string::npos);
}

TEST(NnSequential, NestedAndSharedLayers) {
  nn::clear_session();
  auto inner = std::make_shared<nn::Sequential>();
  inner->add(nn::Dense(2, {.input_shape = Shape{3}}));
  nn::Sequential outer(std::vector<std::shared_ptr<nn::Layer>>{inner}, "outer");
  outer.add(nn::Dense(1));
  EXPECT_EQ(outer.count_params(), 8 + 3);
  std::string summary = outer.summary();
  EXPECT_NE(summary.find(" sequential (Sequential)     (None, 2)                 8"), std::string::npos) << summary;
  EXPECT_EQ(outer.submodules().size(), 3u);  // inner, its dense, the last dense
  expect_error<InvalidArgument>([&] { outer.add(std::shared_ptr<nn::Layer>()); }, {"null layer"});
  nn::Sequential empty;
  expect_error<FailedPrecondition>([&] { empty(constant({{1.f}})); }, {"no layers"});
}
