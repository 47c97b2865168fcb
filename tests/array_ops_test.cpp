// Shape and array ops: reshape, transpose, expand_dims, squeeze, concat,
// stack, unstack, split, slicing and indexing, gather, one_hot, tile, pad.
#include "test_util.h"
#include "op_test_util.h"

#include <numeric>

#include "core/tensor_impl.h"
#include "schema/op_def.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::infer1;
using kiln::testing::expect_tensor;

namespace {


std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

Tensor iota_tensor(const Shape& s) { return constant(iota(s.num_elements()), s); }

const void* buffer_of(const Tensor& t) { return core::raw_data(t); }

}  // namespace

// ---- Reshape, ExpandDims, Squeeze --------------------------------------------

TEST(ArrayOps, ReshapeViewsTheBuffer) {
  Tensor x = iota_tensor({2, 3});
  Tensor y = reshape(x, {3, 2});
  expect_tensor<float>(y, {3, 2}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(buffer_of(x), buffer_of(y));
  expect_tensor<float>(reshape(x, {None}), {6}, {0, 1, 2, 3, 4, 5});
  expect_tensor<float>(reshape(x, {-1, 3, 1}), {2, 3, 1}, {0, 1, 2, 3, 4, 5});
  expect_tensor<float>(reshape(constant({7.f}), {}), {}, {7});
  expect_tensor<float>(reshape(zeros({0, 4}), {2, -1, 2}), {2, 0, 2}, {});
  expect_tensor<std::string>(reshape(constant({"a", "b"}), {2, 1}), {2, 1}, {"a", "b"});
}

TEST(ArrayOps, ReshapeInfer) {
  schema::Attrs a{{"shape", std::vector<int64_t>{-1, 4}}};
  EXPECT_EQ(infer1("Reshape", {{float32, {None, 2, 2}}}, a).shape, (Shape{None, 4}));
  EXPECT_EQ(infer1("Reshape", {{float32, {3, 2, 2}}}, a).shape, (Shape{3, 4}));
  EXPECT_EQ(infer1("Reshape", {{float32, Shape::unknown_rank()}}, a).shape, (Shape{None, 4}));
}

TEST(ArrayOps, ReshapeErrors) {
  Tensor x = zeros({2, 3});
  expect_error<InvalidArgument>([&] { reshape(x, {4}); },
                                {"Reshape", "(2, 3)", "6 elements", "[4]", "4 elements"});
  expect_error<InvalidArgument>([&] { reshape(x, {-1, -1}); }, {"Reshape", "[-1, -1]", "one -1"});
  expect_error<InvalidArgument>([&] { reshape(x, {4, -1}); },
                                {"Reshape", "(2, 3)", "6 elements", "[4, -1]", "multiple of 4"});
  expect_error<InvalidArgument>([&] { reshape(zeros({0}), {0, -1}); }, {"Reshape", "[0, -1]", "0 elements"});
}

TEST(ArrayOps, ExpandDimsAndSqueeze) {
  Tensor x = iota_tensor({2, 3});
  Tensor e = expand_dims(x, 0);
  expect_tensor<float>(e, {1, 2, 3}, iota(6));
  EXPECT_EQ(buffer_of(x), buffer_of(e));
  EXPECT_EQ(expand_dims(x, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(expand_dims(x, 1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(expand_dims(constant(1), 0).shape(), (Shape{1}));
  Tensor s = iota_tensor({1, 2, 1, 3, 1});
  expect_tensor<float>(squeeze(s), {2, 3}, iota(6));
  EXPECT_EQ(buffer_of(s), buffer_of(squeeze(s)));
  EXPECT_EQ(squeeze(s, {0, -1}).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(squeeze(zeros({1, 0})).shape(), (Shape{0}));
  EXPECT_EQ(squeeze(constant({{5}})).shape(), Shape{});
}

TEST(ArrayOps, ExpandDimsSqueezeInfer) {
  EXPECT_EQ(infer1("ExpandDims", {{float32, {None, 3}}}, {{"axis", int64_t(1)}}).shape,
            (Shape{None, 1, 3}));
  schema::Attrs named{{"axes", std::vector<int64_t>{0}}};
  EXPECT_EQ(infer1("Squeeze", {{float32, {None, 3}}}, named).shape, (Shape{3}));
  schema::Attrs every{{"axes", std::vector<int64_t>{}}};
  EXPECT_EQ(infer1("Squeeze", {{float32, {1, 3, 1}}}, every).shape, (Shape{3}));
  EXPECT_FALSE(infer1("Squeeze", {{float32, {None, 3}}}, every).shape.has_known_rank());
}

TEST(ArrayOps, ExpandDimsSqueezeErrors) {
  Tensor x = zeros({2, 3});
  expect_error<InvalidArgument>([&] { expand_dims(x, 3); }, {"ExpandDims", "axis 3", "rank 2", "[-3, 2]"});
  expect_error<InvalidArgument>([&] { squeeze(x, {0}); }, {"Squeeze", "axis 0", "(2, 3)", "size is 2"});
  expect_error<InvalidArgument>([&] { squeeze(x, {2}); }, {"Squeeze", "axis 2", "rank 2"});
}

// ---- Transpose ----------------------------------------------------------------

TEST(ArrayOps, TransposeValues) {
  Tensor x = iota_tensor({2, 3});
  expect_tensor<float>(transpose(x), {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_tensor<float>(transpose(x, {0, 1}), {2, 3}, iota(6));
  Tensor y = iota_tensor({2, 3, 4});
  // (2, 3, 4) -> (4, 2, 3)
  Tensor t = transpose(y, {2, 0, 1});
  ASSERT_EQ(t.shape(), (Shape{4, 2, 3}));
  std::vector<float> got = t.to_vector<float>();
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(got[(a * 2 + b) * 3 + c], b * 12 + c * 4 + a);
  // Default perm reverses all dims; size-1 dims are skipped.
  Tensor z = transpose(iota_tensor({2, 1, 3}));
  expect_tensor<float>(z, {3, 1, 2}, {0, 3, 1, 4, 2, 5});
  expect_tensor<std::string>(transpose(constant({{"a", "b"}, {"c", "d"}})), {2, 2}, {"a", "c", "b", "d"});
  expect_tensor<float>(transpose(zeros({0, 3})), {3, 0}, {});
}

TEST(ArrayOps, TransposeLargeTiled) {
  // Large enough for tiling and parallel chunks; NHWC -> NCHW merges HW.
  Tensor x = iota_tensor({3, 40, 50, 7});
  Tensor t = transpose(x, {0, 3, 1, 2});
  ASSERT_EQ(t.shape(), (Shape{3, 7, 40, 50}));
  std::vector<float> got = t.to_vector<float>();
  bool ok = true;
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 7; ++c)
      for (int h = 0; h < 40; ++h)
        for (int w = 0; w < 50; ++w)
          ok &= got[((n * 7 + c) * 40 + h) * 50 + w] == static_cast<float>(((n * 40 + h) * 50 + w) * 7 + c);
  EXPECT_TRUE(ok);
  Tensor m = iota_tensor({300, 500});
  std::vector<float> mt = transpose(m).to_vector<float>();
  ok = true;
  for (int i = 0; i < 500; ++i)
    for (int j = 0; j < 300; ++j) ok &= mt[i * 300 + j] == static_cast<float>(j * 500 + i);
  EXPECT_TRUE(ok);
}

TEST(ArrayOps, TransposeInferAndErrors) {
  schema::Attrs a{{"perm", std::vector<int64_t>{1, 0}}};
  EXPECT_EQ(infer1("Transpose", {{float32, {None, 3}}}, a).shape, (Shape{3, None}));
  EXPECT_EQ(infer1("Transpose", {{float32, Shape::unknown_rank()}}, a).shape, (Shape{None, None}));
  Tensor x = zeros({2, 3});
  expect_error<InvalidArgument>([&] { transpose(x, {0}); }, {"Transpose", "perm [0]", "(2, 3)", "rank 2"});
  expect_error<InvalidArgument>([&] { transpose(x, {0, 0}); }, {"Transpose", "[0, 0]", "repeated"});
  expect_error<InvalidArgument>([&] { transpose(x, {0, 2}); }, {"Transpose", "[0, 2]", "out of range"});
}

// ---- Concat, Stack, Unstack -----------------------------------------------------

TEST(ArrayOps, ConcatValues) {
  Tensor a = constant({{1, 2}, {3, 4}}), b = constant({{5, 6}});
  expect_tensor<int32_t>(concat({a, b}, 0), {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor<int32_t>(concat({a, constant({{7}, {8}})}, -1), {2, 3}, {1, 2, 7, 3, 4, 8});
  expect_tensor<int32_t>(concat({a}, 1), {2, 2}, {1, 2, 3, 4});
  expect_tensor<int32_t>(concat({a, zeros({0, 2}, int32), b}, 0), {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor<std::string>(concat({constant({"x"}), constant({"y", "z"})}, 0), {3}, {"x", "y", "z"});
}

TEST(ArrayOps, ConcatInferUnknownDims) {
  schema::Attrs a{{"axis", int64_t(0)}};
  EXPECT_EQ(infer1("Concat", {{float32, {None, 3}}, {float32, {2, None}}}, a).shape, (Shape{None, 3}));
  EXPECT_EQ(infer1("Concat", {{float32, {4, 3}}, {float32, {2, None}}}, a).shape, (Shape{6, 3}));
  EXPECT_EQ(infer1("Concat", {{float32, Shape::unknown_rank()}, {float32, {2, 5}}}, a).shape,
            (Shape{None, 5}));
}

TEST(ArrayOps, ConcatErrors) {
  expect_error<InvalidArgument>([] { concat({zeros({2, 3}), zeros({2, 4})}, 0); },
                                {"Concat", "input 1", "(2, 4)", "(2, 3)", "axis 0"});
  expect_error<InvalidArgument>([] { concat({zeros({2}), zeros({2}, int32)}, 0); },
                                {"Concat", "int32", "float32"});
  expect_error<InvalidArgument>([] { concat({zeros({2}), zeros({2, 1})}, 0); }, {"Concat", "rank", "(2, 1)"});
  expect_error<InvalidArgument>([] { concat({zeros({2})}, 1); }, {"Concat", "axis 1", "rank 1"});
  expect_error<InvalidArgument>([] { concat({}, 0); }, {"Concat", "at least one"});
  expect_error<InvalidArgument>([] { concat({constant(1), constant(2)}, 0); }, {"Concat", "scalars"});
}

TEST(ArrayOps, StackAndUnstack) {
  Tensor a = constant({1.f, 2.f}), b = constant({3.f, 4.f}), c = constant({5.f, 6.f});
  expect_tensor<float>(stack({a, b, c}), {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor<float>(stack({a, b, c}, 1), {2, 3}, {1, 3, 5, 2, 4, 6});
  expect_tensor<float>(stack({a, b}, -1), {2, 2}, {1, 3, 2, 4});
  expect_tensor<int32_t>(stack({constant(1), constant(2)}), {2}, {1, 2});
  Tensor x = iota_tensor({2, 3});
  std::vector<Tensor> rows = unstack(x);
  ASSERT_EQ(rows.size(), 2u);
  expect_tensor<float>(rows[1], {3}, {3, 4, 5});
  std::vector<Tensor> cols = unstack(x, -1);
  ASSERT_EQ(cols.size(), 3u);
  expect_tensor<float>(cols[0], {2}, {0, 3});
  expect_tensor<float>(cols[2], {2}, {2, 5});
  EXPECT_TRUE(unstack(zeros({0, 2})).empty());
  std::vector<Tensor> empties = unstack(zeros({2, 0}));
  ASSERT_EQ(empties.size(), 2u);
  EXPECT_EQ(empties[0].shape(), (Shape{0}));
}

TEST(ArrayOps, StackUnstackInferAndErrors) {
  schema::Attrs a{{"axis", int64_t(1)}};
  EXPECT_EQ(infer1("Pack", {{float32, {None, 3}}, {float32, {2, None}}}, a).shape, (Shape{2, 2, 3}));
  expect_error<InvalidArgument>([] { stack({zeros({2}), zeros({3})}); },
                                {"Pack", "input 1", "(3,)", "(2,)"});
  expect_error<InvalidArgument>([] { stack({zeros({2})}, 2); }, {"Pack", "axis 2", "rank 1"});
  expect_error<InvalidArgument>([] { unstack(zeros({2}), 1); }, {"Unpack", "axis 1", "rank 1"});
  const detail::OpDef& unpack = schema::OpRegistry::global().get("Unpack");
  std::vector<schema::TensorType> in{{float32, {None, 2}}};
  schema::Attrs attrs{{"axis", int64_t(0)}};
  schema::InferContext ic(unpack, std::span<const schema::TensorType>(in), attrs);
  expect_error<InvalidArgument>([&] { unpack.infer(ic); }, {"Unpack", "(None, 2)", "known"});
}

TEST(ArrayOps, SplitValues) {
  Tensor x = iota_tensor({2, 6});
  std::vector<Tensor> parts = split_with_sizes(x, {1, -1, 2}, 1);
  ASSERT_EQ(parts.size(), 3u);
  expect_tensor<float>(parts[0], {2, 1}, {0, 6});
  expect_tensor<float>(parts[1], {2, 3}, {1, 2, 3, 7, 8, 9});
  expect_tensor<float>(parts[2], {2, 2}, {4, 5, 10, 11});
  std::vector<Tensor> halves = split(x, 2, -1);
  ASSERT_EQ(halves.size(), 2u);
  expect_tensor<float>(halves[1], {2, 3}, {3, 4, 5, 9, 10, 11});
  std::vector<Tensor> rows = split_with_sizes(constant({{1, 2}, {3, 4}, {5, 6}}), {2, 1});
  expect_tensor<int32_t>(rows[0], {2, 2}, {1, 2, 3, 4});
  expect_tensor<int32_t>(rows[1], {1, 2}, {5, 6});
  std::vector<Tensor> with_empty = split_with_sizes(x, {0, 6}, 1);
  EXPECT_EQ(with_empty[0].shape(), (Shape{2, 0}));
  expect_tensor<std::string>(split_with_sizes(constant({"a", "b", "c"}), {1, 2})[1], {2}, {"b", "c"});
}

// d/dx of sum_k sum(part_k * w_k): the w_k side by side, one Concat (no
// zero-filled tensor per part), eager and traced alike.
TEST(ArrayOps, SplitGradientIsTheConcatOfThePartsGradients) {
  Tensor x = iota_tensor({2, 4});
  auto loss = [](const Tensor& v) {
    std::vector<Tensor> p = split(v, 4, 1);
    return sum(p[0] * 1.f) + sum(p[1] * 2.f) + sum(p[3] * 4.f);  // part 2 unused: zeros
  };
  GradientTape tape;
  tape.watch(x);
  Tensor y = loss(x);
  expect_tensor<float>(tape.gradient(y, x), {2, 4}, {1, 2, 0, 4, 1, 2, 0, 4});
  auto traced_grad = kiln::function([&](const Tensor& v) {
    GradientTape t;
    t.watch(v);
    Tensor l = loss(v);
    return t.gradient(l, v);
  });
  expect_tensor<float>(traced_grad(x), {2, 4}, {1, 2, 0, 4, 1, 2, 0, 4});
}

TEST(ArrayOps, SplitInferAndErrors) {
  const detail::OpDef& op = schema::OpRegistry::global().get("Split");
  std::vector<schema::TensorType> in{{float32, {3, None}}};
  schema::Attrs attrs{{"axis", int64_t(1)}, {"sizes", std::vector<int64_t>{2, -1}}};
  schema::InferContext ic(op, std::span<const schema::TensorType>(in), attrs);
  op.infer(ic);
  ASSERT_EQ(ic.outputs().size(), 2u);
  EXPECT_EQ(ic.outputs()[0].shape, (Shape{3, 2}));
  EXPECT_EQ(ic.outputs()[1].shape, (Shape{3, None}));
  expect_error<InvalidArgument>([] { split_with_sizes(zeros({2, 6}), {2, 3}, 1); }, {"Split", "add up to 5", "size 6", "(2, 6)"});
  expect_error<InvalidArgument>([] { split_with_sizes(zeros({2, 6}), {7, -1}, 1); }, {"Split", "leave -1 for the -1"});
  expect_error<InvalidArgument>([] { split_with_sizes(zeros({2, 6}), {-1, -1}, 1); }, {"Split", "one -1"});
  expect_error<InvalidArgument>([] { split_with_sizes(zeros({2, 6}), {-2, 8}, 1); }, {"Split", "one -1"});
  expect_error<InvalidArgument>([] { split_with_sizes(zeros({2, 6}), {}, 1); }, {"Split", "at least one part"});
  expect_error<InvalidArgument>([] { split_with_sizes(zeros({2, 6}), {6}, 2); }, {"Split", "axis 2", "rank 2"});
  expect_error<InvalidArgument>([] { split(zeros({2, 6}), 4, 1); }, {"Split", "size 6", "evenly into 4"});
  expect_error<InvalidArgument>([] { split(zeros({2, 6}), 0, 1); }, {"Split", "at least 1"});
  expect_error<InvalidArgument>([] { split(zeros({2, 6}), 2, -3); }, {"Split", "axis -3", "rank 2"});
  expect_error<InvalidArgument>([] { split_with_sizes(constant(1.f), {1}); }, {"Split", "axis 0", "rank 0"});
  // A -1 that met an unknown dim is checked when the graph runs.
  auto f = kiln::function([](const Tensor& v) { return split_with_sizes(v, {4, -1}, 0)[1]; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec{Shape{None}, float32}}});
  expect_tensor<float>(f(iota_tensor({6})), {2}, {4, 5});
  expect_error<InvalidArgument>([&] { f(iota_tensor({3})); }, {"Split", "leave -1 for the -1"});
}

// ---- Slicing and indexing ---------------------------------------------------------

TEST(ArrayOps, IndexingWithIntegers) {
  Tensor x = iota_tensor({3, 4});
  expect_tensor<float>(x[1], {4}, {4, 5, 6, 7});
  expect_tensor<float>(x[-1], {4}, {8, 9, 10, 11});
  expect_tensor<float>(x.index({1, 2}), {}, {6});
  expect_tensor<float>(x.index({-1, -4}), {}, {8});
  expect_tensor<float>(x[1][3], {}, {7});
}

TEST(ArrayOps, IndexingWithSlices) {
  Tensor x = iota_tensor({3, 4});
  expect_tensor<float>(x[Slice(1, 3)], {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
  expect_tensor<float>(x.index({Slice(), Slice(std::nullopt, std::nullopt, 2)}), {3, 2}, {0, 2, 4, 6, 8, 10});
  expect_tensor<float>(x.index({Slice(), Slice(1, std::nullopt)}), {3, 3}, {1, 2, 3, 5, 6, 7, 9, 10, 11});
  // Negative steps, Python's defaults and clamping.
  expect_tensor<float>(x.index({0, Slice(std::nullopt, std::nullopt, -1)}), {4}, {3, 2, 1, 0});
  expect_tensor<float>(x.index({0, Slice(-2, std::nullopt, -2)}), {2}, {2, 0});
  expect_tensor<float>(x.index({0, Slice(10, 1, -1)}), {2}, {3, 2});
  expect_tensor<float>(x.index({Slice(-100, 100), 0}), {3}, {0, 4, 8});
  expect_tensor<float>(x.index({Slice(2, 1), 0}), {0}, {});
  expect_tensor<float>(x.index({Slice(std::nullopt, std::nullopt, -2), Slice(std::nullopt, std::nullopt, -3)}),
                       {2, 2}, {11, 8, 3, 0});
}

TEST(ArrayOps, IndexingWithNewAxisAndEllipsis) {
  Tensor x = iota_tensor({2, 3, 4});
  expect_tensor<float>(x.index({ellipsis, 0}), {2, 3}, {0, 4, 8, 12, 16, 20});
  expect_tensor<float>(x.index({0, ellipsis, 1}), {3}, {1, 5, 9});
  EXPECT_EQ(x.index({new_axis}).shape(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(x.index({ellipsis, new_axis}).shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.index({Slice(), new_axis, 1}).shape(), (Shape{2, 1, 4}));
  expect_tensor<float>(x.index({1, new_axis, Slice(0, 2), -1}), {1, 2}, {15, 19});
  expect_tensor<float>(x.index({ellipsis}), {2, 3, 4}, iota(24));
  expect_tensor<float>(constant(5.f).index({new_axis}), {1}, {5});
  expect_tensor<std::string>(constant({"a", "b", "c"})[Slice(std::nullopt, std::nullopt, -1)], {3},
                             {"c", "b", "a"});
}

// As TF's Slice: begin + size past the end of a dim raises (it clamped), in
// a trace with known dims and when a graph with unknown dims runs.
TEST(ArrayOps, SlicePastTheEndRaises) {
  Tensor x = iota_tensor({3, 4});
  expect_error<InvalidArgument>([&] { (void)slice(x, {1, 2}, {2, 3}); },
                                {"slice", "begin[1] + size[1] = 2 + 3", "axis 1 (size 4)", "(3, 4)", "[0, 2]"});
  expect_error<InvalidArgument>([&] { (void)slice(x, {4, 0}, {-1, 1}); }, {"begin[0] = 4", "axis 0 (size 3)"});
  expect_tensor<float>(slice(x, {3, 4}, {0, 0}), {0, 0}, {});  // empty at the end is fine
  expect_tensor<float>(slice(x, {1, 2}, {2, 2}), {2, 2}, {6, 7, 10, 11});
  FunctionOptions o;
  o.input_signature = std::vector<TensorSpec>{TensorSpec({None, None}, float32)};
  auto f = kiln::function([](const Tensor& t) { return slice(t, {1, 0}, {2, -1}); }, o);
  expect_tensor<float>(f(x), {2, 4}, {4, 5, 6, 7, 8, 9, 10, 11});
  expect_error<InvalidArgument>([&] { (void)f(iota_tensor({2, 4})); }, {"begin[0] + size[0] = 1 + 2", "(2, 4)"});
  expect_error<InvalidArgument>([] { (void)slice(iota_tensor({3}), {2}, {std::numeric_limits<int64_t>::max()}); },
                                {"slice", "overflows"});
}

TEST(ArrayOps, SliceAndStridedSlice) {
  Tensor x = iota_tensor({3, 4});
  expect_tensor<float>(slice(x, {1, 1}, {2, -1}), {2, 3}, {5, 6, 7, 9, 10, 11});
  expect_tensor<float>(slice(x, {0, 2}, {1, 2}), {1, 2}, {2, 3});
  SliceMasks m;
  m.shrink_axis = 2;
  expect_tensor<float>(strided_slice(x, {0, 1}, {3, 2}, {2, 1}, m), {2}, {1, 9});
  // Large strided copy (parallel rows).
  Tensor big = iota_tensor({400, 300});
  Tensor s = big.index({Slice(1, std::nullopt, 2), Slice(std::nullopt, std::nullopt, 3)});
  ASSERT_EQ(s.shape(), (Shape{200, 100}));
  std::vector<float> got = s.to_vector<float>();
  bool ok = true;
  for (int i = 0; i < 200; ++i)
    for (int j = 0; j < 100; ++j) ok &= got[i * 100 + j] == static_cast<float>((2 * i + 1) * 300 + 3 * j);
  EXPECT_TRUE(ok);
  // Empty input dims.
  EXPECT_EQ(zeros({0, 3}).index({Slice(), 1}).shape(), (Shape{0}));
}

TEST(ArrayOps, StridedSliceInferUnknownDims) {
  schema::Attrs a{{"begin", std::vector<int64_t>{1, 0}}, {"end", std::vector<int64_t>{3, 0}},
                  {"strides", std::vector<int64_t>{1, 1}}, {"begin_mask", int64_t(2)},
                  {"end_mask", int64_t(2)}, {"ellipsis_mask", int64_t(0)},
                  {"new_axis_mask", int64_t(0)}, {"shrink_axis_mask", int64_t(0)}};
  EXPECT_EQ(infer1("StridedSlice", {{float32, {None, 5}}}, a).shape, (Shape{None, 5}));
  EXPECT_EQ(infer1("StridedSlice", {{float32, {4, None}}}, a).shape, (Shape{2, None}));
  EXPECT_FALSE(infer1("StridedSlice", {{float32, Shape::unknown_rank()}}, a).shape.has_known_rank());
  a.set("shrink_axis_mask", int64_t(1));
  // An integer index into an unknown dim cannot be checked yet.
  EXPECT_EQ(infer1("StridedSlice", {{float32, {None, 5}}}, a).shape, (Shape{5}));
}

TEST(ArrayOps, IndexingErrors) {
  Tensor x = zeros({2, 3});
  expect_error<InvalidArgument>([&] { x[2]; }, {"StridedSlice", "index 2", "axis 0", "size 2"});
  expect_error<InvalidArgument>([&] { x.index({0, -4}); }, {"index -4", "axis 1", "size 3"});
  expect_error<InvalidArgument>([&] { x.index({0, 0, 0}); }, {"too many indices", "3", "rank 2"});
  expect_error<InvalidArgument>([&] { x.index({ellipsis, 0, ellipsis}); }, {"one ellipsis"});
  expect_error<InvalidArgument>([&] { x[Slice(0, 2, 0)]; }, {"step", "0"});
  expect_error<InvalidArgument>([&] { constant(1.f)[0]; }, {"too many indices", "rank 0"});
  expect_error<InvalidArgument>([&] { slice(x, {0}, {1, 1}); }, {"slice", "one length"});
}

// ---- Gather, OneHot -----------------------------------------------------------------

TEST(ArrayOps, GatherValues) {
  Tensor p = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  expect_tensor<float>(gather(p, constant({2, 0, 2})), {3, 2}, {5, 6, 1, 2, 5, 6});
  expect_tensor<float>(gather(p, constant({{int64_t(1)}, {int64_t(0)}}), 1), {3, 2, 1},
                       {2, 1, 4, 3, 6, 5});
  expect_tensor<float>(gather(p, constant(1)), {2}, {3, 4});
  expect_tensor<float>(gather(p, zeros({0}, int32)), {0, 2}, {});
  expect_tensor<std::string>(gather(constant({"a", "b", "c"}), constant({2, 2, 0})), {3}, {"c", "c", "a"});
}

TEST(ArrayOps, GatherInferAndErrors) {
  schema::Attrs a{{"axis", int64_t(1)}};
  EXPECT_EQ(infer1("Gather", {{float32, {None, 5, 2}}, {int32, {4, None}}}, a).shape,
            (Shape{None, 4, None, 2}));
  Tensor p = zeros({3, 2});
  expect_error<InvalidArgument>([&] { gather(p, constant({0, 3})); },
                                {"Gather", "indices[1] = 3", "[0, 3)", "(3, 2)"});
  expect_error<InvalidArgument>([&] { gather(p, constant({{0, 1}, {-1, 0}}), 1); },
                                {"Gather", "indices[1, 0] = -1", "[0, 2)"});
  expect_error<InvalidArgument>([&] { gather(p, constant({0.f})); }, {"Gather", "int32 or int64", "float32"});
  expect_error<InvalidArgument>([&] { gather(p, constant({0}), 2); }, {"Gather", "axis 2", "rank 2"});
  expect_error<InvalidArgument>([&] { gather(constant(1.f), constant({0})); }, {"Gather", "scalar"});
}

TEST(ArrayOps, GatherKernelChecksIndicesInferenceCouldNotSee) {
  // What a graph run does when the indices were unknown at inference time.
  const detail::OpDef& op = schema::OpRegistry::global().get("Gather");
  Tensor p = constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor idx = constant({1, 7, -1});
  Tensor inputs[] = {p, idx};
  schema::Attrs attrs{{"axis", int64_t(0)}};
  Tensor outputs[] = {core::make_tensor(float32, {3, 2})};
  schema::KernelContext kc{op, inputs, outputs, attrs};
  expect_error<InvalidArgument>([&] { op.kernel(kc); }, {"Gather", "indices[1] = 7 is not in [0, 2)"});
}

TEST(ArrayOps, OneHotValues) {
  expect_tensor<float>(one_hot(constant({0, 2, 5}), 3), {3, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 0});
  expect_tensor<int32_t>(one_hot(constant({1, 0}), 2, 5, -1, 0, int32), {2, 2}, {-1, 5, 5, -1});
  expect_tensor<float>(one_hot(constant({{1, -1}}), 2, 1.f, 0.f, 1), {1, 2, 2}, {0, 0, 1, 0});
  expect_tensor<float>(one_hot(constant(1), 3), {3}, {0, 1, 0});
  expect_tensor<float>(one_hot(zeros({0}, int32), 4), {0, 4}, {});
  EXPECT_EQ(infer1("OneHot", {{int64, {None}}},
                   {{"depth", int64_t(4)}, {"axis", int64_t(-1)},
                    {"on_value", constant(1.f)}, {"off_value", constant(0.f)}})
                .shape,
            (Shape{None, 4}));
}

TEST(ArrayOps, OneHotErrors) {
  expect_error<InvalidArgument>([] { one_hot(constant({1.f}), 2); }, {"OneHot", "indices", "float32"});
  expect_error<InvalidArgument>([] { one_hot(constant({1}), -1); }, {"OneHot", "depth", "-1"});
  expect_error<InvalidArgument>([] { one_hot(constant({1}), 2, 1, 0, 2); }, {"OneHot", "axis 2", "rank 1"});
  expect_error<InvalidArgument>([] { one_hot(constant({1}), 2, 1.5, 0, -1, int32); },
                                {"OneHot", "1.5", "int32"});
}

// ---- Tile, Pad ------------------------------------------------------------------------

TEST(ArrayOps, TileValues) {
  Tensor x = constant({{1, 2}, {3, 4}});
  expect_tensor<int32_t>(tile(x, {1, 2}), {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4});
  expect_tensor<int32_t>(tile(x, {2, 1}), {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  expect_tensor<int32_t>(tile(x, {0, 3}), {0, 6}, {});
  expect_tensor<int32_t>(tile(constant(7), {}), {}, {7});
  expect_tensor<std::string>(tile(constant({"a", "b"}), {2}), {4}, {"a", "b", "a", "b"});
  EXPECT_EQ(infer1("Tile", {{float32, {None, 3}}}, {{"multiples", std::vector<int64_t>{2, 2}}}).shape,
            (Shape{None, 6}));
  expect_error<InvalidArgument>([&] { tile(x, {2}); }, {"Tile", "[2]", "(2, 2)", "rank 2"});
  expect_error<InvalidArgument>([&] { tile(x, {2, -1}); }, {"Tile", "[2, -1]", "negative"});
}

TEST(ArrayOps, PadValues) {
  Tensor x = constant({{1, 2}, {3, 4}});
  expect_tensor<int32_t>(pad(x, {{1, 0}, {0, 1}}), {3, 3}, {0, 0, 0, 1, 2, 0, 3, 4, 0});
  expect_tensor<int32_t>(pad(x, {{0, 0}, {2, 0}}, -1), {2, 4}, {-1, -1, 1, 2, -1, -1, 3, 4});
  expect_tensor<float>(pad(zeros({0, 1}), {{1, 0}, {0, 0}}, 2.5f), {1, 1}, {2.5f});
  expect_tensor<std::string>(pad(constant({"a"}), {{1, 1}}, ""), {3}, {"", "a", ""});
  EXPECT_EQ(infer1("Pad", {{float32, {None, 3}}},
                   {{"paddings", std::vector<int64_t>{1, 1, 2, 2}}, {"value", constant(0.f)}})
                .shape,
            (Shape{None, 7}));
  expect_error<InvalidArgument>([&] { pad(x, {{1, 1}}); }, {"Pad", "1 pairs", "(2, 2)", "rank 2"});
  expect_error<InvalidArgument>([&] { pad(x, {{1, -1}, {0, 0}}); }, {"Pad", "negative"});
  expect_error<InvalidArgument>([&] { pad(x, {{1, 1}, {0, 0}}, 0.5); }, {"Pad", "0.5", "int32"});
}

TEST(ArrayOps, SliceBoundsMayBeNone) {
  Tensor x = kiln::constant({0, 1, 2, 3, 4});
  kiln::testing::expect_tensor<int32_t>(x[kiln::Slice(kiln::None, kiln::None, -1)], {5}, {4, 3, 2, 1, 0});
  kiln::testing::expect_tensor<int32_t>(x[kiln::Slice(2, kiln::None)], {3}, {2, 3, 4});
  kiln::testing::expect_tensor<int32_t>(x[kiln::Slice(kiln::None, -2, 2)], {2}, {0, 2});
}
