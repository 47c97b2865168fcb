// Embedding and the global pooling layers: values, gradients, errors, and
// saved-model round trips.
#include "layer_saved_model_check.h"
#include "test_util.h"

#include <kiln/saved_model.h>

using namespace kiln;
using kiln::testing::check_layer_saved_model;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;
using kiln::testing::TempDir;

TEST(NnEmbedding, PicksRowsAndInitializesUniformly) {
  nn::Embedding emb(1000, 8, {.seed = 5});
  Tensor ids = constant(std::vector<int32_t>{3, 0, 3, 999}, Shape{2, 2});
  Tensor y = emb(ids);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 8}));
  EXPECT_EQ(emb.compute_output_shape(Shape{-1, 5}), (Shape{-1, 5, 8}));
  std::vector<float> table = emb.embeddings().read_value().to_vector<float>();
  for (float v : table) {
    EXPECT_GE(v, -0.05f);
    EXPECT_LT(v, 0.05f);
  }
  std::vector<float> out = y.to_vector<float>();
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_EQ(out[k], table[3 * 8 + k]);
    EXPECT_EQ(out[8 + k], table[k]);
    EXPECT_EQ(out[24 + k], table[999 * 8 + k]);
  }
  // The same seed, the same table; int64 and float indices pick the same rows.
  nn::Embedding again(1000, 8, {.seed = 5});
  expect_tensor<float>(again(cast(ids, DType::Int64)), {2, 2, 8}, out);
  expect_tensor<float>(again(cast(ids, DType::Float32)), {2, 2, 8}, out);
  EXPECT_EQ(emb.embeddings().name(), emb.name() + "/embeddings:0");
}

// The table's gradient: each picked row gets its upstream rows, summed over
// repeats; rows never picked get zeros. Eager and traced agree.
TEST(NnEmbedding, GradientReachesThePickedRows) {
  nn::Embedding emb(4, 2, {.seed = 1});
  emb.build(Shape{3});
  Tensor ids = constant(std::vector<int32_t>{1, 3, 1});
  Tensor w = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  auto grad = [&](const Tensor& in) {
    GradientTape tape;
    return tape.gradient(sum(emb(in) * w), GradientSource(emb.embeddings()));
  };
  std::vector<float> want{0, 0, 6, 8, 0, 0, 3, 4};
  expect_tensor<float>(grad(ids), {4, 2}, want);
  expect_tensor<float>(kiln::function(grad)(ids), {4, 2}, want);
}

TEST(NnEmbedding, BadArgumentsAreNamed) {
  expect_error<InvalidArgument>([] { nn::Embedding(0, 4); }, {"input_dim and output_dim should be positive",
                                                              "input_dim=0"});
  nn::Embedding emb(3, 2);
  expect_error<InvalidArgument>([&] { emb(constant(std::vector<int32_t>{1, 3})); }, {"3"});
  expect_error<InvalidArgument>([&] { emb(constant(std::vector<std::string>{"a"})); }, {"integer indices"});
}

TEST(NnEmbedding, SavedAndLoaded) {
  TempDir tmp;
  nn::Embedding emb(10, 3, {.seed = 2});
  auto call = kiln::function([&](const Tensor& ids) { return emb(ids); },
                             {.input_signature = std::vector{TensorSpec({None}, DType::Int32)}, .name = "call"});
  Tensor ids = constant(std::vector<int32_t>{9, 2, 2});
  saved_model::save(emb, tmp.path("emb"), {{"serving_default", {call, {"ids"}}}});
  saved_model::Loaded loaded = saved_model::load(tmp.path("emb"));
  expect_tensor<float>(loaded.signature("serving_default")({{"ids", ids}}).at("output_0"), {3, 3},
                       call(ids).to_vector<float>());
}

TEST(NnGlobalPooling, MeanAndMaxPerChannel) {
  // [1, 2, 2, 2]: channel 0 holds 0, 2, 4, 6 and channel 1 holds 1, 3, 5, -7.
  Tensor x = constant(std::vector<float>{0, 1, 2, 3, 4, 5, 6, -7}, Shape{1, 2, 2, 2});
  nn::GlobalAveragePooling2D avg;
  nn::GlobalMaxPooling2D mx;
  expect_tensor<float>(avg(x), {1, 2}, {3.f, 0.5f});
  expect_tensor<float>(mx(x), {1, 2}, {6.f, 5.f});
  nn::GlobalAveragePooling2D kept({.keepdims = true});
  expect_tensor<float>(kept(x), {1, 1, 1, 2}, {3.f, 0.5f});
  EXPECT_EQ(avg.compute_output_shape(Shape{-1, 7, 7, 16}), (Shape{-1, 16}));
  EXPECT_EQ(kept.compute_output_shape(Shape{-1, 7, 7, 16}), (Shape{-1, 1, 1, 16}));
  EXPECT_EQ(avg.name().rfind("global_average_pooling2d", 0), 0u);
  expect_error<InvalidArgument>([&] { mx(ones({2, 3})); }, {"expected inputs of rank 4"});

  // Gradients: the mean spreads 1/4 to each position, the max picks the argmax.
  auto grads = [&](const Tensor& in) {
    GradientTape tape;
    tape.watch(in);
    Tensor loss = sum(avg(in)) + sum(mx(in));
    return tape.gradient(loss, GradientSource(in));
  };
  std::vector<float> want{0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 1.25f, 1.25f, 0.25f};
  expect_tensor<float>(grads(x), {1, 2, 2, 2}, want);
  expect_tensor<float>(kiln::function(grads)(x), {1, 2, 2, 2}, want);
}

// Saved with unknown batch, height and width: the loaded signature pools
// inputs of any size.
TEST(NnGlobalPooling, SavedAndLoaded) {
  nn::GlobalAveragePooling2D avg, avg_kept({.keepdims = true});
  nn::GlobalMaxPooling2D mx;
  std::vector<float> v(2 * 3 * 4 * 2), w(1 * 5 * 2 * 2);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.9 * static_cast<double>(i)));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(std::sin(1.1 * static_cast<double>(i)));
  Tensor x = constant(v, Shape{2, 3, 4, 2}), other = constant(w, Shape{1, 5, 2, 2});
  for (nn::Layer* layer : std::initializer_list<nn::Layer*>{&avg, &avg_kept, &mx}) {
    SCOPED_TRACE(layer->name());
    check_layer_saved_model(*layer, x, TensorSpec({None, None, None, 2}), {other});
  }
}
