// Reductions: sum, mean, prod, max, min, any, all, argmax, argmin.
#include "test_util.h"
#include "op_test_util.h"

#include <cmath>
#include <limits>
#include <numeric>

#include "schema/op_def.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::infer1;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

namespace {


schema::Attrs axes_attrs(std::vector<int64_t> axes, bool keep) {
  return schema::Attrs{{"axes", std::move(axes)}, {"keepdims", keep}};
}

// A (2, 3, 4) float tensor holding 0..23.
Tensor iota234() {
  std::vector<float> v(24);
  std::iota(v.begin(), v.end(), 0.f);
  return constant(v, Shape{2, 3, 4});
}

}  // namespace

// ---- inference ---------------------------------------------------------------

TEST(ReduceOpsInfer, ShapesAndKeepdims) {
  auto t = infer1("Sum", {{float32, {2, 3, 4}}}, axes_attrs({1}, false));
  EXPECT_EQ(t.dtype, float32);
  EXPECT_EQ(t.shape, (Shape{2, 4}));
  EXPECT_EQ(infer1("Sum", {{float32, {2, 3, 4}}}, axes_attrs({-1, 0}, true)).shape, (Shape{1, 3, 1}));
  EXPECT_EQ(infer1("Mean", {{int32, {2, 3}}}, axes_attrs({}, false)).shape, (Shape{2, 3}));
  EXPECT_EQ(infer1("Any", {{boolean, {5}}}, axes_attrs({0}, false)).dtype, boolean);
}

TEST(ReduceOpsInfer, UnknownDimsAndRank) {
  EXPECT_EQ(infer1("Max", {{float32, {None, 3, None}}}, axes_attrs({1}, false)).shape,
            (Shape{None, None}));
  EXPECT_EQ(infer1("Max", {{float32, {None, 3}}}, axes_attrs({0}, true)).shape, (Shape{1, 3}));
  EXPECT_FALSE(infer1("Sum", {{float32, Shape::unknown_rank()}}, axes_attrs({0}, false))
                   .shape.has_known_rank());
  schema::Attrs all{{"axes", std::vector<int64_t>{}}, {"keepdims", false}, {"reduce_all", true}};
  EXPECT_EQ(infer1("Sum", {{float32, Shape::unknown_rank()}}, all).shape, Shape{});
  schema::Attrs all_keep{{"axes", std::vector<int64_t>{}}, {"keepdims", true}, {"reduce_all", true}};
  EXPECT_FALSE(infer1("Sum", {{float32, Shape::unknown_rank()}}, all_keep).shape.has_known_rank());
  EXPECT_EQ(infer1("Sum", {{float32, {None, 2}}}, all_keep).shape, (Shape{1, 1}));
}

TEST(ReduceOpsInfer, ArgMaxShapesAndDTypes) {
  schema::Attrs a{{"axis", int64_t(-1)}, {"output_type", int32}};
  auto t = infer1("ArgMax", {{float32, {None, 5}}}, a);
  EXPECT_EQ(t.dtype, int32);
  EXPECT_EQ(t.shape, (Shape{None}));
  schema::Attrs b{{"axis", int64_t(0)}, {"output_type", int64}};
  EXPECT_EQ(infer1("ArgMin", {{int32, {4, 2, 3}}}, b).shape, (Shape{2, 3}));
  EXPECT_FALSE(infer1("ArgMin", {{int32, Shape::unknown_rank()}}, b).shape.has_known_rank());
}

// ---- values -----------------------------------------------------------------

TEST(ReduceOps, SumAllAndAxes) {
  Tensor x = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  expect_tensor<float>(sum(x), {}, {21});
  expect_tensor<float>(sum(x, 0), {3}, {5, 7, 9});
  expect_tensor<float>(sum(x, 1), {2}, {6, 15});
  expect_tensor<float>(sum(x, -1, true), {2, 1}, {6, 15});
  expect_tensor<float>(sum(x, {0, 1}, true), {1, 1}, {21});
  expect_tensor<float>(sum(x, Axes::none()), {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReduceOps, MiddleAndSplitAxes) {
  Tensor x = iota234();
  // axis 1: [kept, reduced, kept]
  expect_tensor<float>(sum(x, 1), {2, 4}, {12, 15, 18, 21, 48, 51, 54, 57});
  // axes 0 and 2: [reduced, kept, reduced]
  expect_tensor<float>(sum(x, {0, 2}), {3}, {6 + 54, 22 + 70, 38 + 86});
  // axes 0 and 1: [reduced, kept] with contiguous columns
  expect_tensor<float>(sum(x, {0, 1}), {4}, {60, 66, 72, 78});
  expect_tensor<float>(max(x, {0, 2}, true), {1, 3, 1}, {15, 19, 23});
  expect_tensor<float>(min(x, {1}), {2, 4}, {0, 1, 2, 3, 12, 13, 14, 15});
}

TEST(ReduceOps, SizeOneDimsAreSkipped) {
  Tensor x = constant({{{1.f, 2.f}}, {{3.f, 4.f}}});  // (2, 1, 2)
  expect_tensor<float>(sum(x, 1), {2, 2}, {1, 2, 3, 4});
  expect_tensor<float>(mean(x, {1, 2}), {2}, {1.5f, 3.5f});
  expect_tensor<float>(sum(constant(5.f)), {}, {5});
}

TEST(ReduceOps, MeanOfIntsIsIntegerMean) {
  expect_tensor<int32_t>(mean(constant({1, 2})), {}, {1});
  expect_tensor<int32_t>(mean(constant({-1, -2})), {}, {-1});  // truncates toward zero
  expect_tensor<int32_t>(mean(constant({{1, 2, 4}, {3, 5, 8}}), 1), {2}, {2, 5});
  expect_tensor<uint8_t>(mean(constant(std::vector<uint8_t>{250, 250, 251})), {}, {250});
  expect_tensor<double>(mean(constant({1.0, 2.0})), {}, {1.5});
}

TEST(ReduceOps, IntegerSumsWrapAsTensorFlow) {
  int32_t big = std::numeric_limits<int32_t>::max();
  expect_tensor<int32_t>(sum(constant({big, 1})), {}, {std::numeric_limits<int32_t>::min()});
  expect_tensor<uint8_t>(sum(constant(std::vector<uint8_t>{200, 100})), {}, {44});
  expect_tensor<int64_t>(sum(constant({int64_t(1) << 40, int64_t(3)})), {}, {(int64_t(1) << 40) + 3});
}

TEST(ReduceOps, ProdMaxMin) {
  Tensor x = constant({{1, -2, 3}, {4, 5, -6}});
  expect_tensor<int32_t>(prod(x), {}, {720});
  expect_tensor<int32_t>(prod(x, 0), {3}, {4, -10, -18});
  expect_tensor<int32_t>(max(x, 1), {2}, {3, 5});
  expect_tensor<int32_t>(min(x, 1), {2}, {-2, -6});
  expect_tensor<int32_t>(max(x, 0, true), {1, 3}, {4, 5, 3});
  expect_tensor<double>(prod(constant({0.5, 4.0})), {}, {2.0});
}

TEST(ReduceOps, NaNPropagatesThroughMaxAndMin) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(max(constant({1.f, nan, 3.f})).item<float>()));
  EXPECT_TRUE(std::isnan(min(constant({nan, 1.f, 3.f})).item<float>()));
  std::vector<float> v(100, 1.f);
  v[37] = nan;
  EXPECT_TRUE(std::isnan(max(constant(v)).item<float>()));
}

TEST(ReduceOps, AnyAll) {
  Tensor b = constant({{true, false}, {false, false}});
  expect_tensor<bool>(any(b), {}, {true});
  expect_tensor<bool>(all(b), {}, {false});
  expect_tensor<bool>(any(b, 1), {2}, {true, false});
  expect_tensor<bool>(all(constant({{true, true}, {false, true}}), 0), {2}, {false, true});
  expect_tensor<bool>(any(b, 0, true), {1, 2}, {true, false});
}

TEST(ReduceOps, EmptyInputsGiveIdentities) {
  Tensor e = zeros({0, 3});
  expect_tensor<float>(sum(e), {}, {0});
  expect_tensor<float>(sum(e, 0), {3}, {0, 0, 0});
  expect_tensor<float>(sum(e, 1), {0}, {});
  expect_tensor<float>(prod(e, 0), {3}, {1, 1, 1});
  float inf = std::numeric_limits<float>::infinity();
  expect_tensor<float>(max(e, 0), {3}, {-inf, -inf, -inf});
  expect_tensor<float>(min(e), {}, {inf});
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  expect_tensor<int32_t>(mean(zeros({0}, int32)), {}, {0});
  expect_tensor<int32_t>(max(zeros({2, 0}, int32), 1), {2},
                         {std::numeric_limits<int32_t>::lowest(), std::numeric_limits<int32_t>::lowest()});
  expect_tensor<bool>(all(zeros({0}, boolean)), {}, {true});
  expect_tensor<bool>(any(zeros({0}, boolean)), {}, {false});
}

TEST(ReduceOps, LargeSumIsBlockedAndParallel) {
  // 1M ones: a plain float running sum would stall at 2^24; blocks keep it exact.
  int64_t n = 1 << 20;
  Tensor x = ones({n});
  expect_tensor<float>(sum(x), {}, {static_cast<float>(n)});
  expect_tensor<float>(mean(x), {}, {1.f});
  // 20M ones exceed 2^24 and still come out exact.
  int64_t big = 20'000'000;
  expect_tensor<float>(sum(ones({big})), {}, {static_cast<float>(big)});
  // Rows and columns of a large matrix.
  Tensor m = ones({512, 1024});
  std::vector<float> rows(512, 1024.f), cols(1024, 512.f);
  expect_tensor<float>(sum(m, 1), {512}, rows);
  expect_tensor<float>(sum(m, 0), {1024}, cols);
  // A sum is the same every time (no dependence on thread scheduling).
  std::vector<float> v(300'000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.f / static_cast<float>(i + 1);
  Tensor h = constant(v);
  float first = sum(h).item<float>();
  for (int k = 0; k < 3; ++k) EXPECT_EQ(sum(h).item<float>(), first);
  EXPECT_NEAR(first, 13.1887, 1e-3);
}

TEST(ReduceOps, ArgMaxArgMin) {
  Tensor x = constant({{1.f, 5.f, 3.f}, {4.f, 2.f, 6.f}});
  expect_tensor<int64_t>(argmax(x, 1), {2}, {1, 2});
  expect_tensor<int64_t>(argmax(x, 0), {3}, {1, 0, 1});
  expect_tensor<int64_t>(argmin(x, -1), {2}, {0, 1});
  expect_tensor<int32_t>(argmin(x, 0, int32), {3}, {0, 1, 0});
  // Ties take the first index.
  expect_tensor<int64_t>(argmax(constant({2, 7, 7, 1})), {}, {1});
  expect_tensor<int64_t>(argmin(constant({{3, 3}, {3, 3}}), 0), {2}, {0, 0});
  // NaN counts as the extreme value; the first one wins.
  float nan = std::numeric_limits<float>::quiet_NaN();
  expect_tensor<int64_t>(argmax(constant({1.f, nan, 9.f, nan})), {}, {1});
  expect_tensor<int64_t>(argmin(constant({1.f, -3.f, nan})), {}, {2});
  // Empty outer dims give empty results.
  expect_tensor<int64_t>(argmax(zeros({0, 3}), 1), {0}, {});
}

// ---- errors ------------------------------------------------------------------

TEST(ReduceOpsErrors, BadAxes) {
  Tensor x = zeros({2, 3});
  expect_error<InvalidArgument>([&] { sum(x, 2); }, {"Sum", "axis 2", "rank 2", "[-2, 2)"});
  expect_error<InvalidArgument>([&] { mean(x, -3); }, {"Mean", "axis -3", "rank 2"});
  expect_error<InvalidArgument>([&] { max(x, {1, -1}); }, {"Max", "axis -1", "repeated", "[1, -1]", "rank 2"});
  expect_error<InvalidArgument>([&] { sum(constant(1.f), 0); }, {"Sum", "axis 0", "rank 0"});
}

TEST(ReduceOpsErrors, BadDTypes) {
  expect_error<InvalidArgument>([] { any(constant({1, 2})); }, {"Any", "bool", "int32"});
  expect_error<InvalidArgument>([] { sum(constant({true})); }, {"Sum", "number", "bool"});
  expect_error<InvalidArgument>([] { max(constant({"a"})); }, {"Max", "string"});
  expect_error<InvalidArgument>([] { argmax(constant({true})); }, {"ArgMax", "bool"});
  expect_error<InvalidArgument>([] { argmax(constant({1.f}), 0, float32); },
                                {"ArgMax", "output_type", "float32"});
}

TEST(ReduceOpsErrors, ArgMaxAxis) {
  expect_error<InvalidArgument>([] { argmax(zeros({2, 3}), 2); }, {"ArgMax", "axis 2", "rank 2"});
  expect_error<InvalidArgument>([] { argmin(constant(1.f)); }, {"ArgMin", "axis 0", "rank 0"});
  expect_error<InvalidArgument>([] { argmax(zeros({2, 0}), 1); },
                                {"ArgMax", "axis 1", "(2, 0)", "empty"});
}
