// Sizes from hostile or careless callers: element counts that overflow are
// InvalidArgument naming the op and the shape; sizes that fit Kiln's cap but
// not the machine are ResourceExhausted naming the op, the shape and the
// bytes; never a wrapped count, a heap overflow or a bare std::bad_alloc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/allocator.h"
#include "core/tensor_impl.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;

namespace {

constexpr int64_t k2to40 = int64_t{1} << 40;  // 4 TiB of float32: representable, never allocatable
constexpr int64_t k2to62 = int64_t{1} << 62;

}  // namespace

TEST(HostileSizes, ShapeCountsAreChecked) {
  EXPECT_EQ(Shape({k2to40, 256}).num_elements(), Shape::kMaxElements);
  EXPECT_TRUE(Shape({k2to40, 256}).within_limits());
  EXPECT_FALSE(Shape({k2to40, 512}).within_limits());
  EXPECT_FALSE(Shape({k2to40, k2to40}).within_limits());  // 2^80 wraps int64 to 0
  EXPECT_FALSE(Shape({0, k2to62}).within_limits());       // no dim past the cap, even with none elements
  EXPECT_TRUE(Shape({None, k2to40}).within_limits());
  EXPECT_FALSE(Shape({None, k2to40, k2to40}).within_limits());
  EXPECT_EQ(Shape({None, k2to40, k2to40}).num_elements(), -1);  // unknown stays unknown
  expect_error<InvalidArgument>([] { Shape({k2to40, k2to40}).num_elements(); },
                                {"(1099511627776, 1099511627776)", "more elements than a tensor may have"});
  expect_error<InvalidArgument>([] { core::make_tensor(DType::Float32, Shape{k2to62}); }, {"(4611686018427387904,)"});
}

TEST(HostileSizes, OverflowingShapesAreInvalidArgument) {
  // zeros of 2^62 float32 used to allocate 2^64 + 64 = 64 bytes and write past them.
  expect_error<InvalidArgument>([] { zeros(Shape{k2to62}); }, {"Fill", "(4611686018427387904,)", "2^48"});
  expect_error<InvalidArgument>([] { zeros(Shape{k2to40, k2to40}); }, {"Fill", "(1099511627776, 1099511627776)"});
  expect_error<InvalidArgument>([] { fill(Shape{3, k2to62}, 1.f); }, {"Fill", "(3, 4611686018427387904)"});
  // A target whose product wraps to the input's count used to be accepted.
  expect_error<InvalidArgument>([] { reshape(zeros({0}), Shape{int64_t{1} << 32, int64_t{1} << 32}); },
                                {"Reshape", "[4294967296, 4294967296]", "more elements"});
  expect_error<InvalidArgument>([] { reshape(constant({1, 2, 3, 4}), Shape{k2to62 + 1, 4}); },
                                {"Reshape", "[4611686018427387905, 4]"});
  expect_error<InvalidArgument>([] { tile(constant({1.f, 2.f}), {k2to62}); },
                                {"Tile", "multiples [4611686018427387904]", "shape (2,)"});
  expect_error<InvalidArgument>([] { tile(constant({{1.f}}), {k2to40, k2to40}); }, {"Tile", "(1099511627776, 1099511627776)"});
  expect_error<InvalidArgument>([] { pad(constant({1.f}), {{std::numeric_limits<int64_t>::max(), 1}}); },
                                {"Pad", "more elements"});
  expect_error<InvalidArgument>([] { one_hot(constant({0, 1}), k2to62); }, {"OneHot", "(2, 4611686018427387904)"});
  // Integer ranges whose span does not fit int64.
  expect_error<InvalidArgument>(
      [] { range(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 1, int64); },
      {"Range", "18446744073709551615 elements", "2^48"});
  EXPECT_EQ(range(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), k2to62, int64).size(), 4);
  kiln::testing::expect_tensor<int64_t>(
      range(std::numeric_limits<int64_t>::min() + 1, std::numeric_limits<int64_t>::max(), k2to62 + k2to62 / 2, int64), {3},
      {std::numeric_limits<int64_t>::min() + 1, -k2to62 / 2 + 1, k2to62 + 1});
  // While tracing the same inference runs: the trace fails, naming the op.
  auto f = kiln::function([](const Tensor& x) { return x + zeros(Shape{k2to62}); });
  expect_error<InvalidArgument>([&] { f(constant(1.f)); }, {"Fill", "(4611686018427387904,)"});
}

TEST(HostileSizes, WindowSizesThatWouldOverflowAreInvalidArgument) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Tensor image = zeros({1, 4, 4, 1});
  // SAME used to compute (in + stride - 1) / stride in int64: 0 rows for a stride near 2^63.
  expect_error<InvalidArgument>([&] { nn::max_pool2d(image, 2, kMax, "same"); },
                                {"MaxPool", "strides must be at most 2^48", "9223372036854775807"});
  expect_error<InvalidArgument>([&] { nn::avg_pool2d(image, kMax, 1, "valid"); }, {"AvgPool", "ksize must be at most 2^48"});
  expect_error<InvalidArgument>([&] { nn::conv2d(image, zeros({2, 2, 1, 1}), 1, "same", kMax); },
                                {"Conv2D", "dilations must be at most 2^48"});
  // Within the caps, a dilated window past 2^62 would overflow the padding.
  expect_error<InvalidArgument>([&] { nn::conv2d(image, zeros({1 << 15, 1, 1, 1}), 1, "same", Shape::kMaxElements); },
                                {"Conv2D", "window height after dilation", "(32768 - 1) * 281474976710656 + 1",
                                 "larger than 2^62"});
  // The largest strides still give TF's ceil(in / stride) = 1.
  EXPECT_EQ(nn::max_pool2d(image, 2, Shape::kMaxElements, "same").shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(nn::conv2d(image, zeros({2, 2, 1, 1}), Shape::kMaxElements, "same").shape(), (Shape{1, 1, 1, 1}));
}

TEST(HostileSizes, HugeButRepresentableSizesAreResourceExhausted) {
  // 2^40 float32 is 4 TiB, more than any test machine holds.
  expect_error<ResourceExhausted>([] { zeros(Shape{k2to40}); },
                                  {"Fill", "OOM when allocating", "(1099511627776,)", "float32", "4398046511104 bytes"});
  expect_error<ResourceExhausted>([] { one_hot(constant({3}), k2to40); },
                                  {"OneHot", "(1, 1099511627776)", "4398046511104 bytes"});
  expect_error<ResourceExhausted>([] { range(int64_t{0}, int64_t{1000000000000}); },
                                  {"Range", "(1000000000000,)", "int64", "8000000000000 bytes"});
  expect_error<ResourceExhausted>([] { range(0.0, 1e12, 1.0, float32); }, {"Range", "(1000000000000,)", "4000000000000 bytes"});
  // In a graph: the executor names the node (the memory plan leaves such a value to its step).
  auto f = kiln::function([](const Tensor& x) { return x + fill(Shape{k2to40}, 2.f); });
  expect_error<ResourceExhausted>([&] { f(constant(1.f)); }, {"(1099511627776,)", "4398046511104 bytes", "node", "(Fill)"});
}

TEST(HostileSizes, AllocationLimitCanBeLowered) {
  std::size_t machine = core::max_allocation_bytes();
  EXPECT_GT(machine, std::size_t{1} << 20);
  core::set_max_allocation_bytes(std::size_t{1} << 20);
  expect_error<ResourceExhausted>([] { zeros(Shape{1024, 1024}); }, {"Fill", "(1024, 1024)", "4194304 bytes"});
  EXPECT_EQ(zeros(Shape{1000}).size(), 1000);
  core::set_max_allocation_bytes(0);
  EXPECT_EQ(core::max_allocation_bytes(), machine);
  EXPECT_EQ(zeros(Shape{1024, 1024}).size(), 1024 * 1024);
}

TEST(HostileSizes, RangeBoundsBeyondInt64AreInvalidArgument) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // These used to give [] through a cast of an out-of-range double.
  expect_error<InvalidArgument>([] { range(0.0, 1e300); }, {"Range", "1e+300 elements", "more than int64"});
  expect_error<InvalidArgument>([&] { range(0.0, inf); }, {"Range", "inf elements"});
  expect_error<InvalidArgument>([&] { range(-inf, 0.0); }, {"Range"});
  expect_error<InvalidArgument>([&] { range(0.0, nan); }, {"Range", "NaN"});
  expect_error<InvalidArgument>([&] { range(nan, 1.0); }, {"Range", "NaN"});
  expect_error<InvalidArgument>([&] { range(0.0, 1.0, nan); }, {"Range", "NaN"});
  expect_error<InvalidArgument>([&] { range(inf, inf); }, {"Range", "NaN"});
  // Past Kiln's cap but within int64: the cap's error.
  expect_error<InvalidArgument>([] { range(0.0, 1e18); }, {"Range", "(1000000000000000000,)", "2^48"});
  // Empty and small ranges still work.
  EXPECT_EQ(range(0.0, -1e300).size(), 0);
  EXPECT_EQ(range(0.0, 1.0, inf).size(), 0);
  kiln::testing::expect_tensor<double>(range(0.0, 1.0, 0.25), {4}, {0.0, 0.25, 0.5, 0.75});
}
