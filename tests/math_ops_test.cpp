// Elementwise math ops: inference (broadcasting, unknown dims), kernel values
// (every path: same shape, scalar, strided broadcast, parallel, empty),
// errors, operators, in-place reuse and the fusion loops.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "kiln/function.h"
#include "kiln/gradient.h"
#include "kiln/math.h"
#include "op_test_util.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"
#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_tensor;
using testing::expect_tensor_near;

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const double kNaN64 = std::numeric_limits<double>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Bitwise equality of float values (NaN equals NaN, -0 differs from +0).
template <class T>
void expect_bits(const Tensor& t, const Shape& shape, const std::vector<T>& values) {
  ASSERT_EQ(t.dtype(), dtype_of<T>) << dtype_name(t.dtype());
  ASSERT_EQ(t.shape(), shape) << t.shape().to_string();
  std::vector<T> got = t.to_vector<T>();
  ASSERT_EQ(got.size(), values.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(std::memcmp(&got[i], &values[i], sizeof(T)), 0)
        << "element " << i << ": " << got[i] << " vs " << values[i];
}

using kiln::testing::infer1;
schema::TensorType tt(DType d, Shape s) { return {d, s}; }

// ---- Inference ----------------------------------------------------------------
TEST(MathOpsInfer, BroadcastKnownShapes) {
  EXPECT_EQ(infer1("Add", {tt(float32, {2, 3}), tt(float32, {3})}).shape, (Shape{2, 3}));
  EXPECT_EQ(infer1("Mul", {tt(float32, {4, 1, 5}), tt(float32, {3, 1})}).shape, (Shape{4, 3, 5}));
  EXPECT_EQ(infer1("Sub", {tt(int32, {}), tt(int32, {7})}).shape, (Shape{7}));
  EXPECT_EQ(infer1("Maximum", {tt(float64, {0, 3}), tt(float64, {1, 3})}).shape, (Shape{0, 3}));
  EXPECT_EQ(infer1("Add", {tt(float32, {1, 1}), tt(float32, {})}).shape, (Shape{1, 1}));
}

TEST(MathOpsInfer, BroadcastUnknownDims) {
  // A known dim > 1 decides; 1, 0 or another unknown leave the dim unknown.
  EXPECT_EQ(infer1("Add", {tt(float32, {None, 3}), tt(float32, {3})}).shape, (Shape{None, 3}));
  EXPECT_EQ(infer1("Add", {tt(float32, {None}), tt(float32, {4})}).shape, (Shape{4}));
  EXPECT_EQ(infer1("Add", {tt(float32, {4}), tt(float32, {None})}).shape, (Shape{4}));
  EXPECT_EQ(infer1("Add", {tt(float32, {None}), tt(float32, {1})}).shape, (Shape{None}));
  EXPECT_EQ(infer1("Add", {tt(float32, {None}), tt(float32, {0})}).shape, (Shape{None}));
  EXPECT_EQ(infer1("Add", {tt(float32, {None}), tt(float32, {None})}).shape, (Shape{None}));
  EXPECT_EQ(infer1("Add", {tt(float32, {2, None}), tt(float32, {None, 5})}).shape, (Shape{2, 5}));
  EXPECT_EQ(infer1("Add", {tt(float32, {None, 1}), tt(float32, {})}).shape, (Shape{None, 1}));
  EXPECT_EQ(infer1("Less", {tt(int64, {None, 2}), tt(int64, {3, 1})}).shape, (Shape{3, 2}));
}

TEST(MathOpsInfer, UnknownRank) {
  schema::TensorType r = infer1("Add", {tt(float32, Shape::unknown_rank()), tt(float32, {3})});
  EXPECT_FALSE(r.shape.has_known_rank());
  EXPECT_EQ(r.dtype, float32);
  EXPECT_FALSE(infer1("Exp", {tt(float64, Shape::unknown_rank())}).shape.has_known_rank());
  EXPECT_FALSE(infer1("Select", {tt(boolean, {2}), tt(int32, Shape::unknown_rank()), tt(int32, {2})})
                   .shape.has_known_rank());
}

TEST(MathOpsInfer, OutputDTypes) {
  EXPECT_EQ(infer1("Add", {tt(uint8, {2}), tt(uint8, {2})}).dtype, uint8);
  EXPECT_EQ(infer1("Add", {tt(string, {2}), tt(string, {})}).dtype, string);
  EXPECT_EQ(infer1("Equal", {tt(float32, {2}), tt(float32, {2})}).dtype, boolean);
  EXPECT_EQ(infer1("NotEqual", {tt(string, {2}), tt(string, {})}).dtype, boolean);
  EXPECT_EQ(infer1("GreaterEqual", {tt(int32, {None}), tt(int32, {})}).dtype, boolean);
  EXPECT_EQ(infer1("LogicalNot", {tt(boolean, {None})}).shape, (Shape{None}));
  EXPECT_EQ(infer1("Abs", {tt(int64, {None, 2})}).dtype, int64);
  EXPECT_EQ(infer1("Sqrt", {tt(float64, {None, 2})}).dtype, float64);
  schema::TensorType s = infer1("Select", {tt(boolean, {None, 1}), tt(float32, {3}), tt(float32, {})});
  EXPECT_EQ(s.dtype, float32);
  EXPECT_EQ(s.shape, (Shape{None, 3}));
  schema::TensorType c = infer1("ClipByValue", {tt(int32, {None, 4}), tt(int32, {}), tt(int32, {4})});
  EXPECT_EQ(c.dtype, int32);
  EXPECT_EQ(c.shape, (Shape{None, 4}));
}

TEST(MathOpsInfer, Errors) {
  expect_error<InvalidArgument>([] { infer1("Add", {tt(float32, {2, 3}), tt(float32, {4})}); },
                                {"Add", "x and y", "(2, 3)", "(4,)", "3 vs 4"});
  expect_error<InvalidArgument>([] { infer1("Add", {tt(float32, {None, 3}), tt(float32, {2, 4})}); },
                                {"Add", "(None, 3)", "(2, 4)"});
  expect_error<InvalidArgument>([] { infer1("Mul", {tt(float32, {2}), tt(float64, {2})}); },
                                {"Mul", "float32", "float64"});
  expect_error<InvalidArgument>([] { infer1("Sqrt", {tt(int32, {None})}); },
                                {"Sqrt", "floating-point", "int32", "kiln::cast"});
  expect_error<InvalidArgument>([] { infer1("Sub", {tt(string, {}), tt(string, {})}); },
                                {"Sub", "string", "float32, float64, int32, int64, uint8"});
  expect_error<InvalidArgument>([] { infer1("Add", {tt(boolean, {}), tt(boolean, {})}); },
                                {"Add", "bool"});
  expect_error<InvalidArgument>([] { infer1("LogicalOr", {tt(int32, {}), tt(int32, {})}); },
                                {"LogicalOr", "bool", "int32"});
  expect_error<InvalidArgument>([] { infer1("Select", {tt(int32, {2}), tt(float32, {2}), tt(float32, {2})}); },
                                {"Select", "condition", "bool", "int32"});
  expect_error<InvalidArgument>([] { infer1("Select", {tt(boolean, {3}), tt(float32, {2}), tt(float32, {2})}); },
                                {"Select", "condition", "(3,)", "(2,)"});
  expect_error<InvalidArgument>(
      [] { infer1("ClipByValue", {tt(int32, {2}), tt(float32, {}), tt(int32, {})}); },
      {"ClipByValue", "x", "int32", "min", "float32"});
}

// ---- Binary arithmetic -----------------------------------------------------------
TEST(MathOpsBinary, WeakTypingKeepsTensorDType) {
  Tensor x = constant({1.5f, -2.0f});
  expect_tensor<float>(x * 2, {2}, {3.0f, -4.0f});
  expect_tensor<float>(2 * x, {2}, {3.0f, -4.0f});
  expect_tensor<float>(x + 0.25, {2}, {1.75f, -1.75f});  // a double literal, still float32
  Tensor i = constant({1, 2});
  expect_tensor<int32_t>(i + 1, {2}, {2, 3});
  expect_tensor<int32_t>(i * 2.0, {2}, {2, 4});  // 2.0 is exactly an int
  Tensor u = constant(std::vector<uint8_t>{1, 2});
  expect_tensor<uint8_t>(u + 3, {2}, {4, 5});
}

TEST(MathOpsBinary, WeakTypingErrors) {
  Tensor i = constant({1, 2});
  expect_error<InvalidArgument>([&] { (void)(i + 1.5); }, {"add", "1.5", "int32"});
  Tensor u = constant(std::vector<uint8_t>{1});
  expect_error<InvalidArgument>([&] { (void)(u * 300); }, {"multiply", "300", "uint8"});
  Tensor f = constant({1.0f});
  expect_error<InvalidArgument>([&] { (void)(f + "a"); }, {"add", "float32"});
}

TEST(MathOpsBinary, MixedTensorDTypesNameBoth) {
  Tensor a = constant({1.0f, 2.0f});
  Tensor b = constant({1.0, 2.0});
  expect_error<InvalidArgument>([&] { (void)(a + b); }, {"Add", "float32", "float64"});
  expect_error<InvalidArgument>([&] { (void)maximum(a, b); }, {"Maximum", "float32", "float64"});
  Tensor i = constant({1, 2});
  expect_error<InvalidArgument>([&] { (void)(i / constant({int64_t(1), int64_t(2)})); },
                                {"RealDiv", "int32", "int64"});
  expect_error<InvalidArgument>([&] { (void)(i / a); }, {"RealDiv", "int32", "float32"});
}

// Values are checked against each op's reference formula by the registry
// test (RegistryReference); what a formula in double precision cannot say
// stays here.
TEST(MathOpsBinary, AddSubMulValues) {
  expect_tensor<int64_t>(multiply(constant({int64_t(3), int64_t(-4)}), int64_t(5)), {2}, {15, -20});
  // Integer overflow wraps (two's complement), with no undefined behaviour.
  const int32_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();
  expect_tensor<int32_t>(constant({kMax}) + 1, {1}, {kMin});
  expect_tensor<int32_t>(constant({kMin}) - 1, {1}, {kMax});
  expect_tensor<int32_t>(constant({kMax}) * 2, {1}, {-2});
  expect_tensor<uint8_t>(constant(std::vector<uint8_t>{250, 3}) + 10, {2}, {4, 13});
  expect_tensor<uint8_t>(constant(std::vector<uint8_t>{16}) * 16, {1}, {0});
}

TEST(MathOpsBinary, StringAdd) {
  expect_tensor<std::string>(constant("a") + constant("a"), {}, {"aa"});
  expect_tensor<std::string>(constant({"x", "yz"}) + "!", {2}, {"x!", "yz!"});
  expect_tensor<std::string>("<" + constant({"p"}), {1}, {"<p"});
  expect_tensor<std::string>(add(constant({{"a"}, {"b"}}), constant({"1", "2"})), {2, 2},
                             {"a1", "a2", "b1", "b2"});
  expect_error<InvalidArgument>([] { (void)(constant("a") * constant("b")); }, {"Mul", "string"});
}

TEST(MathOpsBinary, DivideFollowsTrueDiv) {
  expect_tensor<double>(constant({7, -7}) / 2, {2}, {3.5, -3.5});
  expect_tensor<double>(divide(constant({int64_t(1)}), int64_t(4)), {1}, {0.25});
  expect_tensor<float>(constant(std::vector<uint8_t>{3, 200}) / 2, {2}, {1.5f, 100.0f});
  expect_tensor<float>(constant({1.0f, -3.0f}) / 4, {2}, {0.25f, -0.75f});
  expect_tensor<double>(constant({1.0}) / 0.0, {1}, {std::numeric_limits<double>::infinity()});
  expect_tensor<double>(7 / constant({2}), {1}, {3.5});
}

TEST(MathOpsBinary, FloorDivModIntsFollowPython) {
  Tensor a = constant({7, -7, 7, -7, 6, 0});
  Tensor b = constant({2, 2, -2, -2, 3, 5});
  expect_tensor<int32_t>(floordiv(a, b), {6}, {3, -4, -4, 3, 2, 0});
  expect_tensor<int32_t>(a % b, {6}, {1, 1, -1, -1, 0, 0});
  Tensor a64 = constant(std::vector<int64_t>{-9, 9});
  expect_tensor<int64_t>(floordiv(a64, int64_t(4)), {2}, {-3, 2});
  expect_tensor<int64_t>(mod(a64, int64_t(-4)), {2}, {-1, -3});
  Tensor u = constant(std::vector<uint8_t>{7, 200});
  expect_tensor<uint8_t>(floordiv(u, 3), {2}, {2, 66});
  expect_tensor<uint8_t>(u % 3, {2}, {1, 2});
}

TEST(MathOpsBinary, IntegerDivisionByZeroRaisesAndOverflowIsDefined) {
  // As TF: an integer divisor holding 0 is InvalidArgument (eager, traced and
  // folded alike); INT_MIN // -1 wraps.
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  expect_error<InvalidArgument>([] { (void)floordiv(constant({5, -5, 0}), 0); },
                                {"FloorDiv", "integer division by zero"});
  expect_error<InvalidArgument>([] { (void)mod(constant({5, -5, 0}), constant({1, 0, 2})); },
                                {"FloorMod", "integer division by zero"});
  expect_error<InvalidArgument>([] { (void)floordiv(constant(std::vector<uint8_t>{9}), 0); },
                                {"FloorDiv", "by zero"});
  expect_error<InvalidArgument>([] { (void)mod(constant(std::vector<int64_t>{9}), int64_t(0)); },
                                {"FloorMod", "by zero"});
  expect_error<InvalidArgument>([] { (void)truncatediv(constant({9}), 0); }, {"TruncateDiv", "by zero"});
  expect_error<InvalidArgument>([] { (void)truncatemod(constant({9}), 0); }, {"TruncateMod", "by zero"});
  // In a graph too (an integer FloorDiv is not fused, so its kernel checks).
  auto f = kiln::function([](const Tensor& x, const Tensor& y) { return floordiv(x * 2, y) + 1; });
  expect_tensor<int32_t>(f(constant({7, -7}), constant({2, 3})), {2}, {8, -4});
  expect_error<InvalidArgument>([&] { (void)f(constant({7, -7}), constant({2, 0})); },
                                {"FloorDiv", "integer division by zero"});
  expect_tensor<int32_t>(floordiv(constant({kMin, 8}), -1), {2}, {kMin, -8});
  expect_tensor<int32_t>(mod(constant({kMin, 8}), -1), {2}, {0, 0});
  expect_tensor<int32_t>(truncatediv(constant({kMin, 8}), -1), {2}, {kMin, -8});
  expect_tensor<int32_t>(truncatemod(constant({kMin, 8}), -1), {2}, {0, 0});
  const int64_t kMin64 = std::numeric_limits<int64_t>::min();
  expect_tensor<int64_t>(floordiv(constant(std::vector<int64_t>{kMin64}), int64_t(-1)), {1}, {kMin64});
  // Float division by zero is not an error.
  expect_bits<float>(floordiv(constant({1.0f, -1.0f}), 0.0f), {2}, {kInf, -kInf});
}

TEST(MathOpsBinary, FloorDivModFloatsFollowTensorFlow) {
  Tensor a = constant({7.5f, -7.5f, 7.5f, -7.5f, 6.0f, -6.0f});
  Tensor b = constant({2.0f, 2.0f, -2.0f, -2.0f, -3.0f, 3.0f});
  expect_bits<float>(floordiv(a, b), {6}, {3.0f, -4.0f, -4.0f, 3.0f, -2.0f, -2.0f});
  // fmod moved to the divisor's sign when nonzero; an exact zero stays fmod's.
  expect_bits<float>(a % b, {6}, {1.5f, 0.5f, -0.5f, -1.5f, 0.0f, -0.0f});
  // floordiv is floor(x / y): TF's floordiv(1, 0.1) = 10 (NumPy's divmod: 9),
  // floordiv(inf, 8) = inf (NumPy: nan).
  expect_bits<double>(floordiv(constant({1.0, 7.0}), 0.1), {2}, {10.0, 70.0});
  expect_bits<float>(floordiv(constant({1.0f}), 0.1f), {1}, {10.0f});
  expect_bits<float>(floordiv(constant({kInf, -kInf, kNaN}), 8.0f), {3}, {kInf, -kInf, kNaN});
  expect_bits<double>(mod(constant({7.0}), 0.1), {1}, {std::fmod(7.0, 0.1)});
  // The sign of zero: mod(-0, 1) is -0, mod(+0, -1) is +0.
  expect_bits<float>(mod(constant({-0.0f, 0.0f}), constant({1.0f, -1.0f})), {2}, {-0.0f, 0.0f});
  expect_bits<float>(floordiv(constant({-0.0f, 0.0f}), 1.0f), {2}, {-0.0f, 0.0f});
  // Division by zero: inf and nan.
  expect_bits<float>(floordiv(constant({1.0f, -1.0f}), 0.0f), {2}, {kInf, -kInf});
  Tensor m = mod(constant({1.0f, kInf}), constant({0.0f, 8.0f}));
  EXPECT_TRUE(std::isnan(m.to_vector<float>()[0]));
  EXPECT_TRUE(std::isnan(m.to_vector<float>()[1]));
}

TEST(MathOpsBinary, TruncateDivModRoundTowardZero) {
  Tensor a = constant({7, -7, 7, -7, 6, 0});
  Tensor b = constant({2, 2, -2, -2, 3, 5});
  expect_tensor<int32_t>(truncatediv(a, b), {6}, {3, -3, -3, 3, 2, 0});
  expect_tensor<int32_t>(truncatemod(a, b), {6}, {1, -1, 1, -1, 0, 0});
  expect_tensor<int64_t>(truncatediv(constant(std::vector<int64_t>{-9, 9}), int64_t(4)), {2}, {-2, 2});
  expect_tensor<uint8_t>(truncatemod(constant(std::vector<uint8_t>{200}), 7), {1}, {4});
  // Floats: truncatemod is fmod (the dividend's sign, -0 kept); truncatediv
  // takes integers only, as TF's kernels.
  expect_bits<float>(truncatemod(constant({7.5f, -7.5f, -0.0f}), constant({2.0f, 2.0f, 1.0f})), {3},
                     {1.5f, -1.5f, -0.0f});
  expect_error<InvalidArgument>([] { (void)truncatediv(constant({1.0f}), 2.0f); },
                                {"TruncateDiv", "float32", "int32"});
}

TEST(MathOpsBinary, SquaredDifference) {
  std::vector<float> special =
      squared_difference(constant({kInf, 0.0f, kNaN}), constant({kInf, -0.0f, 1.0f})).to_vector<float>();
  EXPECT_TRUE(std::isnan(special[0]));
  EXPECT_EQ(std::signbit(special[1]), false);
  EXPECT_TRUE(std::isnan(special[2]));
  // Gradient 2 (x - y) and its negation, reduced over broadcast dims.
  Tensor x = constant({1.0f, 4.0f}), y = constant(2.0f);
  GradientTape tape;
  tape.watch(x);
  tape.watch(y);
  std::vector<Tensor> g = tape.gradient(squared_difference(x, y), {x, y});
  expect_tensor<float>(g[0], {2}, {-2.0f, 4.0f});
  expect_tensor<float>(g[1], {}, {-2.0f});
}

TEST(MathOpsBinary, Pow) {
  expect_tensor<float>(pow(constant({2.0f, 9.0f, 4.0f}), constant({3.0f, 0.5f, -1.0f})), {3},
                       {8.0f, 3.0f, 0.25f});
  expect_tensor<double>(pow(constant({1.5}), 2), {1}, {std::pow(1.5, 2.0)});
  expect_tensor<int32_t>(pow(constant({2, -2, 3, 0, 7}), constant({10, 3, 0, 0, 1})), {5},
                         {1024, -8, 1, 1, 7});
  // Negative integer exponents are an error, as TF's "Integers to negative
  // integer powers are not allowed", eagerly and traced.
  expect_error<InvalidArgument>([] { pow(constant({2, 1, -1}), constant({1, -5, 2})); },
                                {"Pow", "integers to negative integer powers are not allowed"});
  expect_error<InvalidArgument>([] { pow(constant(std::vector<int64_t>{2}), int64_t(-1)); }, {"negative integer powers"});
  auto traced = function([](const Tensor& x, const Tensor& y) { return pow(x, y) + 1; });
  expect_error<InvalidArgument>([&] { traced(constant({2, 3}), constant({2, -1})); }, {"negative integer powers"});
  expect_tensor<int32_t>(traced(constant({2, 3}), constant({2, 0})), {2}, {5, 2});
  expect_tensor<int64_t>(pow(constant(std::vector<int64_t>{3}), int64_t(40)), {1},
                         {static_cast<int64_t>(12157665459056928801ull)});  // wraps
  expect_tensor<uint8_t>(pow(constant(std::vector<uint8_t>{2, 3}), 4), {2}, {16, 81});
}

TEST(MathOpsBinary, MaximumMinimumPropagateNaN) {
  Tensor a = constant({1.0f, kNaN, 3.0f, -0.5f});
  Tensor b = constant({2.0f, 1.0f, kNaN, -1.5f});
  Tensor mx = maximum(a, b), mn = minimum(a, b);
  std::vector<float> vx = mx.to_vector<float>(), vn = mn.to_vector<float>();
  EXPECT_EQ(vx[0], 2.0f);
  EXPECT_TRUE(std::isnan(vx[1]));
  EXPECT_TRUE(std::isnan(vx[2]));
  EXPECT_EQ(vx[3], -0.5f);
  EXPECT_EQ(vn[0], 1.0f);
  EXPECT_TRUE(std::isnan(vn[1]));
  EXPECT_TRUE(std::isnan(vn[2]));
  EXPECT_EQ(vn[3], -1.5f);
  expect_tensor<int32_t>(maximum(constant({1, 5, -3}), 2), {3}, {2, 5, 2});
  expect_tensor<int64_t>(minimum(constant(std::vector<int64_t>{1, 5, -3}), int64_t(2)), {3}, {1, 2, -3});
}

// ---- Broadcasting paths -----------------------------------------------------------
// A naive reference for a + b on any broadcast shapes.
std::vector<float> naive_broadcast_add(const Tensor& a, const Tensor& b, const Shape& out) {
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>(), r;
  int rank = out.rank();
  auto offset = [&](const Shape& s, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (int d = 0; d < s.rank(); ++d) {
      int64_t i = idx[d + rank - s.rank()];
      off = off * s[d] + (s[d] == 1 ? 0 : i);
    }
    return off;
  };
  std::vector<int64_t> idx(rank, 0);
  for (int64_t n = 0; n < out.num_elements(); ++n) {
    r.push_back(va[offset(a.shape(), idx)] + vb[offset(b.shape(), idx)]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}
Tensor iota(const Shape& s, float scale = 1.0f) {
  std::vector<float> v(static_cast<std::size_t>(s.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * scale;
  return constant(v, s);
}

TEST(MathOpsBroadcast, StridedPathsMatchNaive) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 1, 3}, {4, 1}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {3, 1}}, {{5, 1, 1, 2}, {1, 3, 2, 1}},
      {{1, 6}, {6, 1}},    {{2, 3}, {1, 1}}, {{1}, {2, 2}},       {{4, 1, 3}, {2, 1}}};
  for (const auto& [sa, sb] : cases) {
    Tensor a = iota(sa), b = iota(sb, 100.0f);
    Tensor r = a + b;
    Tensor r2 = b + a;  // the broadcast input on the left
    std::vector<float> expect = naive_broadcast_add(a, b, r.shape());
    EXPECT_EQ(r.to_vector<float>(), expect) << sa.to_string() << " + " << sb.to_string();
    EXPECT_EQ(r2.to_vector<float>(), expect) << sb.to_string() << " + " << sa.to_string();
  }
  expect_tensor<float>(iota({2, 1, 3}) + iota({4, 1}, 10.0f), {2, 4, 3},
                       {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32,
                        3, 4, 5, 13, 14, 15, 23, 24, 25, 33, 34, 35});
}

TEST(MathOpsBroadcast, LargeTensorsUseParallelPaths) {
  const int64_t rows = 700, cols = 300;  // > the parallel grain
  Tensor a = iota({rows, cols}, 0.5f);
  Tensor row = iota({cols}, 2.0f);
  Tensor col = iota({rows, 1}, 3.0f);
  std::vector<float> va = a.to_vector<float>();
  std::vector<float> same = (a + a).to_vector<float>();
  std::vector<float> with_row = (a * row).to_vector<float>();
  std::vector<float> with_col = (a - col).to_vector<float>();
  std::vector<float> outer = (col + row).to_vector<float>();
  std::vector<float> scaled = (a * 3.0f).to_vector<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      int64_t i = r * cols + c;
      float x = va[i], rv = static_cast<float>(c) * 2.0f, cv = static_cast<float>(r) * 3.0f;
      ASSERT_EQ(same[i], x + x);
      ASSERT_EQ(with_row[i], x * rv);
      ASSERT_EQ(with_col[i], x - cv);
      ASSERT_EQ(outer[i], cv + rv);
      ASSERT_EQ(scaled[i], x * 3.0f);
    }
  }
  std::vector<float> e = exp(a * 0.001f).to_vector<float>();
  // float32 exp is the vectorized formula (ops/vector_math.h), within 1.5 ulp of exact.
  for (int64_t i = 0; i < rows * cols; i += 997) {
    const double want = std::exp(static_cast<double>(va[i] * 0.001f));
    if (std::isinf(static_cast<float>(want))) ASSERT_EQ(e[i], static_cast<float>(want)) << i;
    else ASSERT_NEAR(e[i], want, want * 1.5 * 0x1p-23) << i;
  }
}

TEST(MathOpsBroadcast, EmptyTensors) {
  Tensor e = zeros({0, 3});
  expect_tensor<float>(e + constant({1.0f, 2.0f, 3.0f}), {0, 3}, {});
  expect_tensor<float>(e * 2, {0, 3}, {});
  expect_tensor<float>(exp(e), {0, 3}, {});
  expect_tensor<bool>(e < zeros({2, 1, 1}), {2, 0, 3}, {});
  expect_tensor<float>(where(zeros({0}, boolean), zeros({0}), 1.0f), {0}, {});
  expect_tensor<std::string>(constant(std::vector<std::string>{}) + "a", {0}, {});
}

// ---- Unary --------------------------------------------------------------------------
TEST(MathOpsUnary, SignedOpsOnIntsAndFloats) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  expect_tensor<int32_t>(negative(constant({3, -4, 0, kMin})), {4}, {-3, 4, 0, kMin});
  expect_tensor<float>(-constant({1.5f, -2.0f}), {2}, {-1.5f, 2.0f});
  expect_tensor<uint8_t>(negative(constant(std::vector<uint8_t>{1, 0})), {2}, {255, 0});
  expect_tensor<int32_t>(abs(constant({3, -4, 0, kMin})), {4}, {3, 4, 0, kMin});
  expect_bits<double>(abs(constant({-2.5, 0.0, -0.0})), {3}, {2.5, 0.0, 0.0});
  expect_tensor<int64_t>(sign(constant(std::vector<int64_t>{-9, 0, 4})), {3}, {-1, 0, 1});
  expect_tensor<uint8_t>(sign(constant(std::vector<uint8_t>{0, 7})), {2}, {0, 1});
  expect_bits<float>(sign(constant({-3.5f, 0.0f, 2.0f, kNaN})), {4}, {-1.0f, 0.0f, 1.0f, kNaN});
  expect_tensor<int32_t>(sign(constant({-7, 0, 3})), {3}, {-1, 0, 1});
  expect_tensor<int32_t>(square(constant({-3, 4, 46341})), {3}, {9, 16, -2147479015});  // wraps
  expect_tensor<double>(square(constant({-1.5})), {1}, {2.25});
  expect_tensor<int32_t>(relu(constant({-3, 0, 5})), {3}, {0, 0, 5});
  expect_bits<float>(relu(constant({-3.5f, 2.0f, kNaN})), {3}, {0.0f, 2.0f, kNaN});
}

// TF's sign of zero: negative(+0) is -0 (IEEE negation), sign(±0) is +0.
TEST(MathOpsUnary, SignOfZero) {
  expect_bits<float>(negative(constant({0.0f, -0.0f, kInf, kNaN})), {4}, {-0.0f, 0.0f, -kInf, -kNaN});
  expect_bits<double>(-constant({0.0}), {1}, {-0.0});
  expect_bits<float>(sign(constant({-0.0f, 0.0f, -kInf, kInf})), {4}, {0.0f, 0.0f, -1.0f, 1.0f});
  // The same bits traced and fused (a chain small enough for the vector lanes).
  auto f = kiln::function([](const Tensor& x) { return -(-(-x)) * 1.0f; });
  expect_bits<float>(f(constant({0.0f, -0.0f, 2.0f})), {3}, {-0.0f, 0.0f, -2.0f});
}

// sign has a zero gradient (TF's), not none.
TEST(MathOpsUnary, SignHasAZeroGradient) {
  Tensor x = constant({-1.5, 0.0, 2.0});
  GradientTape tape;
  tape.watch(x);
  Tensor g = tape.gradient(sign(x) * 3.0 + x, x);
  expect_tensor<double>(g, {3}, {1.0, 1.0, 1.0});
  GradientTape tape2;
  tape2.watch(x);
  Tensor g2 = tape2.gradient(sign(x), x);
  ASSERT_TRUE(g2.defined());
  expect_tensor<double>(g2, {3}, {0.0, 0.0, 0.0});
}

TEST(MathOpsUnary, Rounding) {
  Tensor x = constant({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.7f, -0.7f, -0.2f});
  expect_bits<float>(floor(x), {9}, {-3.0f, -2.0f, -1.0f, 0.0f, 1.0f, 2.0f, 0.0f, -1.0f, -1.0f});
  expect_bits<float>(ceil(x), {9}, {-2.0f, -1.0f, -0.0f, 1.0f, 2.0f, 3.0f, 1.0f, -0.0f, -0.0f});
  // Half to even; the sign of zero kept.
  const std::vector<float> even = {-2.0f, -2.0f, -0.0f, 0.0f, 2.0f, 2.0f, 1.0f, -1.0f, -0.0f};
  expect_bits<float>(round(x), {9}, even);
  expect_bits<float>(rint(x), {9}, even);
  // The largest double below 0.5 rounds to 0 (floor(x + 0.5) would give 1).
  expect_bits<double>(round(constant({0.49999999999999994, 4503599627370497.0})), {2},
                      {0.0, 4503599627370497.0});
  const std::vector<float> special = {0.0f, -0.0f, kInf, -kInf, kNaN, 1e30f};
  for (auto op : {&floor, &ceil, &round, &rint})
    expect_bits<float>(op(constant(special), SourceLocation::current()), {6}, special);
  expect_tensor<int32_t>(round(constant({-3, 7})), {2}, {-3, 7});
  expect_error<InvalidArgument>([] { (void)floor(constant({1})); }, {"Floor", "floating-point", "int32"});
  // No gradient, as TF (None).
  Tensor v = constant({1.5});
  GradientTape tape;
  tape.watch(v);
  EXPECT_FALSE(tape.gradient(floor(v) + round(v) + ceil(v) + rint(v), v).defined());
}

TEST(MathOpsUnary, FloatFunctionsMatchLibm) {
  const std::vector<float> v = {0.25f, 1.0f, 2.5f, 9.0f};
  Tensor x = constant(v);
  auto map = [&](auto f) {
    std::vector<float> r;
    for (float e : v) r.push_back(f(e));
    return r;
  };
  expect_bits<float>(sqrt(x), {4}, map([](float e) { return std::sqrt(e); }));
  expect_bits<float>(rsqrt(x), {4}, map([](float e) { return 1.0f / std::sqrt(e); }));
  expect_bits<float>(sin(x), {4}, map([](float e) { return std::sin(e); }));
  expect_bits<float>(cos(x), {4}, map([](float e) { return std::cos(e); }));
  // exp, log, log1p, tanh and sigmoid use Kiln's vectorized float32 formulas
  // (ops/vector_math.h, within 2.5 ulp): the registry test checks them
  // against their references, tests/vector_math_test.cpp sweeps them.
  expect_tensor_near<double>(sigmoid(constant({0.0, -1000.0, 1000.0})), {3}, {0.5, 0.0, 1.0}, 0);
  expect_tensor<double>(sqrt(constant({4.0, 2.25})), {2}, {2.0, 1.5});
  expect_tensor<double>(log(constant({1.0, 0.0})), {2}, {0.0, -std::numeric_limits<double>::infinity()});
  EXPECT_TRUE(std::isnan(sqrt(constant(-1.0)).item<double>()));
}

TEST(MathOpsUnary, FloatOpsRejectInts) {
  Tensor i = constant({1, 2});
  expect_error<InvalidArgument>([&] { (void)exp(i); }, {"Exp", "floating-point", "int32"});
  expect_error<InvalidArgument>([&] { (void)sqrt(constant(std::vector<uint8_t>{4})); },
                                {"Sqrt", "uint8"});
  expect_error<InvalidArgument>([&] { (void)sigmoid(constant(int64_t(1))); }, {"Sigmoid", "int64"});
  expect_error<InvalidArgument>([&] { (void)abs(constant({true})); }, {"Abs", "bool"});
  expect_error<InvalidArgument>([&] { (void)negative(constant("s")); }, {"Neg", "string"});
  expect_error<InvalidArgument>([&] { (void)-constant("s"); }, {"Neg", "string"});
}

// ---- Comparisons, logic, where, clip --------------------------------------------------
TEST(MathOpsCompare, NumbersAndStrings) {
  Tensor a = constant({1.0f, 2.0f, 3.0f});
  expect_tensor<bool>(2 < a, {3}, {false, false, true});  // a scalar on the left
  expect_tensor<bool>(equal(constant(std::vector<uint8_t>{0, 9}), 9), {2}, {false, true});
  expect_tensor<bool>(equal(constant({true, false}), true), {2}, {true, false});
  expect_tensor<bool>(constant({"a", "b"}) == "a", {2}, {true, false});
  expect_tensor<bool>(not_equal(constant({"a", "b"}), constant({"a", "c"})), {2}, {false, true});
  EXPECT_FALSE(static_cast<bool>(equal(constant(kNaN), kNaN)));
  expect_error<InvalidArgument>([] { (void)(constant("a") < "b"); }, {"Less", "string"});
  expect_error<InvalidArgument>([&] { (void)(a == constant({1.0, 2.0, 3.0})); },
                                {"Equal", "float32", "float64"});
  expect_error<InvalidArgument>([&] { (void)(a > constant({1.0f, 2.0f})); },
                                {"Greater", "(3,)", "(2,)"});
}

TEST(MathOpsCompare, Logic) {
  Tensor p = constant({true, true, false, false});
  Tensor q = constant({true, false, true, false});
  expect_tensor<bool>(p & q, {4}, {true, false, false, false});  // the operators
  expect_tensor<bool>(logical_and(p, true), {4}, {true, true, false, false});
  expect_tensor<bool>(logical_or(constant({{true}, {false}}), constant({true, false})), {2, 2},
                      {true, true, true, false});
  expect_tensor<bool>(logical_not(constant(false)), {}, {true});
  // `&` on integers is bitwise, as TF's Tensor operator (bitwise_audio_test.cpp); floats are neither.
  expect_error<InvalidArgument>([] { (void)(constant({1.5f}) & constant({0.5f})); }, {"BitwiseAnd", "float32"});
  expect_error<InvalidArgument>([] { (void)!constant(1.0f); }, {"LogicalNot", "bool", "float32"});
  expect_error<InvalidArgument>([&] { (void)(p | 1); }, {"logical_or", "bool"});
}

TEST(MathOpsCompare, Where) {
  Tensor c = constant({true, false, true});
  expect_tensor<float>(where(c, constant({1.0f, 2.0f, 3.0f}), constant({-1.0f, -2.0f, -3.0f})), {3},
                       {1.0f, -2.0f, 3.0f});
  // Three-way broadcasting: (2, 1), (3,) and a scalar.
  expect_tensor<double>(where(constant({{true}, {false}}), constant({1.0, 2.0, 3.0}), 0), {2, 3},
                        {1.0, 2.0, 3.0, 0.0, 0.0, 0.0});
  expect_tensor<int32_t>(where(constant({false, true}), constant({{1, 2}, {3, 4}, {5, 6}}),
                               constant({{10}, {20}, {30}})),
                         {3, 2}, {10, 2, 20, 4, 30, 6});
  expect_tensor<int32_t>(where(c, 7, constant({1, 2, 3})), {3}, {7, 2, 7});
  expect_tensor<std::string>(where(c, constant("y"), "n"), {3}, {"y", "n", "y"});
  expect_tensor<int32_t>(where(c, 1, 2), {3}, {1, 2, 1});
  // A strided (non-trivial) broadcast of all three.
  expect_tensor<float>(where(constant({{true, false}}), iota({3, 1}), iota({3, 2}, -1.0f)), {3, 2},
                       {0.0f, -1.0f, 1.0f, -3.0f, 2.0f, -5.0f});
  expect_error<InvalidArgument>([&] { (void)where(constant({1, 0, 1}), 1, 2); },
                                {"Select", "condition", "bool", "int32"});
  expect_error<InvalidArgument>([&] { (void)where(c, constant({1, 2, 3}), 1.5); },
                                {"where", "1.5", "int32"});
  expect_error<InvalidArgument>([&] { (void)where(c, constant({1, 2, 3}), constant({1.0f})); },
                                {"Select", "int32", "float32"});
  expect_error<InvalidArgument>([&] { (void)where(constant({true, false}), constant({1, 2, 3}), 0); },
                                {"Select", "(2,)", "(3,)"});
}

TEST(MathOpsCompare, Clip) {
  expect_tensor<float>(clip(constant({-2.5f, 0.5f, 3.0f}), -1, 2), {3}, {-1.0f, 0.5f, 2.0f});
  expect_tensor<int32_t>(clip(constant({-5, 0, 9}), 0, 4), {3}, {0, 0, 4});
  expect_tensor<uint8_t>(clip(constant(std::vector<uint8_t>{1, 200}), 10, 100), {2}, {10, 100});
  // Tensor bounds broadcast with x.
  expect_tensor<double>(clip(constant({{-2.0, 0.5}, {3.0, 1.0}}), constant({-1.0, 0.75}), 1.5), {2, 2},
                        {-1.0, 0.75, 1.5, 1.0});
  expect_tensor<int32_t>(clip(constant({5}), constant({{0}, {6}}), constant({{3}, {9}})), {2, 1}, {3, 6});
  // min > max gives max, as NumPy; NaN stays NaN.
  expect_tensor<float>(clip(constant({0.0f}), 2, 1), {1}, {1.0f});
  EXPECT_TRUE(std::isnan(clip(constant(kNaN64), 0, 1).item<double>()));
  expect_error<InvalidArgument>([] { (void)clip(constant({1, 2}), 0.5, 2); }, {"clip", "0.5", "int32"});
  expect_error<InvalidArgument>([] { (void)clip(constant({1, 2}), constant(0.5f), 2); },
                                {"ClipByValue", "min", "float32", "int32"});
  expect_error<InvalidArgument>([] { (void)clip(constant({true}), constant(false), constant(true)); },
                                {"ClipByValue", "bool"});
}

// ---- Operators record the user's line --------------------------------------------------
struct RecordingHandler : detail::DispatchHandler {
  std::vector<std::pair<std::string, int>> calls;
  runtime::TensorList dispatch(const detail::OpDef& op, std::span<const Tensor> inputs,
                               schema::Attrs&& attrs, const SourceLocation& loc) override {
    calls.emplace_back(std::string(op.name), static_cast<int>(loc.line()));
    return runtime::run_eager(op, inputs, attrs);
  }
  int line_of(std::string_view op) const {
    for (const auto& [name, line] : calls)
      if (name == op) return line;
    return -1;
  }
};

TEST(MathOpsOperators, RecordSourceLine) {
  Tensor x = constant({1.0f, 2.0f});
  RecordingHandler h;
  runtime::DispatchHandlerGuard guard(&h);
  int line = __LINE__ + 1;
  Tensor r = x * 2;
  EXPECT_EQ(h.line_of("Mul"), line);
  line = __LINE__ + 1;
  Tensor s = 3 - x;
  EXPECT_EQ(h.line_of("Sub"), line);
  line = __LINE__ + 1;
  Tensor n = -x;
  EXPECT_EQ(h.line_of("Neg"), line);
  line = __LINE__ + 1;
  Tensor e = exp(x);
  EXPECT_EQ(h.line_of("Exp"), line);
  line = __LINE__ + 1;
  Tensor d = constant({1, 2}) / 2;
  EXPECT_EQ(h.line_of("RealDiv"), line);
  EXPECT_EQ(h.line_of("Cast"), line);
  expect_tensor<float>(r, {2}, {2.0f, 4.0f});
  expect_tensor<float>(s, {2}, {2.0f, 1.0f});
  expect_tensor<double>(d, {2}, {0.5, 1.0});
}

// ---- In-place reuse ----------------------------------------------------------------------
TEST(MathOpsInPlace, HeldTensorsAreNeverOverwritten) {
  Tensor x = constant({1.0f, 2.0f, 3.0f});
  Tensor t = x * 2;
  Tensor u = t + 1;
  expect_tensor<float>(x, {3}, {1.0f, 2.0f, 3.0f});
  expect_tensor<float>(t, {3}, {2.0f, 4.0f, 6.0f});
  expect_tensor<float>(u, {3}, {3.0f, 5.0f, 7.0f});
  EXPECT_NE(u.data<float>(), t.data<float>());
  Tensor v = exp(t);
  expect_tensor<float>(t, {3}, {2.0f, 4.0f, 6.0f});
  EXPECT_NE(v.data<float>(), t.data<float>());
  // A scalar tensor the user holds, next to a temporary scalar constant.
  Tensor s = constant(5);
  Tensor w = s + 1;
  EXPECT_EQ(s.item<int32_t>(), 5);
  EXPECT_EQ(w.item<int32_t>(), 6);
}

TEST(MathOpsInPlace, TemporariesAreReused) {
  Tensor x = constant({1.0f, 2.0f, 3.0f});
  Tensor t = x * 2;
  const float* p = t.data<float>();
  Tensor r = std::move(t) + 1;  // as in (x * 2) + 1
  EXPECT_EQ(r.data<float>(), p);
  expect_tensor<float>(r, {3}, {3.0f, 5.0f, 7.0f});
  Tensor e = exp(std::move(r));
  EXPECT_EQ(e.data<float>(), p);
  expect_tensor_near<float>(e, {3}, {std::exp(3.0f), std::exp(5.0f), std::exp(7.0f)}, 3e-7);
  expect_tensor<float>(x, {3}, {1.0f, 2.0f, 3.0f});

  // A chain of temporaries needs no new buffers once the first is made.
  Tensor big = iota({64, 64});
  Tensor warm = ((big * 2) + 1) * 3;
  int64_t before = core::allocator_stats().cache_hits + core::allocator_stats().system_allocations;
  Tensor chain = -(((big * 2) + 1) * 3);
  int64_t after = core::allocator_stats().cache_hits + core::allocator_stats().system_allocations;
  // One buffer for big * 2 (the scalar constants 2, 1, 3 come from the
  // per-thread scalar cache); without reuse the three later ops would take
  // three more.
  EXPECT_EQ(after - before, 1);
  std::vector<float> vb = big.to_vector<float>(), vc = chain.to_vector<float>();
  for (std::size_t i = 0; i < vb.size(); ++i) ASSERT_EQ(vc[i], -((vb[i] * 2 + 1) * 3));
}

TEST(MathOpsInPlace, AliasedBroadcastKernelsAreCorrect) {
  Tensor row = constant({10.0f, 20.0f});
  // The donated temporary is the full-shape input; the other broadcasts.
  Tensor m = iota({3, 2});
  const float* p = nullptr;
  Tensor t = m * 1;
  p = t.data<float>();
  Tensor r = std::move(t) + row;
  EXPECT_EQ(r.data<float>(), p);
  expect_tensor<float>(r, {3, 2}, {10, 21, 12, 23, 14, 25});
  Tensor t2 = m * 1;
  Tensor r2 = row - std::move(t2);
  expect_tensor<float>(r2, {3, 2}, {10, 19, 8, 17, 6, 15});
  Tensor c = constant({true, false});
  Tensor t3 = m * 1;
  Tensor r3 = where(c, std::move(t3), row);
  expect_tensor<float>(r3, {3, 2}, {0, 20, 2, 20, 4, 20});
  Tensor t4 = m * 1;
  Tensor r4 = clip(std::move(t4), 1, 4);
  expect_tensor<float>(r4, {3, 2}, {1, 1, 2, 3, 4, 4});
  expect_tensor<float>(m, {3, 2}, {0, 1, 2, 3, 4, 5});
}

// ---- Traced graphs compute what eager code does ---------------------------------------------
TEST(MathOpsTraced, UnknownDimsMatchEagerBitwise) {
  auto body = [](const Tensor& x, const Tensor& row) {
    Tensor y = sigmoid(x * row + 0.5f) - tanh(x) / (abs(row) + 1);
    Tensor z = where(x > row, sqrt(abs(y)), clip(y, -0.25f, 0.25f));
    return maximum(z, floordiv(x, 0.75f) % 2.0f) + pow(abs(x), 1.5f);
  };
  FunctionOptions o;
  o.input_signature = std::vector<TensorSpec>{TensorSpec({None, 3}, float32), TensorSpec({3}, float32)};
  auto f = kiln::function(body, o);
  Tensor row = constant({0.3f, -1.2f, 2.5f});
  for (int64_t n : {1, 4, 7}) {
    Tensor x = iota({n, 3}, 0.37f) - 1.0f;
    Tensor eager = body(x, row);
    Tensor traced = f(x, row);
    expect_bits<float>(traced, eager.shape(), eager.to_vector<float>());
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

// ---- Registry: flags, fusion loops, samples -----------------------------------------------
const char* const kElementwiseOps[] = {
    "Add", "Sub", "Mul", "RealDiv", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "Pow",
    "Maximum", "Minimum", "SquaredDifference", "Neg", "Abs", "Sign", "Floor", "Ceil", "Round", "Rint", "Square", "Relu", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Tanh",
    "Sigmoid", "Sin", "Cos", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
    "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "Select", "ClipByValue"};

TEST(MathOpsRegistry, FlagsAndLoops) {
  auto& reg = schema::OpRegistry::global();
  for (const char* name : kElementwiseOps) {
    const detail::OpDef& op = reg.get(name);
    EXPECT_TRUE(op.is(schema::kElementwise)) << name;
    EXPECT_TRUE(op.is(schema::kMayRunInPlace)) << name;
    EXPECT_EQ(op.elementwise[static_cast<int>(DType::String)], nullptr) << name;
  }
  auto loop = [&](const char* name, DType d) {
    return reg.get(name).elementwise[static_cast<int>(d)];
  };
  EXPECT_NE(loop("Add", DType::Float32), nullptr);
  EXPECT_NE(loop("Add", DType::UInt8), nullptr);
  EXPECT_EQ(loop("Add", DType::Bool), nullptr);
  EXPECT_NE(loop("Exp", DType::Float64), nullptr);
  EXPECT_EQ(loop("Exp", DType::Int32), nullptr);
  EXPECT_NE(loop("Equal", DType::Bool), nullptr);
  EXPECT_NE(loop("LogicalNot", DType::Bool), nullptr);
  EXPECT_EQ(loop("LogicalNot", DType::Float32), nullptr);
  EXPECT_NE(loop("Select", DType::Int64), nullptr);
  EXPECT_NE(loop("ClipByValue", DType::Float32), nullptr);
  // Integer division raises on a zero divisor, which a fused loop cannot:
  // only its float loops exist.
  for (const char* name : {"FloorDiv", "FloorMod", "TruncateMod"}) {
    EXPECT_NE(loop(name, DType::Float32), nullptr) << name;
    EXPECT_EQ(loop(name, DType::Int32), nullptr) << name;
  }
  EXPECT_EQ(loop("TruncateDiv", DType::Int64), nullptr);
}

// The fusion loops give bitwise the same results as the eager kernels.
TEST(MathOpsRegistry, LoopsMatchEagerKernels) {
  auto& reg = schema::OpRegistry::global();
  std::vector<float> a = {0.3f, -1.7f, 2.5f, 9.0f, -0.0f, 1e-3f, 7.25f};
  std::vector<float> b = {1.1f, 0.4f, -2.5f, 3.0f, 2.0f, -5.5f, 0.5f};
  Tensor ta = constant(a), tb = constant(b);
  std::vector<float> out(a.size());
  const void* in2[] = {a.data(), b.data()};
  const std::pair<const char*, Tensor> binary[] = {
      {"Add", ta + tb},           {"Sub", ta - tb},           {"Mul", ta * tb},
      {"RealDiv", ta / tb},       {"FloorDiv", floordiv(ta, tb)}, {"FloorMod", ta % tb},
      {"Pow", pow(abs(ta), tb)},  {"Maximum", maximum(ta, tb)}, {"Minimum", minimum(ta, tb)},
      {"TruncateMod", truncatemod(ta, tb)}, {"SquaredDifference", squared_difference(ta, tb)}};
  for (const auto& [name, eager] : binary) {
    std::vector<float> pa = a;
    if (std::string(name) == "Pow")
      for (float& v : pa) v = std::fabs(v);
    const void* in[] = {pa.data(), b.data()};
    reg.get(name).elementwise[static_cast<int>(DType::Float32)](in, out.data(), 7);
    expect_bits<float>(eager, {7}, out);
  }
  std::vector<float> pos = {0.3f, 1.7f, 2.5f, 9.0f, 0.5f, 1e-3f, 7.25f};
  Tensor tp = constant(pos);
  const std::pair<const char*, Tensor> unary[] = {
      {"Neg", -ta},          {"Abs", abs(ta)},     {"Sign", sign(ta)},   {"Square", square(ta)},
      {"Relu", relu(ta)},    {"Sqrt", sqrt(tp)},   {"Rsqrt", rsqrt(tp)}, {"Exp", exp(ta)},
      {"Log", log(tp)},      {"Log1p", log1p(tp)}, {"Tanh", tanh(ta)},   {"Sigmoid", sigmoid(ta)},
      {"Sin", sin(ta)},      {"Cos", cos(ta)},     {"Floor", floor(ta)}, {"Ceil", ceil(ta)},
      {"Round", round(ta)},  {"Rint", rint(ta)}};
  for (const auto& [name, eager] : unary) {
    std::string n = name;
    bool positive = n == "Sqrt" || n == "Rsqrt" || n == "Log" || n == "Log1p";
    const void* in[] = {positive ? pos.data() : a.data()};
    reg.get(name).elementwise[static_cast<int>(DType::Float32)](in, out.data(), 7);
    expect_bits<float>(eager, {7}, out);
  }
  bool lt[7];
  reg.get("Less").elementwise[static_cast<int>(DType::Float32)](in2, lt, 7);
  std::vector<bool> expect_lt = (ta < tb).to_vector<bool>();
  for (int i = 0; i < 7; ++i) EXPECT_EQ(lt[i], expect_lt[i]) << i;
  bool cond[7] = {true, false, true, true, false, false, true};
  float lo = -1.0f, hi = 2.0f;
  std::vector<float> vlo(7, lo), vhi(7, hi);
  const void* in3[] = {cond, a.data(), b.data()};
  reg.get("Select").elementwise[static_cast<int>(DType::Float32)](in3, out.data(), 7);
  expect_bits<float>(where(constant(std::vector<bool>(cond, cond + 7)), ta, tb), {7}, out);
  const void* inc[] = {a.data(), vlo.data(), vhi.data()};
  reg.get("ClipByValue").elementwise[static_cast<int>(DType::Float32)](inc, out.data(), 7);
  expect_bits<float>(clip(ta, lo, hi), {7}, out);
}

// The strided broadcast path computes the same bits as the contiguous one.
TEST(MathOpsRegistry, BroadcastMatchesContiguousBitwise) {
  Tensor m = iota({5, 4}, 0.37f);
  Tensor row = constant({1.3f, -0.7f, 2.9f, 0.11f});
  std::vector<float> tiled;
  for (int r = 0; r < 5; ++r)
    for (float v : row.to_vector<float>()) tiled.push_back(v);
  Tensor full = constant(tiled, Shape{5, 4});
  EXPECT_EQ((m / row).to_vector<float>(), (m / full).to_vector<float>());
  EXPECT_EQ(pow(m, row).to_vector<float>(), pow(m, full).to_vector<float>());
  EXPECT_EQ(floordiv(m, row).to_vector<float>(), floordiv(m, full).to_vector<float>());
}

}  // namespace
}  // namespace kiln
