// kiln::data: Dataset sources and transformations, and the IDX reader.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "test_util.h"

namespace kiln {
namespace {

using data::Dataset;
using data::Element;
using testing::expect_error;
using testing::expect_tensor;

// The int64 scalar of every element's first component.
std::vector<int64_t> values(const Dataset& ds) {
  std::vector<int64_t> out;
  for (const Element& e : ds) out.push_back(e.at(0).item<int64_t>());
  return out;
}

TEST(DataSource, FromTensorsYieldsOneElement) {
  Dataset ds = Dataset::from_tensors({constant({1, 2, 3}), constant(5.0f)});
  EXPECT_EQ(ds.cardinality(), 1);
  int n = 0;
  for (const Element& e : ds) {
    ASSERT_EQ(e.size(), 2u);
    expect_tensor<int32_t>(e[0], {3}, {1, 2, 3});
    expect_tensor<float>(e[1], {}, {5.0f});
    ++n;
  }
  EXPECT_EQ(n, 1);
}

TEST(DataSource, FromTensorSlicesSlicesDim0) {
  Dataset ds = Dataset::from_tensor_slices({constant({{1, 2}, {3, 4}, {5, 6}}), constant({7.f, 8.f, 9.f})});
  EXPECT_EQ(ds.cardinality(), 3);
  int i = 0;
  for (const Element& e : ds) {
    expect_tensor<int32_t>(e[0], {2}, {2 * i + 1, 2 * i + 2});
    expect_tensor<float>(e[1], {}, {7.f + static_cast<float>(i)});
    ++i;
  }
  EXPECT_EQ(i, 3);
}

TEST(DataSource, FromTensorSlicesErrors) {
  expect_error<InvalidArgument>(
      [] { Dataset::from_tensor_slices({constant({1, 2, 3}), constant({1, 2})}); },
      {"from_tensor_slices", "same dim 0", "3", "2"});
  expect_error<InvalidArgument>([] { Dataset::from_tensor_slices({constant(1)}); },
                                {"from_tensor_slices", "rank >= 1"});
  expect_error<InvalidArgument>([] { Dataset::from_tensor_slices({}); }, {"at least one"});
}

TEST(DataSource, RangeValuesAndCardinality) {
  EXPECT_EQ(values(Dataset::range(4)), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(values(Dataset::range(2, 9, 3)), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(values(Dataset::range(5, 0, -2)), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(values(Dataset::range(3, 3)), (std::vector<int64_t>{}));
  EXPECT_EQ(Dataset::range(2, 9, 3).cardinality(), 3);
  EXPECT_EQ(Dataset::range(5, 0, -2).cardinality(), 3);
  EXPECT_EQ(Dataset::range(7, 3).cardinality(), 0);
  for (const Element& e : Dataset::range(1)) {
    EXPECT_EQ(e[0].dtype(), DType::Int64);
    EXPECT_EQ(e[0].rank(), 0);
  }
  expect_error<InvalidArgument>([] { Dataset::range(0, 5, 0); }, {"range", "step"});
}

TEST(DataSource, FromGenerator) {
  int64_t i = 0;
  Dataset ds = Dataset::from_generator([&]() -> std::optional<Element> {
    if (i >= 3) return std::nullopt;
    return Element{constant(Scalar(i++ * 10))};
  });
  EXPECT_EQ(ds.cardinality(), Dataset::kUnknown);
  EXPECT_EQ(values(ds), (std::vector<int64_t>{0, 10, 20}));
}

TEST(DataSource, EachBeginStartsAFreshPass) {
  Dataset ds = Dataset::range(3);
  EXPECT_EQ(values(ds), values(ds));
  auto a = ds.begin();
  auto b = ds.begin();
  ++a;
  EXPECT_EQ((*a)[0].item<int64_t>(), 1);
  EXPECT_EQ((*b)[0].item<int64_t>(), 0);
}

TEST(DataSource, IteratorKeepsATemporaryChainAlive) {
  auto it = Dataset::range(3).map([](const Element& e) { return Element{e[0] * 2}; }).begin();
  ++it;
  EXPECT_EQ((*it)[0].item<int64_t>(), 2);
}

TEST(DataTransform, MapFilter) {
  Dataset ds = Dataset::range(6)
                   .map([](const Element& e) { return Element{e[0] * 3, e[0]}; })
                   .filter([](const Element& e) { return e[1] % 2 == 0; });
  EXPECT_EQ(ds.cardinality(), Dataset::kUnknown);
  std::vector<int64_t> got, second;
  for (const Element& e : ds) {
    got.push_back(e[0].item<int64_t>());
    second.push_back(e[1].item<int64_t>());
  }
  EXPECT_EQ(got, (std::vector<int64_t>{0, 6, 12}));
  EXPECT_EQ(second, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(Dataset::range(6).map([](const Element& e) { return e; }).cardinality(), 6);
}

TEST(DataTransform, FilterNeedsABoolScalar) {
  Dataset ds = Dataset::range(3).filter([](const Element& e) { return e[0]; });
  expect_error<InvalidArgument>([&] { values(ds); }, {"filter", "bool scalar", "int64"});
}

TEST(DataTransform, BatchShapesAndRemainder) {
  Dataset ds = Dataset::from_tensor_slices({reshape(range(0, 14), {7, 2}), range(0, 7)}).batch(3);
  EXPECT_EQ(ds.cardinality(), 3);
  std::vector<Element> batches;
  for (const Element& e : ds) batches.push_back(e);
  ASSERT_EQ(batches.size(), 3u);
  expect_tensor<int32_t>(batches[0][0], {3, 2}, {0, 1, 2, 3, 4, 5});
  expect_tensor<int32_t>(batches[0][1], {3}, {0, 1, 2});
  expect_tensor<int32_t>(batches[2][0], {1, 2}, {12, 13});
  expect_tensor<int32_t>(batches[2][1], {1}, {6});

  Dataset dropped = Dataset::range(7).batch(3, true);
  EXPECT_EQ(dropped.cardinality(), 2);
  int n = 0;
  for (const Element& e : dropped) {
    expect_tensor<int64_t>(e[0], {3}, {3 * n, 3 * n + 1, 3 * n + 2});
    ++n;
  }
  EXPECT_EQ(n, 2);
  expect_error<InvalidArgument>([] { Dataset::range(3).batch(0); }, {"batch", "batch_size", "0"});
}

TEST(DataTransform, BatchRejectsDifferentShapes) {
  Dataset ds = Dataset::range(3)
                   .map([](const Element& e) { return Element{zeros({e[0].item<int64_t>() + 1})}; })
                   .batch(2);
  expect_error<InvalidArgument>([&] { for (const Element& e : ds) (void)e; },
                                {"batch", "component 0", "(1,)", "(2,)"});
}

TEST(DataTransform, RepeatTakeSkip) {
  EXPECT_EQ(values(Dataset::range(3).repeat(2)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(values(Dataset::range(3).repeat().take(7)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(values(Dataset::range(5).skip(2)), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values(Dataset::range(5).skip(9)), (std::vector<int64_t>{}));
  EXPECT_EQ(values(Dataset::range(5).take(2).repeat(2)), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(values(Dataset::range(5).skip(1).take(2)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values(Dataset::range(5).take(-1)), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values(Dataset::range(5).skip(-1)), (std::vector<int64_t>{}));
  EXPECT_EQ(values(Dataset::range(3).repeat(0)), (std::vector<int64_t>{}));
  // An empty input repeated forever ends instead of spinning.
  EXPECT_EQ(values(Dataset::range(0).repeat()), (std::vector<int64_t>{}));
  expect_error<InvalidArgument>([] { Dataset::range(3).repeat(-2); }, {"repeat", "-2"});
  expect_error<InvalidArgument>([] { Dataset::range(3).take(-5); }, {"take", "-5"});
}

TEST(DataTransform, Cardinality) {
  EXPECT_EQ(Dataset::range(3).repeat().cardinality(), Dataset::kInfinite);
  EXPECT_EQ(Dataset::range(3).repeat(4).cardinality(), 12);
  EXPECT_EQ(Dataset::range(3).repeat().take(10).cardinality(), 10);
  EXPECT_EQ(Dataset::range(3).take(10).cardinality(), 3);
  EXPECT_EQ(Dataset::range(10).skip(3).cardinality(), 7);
  EXPECT_EQ(Dataset::range(10).skip(30).cardinality(), 0);
  EXPECT_EQ(Dataset::range(3).repeat().skip(3).cardinality(), Dataset::kInfinite);
  EXPECT_EQ(Dataset::range(3).repeat().batch(2).cardinality(), Dataset::kInfinite);
  EXPECT_EQ(Dataset::range(3).repeat().filter([](const Element&) { return constant(true); }).cardinality(),
            Dataset::kInfinite);
  EXPECT_EQ(Dataset::range(10).shuffle(4).prefetch(2).cardinality(), 10);
  EXPECT_EQ(Dataset::range(0).repeat().cardinality(), 0);
}

TEST(DataZip, PairsElementsAndStopsAtTheShortest) {
  Dataset squares = Dataset::from_tensor_slices({constant({0.f, 1.f, 4.f, 9.f}), constant({true, false, true, false})});
  Dataset zipped = Dataset::zip({Dataset::range(10, 13), squares});
  std::vector<std::string> seen;
  for (const Element& e : zipped) {
    ASSERT_EQ(e.size(), 3u);  // the components of both, in order
    seen.push_back(std::to_string(e[0].item<int64_t>()) + " " + std::to_string(static_cast<int>(e[1].item<float>())) +
                   " " + (e[2].item<bool>() ? "T" : "F"));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"10 0 T", "11 1 F", "12 4 T"}));
  // Every pass starts over; the element spec is the specs side by side.
  EXPECT_EQ(values(zipped), (std::vector<int64_t>{10, 11, 12}));
  std::optional<std::vector<TensorSpec>> spec = zipped.element_spec();
  ASSERT_TRUE(spec.has_value());
  ASSERT_EQ(spec->size(), 3u);
  EXPECT_EQ((*spec)[0].to_string(), "TensorSpec(shape=(), dtype=int64)");
  EXPECT_EQ((*spec)[1].to_string(), "TensorSpec(shape=(), dtype=float32)");
  EXPECT_EQ((*spec)[2].to_string(), "TensorSpec(shape=(), dtype=bool)");
  // A batched input leaves its batch dim unknown in the zip's spec too.
  Dataset batched = Dataset::zip({Dataset::range(5).batch(2), Dataset::range(5).batch(2, true)});
  EXPECT_EQ(batched.element_spec()->at(0).to_string(), "TensorSpec(shape=(None,), dtype=int64)");
  EXPECT_EQ(batched.element_spec()->at(1).to_string(), "TensorSpec(shape=(2,), dtype=int64)");
  EXPECT_EQ(values(batched.map([](const Element& e) { return Element{e[1][1]}; })), (std::vector<int64_t>{1, 3}));
  // A generator's unknown spec makes the zip's unknown.
  EXPECT_FALSE(Dataset::zip({Dataset::range(2), Dataset::from_generator([] { return std::optional<Element>(); })})
                   .element_spec()
                   .has_value());
  expect_error<InvalidArgument>([] { Dataset::zip({}); }, {"Dataset::zip", "at least one dataset"});
}

TEST(DataZip, CardinalityIsTheShortestKnownOne) {
  EXPECT_EQ(Dataset::zip({Dataset::range(3), Dataset::range(7)}).cardinality(), 3);
  EXPECT_EQ(Dataset::zip({Dataset::range(3).repeat(), Dataset::range(7)}).cardinality(), 7);
  EXPECT_EQ(Dataset::zip({Dataset::range(3).repeat(), Dataset::range(1).repeat()}).cardinality(), Dataset::kInfinite);
  EXPECT_EQ(Dataset::zip({Dataset::range(3), Dataset::range(9).filter([](const Element&) { return constant(true); })})
                .cardinality(),
            Dataset::kUnknown);
  EXPECT_EQ(Dataset::zip({Dataset::range(0), Dataset::range(3).repeat()}).cardinality(), 0);
}

TEST(DataShuffle, SeededIsDeterministicPermutationAndReshuffles) {
  Dataset a = Dataset::range(50).shuffle(10, 7);
  Dataset b = Dataset::range(50).shuffle(10, 7);
  std::vector<int64_t> a1 = values(a), a2 = values(a), b1 = values(b), b2 = values(b);
  EXPECT_EQ(a1, b1);
  EXPECT_EQ(a2, b2);
  EXPECT_NE(a1, a2);  // a new order every pass
  std::vector<int64_t> identity(50);
  for (int i = 0; i < 50; ++i) identity[static_cast<std::size_t>(i)] = i;
  EXPECT_NE(a1, identity);
  for (std::vector<int64_t> v : {a1, a2}) {
    std::sort(v.begin(), v.end());
    EXPECT_EQ(v, identity);
  }
  EXPECT_NE(values(Dataset::range(50).shuffle(10, 8)), a1);
}

TEST(DataShuffle, BufferBoundsHowFarElementsMove) {
  // With a buffer of 3, the element yielded i-th is one of the first i + 3.
  std::vector<int64_t> v = values(Dataset::range(100).shuffle(3, 1));
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_LT(v[i], static_cast<int64_t>(i) + 3);
  EXPECT_EQ(values(Dataset::range(10).shuffle(1, 3)), values(Dataset::range(10)));
  std::vector<int64_t> u = values(Dataset::range(20).shuffle(100));
  std::sort(u.begin(), u.end());
  EXPECT_EQ(u, values(Dataset::range(20)));
  expect_error<InvalidArgument>([] { Dataset::range(3).shuffle(0); }, {"shuffle", "buffer_size"});
}

TEST(DataShuffle, SlicesShuffleAsAnyOtherSource) {
  // Over slices the buffer holds indices (each element made as it leaves); the
  // order must be the one a buffer of elements gives: range() is not random access.
  std::vector<int64_t> numbers(60), twice(120);
  for (std::size_t i = 0; i < numbers.size(); ++i) numbers[i] = static_cast<int64_t>(i);
  for (std::size_t i = 0; i < twice.size(); ++i) twice[i] = static_cast<int64_t>(i);
  Dataset slices = Dataset::from_tensor_slices({constant(numbers, Shape({60}))});
  for (int64_t buffer : {1, 7, 60, 1000}) {
    Dataset a = slices.shuffle(buffer, 11), b = Dataset::range(60).shuffle(buffer, 11);
    for (int pass = 0; pass < 2; ++pass) EXPECT_EQ(values(a), values(b)) << "buffer " << buffer << ", pass " << pass;
  }
  // Components stay together: element i is (i, [2i, 2i + 1]).
  Dataset pairs =
      Dataset::from_tensor_slices({constant(numbers, Shape({60})), constant(twice, Shape({60, 2}))}).shuffle(60, 2);
  int64_t seen = 0;
  for (const Element& e : pairs) {
    int64_t i = e[0].item<int64_t>();
    EXPECT_EQ(e[1].to_vector<int64_t>(), (std::vector<int64_t>{2 * i, 2 * i + 1}));
    ++seen;
  }
  EXPECT_EQ(seen, 60);
}

TEST(DataPrefetch, YieldsTheSameElements) {
  Dataset ds = Dataset::range(100).map([](const Element& e) { return Element{e[0] + 1}; }).prefetch(4);
  std::vector<int64_t> expected(100);
  for (int i = 0; i < 100; ++i) expected[static_cast<std::size_t>(i)] = i + 1;
  EXPECT_EQ(values(ds), expected);
  EXPECT_EQ(values(ds), expected);
  EXPECT_EQ(values(Dataset::range(20).batch(3).prefetch(1).take(2).map([](const Element& e) {
              return Element{e[0][0]};
            })),
            (std::vector<int64_t>{0, 3}));
}

TEST(DataPrefetch, EarlyDestroyStopsTheThread) {
  // An infinite, slow input: destroying the iterator must not wait for its end.
  std::atomic<int64_t> produced{0};
  Dataset ds = Dataset::from_generator([&]() -> std::optional<Element> {
                 std::this_thread::sleep_for(std::chrono::milliseconds(1));
                 return Element{constant(Scalar(produced.fetch_add(1)))};
               }).prefetch(3);
  for (int pass = 0; pass < 3; ++pass) {
    int n = 0;
    for (const Element& e : ds) {
      (void)e;
      if (++n == 5) break;
    }
    EXPECT_EQ(n, 5);
  }
  { auto it = ds.begin(); }  // destroyed right after the first element
  int64_t after = produced.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(produced.load(), after);  // no producer left running
}

TEST(DataPrefetch, ErrorsReachTheConsumer) {
  Dataset ds = Dataset::range(5)
                   .map([](const Element& e) {
                     if (e[0].item<int64_t>() == 3) throw InvalidArgument("boom at 3");
                     return e;
                   })
                   .prefetch(2);
  std::vector<int64_t> seen;
  expect_error<InvalidArgument>([&] { for (const Element& e : ds) seen.push_back(e[0].item<int64_t>()); },
                                {"boom at 3"});
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2}));
  expect_error<InvalidArgument>([] { Dataset::range(3).prefetch(0); }, {"prefetch", "buffer_size"});
}

TEST(DataReduce, FoldsElements) {
  Element sum = Dataset::range(5).reduce({constant(Scalar(int64_t{0}))}, [](const Element& s, const Element& e) {
    return Element{s[0] + e[0]};
  });
  expect_tensor<int64_t>(sum[0], {}, {10});
  Element none = Dataset::range(0).reduce({constant(7)}, [](const Element& s, const Element&) { return s; });
  expect_tensor<int32_t>(none[0], {}, {7});
}

// ---- IDX -------------------------------------------------------------------

class DataIdx : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln_data_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_bytes(const std::string& name, const std::vector<unsigned char>& bytes) const {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  std::filesystem::path dir_;
};

TEST_F(DataIdx, RoundTrips) {
  Tensor u8 = constant(std::vector<uint8_t>{0, 1, 255, 7, 8, 9}, Shape{2, 3});
  data::write_idx(path("u8.idx"), u8);
  expect_tensor<uint8_t>(data::read_idx(path("u8.idx")), {2, 3}, {0, 1, 255, 7, 8, 9});
  data::write_idx(path("i32.idx"), constant({-1, 2, -70000}));
  expect_tensor<int32_t>(data::read_idx(path("i32.idx")), {3}, {-1, 2, -70000});
  data::write_idx(path("f32.idx"), constant({{1.5f}, {-2.25f}}));
  expect_tensor<float>(data::read_idx(path("f32.idx")), {2, 1}, {1.5f, -2.25f});
  data::write_idx(path("empty.idx"), zeros({0, 4}, DType::UInt8));
  expect_tensor<uint8_t>(data::read_idx(path("empty.idx")), {0, 4}, {});
  expect_error<InvalidArgument>([&] { data::write_idx(path("x.idx"), constant(1.0)); },
                                {"write_idx", "float64", "not supported"});
}

TEST_F(DataIdx, ReadsBigEndianMnistLayout) {
  // An MNIST-style labels file: magic 0x00000801, 3 items.
  write_bytes("labels", {0, 0, 8, 1, 0, 0, 0, 3, 5, 0, 4});
  expect_tensor<uint8_t>(data::read_idx(path("labels")), {3}, {5, 0, 4});
  write_bytes("i16", {0, 0, 0x0B, 1, 0, 0, 0, 2, 0xFF, 0xFE, 0x01, 0x00});
  expect_tensor<int32_t>(data::read_idx(path("i16")), {2}, {-2, 256});
  write_bytes("i8", {0, 0, 0x09, 1, 0, 0, 0, 2, 0xFF, 0x05});
  expect_tensor<int32_t>(data::read_idx(path("i8")), {2}, {-1, 5});
  // float64 1.0 is 3F F0 00 .. 00.
  write_bytes("f64", {0, 0, 0x0E, 0, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0});
  expect_tensor<double>(data::read_idx(path("f64")), {}, {1.0});
}

TEST_F(DataIdx, RejectsDamagedFiles) {
  expect_error<NotFound>([&] { data::read_idx(path("missing")); }, {"read_idx", "missing"});
  write_bytes("short", {0, 0});
  expect_error<InvalidArgument>([&] { data::read_idx(path("short")); }, {"short", "magic"});
  write_bytes("magic", {1, 0, 8, 1, 0, 0, 0, 1, 0});
  expect_error<InvalidArgument>([&] { data::read_idx(path("magic")); }, {"magic", "two zero bytes"});
  write_bytes("type", {0, 0, 0x0A, 1, 0, 0, 0, 1, 0});
  expect_error<InvalidArgument>([&] { data::read_idx(path("type")); }, {"type", "element type byte 10"});
  write_bytes("rank", {0, 0, 8, 200});
  expect_error<InvalidArgument>([&] { data::read_idx(path("rank")); }, {"rank 200"});
  write_bytes("header", {0, 0, 8, 3, 0, 0, 0, 1});
  expect_error<InvalidArgument>([&] { data::read_idx(path("header")); }, {"truncated header", "16"});
  write_bytes("trunc", {0, 0, 8, 1, 0, 0, 0, 5, 1, 2});
  expect_error<InvalidArgument>([&] { data::read_idx(path("trunc")); }, {"trunc", "(5)", "truncated"});
  write_bytes("trailing", {0, 0, 8, 1, 0, 0, 0, 1, 1, 2});
  expect_error<InvalidArgument>([&] { data::read_idx(path("trailing")); }, {"trailing bytes"});
  // Hostile dims whose product overflows int64 must not allocate or wrap.
  write_bytes("huge", {0, 0, 0x0E, 4, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                       0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8});
  expect_error<InvalidArgument>([&] { data::read_idx(path("huge")); }, {"huge", "4294967295", "more than 8"});
  write_bytes("zero_dim", {0, 0, 8, 2, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 9});
  expect_error<InvalidArgument>([&] { data::read_idx(path("zero_dim")); }, {"trailing bytes"});
}

TEST_F(DataIdx, FeedsADataset) {
  data::write_idx(path("x"), constant(std::vector<uint8_t>{1, 2, 3, 4, 5, 6}, Shape{3, 2}));
  data::write_idx(path("y"), constant({7, 8, 9}));
  Dataset ds = Dataset::from_tensor_slices({data::read_idx(path("x")), data::read_idx(path("y"))}).batch(2);
  std::vector<Element> got;
  for (const Element& e : ds) got.push_back(e);
  ASSERT_EQ(got.size(), 2u);
  expect_tensor<uint8_t>(got[0][0], {2, 2}, {1, 2, 3, 4});
  expect_tensor<int32_t>(got[1][1], {1}, {9});
}

}  // namespace
}  // namespace kiln
