// Datasets iterated inside kiln::function (DESIGN.md §8): one loop op, so
// the graph does not grow with the data, and every call makes a new pass.
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
using data::Dataset;
using data::Element;

namespace {

// The seeds' train(dataset): loss += abs(y - x) for every (x, y).
Tensor train_body(const Dataset& ds) {
  return ds.reduce({constant(0)}, [](const Element& state, const Element& e) {
    return Element{state[0] + abs(e[1] - e[0])};
  })[0];
}

Dataset pairs(std::vector<std::pair<int, int>> data) {
  auto next = std::make_shared<std::size_t>(0);
  auto shared = std::make_shared<std::vector<std::pair<int, int>>>(std::move(data));
  // A generator keeps its own state: rewind it when a pass starts over.
  return Dataset::from_generator([next, shared]() -> std::optional<Element> {
    if (*next == shared->size()) {
      *next = 0;
      return std::nullopt;
    }
    auto [x, y] = (*shared)[(*next)++];
    return Element{constant(x), constant(y)};
  });
}

}  // namespace

TEST(DatasetLoop, SeedTrainGraphSizeDoesNotGrowWithTheData) {
  auto train = function([](const Dataset& ds) { return train_body(ds); });
  Dataset small = pairs(std::vector<std::pair<int, int>>(3, {1, 1}));
  Dataset big = pairs(std::vector<std::pair<int, int>>(10, {1, 1}));
  int small_nodes = train.get_concrete_function(small).graph().num_nodes();
  int big_nodes = train.get_concrete_function(big).graph().num_nodes();
  EXPECT_EQ(small_nodes, big_nodes);
  EXPECT_LE(small_nodes, 6);

  // A C++ vector of pairs unrolls, as a Python list does in the seed.
  auto train_list = function([](const std::vector<std::pair<Tensor, Tensor>>& data) {
    Tensor loss = constant(0);
    for (const auto& [x, y] : data) loss = loss + abs(y - x);
    return loss;
  });
  auto list_of = [](int n) {
    return std::vector<std::pair<Tensor, Tensor>>(static_cast<std::size_t>(n), {constant(1), constant(1)});
  };
  int list3 = train_list.get_concrete_function(list_of(3)).graph().num_nodes();
  int list10 = train_list.get_concrete_function(list_of(10)).graph().num_nodes();
  EXPECT_GT(list10, list3);
  EXPECT_GT(list3, small_nodes);
}

TEST(DatasetLoop, ReduceTracedEqualsEagerAndEveryCallIsANewPass) {
  Dataset ds = pairs({{1, 4}, {5, 2}, {7, 7}, {-2, 3}});
  expect_tensor<int32_t>(train_body(ds), Shape{}, {3 + 3 + 0 + 5});
  auto train = function([](const Dataset& d) { return train_body(d); });
  expect_tensor<int32_t>(train(ds), Shape{}, {11});
  expect_tensor<int32_t>(train(ds), Shape{}, {11});
  EXPECT_EQ(train.tracing_count(), 1);
  // Another dataset is another trace (datasets are keyed by identity).
  expect_tensor<int32_t>(train(pairs({{0, 10}})), Shape{}, {10});
  EXPECT_EQ(train.tracing_count(), 2);
}

TEST(DatasetLoop, ForEachRunsATrainingStepPerBatchWithASmallerLastBatch) {
  Tensor xs = constant({1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f});
  Dataset ds = Dataset::from_tensor_slices({xs}).batch(4);  // 4, 4 and 2 elements
  Variable total(constant(0.f)), steps(constant(0));
  auto epoch = function([&]() {
    ds.for_each([&](const Element& batch) {
      total.assign_add(sum(batch[0]));
      steps.assign_add(1);
    });
  });
  epoch();
  expect_tensor<float>(total.read_value(), Shape{}, {55.f});
  expect_tensor<int32_t>(steps.read_value(), Shape{}, {3});
  epoch();
  expect_tensor<float>(total.read_value(), Shape{}, {110.f});
  expect_tensor<int32_t>(steps.read_value(), Shape{}, {6});
  EXPECT_EQ(epoch.tracing_count(), 1);
  // The batch dim is unknown in the graph (the last batch is smaller).
  std::string text = epoch.get_concrete_function().graph().to_string();
  EXPECT_NE(text.find("While"), std::string::npos) << text;
  EXPECT_NE(text.find("HostFunction(var1)"), std::string::npos) << text;
  EXPECT_NE(text.find(": (bool[], float32[?])"), std::string::npos) << text;
  // With drop_remainder every batch has 4 elements, and the graph says so.
  Dataset full = Dataset::from_tensor_slices({xs}).batch(4, /*drop_remainder=*/true);
  auto full_epoch = function([&]() { full.for_each([&](const Element& batch) { total.assign_add(sum(batch[0])); }); });
  full_epoch();
  expect_tensor<float>(total.read_value(), Shape{}, {110.f + 36.f});
  text = full_epoch.get_concrete_function().graph().to_string();
  EXPECT_NE(text.find(": (bool[], float32[4])"), std::string::npos) << text;
}

TEST(DatasetLoop, AnElementOfOtherTypesIsAClearError) {
  int calls = 0;
  Dataset ds = Dataset::from_generator([&calls]() -> std::optional<Element> {
    ++calls;
    if (calls % 3 == 1) return Element{constant(1)};
    if (calls % 3 == 2) return Element{constant(2.5f)};
    return std::nullopt;
  });
  auto f = function([&]() { return ds.reduce({constant(0)}, [](const Element& s, const Element& e) { return Element{s[0] + e[0]}; })[0]; });
  expect_error<InvalidArgument>([&] { f(); }, {"Dataset element 1 component 0 is float32", "built for int32"});
  Dataset empty = Dataset::from_tensor_slices({zeros({0, 2})});
  auto g = function([&]() { return empty.reduce({constant(0.f)}, [](const Element& s, const Element&) { return s; })[0]; });
  expect_error<InvalidArgument>([&] { g(); }, {"empty"});
}
