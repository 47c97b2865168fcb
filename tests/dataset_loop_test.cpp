// Datasets iterated inside kiln::function (docs/design-notes.md, "Control flow and TensorArray"): one loop op, so
// the graph does not grow with the data, and every call makes a new pass.
#include "test_util.h"

#include <memory>

#include "function/traced_graph.h"

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
  // A generator's element types are unknown, so another one is another trace
  // (keyed by identity).
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
  // A generator with no declared types and no element cannot be traced.
  Dataset none = Dataset::from_generator([]() -> std::optional<Element> { return std::nullopt; });
  auto g = function([&]() { return none.reduce({constant(0.f)}, [](const Element& s, const Element&) { return s; })[0]; });
  expect_error<InvalidArgument>([&] { g(); }, {"empty", "element types are unknown"});
  // An empty dataset of known types reduces to the initial state, as in TF.
  Dataset empty = Dataset::from_tensor_slices({zeros({0, 2})});
  auto h = function([&]() { return empty.reduce({constant(5.f)}, [](const Element& s, const Element&) { return s; })[0]; });
  expect_tensor<float>(h(), Shape{}, {5.f});
}

// ---- A Dataset argument is keyed by its element spec (TF's rule) ------------

namespace {
Tensor sum_of(const Dataset& ds) {
  return ds.reduce({constant(int64_t{0})}, [](const Element& s, const Element& e) { return Element{s[0] + e[0]}; })[0];
}
}  // namespace

TEST(DatasetArgument, DatasetsOfOneElementSpecShareATraceAndEachCallFeedsItsOwn) {
  auto total = function([](const Dataset& ds) { return sum_of(ds); });
  expect_tensor<int64_t>(total(Dataset::range(5)), Shape{}, {10});
  expect_tensor<int64_t>(total(Dataset::range(5)), Shape{}, {10});
  expect_tensor<int64_t>(total(Dataset::range(3, 6)), Shape{}, {12});
  EXPECT_EQ(total.tracing_count(), 1);
  // The graph takes the dataset as its input (a resource), not as a constant.
  std::string text = total.get_concrete_function(Dataset::range(1)).graph().to_string();
  EXPECT_NE(text.find("arg0: resource"), std::string::npos) << text;
  EXPECT_EQ(total.tracing_count(), 1);

  // Slices of other data but the same element spec: the same trace.
  Tensor a = constant(std::vector<int64_t>{1, 2, 3}), b = constant(std::vector<int64_t>{10, 20});
  expect_tensor<int64_t>(total(Dataset::from_tensor_slices({a})), Shape{}, {6});
  expect_tensor<int64_t>(total(Dataset::from_tensor_slices({b})), Shape{}, {30});
  EXPECT_EQ(total.tracing_count(), 1);
}

TEST(DatasetArgument, AnotherElementSpecTracesAgainAndTheLogSaysWhy) {
  auto count = function([](const Dataset& ds) {
    return ds.reduce({constant(0)}, [](const Element& s, const Element&) { return Element{s[0] + 1}; })[0];
  });
  Tensor rows = zeros({6, 2});
  expect_tensor<int32_t>(count(Dataset::from_tensor_slices({rows})), Shape{}, {6});
  expect_tensor<int32_t>(count(Dataset::from_tensor_slices({rows}).batch(4)), Shape{}, {2});
  expect_tensor<int32_t>(count(Dataset::from_tensor_slices({zeros({9, 2})}).batch(4)), Shape{}, {3});
  EXPECT_EQ(count.tracing_count(), 2);
  std::vector<RetraceRecord> log = count.retrace_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].text(),
            "trace 2: arg 0: Dataset(TensorSpec(shape=(2,), dtype=float32)) -> "
            "Dataset(TensorSpec(shape=(None, 2), dtype=float32)) (structure changed)");
  // drop_remainder makes the batch dim known: another spec.
  expect_tensor<int32_t>(count(Dataset::from_tensor_slices({rows}).batch(4, true)), Shape{}, {1});
  EXPECT_EQ(count.tracing_count(), 3);
}

TEST(DatasetArgument, TransformationsInsideTheFunctionApplyToTheDatasetEachCallFeeds) {
  auto f = function([](const Dataset& ds) {
    Dataset doubled = ds.map([](const Element& e) { return Element{e[0] * int64_t{2}}; })
                          .filter([](const Element& e) { return e[0] > int64_t{2}; })
                          .batch(2);
    return doubled.reduce({constant(int64_t{0})}, [](const Element& s, const Element& e) {
      return Element{s[0] + sum(e[0])};
    })[0];
  });
  expect_tensor<int64_t>(f(Dataset::range(4)), Shape{}, {4 + 6});
  expect_tensor<int64_t>(f(Dataset::range(10, 12)), Shape{}, {20 + 22});
  EXPECT_EQ(f.tracing_count(), 1);
  // Eager gives the same.
  config::run_functions_eagerly(true);
  Tensor eager = f(Dataset::range(10, 12));
  config::run_functions_eagerly(false);
  expect_tensor<int64_t>(eager, Shape{}, {42});
}

TEST(DatasetArgument, AMappedDatasetIsKeyedByItsFirstElementsTypesReadOnce) {
  int calls = 0;
  Dataset squares = Dataset::range(4).map([&calls](const Element& e) {
    ++calls;
    return Element{cast(e[0] * e[0], DType::Float32)};
  });
  EXPECT_EQ(squares.element_spec()->at(0).to_string(), "TensorSpec(shape=(), dtype=float32)");
  EXPECT_EQ(calls, 1);
  squares.element_spec();
  EXPECT_EQ(calls, 1);  // read once per dataset
  auto total = function([](const Dataset& ds) {
    return ds.reduce({constant(0.f)}, [](const Element& s, const Element& e) { return Element{s[0] + e[0]}; })[0];
  });
  expect_tensor<float>(total(squares), Shape{}, {14.f});
  expect_tensor<float>(total(Dataset::from_tensor_slices({constant({1.f, 2.f})})), Shape{}, {3.f});
  EXPECT_EQ(total.tracing_count(), 1);
}

TEST(DatasetArgument, AGeneratorWithAnOutputSignatureIsKeyedByIt) {
  auto make = [](int n) {
    auto i = std::make_shared<int>(0);
    return Dataset::from_generator(
        [i, n]() -> std::optional<Element> {
          if (*i == n) {
            *i = 0;
            return std::nullopt;
          }
          return Element{constant(int64_t{(*i)++})};
        },
        {TensorSpec(Shape{}, DType::Int64)});
  };
  auto total = function([](const Dataset& ds) { return sum_of(ds); });
  expect_tensor<int64_t>(total(make(4)), Shape{}, {6});
  expect_tensor<int64_t>(total(make(5)), Shape{}, {10});
  EXPECT_EQ(total.tracing_count(), 1);
  // An element that does not fit the signature is an error, eagerly too.
  Dataset wrong = Dataset::from_generator([]() -> std::optional<Element> { return Element{constant(1.f)}; },
                                          {TensorSpec(Shape{}, DType::Int64)});
  expect_error<InvalidArgument>([&] { wrong.begin(); },
                                {"does not match the output_signature", "got (float32 ())", "expected (int64 ())"});
}

TEST(DatasetArgument, ARangeForOverTheArgumentWhileTracingIsAClearError) {
  auto f = function([](const Dataset& ds) {
    Tensor s = constant(int64_t{0});
    for (const Element& e : ds) s = s + e[0];
    return s;
  });
  expect_error<InvalidArgument>([&] { f(Dataset::range(3)); }, {"iterating a Dataset argument", "C++ range-for", "reduce()"});
  // A captured dataset still unrolls, as a Python list does.
  Dataset captured = Dataset::range(3);
  auto g = function([&captured]() {
    Tensor s = constant(int64_t{0});
    for (const Element& e : captured) s = s + e[0];
    return s;
  });
  expect_tensor<int64_t>(g(), Shape{}, {3});
}

TEST(DatasetArgument, PassedOnToAFunctionCalledWhileTracing) {
  auto inner = function([](const Dataset& ds) { return sum_of(ds); });
  auto outer = function([&inner](const Dataset& ds) { return inner(ds) * int64_t{10}; });
  expect_tensor<int64_t>(outer(Dataset::range(3)), Shape{}, {30});
  expect_tensor<int64_t>(outer(Dataset::range(5)), Shape{}, {100});
  EXPECT_EQ(outer.tracing_count(), 1);
  auto transformed = function([&inner](const Dataset& ds) { return inner(ds.take(1)); });
  expect_error<Unimplemented>([&] { transformed(Dataset::range(3)); }, {"transformed inside a traced function"});
}

namespace {
// sum(x * y) over the pairs of a zip of two int64 datasets.
Tensor dot_of(const Dataset& zipped) {
  return zipped.reduce({constant(int64_t{0})}, [](const Element& s, const Element& e) {
    return Element{s[0] + e[0] * e[1]};
  })[0];
}
}  // namespace

TEST(DatasetArgument, ZippedArgumentsAreRebuiltOverTheDatasetsEachCallFeeds) {
  auto dot = function([](const Dataset& a, const Dataset& b) { return dot_of(Dataset::zip({a, b})); });
  expect_tensor<int64_t>(dot(Dataset::range(3), Dataset::range(1, 10)), Shape{}, {0 * 1 + 1 * 2 + 2 * 3});
  expect_tensor<int64_t>(dot(Dataset::range(10, 12), Dataset::range(4)), Shape{}, {10 * 0 + 11 * 1});
  // The shorter one may be either; a transformed argument is zipped as transformed.
  auto shifted = function([](const Dataset& a, const Dataset& b) { return dot_of(Dataset::zip({a.skip(1), b})); });
  expect_tensor<int64_t>(shifted(Dataset::range(4), Dataset::range(5)), Shape{}, {1 * 0 + 2 * 1 + 3 * 2});
  expect_tensor<int64_t>(shifted(Dataset::range(2, 4), Dataset::range(5)), Shape{}, {3 * 0});
  EXPECT_EQ(dot.tracing_count(), 1);
  EXPECT_EQ(shifted.tracing_count(), 1);
  // Both are graph inputs, and the graph does not grow with the data.
  auto concrete = dot.get_concrete_function(Dataset::range(1), Dataset::range(1));
  std::string text = concrete.graph().to_string();
  EXPECT_NE(text.find("arg0: resource"), std::string::npos) << text;
  EXPECT_NE(text.find("arg1: resource"), std::string::npos) << text;
  EXPECT_EQ(concrete.graph().num_nodes(), dot.get_concrete_function(Dataset::range(100), Dataset::range(100)).graph().num_nodes());
  EXPECT_EQ(dot.tracing_count(), 1);
  // A dataset zipped in that is not an argument stays as it was.
  Dataset weights = Dataset::range(1, 4);
  auto weighted = function([&weights](const Dataset& a) { return dot_of(Dataset::zip({weights, a})); });
  expect_tensor<int64_t>(weighted(Dataset::range(5)), Shape{}, {1 * 0 + 2 * 1 + 3 * 2});
  expect_tensor<int64_t>(weighted(Dataset::range(10, 12)), Shape{}, {10 + 2 * 11});
  EXPECT_EQ(weighted.tracing_count(), 1);
  // Eager gives the same.
  config::run_functions_eagerly(true);
  Tensor eager = dot(Dataset::range(10, 12), Dataset::range(4));
  config::run_functions_eagerly(false);
  expect_tensor<int64_t>(eager, Shape{}, {11});
  // Passed on, a zip is a transformed argument.
  auto inner = function([](const Dataset& ds) { return dot_of(ds); });
  auto outer = function([&inner](const Dataset& a) { return inner(Dataset::zip({a, a})); });
  expect_error<Unimplemented>([&] { outer(Dataset::range(3)); }, {"transformed inside a traced function", "zipped"});
}

// A trace over Dataset arguments frees its graph with the function. The
// dataset loop's callback lives in the graph, and a Dataset argument's handles
// are the trace's symbolic tensors, which own it: a callback holding them made
// a cycle (LeakSanitizer found it). Plain, transformed and zipped arguments.
TEST(DatasetArgument, ATracesGraphIsFreedWithItsFunction) {
  std::weak_ptr<graph::Graph> plain, transformed, zipped;
  {
    auto total = function([](const Dataset& ds) { return sum_of(ds); });
    expect_tensor<int64_t>(total(Dataset::range(4)), Shape{}, {6});
    plain = total.get_concrete_function(Dataset::range(1)).impl()->graph;
    auto doubled = function([](const Dataset& ds) {
      return sum_of(ds.map([](const Element& e) { return Element{e[0] * int64_t{2}}; }).skip(1));
    });
    expect_tensor<int64_t>(doubled(Dataset::range(4)), Shape{}, {12});
    transformed = doubled.get_concrete_function(Dataset::range(1)).impl()->graph;
    auto dot = function([](const Dataset& a, const Dataset& b) { return dot_of(Dataset::zip({a.skip(1), b})); });
    expect_tensor<int64_t>(dot(Dataset::range(3), Dataset::range(5)), Shape{}, {1 * 0 + 2 * 1});
    zipped = dot.get_concrete_function(Dataset::range(1), Dataset::range(1)).impl()->graph;
    EXPECT_FALSE(plain.expired());
  }
  EXPECT_TRUE(plain.expired());
  EXPECT_TRUE(transformed.expired());
  EXPECT_TRUE(zipped.expired());
}

TEST(DatasetLoop, AZipOfCapturedDatasetsIsOneLoop) {
  Dataset a = pairs({{1, 4}, {5, 2}, {7, 7}});  // a generator: its types are read from its first element
  Dataset b = Dataset::range(10, 20);
  auto f = function([&] {
    return Dataset::zip({a, b}).reduce({constant(int64_t{0})}, [](const Element& s, const Element& e) {
      return Element{s[0] + cast(e[0] * e[1], DType::Int64) * e[2]};
    })[0];
  });
  int64_t expected = 4 * 10 + 10 * 11 + 49 * 12;
  expect_tensor<int64_t>(f(), Shape{}, {expected});
  expect_tensor<int64_t>(f(), Shape{}, {expected});  // a new pass per call
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(DatasetLoop, KeepGoingStopsPullingSoAnInfiniteDatasetEnds) {
  auto pulled = std::make_shared<int>(0);
  Dataset counting = Dataset::range(3).repeat().map([pulled](const Element& e) {
    ++*pulled;
    return e;
  });
  // state = (sum, steps); keep going for 7 elements of 0, 1, 2, 0, 1, 2, 0.
  auto run = [&] {
    return counting.reduce(
        {constant(int64_t{0}), constant(0)},
        [](const Element& s, const Element& e) { return Element{s[0] + e[0], s[1] + 1}; },
        [](const Element& s) { return s[1] < 7; });
  };
  Element eager = run();
  expect_tensor<int64_t>(eager[0], Shape{}, {6});
  EXPECT_EQ(*pulled, 7);
  auto f = function([&] { return run()[0]; });
  *pulled = 0;
  expect_tensor<int64_t>(f(), Shape{}, {6});
  EXPECT_EQ(*pulled, 1 + 7);  // tracing read the map's first element once, for its element spec
  expect_tensor<int64_t>(f(), Shape{}, {6});  // a new pass per call
  EXPECT_EQ(*pulled, 1 + 7 + 7);
  EXPECT_EQ(f.tracing_count(), 1);
  // keep_going must give a bool scalar.
  expect_error<InvalidArgument>(
      [&] {
        Dataset::range(3).reduce({constant(0)}, [](const Element& s, const Element&) { return s; },
                                 [](const Element& s) { return s[0]; });
      },
      {"Dataset::reduce", "keep_going must return a bool scalar tensor", "int32"});
  auto traced_bad = function([] {
    return Dataset::range(3).reduce({constant(0)}, [](const Element& s, const Element&) { return s; },
                                    [](const Element& s) { return s[0]; })[0];
  });
  expect_error<InvalidArgument>([&] { traced_bad(); }, {"keep_going must return a bool scalar tensor"});
}
