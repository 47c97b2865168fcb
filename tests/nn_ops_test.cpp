// MatMul and the nn ops: values against hand-computed results and naive
// reference loops written here, shape inference (unknown dims included),
// error messages, and the oneDNN primitive cache.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include <kiln/kiln.h>

#include "core/tensor_impl.h"
#include "ops/onednn.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"
#include "op_test_util.h"
#include "test_util.h"

using kiln::None;
using kiln::Shape;
using kiln::Tensor;
using kiln::testing::expect_error;
using kiln::testing::infer1;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;
namespace nn = kiln::nn;
namespace detail = kiln::detail;
namespace ops = kiln::ops;
namespace runtime = kiln::runtime;
namespace schema = kiln::schema;

namespace {

// Deterministic values in [-1, 1).
template <class T>
std::vector<T> pseudo_random(int64_t n, uint32_t seed) {
  std::vector<T> v(static_cast<std::size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<double>(s >> 8) / double(1 << 24) * 2.0 - 1.0);
  }
  return v;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims()) n *= d;
  return n;
}


// ---- naive references ------------------------------------------------------

// Batched matmul with broadcasting, on logical (already transposed) matrices.
template <class T>
std::vector<T> naive_matmul(const std::vector<T>& a, const Shape& as, const std::vector<T>& b,
                            const Shape& bs, bool ta, bool tb, Shape& out_shape) {
  int ra = as.rank(), rb = bs.rank(), r = std::max(ra, rb);
  int64_t m = ta ? as[ra - 1] : as[ra - 2], k = ta ? as[ra - 2] : as[ra - 1];
  int64_t n = tb ? bs[rb - 2] : bs[rb - 1];
  std::vector<int64_t> ab(r - 2), bb(r - 2), ob(r - 2);
  for (int i = 0; i < r - 2; ++i) {
    int ia = i - (r - ra), ib = i - (r - rb);
    ab[i] = ia >= 0 ? as[ia] : 1;
    bb[i] = ib >= 0 ? bs[ib] : 1;
    ob[i] = std::max(ab[i], bb[i]);
  }
  std::vector<int64_t> od = ob;
  od.push_back(m);
  od.push_back(n);
  out_shape = Shape(od);
  int64_t batches = 1;
  for (int64_t d : ob) batches *= d;
  std::vector<T> out(static_cast<std::size_t>(batches * m * n));
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, aoff = 0, boff = 0, astr = 1, bstr = 1;
    for (int d = r - 3; d >= 0; --d) {
      int64_t idx = rest % ob[d];
      rest /= ob[d];
      aoff += (ab[d] == 1 ? 0 : idx) * astr;
      boff += (bb[d] == 1 ? 0 : idx) * bstr;
      astr *= ab[d];
      bstr *= bb[d];
    }
    const T* A = a.data() + aoff * m * k;
    const T* B = b.data() + boff * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += (ta ? A[p * m + i] : A[i * k + p]) * (tb ? B[j * k + p] : B[p * n + j]);
        out[(bi * m + i) * n + j] = acc;
      }
  }
  return out;
}

// TensorFlow's padding, computed independently of the library.
void tf_padding(int64_t in, int64_t k, int64_t s, int64_t d, bool same, int64_t& out,
                int64_t& before) {
  int64_t eff = (k - 1) * d + 1;
  if (same) {
    out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in);
    before = total / 2;
  } else {
    out = (in - eff) / s + 1;
    before = 0;
  }
}

template <class T>
std::vector<T> naive_conv(const std::vector<T>& x, const Shape& xs, const std::vector<T>& f,
                          const Shape& fs, int64_t sh, int64_t sw, bool same, int64_t dh,
                          int64_t dw, Shape& out_shape) {
  int64_t N = xs[0], H = xs[1], W = xs[2], C = xs[3], KH = fs[0], KW = fs[1], O = fs[3];
  int64_t OH, OW, pt, pl;
  tf_padding(H, KH, sh, dh, same, OH, pt);
  tf_padding(W, KW, sw, dw, same, OW, pl);
  out_shape = Shape{N, OH, OW, O};
  std::vector<T> y(static_cast<std::size_t>(N * OH * OW * O), T(0));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t o = 0; o < O; ++o) {
          T acc = 0;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw)
              for (int64_t c = 0; c < C; ++c) {
                int64_t ih = oh * sh + kh * dh - pt, iw = ow * sw + kw * dw - pl;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x[((n * H + ih) * W + iw) * C + c] * f[((kh * KW + kw) * C + c) * O + o];
              }
          y[((n * OH + oh) * OW + ow) * O + o] = acc;
        }
  return y;
}

template <class T>
std::vector<T> naive_pool(const std::vector<T>& x, const Shape& xs, int64_t kh, int64_t kw,
                          int64_t sh, int64_t sw, bool same, bool max, Shape& out_shape) {
  int64_t N = xs[0], H = xs[1], W = xs[2], C = xs[3];
  int64_t OH, OW, pt, pl;
  tf_padding(H, kh, sh, 1, same, OH, pt);
  tf_padding(W, kw, sw, 1, same, OW, pl);
  out_shape = Shape{N, OH, OW, C};
  std::vector<T> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t c = 0; c < C; ++c) {
          T acc = max ? -INFINITY : 0;
          int count = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t ih = oh * sh + i - pt, iw = ow * sw + j - pl;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              T v = x[((n * H + ih) * W + iw) * C + c];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          y.push_back(max ? acc : acc / static_cast<T>(count));
        }
  return y;
}

template <class T>
std::vector<T> naive_softmax(const std::vector<T>& x, int64_t outer, int64_t len, int64_t inner,
                             bool log) {
  std::vector<T> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; ++j) m = std::max<double>(m, x[at(j)]);
      for (int64_t j = 0; j < len; ++j) sum += std::exp(x[at(j)] - m);
      for (int64_t j = 0; j < len; ++j)
        y[at(j)] = static_cast<T>(log ? x[at(j)] - m - std::log(sum) : std::exp(x[at(j)] - m) / sum);
    }
  return y;
}

}  // namespace

// ============================================================================
// MatMul
// ============================================================================

TEST(NnOpsMatMul, TwoByThreeTimesThreeByTwo) {
  Tensor a = kiln::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Tensor b = kiln::constant({{7.f, 8.f}, {9.f, 10.f}, {11.f, 12.f}});
  expect_tensor<float>(kiln::matmul(a, b), Shape{2, 2}, {58, 64, 139, 154});
}

TEST(NnOpsMatMul, Transposes) {
  // a^T stored as [3, 2], b^T stored as [2, 3]: same product as above.
  Tensor at = kiln::constant({{1.f, 4.f}, {2.f, 5.f}, {3.f, 6.f}});
  Tensor bt = kiln::constant({{7.f, 9.f, 11.f}, {8.f, 10.f, 12.f}});
  Tensor a = kiln::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Tensor b = kiln::constant({{7.f, 8.f}, {9.f, 10.f}, {11.f, 12.f}});
  expect_tensor<float>(kiln::matmul(at, b, true, false), Shape{2, 2}, {58, 64, 139, 154});
  expect_tensor<float>(kiln::matmul(a, bt, false, true), Shape{2, 2}, {58, 64, 139, 154});
  expect_tensor<float>(kiln::matmul(at, bt, true, true), Shape{2, 2}, {58, 64, 139, 154});
}

TEST(NnOpsMatMul, Float64AndIntegers) {
  expect_tensor<double>(kiln::matmul(kiln::constant({{1.5, 2.0}}), kiln::constant({{2.0}, {0.25}})),
                        Shape{1, 1}, {3.5});
  expect_tensor<int32_t>(kiln::matmul(kiln::constant({{1, 2}, {3, 4}}), kiln::constant({{5, 6}, {7, 8}})),
                         Shape{2, 2}, {19, 22, 43, 50});
  Tensor a64 = kiln::constant(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, Shape{3, 2});
  expect_tensor<int64_t>(kiln::matmul(a64, a64, true, false), Shape{2, 2}, {35, 44, 44, 56});
}

// Batched matmul, transposes and broadcasting against the naive loop.
struct MatmulCase {
  Shape a, b;
  bool ta, tb;
};

class NnOpsMatMulBatched : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(NnOpsMatMulBatched, MatchesNaive) {
  const MatmulCase& p = GetParam();
  auto av = pseudo_random<float>(numel(p.a), 1);
  auto bv = pseudo_random<float>(numel(p.b), 2);
  Shape expected_shape;
  auto expected = naive_matmul(av, p.a, bv, p.b, p.ta, p.tb, expected_shape);
  Tensor out = kiln::matmul(kiln::constant(av, p.a), kiln::constant(bv, p.b), p.ta, p.tb);
  expect_tensor_near<float>(out, expected_shape, expected, 1e-5);
  // float64 takes the plain loop: the same numbers.
  std::vector<double> ad(av.begin(), av.end()), bd(bv.begin(), bv.end());
  auto expected_d = naive_matmul(ad, p.a, bd, p.b, p.ta, p.tb, expected_shape);
  expect_tensor_near<double>(kiln::matmul(kiln::constant(ad, p.a), kiln::constant(bd, p.b), p.ta, p.tb),
                             expected_shape, expected_d, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    NnOps, NnOpsMatMulBatched,
    ::testing::Values(MatmulCase{Shape{2, 3, 4}, Shape{2, 4, 5}, false, false},
                      MatmulCase{Shape{2, 4, 3}, Shape{2, 5, 4}, true, true},
                      MatmulCase{Shape{2, 3, 4}, Shape{2, 5, 4}, false, true},
                      MatmulCase{Shape{4, 3, 5}, Shape{5, 2}, false, false},      // b shared
                      MatmulCase{Shape{4, 5, 3}, Shape{2, 5}, true, true},        // b shared, a^T
                      MatmulCase{Shape{3, 4}, Shape{3, 4, 2}, false, false},      // a shared
                      MatmulCase{Shape{2, 1, 3, 4}, Shape{3, 4, 2}, false, false},  // broadcast
                      MatmulCase{Shape{2, 1, 4, 3}, Shape{1, 3, 2, 4}, true, true},
                      MatmulCase{Shape{64, 70}, Shape{70, 50}, false, false},
                      MatmulCase{Shape{1, 1}, Shape{1, 1}, false, false}));

TEST(NnOpsMatMul, EmptyDims) {
  // K = 0: a sum of nothing is zero.
  Tensor z = kiln::matmul(kiln::zeros(Shape{2, 0}), kiln::zeros(Shape{0, 3}));
  expect_tensor<float>(z, Shape{2, 3}, {0, 0, 0, 0, 0, 0});
  expect_tensor<float>(kiln::matmul(kiln::zeros(Shape{0, 4}), kiln::zeros(Shape{4, 3})), Shape{0, 3}, {});
  expect_tensor<double>(kiln::matmul(kiln::zeros(Shape{0, 2, 4}, kiln::float64),
                                     kiln::zeros(Shape{4, 3}, kiln::float64)),
                        Shape{0, 2, 3}, {});
}

TEST(NnOpsMatMul, InferUnknownDims) {
  kiln::schema::Attrs plain{{"transpose_a", false}, {"transpose_b", false}};
  auto t = infer1("MatMul", {{kiln::float32, Shape{None, 3}}, {kiln::float32, Shape{3, 4}}}, plain);
  EXPECT_EQ(t.shape, (Shape{None, 4}));
  EXPECT_EQ(t.dtype, kiln::float32);
  t = infer1("MatMul", {{kiln::float32, Shape{None, 2, 3}}, {kiln::float32, Shape{5, 3, None}}}, plain);
  EXPECT_EQ(t.shape, (Shape{5, 2, None}));
  t = infer1("MatMul", {{kiln::float64, Shape{None, 1, 2, 3}}, {kiln::float64, Shape{7, None, 4}}}, plain);
  EXPECT_EQ(t.shape, (Shape{None, 7, 2, 4}));
  t = infer1("MatMul", {{kiln::float32, Shape::unknown_rank()}, {kiln::float32, Shape{3, 4}}}, plain);
  EXPECT_FALSE(t.shape.has_known_rank());
  kiln::schema::Attrs trans{{"transpose_a", true}, {"transpose_b", true}};
  t = infer1("MatMul", {{kiln::float32, Shape{3, None}}, {kiln::float32, Shape{4, 3}}}, trans);
  EXPECT_EQ(t.shape, (Shape{None, 4}));
}

TEST(NnOpsMatMul, Errors) {
  Tensor a = kiln::zeros(Shape{2, 3});
  Tensor b = kiln::zeros(Shape{4, 5});
  expect_error<kiln::InvalidArgument>([&] { kiln::matmul(a, b); },
                                      {"MatMul", "inner dimensions", "(2, 3)", "(4, 5)"});
  expect_error<kiln::InvalidArgument>([&] { kiln::matmul(a, b, false, true); },
                                      {"MatMul", "(2, 3)", "(4, 5)", "transpose_b=true", "a gives 3 columns and b 5 rows"});
  expect_error<kiln::InvalidArgument>([&] { kiln::matmul(kiln::zeros(Shape{3}), a); },
                                      {"MatMul", "a must have rank >= 2", "(3,)"});
  expect_error<kiln::InvalidArgument>([&] { kiln::matmul(a, kiln::zeros(Shape{3})); },
                                      {"MatMul", "b must have rank >= 2", "(3,)"});
  expect_error<kiln::InvalidArgument>(
      [&] { kiln::matmul(a, kiln::zeros(Shape{3, 2}, kiln::float64)); },
      {"MatMul", "same dtype", "float32", "float64"});
  expect_error<kiln::InvalidArgument>(
      [&] { kiln::matmul(kiln::zeros(Shape{2, 2}, kiln::boolean), kiln::zeros(Shape{2, 2}, kiln::boolean)); },
      {"MatMul", "dtype", "bool"});
  expect_error<kiln::InvalidArgument>(
      [&] { kiln::matmul(kiln::zeros(Shape{2, 2, 3}), kiln::zeros(Shape{3, 3, 4})); },
      {"MatMul", "batch dimensions cannot be broadcast", "(2, 2, 3)", "(3, 3, 4)"});
}

// ============================================================================
// Conv2D
// ============================================================================

TEST(NnOpsConv, HandComputedValidAndSame) {
  Tensor x = kiln::constant(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 3, 3, 1});
  Tensor w = kiln::ones(Shape{2, 2, 1, 1});
  expect_tensor<float>(nn::conv2d(x, w, 1, "VALID"), Shape{1, 2, 2, 1}, {12, 16, 24, 28});
  // SAME with an even filter pads only after (TensorFlow's rule).
  expect_tensor<float>(nn::conv2d(x, w, 1, "SAME"), Shape{1, 3, 3, 1},
                       {12, 16, 9, 24, 28, 15, 15, 17, 9});
  // Two output channels: the second filter doubles the first.
  Tensor w2 = kiln::constant(std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}, Shape{2, 2, 1, 2});
  expect_tensor<float>(nn::conv2d(x, w2, {2, 2}, nn::Padding::Valid), Shape{1, 1, 1, 2}, {12, 24});
}

TEST(NnOpsConv, OutputShapes) {
  Tensor x = kiln::zeros(Shape{2, 5, 7, 3});
  Tensor w = kiln::zeros(Shape{3, 3, 3, 4});
  EXPECT_EQ(nn::conv2d(x, w, 1, "SAME").shape(), (Shape{2, 5, 7, 4}));
  EXPECT_EQ(nn::conv2d(x, w, 1, "VALID").shape(), (Shape{2, 3, 5, 4}));
  EXPECT_EQ(nn::conv2d(x, w, 2, "SAME").shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(nn::conv2d(x, w, 2, "VALID").shape(), (Shape{2, 2, 3, 4}));
  EXPECT_EQ(nn::conv2d(x, w, {1, 2}, "VALID").shape(), (Shape{2, 3, 3, 4}));
  EXPECT_EQ(nn::conv2d(x, w, 1, "VALID", 2).shape(), (Shape{2, 1, 3, 4}));
  EXPECT_EQ(nn::conv2d(x, w, 1, "SAME", {2, 3}).shape(), (Shape{2, 5, 7, 4}));
}

struct ConvCase {
  Shape x, f;
  int64_t sh, sw;
  bool same;
  int64_t dh, dw;
};

class NnOpsConvCases : public ::testing::TestWithParam<ConvCase> {};

TEST_P(NnOpsConvCases, MatchesNaive) {
  const ConvCase& p = GetParam();
  auto xv = pseudo_random<float>(numel(p.x), 3);
  auto fv = pseudo_random<float>(numel(p.f), 4);
  const char* padding = p.same ? "SAME" : "VALID";
  Shape shape;
  auto expected = naive_conv(xv, p.x, fv, p.f, p.sh, p.sw, p.same, p.dh, p.dw, shape);
  Tensor y = nn::conv2d(kiln::constant(xv, p.x), kiln::constant(fv, p.f), {p.sh, p.sw}, padding,
                        {p.dh, p.dw});
  expect_tensor_near<float>(y, shape, expected, 1e-4);
  std::vector<double> xd(xv.begin(), xv.end()), fd(fv.begin(), fv.end());
  auto expected_d = naive_conv(xd, p.x, fd, p.f, p.sh, p.sw, p.same, p.dh, p.dw, shape);
  Tensor yd = nn::conv2d(kiln::constant(xd, p.x), kiln::constant(fd, p.f), {p.sh, p.sw}, padding,
                         {p.dh, p.dw});
  expect_tensor_near<double>(yd, shape, expected_d, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    NnOps, NnOpsConvCases,
    ::testing::Values(ConvCase{Shape{1, 5, 5, 1}, Shape{3, 3, 1, 1}, 1, 1, false, 1, 1},
                      ConvCase{Shape{2, 6, 7, 3}, Shape{3, 3, 3, 5}, 1, 1, true, 1, 1},
                      ConvCase{Shape{2, 4, 4, 2}, Shape{3, 3, 2, 3}, 2, 2, true, 1, 1},  // asymmetric
                      ConvCase{Shape{1, 9, 8, 4}, Shape{3, 2, 4, 6}, 2, 1, false, 1, 1},
                      ConvCase{Shape{1, 9, 9, 2}, Shape{3, 3, 2, 2}, 1, 1, true, 2, 2},  // dilated
                      ConvCase{Shape{1, 10, 9, 3}, Shape{2, 3, 3, 4}, 2, 1, false, 2, 3},
                      ConvCase{Shape{3, 28, 28, 1}, Shape{5, 5, 1, 32}, 1, 1, true, 1, 1},
                      ConvCase{Shape{2, 7, 7, 16}, Shape{1, 1, 16, 8}, 1, 1, false, 1, 1}));

TEST(NnOpsConv, SpellingsOfStridesAndPadding) {
  auto xv = pseudo_random<float>(1 * 6 * 6 * 2, 5);
  auto fv = pseudo_random<float>(3 * 3 * 2 * 2, 6);
  Tensor x = kiln::constant(xv, Shape{1, 6, 6, 2});
  Tensor w = kiln::constant(fv, Shape{3, 3, 2, 2});
  auto expected = nn::conv2d(x, w, {2, 2}, "SAME").to_vector<float>();
  EXPECT_EQ(nn::conv2d(x, w, 2, "SAME").to_vector<float>(), expected);
  EXPECT_EQ(nn::conv2d(x, w, {1, 2, 2, 1}, nn::Padding::Same).to_vector<float>(), expected);
  EXPECT_EQ(nn::conv2d(x, w, {2}, std::string("same")).to_vector<float>(), expected);
}

TEST(NnOpsConv, EmptyBatchAndZeroChannels) {
  expect_tensor<float>(nn::conv2d(kiln::zeros(Shape{0, 4, 4, 2}), kiln::zeros(Shape{3, 3, 2, 5}), 1, "SAME"),
                       Shape{0, 4, 4, 5}, {});
  Tensor y = nn::conv2d(kiln::zeros(Shape{1, 2, 2, 0}), kiln::zeros(Shape{1, 1, 0, 2}), 1, "VALID");
  expect_tensor<float>(y, Shape{1, 2, 2, 2}, std::vector<float>(8, 0.f));
}

TEST(NnOpsConv, InferUnknownDims) {
  kiln::schema::Attrs attrs{{"strides", std::vector<int64_t>{2, 2}},
                            {"padding", std::string("SAME")},
                            {"dilations", std::vector<int64_t>{1, 1}}};
  auto t = infer1("Conv2D", {{kiln::float32, Shape{None, 28, 28, 1}}, {kiln::float32, Shape{5, 5, 1, 32}}},
                  attrs);
  EXPECT_EQ(t.shape, (Shape{None, 14, 14, 32}));
  t = infer1("Conv2D", {{kiln::float32, Shape{4, None, 9, None}}, {kiln::float32, Shape{3, 3, 2, 8}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{4, None, 5, 8}));
  t = infer1("Conv2D", {{kiln::float32, Shape::unknown_rank()}, {kiln::float32, Shape{3, 3, 2, 8}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{None, None, None, 8}));
  t = infer1("Conv2D", {{kiln::float32, Shape{1, 8, 8, 2}}, {kiln::float32, Shape{None, 3, 2, 8}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{1, 4, 4, 8}));  // SAME: the height does not depend on the filter
}

TEST(NnOpsConv, Errors) {
  Tensor x = kiln::zeros(Shape{1, 5, 5, 3});
  Tensor w = kiln::zeros(Shape{3, 3, 4, 8});
  expect_error<kiln::InvalidArgument>(
      [&] { nn::conv2d(x, w, 1, "SAME"); },
      {"Conv2D", "3 channels", "filters expect 4", "(1, 5, 5, 3)", "(3, 3, 4, 8)"});
  Tensor w3 = kiln::zeros(Shape{3, 3, 3, 8});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(kiln::zeros(Shape{5, 5, 3}), w3, 1, "SAME"); },
                                      {"Conv2D", "input must have rank 4", "(5, 5, 3)"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, kiln::zeros(Shape{3, 3, 3}), 1, "SAME"); },
                                      {"Conv2D", "filters must have rank 4", "(3, 3, 3)"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, w3, 1, "FULL"); },
                                      {"Conv2D", "padding", "\"SAME\" or \"VALID\"", "FULL"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, w3, 0, "SAME"); },
                                      {"Conv2D", "strides", "positive", "[0, 0]"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, w3, {1, -2}, "SAME"); },
                                      {"Conv2D", "strides", "[1, -2]"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, w3, {1, 2, 3}, "SAME"); },
                                      {"Conv2D", "strides", "[1, 2, 3]"});
  expect_error<kiln::InvalidArgument>([&] { nn::conv2d(x, w3, 1, "SAME", 0); },
                                      {"Conv2D", "dilations", "[0, 0]"});
  expect_error<kiln::InvalidArgument>(
      [&] { nn::conv2d(x, kiln::zeros(Shape{3, 3, 3, 8}, kiln::float64), 1, "SAME"); },
      {"Conv2D", "same dtype", "float32", "float64"});
  expect_error<kiln::InvalidArgument>(
      [&] { nn::conv2d(kiln::zeros(Shape{1, 5, 5, 3}, kiln::int32), kiln::zeros(Shape{3, 3, 3, 8}, kiln::int32), 1, "SAME"); },
      {"Conv2D", "float32 or float64", "int32"});
  // TF's VALID output (n - k + s) / s: negative is an error naming both shapes.
  expect_error<kiln::InvalidArgument>(
      [&] { nn::conv2d(x, kiln::zeros(Shape{7, 3, 3, 8}), 1, "VALID"); },
      {"Conv2D", "VALID", "height", "negative", "(1, 5, 5, 3)", "(7, 3, 3, 8)"});
  expect_error<kiln::InvalidArgument>(
      [&] { nn::conv2d(x, kiln::zeros(Shape{3, 4, 3, 8}), 1, "VALID", 2); },
      {"Conv2D", "width", "negative", "after dilation"});
}

// A VALID window larger than the input by less than a stride gives an empty
// output, as TF's (n - k + s) / s; its gradients are zeros.
TEST(NnOpsConv, ValidWindowLargerThanInputIsEmpty) {
  Tensor x = kiln::ones(Shape{1, 5, 5, 3});
  EXPECT_EQ(nn::conv2d(x, kiln::ones(Shape{6, 3, 3, 8}), 1, "VALID").shape(), (Shape{1, 0, 3, 8}));
  EXPECT_EQ(nn::conv2d(x, kiln::ones(Shape{7, 7, 3, 8}), 2, "VALID").shape(), (Shape{1, 0, 0, 8}));
  Tensor w = kiln::ones(Shape{6, 1, 3, 2});
  kiln::GradientTape tape;
  tape.watch(x);
  tape.watch(w);
  Tensor y = nn::conv2d(x, w, 1, "VALID");
  auto g = tape.gradient(y, {x, w});
  ASSERT_TRUE(g[0].defined());
  EXPECT_EQ(g[0].shape(), x.shape());
  EXPECT_EQ(kiln::sum(kiln::abs(g[0])).item<float>(), 0.0f);
  EXPECT_EQ(g[1].shape(), w.shape());
  EXPECT_EQ(kiln::sum(kiln::abs(g[1])).item<float>(), 0.0f);
}

// ============================================================================
// MaxPool / AvgPool
// ============================================================================

TEST(NnOpsPool, HandComputedValid) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  Tensor x = kiln::constant(v, Shape{1, 4, 4, 1});
  expect_tensor<float>(nn::max_pool2d(x, 2, 2, "VALID"), Shape{1, 2, 2, 1}, {6, 8, 14, 16});
  expect_tensor<float>(nn::avg_pool2d(x, 2, 2, "VALID"), Shape{1, 2, 2, 1}, {3.5, 5.5, 11.5, 13.5});
  expect_tensor<float>(nn::max_pool2d(x, {3, 2}, {1, 2}, "VALID"), Shape{1, 2, 2, 1}, {10, 12, 14, 16});
}

TEST(NnOpsPool, SameExcludesPadding) {
  Tensor x = kiln::constant(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 3, 3, 1});
  // Windows at the edge only count the elements inside the input.
  expect_tensor<float>(nn::avg_pool2d(x, 2, 2, "SAME"), Shape{1, 2, 2, 1}, {3, 4.5, 7.5, 9});
  expect_tensor<float>(nn::max_pool2d(x, 2, 2, "SAME"), Shape{1, 2, 2, 1}, {5, 6, 8, 9});
  // Padding never wins a max: all values negative.
  Tensor neg = kiln::constant(std::vector<float>{-1, -2, -3, -4}, Shape{1, 2, 2, 1});
  expect_tensor<float>(nn::max_pool2d(neg, 3, 1, "SAME"), Shape{1, 2, 2, 1}, {-1, -1, -1, -1});
  expect_tensor<float>(nn::avg_pool2d(neg, 3, 1, "SAME"), Shape{1, 2, 2, 1}, {-2.5, -2.5, -2.5, -2.5});
}

struct PoolCase {
  Shape x;
  int64_t kh, kw, sh, sw;
  bool same;
};

class NnOpsPoolCases : public ::testing::TestWithParam<PoolCase> {};

TEST_P(NnOpsPoolCases, MatchesNaive) {
  const PoolCase& p = GetParam();
  auto xv = pseudo_random<float>(numel(p.x), 7);
  std::vector<double> xd(xv.begin(), xv.end());
  const char* padding = p.same ? "SAME" : "VALID";
  for (bool max : {true, false}) {
    SCOPED_TRACE(max ? "max" : "avg");
    auto pool = max ? nn::max_pool2d : nn::avg_pool2d;
    Shape shape;
    auto expected = naive_pool(xv, p.x, p.kh, p.kw, p.sh, p.sw, p.same, max, shape);
    expect_tensor_near<float>(pool(kiln::constant(xv, p.x), {p.kh, p.kw}, {p.sh, p.sw}, padding,
                                   kiln::SourceLocation::current()),
                              shape, expected, 1e-6);
    auto expected_d = naive_pool(xd, p.x, p.kh, p.kw, p.sh, p.sw, p.same, max, shape);
    expect_tensor_near<double>(pool(kiln::constant(xd, p.x), {p.kh, p.kw}, {p.sh, p.sw}, padding,
                                    kiln::SourceLocation::current()),
                               shape, expected_d, 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(NnOps, NnOpsPoolCases,
                         ::testing::Values(PoolCase{Shape{2, 6, 6, 3}, 2, 2, 2, 2, false},
                                           PoolCase{Shape{1, 7, 5, 4}, 3, 3, 2, 2, true},
                                           PoolCase{Shape{2, 5, 8, 17}, 2, 3, 1, 2, true},
                                           PoolCase{Shape{1, 9, 9, 2}, 3, 2, 3, 1, false},
                                           PoolCase{Shape{3, 28, 28, 32}, 2, 2, 2, 2, false}));

TEST(NnOpsPool, InferUnknownDims) {
  kiln::schema::Attrs attrs{{"ksize", std::vector<int64_t>{2, 2}},
                            {"strides", std::vector<int64_t>{2, 2}},
                            {"padding", std::string("VALID")}};
  auto t = infer1("MaxPool", {{kiln::float32, Shape{None, 28, 28, 32}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{None, 14, 14, 32}));
  t = infer1("AvgPool", {{kiln::float64, Shape{2, None, 7, None}}}, attrs);
  EXPECT_EQ(t.shape, (Shape{2, None, 3, None}));
  EXPECT_EQ(t.dtype, kiln::float64);
  t = infer1("AvgPool", {{kiln::float32, Shape::unknown_rank()}}, attrs);
  EXPECT_EQ(t.shape, (Shape{None, None, None, None}));
}

TEST(NnOpsPool, Errors) {
  Tensor x = kiln::zeros(Shape{1, 4, 4, 2});
  expect_error<kiln::InvalidArgument>([&] { nn::max_pool2d(kiln::zeros(Shape{4, 4, 2}), 2, 2, "VALID"); },
                                      {"MaxPool", "rank 4", "(4, 4, 2)"});
  expect_error<kiln::InvalidArgument>([&] { nn::avg_pool2d(x, 0, 2, "VALID"); },
                                      {"AvgPool", "ksize", "[0, 0]"});
  expect_error<kiln::InvalidArgument>([&] { nn::avg_pool2d(x, 2, {2, 0}, "VALID"); },
                                      {"AvgPool", "strides", "[2, 0]"});
  expect_error<kiln::InvalidArgument>([&] { nn::max_pool2d(x, 2, 2, "valid_"); },
                                      {"MaxPool", "padding", "VALID_"});
  expect_error<kiln::InvalidArgument>([&] { nn::max_pool2d(x, 6, 1, "VALID"); },
                                      {"MaxPool", "VALID", "negative", "(1, 4, 4, 2)", "ksize [6, 6]"});
  expect_error<kiln::InvalidArgument>(
      [&] { nn::max_pool2d(kiln::zeros(Shape{1, 4, 4, 2}, kiln::int32), 2, 2, "VALID"); },
      {"MaxPool", "float32 or float64", "int32"});
}

// VALID pooling with a window larger than the input: empty, as TF (max
// and average pools, their gradients zeros).
TEST(NnOpsPool, ValidWindowLargerThanInputIsEmpty) {
  Tensor x = kiln::ones(Shape{1, 4, 4, 2});
  EXPECT_EQ(nn::max_pool2d(x, 5, 1, "VALID").shape(), (Shape{1, 0, 0, 2}));
  EXPECT_EQ(nn::avg_pool2d(x, {5, 2}, 2, "VALID").shape(), (Shape{1, 0, 2, 2}));
  for (bool max : {true, false}) {
    kiln::GradientTape tape;
    tape.watch(x);
    Tensor y = max ? nn::max_pool2d(x, 5, 1, "VALID") : nn::avg_pool2d(x, 5, 1, "VALID");
    Tensor g = tape.gradient(y, x);
    ASSERT_TRUE(g.defined());
    EXPECT_EQ(g.shape(), x.shape());
    EXPECT_EQ(kiln::sum(kiln::abs(g)).item<float>(), 0.0f);
  }
}

// ============================================================================
// Softmax / LogSoftmax
// ============================================================================

TEST(NnOpsSoftmax, Values) {
  Tensor y = nn::softmax(kiln::constant({{1.f, 2.f, 3.f}, {0.f, 0.f, 0.f}}));
  double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  expect_tensor_near<float>(y, Shape{2, 3},
                            {float(e1 / s), float(e2 / s), float(e3 / s), 1.f / 3, 1.f / 3, 1.f / 3});
  Tensor ly = nn::log_softmax(kiln::constant({1.0, 2.0, 3.0}));
  expect_tensor_near<double>(ly, Shape{3}, {1 - 3 - std::log(s / e3), 2 - 3 - std::log(s / e3), -std::log(s / e3)},
                             1e-14);
}

TEST(NnOpsSoftmax, RowsSumToOne) {
  auto v = pseudo_random<float>(37 * 101, 9);
  for (float& x : v) x *= 20;
  Tensor y = nn::softmax(kiln::constant(v, Shape{37, 101}));
  auto out = y.to_vector<float>();
  for (int r = 0; r < 37; ++r) {
    double sum = 0;
    for (int j = 0; j < 101; ++j) {
      float p = out[r * 101 + j];
      EXPECT_GE(p, 0.f);
      EXPECT_LE(p, 1.f);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r;
  }
}

TEST(NnOpsSoftmax, StableForLargeLogits) {
  Tensor y = nn::softmax(kiln::constant({1000.f, 1001.f, 1002.f}));
  Tensor ref = nn::softmax(kiln::constant({0.f, 1.f, 2.f}));
  expect_tensor_near<float>(y, Shape{3}, ref.to_vector<float>(), 1e-6);
  Tensor ly = nn::log_softmax(kiln::constant({-1000.f, 0.f}));
  expect_tensor_near<float>(ly, Shape{2}, {-1000.f, 0.f}, 1e-6);
}

// TF's formula, (x - max) - log(sum(exp(x - max))): logits near 100 keep
// float32's precision of the result (x - (max + log(sum)) rounded the shift
// to 100's ulp first, up to 3.4e-6 off). Both the last axis and another.
TEST(NnOpsSoftmax, LogSoftmaxKeepsPrecisionForLargeLogits) {
  std::vector<float> v;
  for (int i = 0; i < 64 * 10; ++i) v.push_back(100.0f + 0.37f * static_cast<float>((i * 7919) % 23) / 7.0f);
  Tensor x = kiln::constant(v, Shape{64, 10});
  for (int64_t axis : {-1, 0}) {
    std::vector<float> got = nn::log_softmax(x, axis).to_vector<float>();
    double worst = 0;
    for (int r = 0; r < 64; ++r) {
      for (int c = 0; c < 10; ++c) {
        // float64 reference along the axis.
        auto at = [&](int k) { return static_cast<double>(axis == 0 ? v[k * 10 + c] : v[r * 10 + k]); };
        int n = axis == 0 ? 64 : 10;
        double m = -1e300, sum = 0;
        for (int k = 0; k < n; ++k) m = std::max(m, at(k));
        for (int k = 0; k < n; ++k) sum += std::exp(at(k) - m);
        double ref = static_cast<double>(v[r * 10 + c]) - m - std::log(sum);
        worst = std::max(worst, std::fabs(got[r * 10 + c] - ref));
      }
    }
    EXPECT_LT(worst, 5e-7) << "axis " << axis;
  }
}

TEST(NnOpsSoftmax, OtherAxesMatchNaive) {
  Shape s{3, 4, 5};
  auto v = pseudo_random<double>(60, 11);
  Tensor x = kiln::constant(v, s);
  for (bool log : {false, true}) {
    auto op = log ? nn::log_softmax : nn::softmax;
    expect_tensor_near<double>(op(x, 0, kiln::SourceLocation::current()), s, naive_softmax(v, 1, 3, 20, log), 1e-12);
    expect_tensor_near<double>(op(x, 1, kiln::SourceLocation::current()), s, naive_softmax(v, 3, 4, 5, log), 1e-12);
    expect_tensor_near<double>(op(x, -2, kiln::SourceLocation::current()), s, naive_softmax(v, 3, 4, 5, log), 1e-12);
    expect_tensor_near<double>(op(x, 2, kiln::SourceLocation::current()), s, naive_softmax(v, 12, 5, 1, log), 1e-12);
  }
}

TEST(NnOpsSoftmax, EmptyAndInfer) {
  expect_tensor<float>(nn::softmax(kiln::zeros(Shape{0, 3})), Shape{0, 3}, {});
  expect_tensor<float>(nn::log_softmax(kiln::zeros(Shape{2, 0})), Shape{2, 0}, {});
  auto t = infer1("Softmax", {{kiln::float32, Shape{None, 10}}}, kiln::schema::Attrs{{"axis", int64_t(-1)}});
  EXPECT_EQ(t.shape, (Shape{None, 10}));
  t = infer1("LogSoftmax", {{kiln::float64, Shape::unknown_rank()}}, kiln::schema::Attrs{{"axis", int64_t(3)}});
  EXPECT_FALSE(t.shape.has_known_rank());
  EXPECT_EQ(t.dtype, kiln::float64);
}

TEST(NnOpsSoftmax, Errors) {
  expect_error<kiln::InvalidArgument>([] { nn::softmax(kiln::constant({1, 2})); },
                                      {"Softmax", "float32 or float64", "int32"});
  expect_error<kiln::InvalidArgument>([] { nn::log_softmax(kiln::zeros(Shape{2, 3}), 2); },
                                      {"LogSoftmax", "axis 2", "(2, 3)"});
  expect_error<kiln::InvalidArgument>([] { nn::softmax(kiln::zeros(Shape{2, 3}), -3); },
                                      {"Softmax", "axis -3"});
  expect_error<kiln::InvalidArgument>([] { nn::softmax(kiln::constant(1.f)); },
                                      {"Softmax", "rank >= 1", "()"});
}

// ============================================================================
// BiasAdd
// ============================================================================

TEST(NnOpsBiasAdd, Values) {
  expect_tensor<float>(nn::bias_add(kiln::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}),
                                    kiln::constant({0.5f, -1.f, 2.f})),
                       Shape{2, 3}, {1.5, 1, 5, 4.5, 4, 8});
  expect_tensor<int32_t>(nn::bias_add(kiln::constant({{{1, 2}}, {{3, 4}}}), kiln::constant({10, 20})),
                         Shape{2, 1, 2}, {11, 22, 13, 24});
  // NHWC images: one bias per channel.
  Tensor img = kiln::zeros(Shape{2, 3, 3, 4}, kiln::float64);
  Tensor out = nn::bias_add(img, kiln::constant({1.0, 2.0, 3.0, 4.0}));
  auto v = out.to_vector<double>();
  ASSERT_EQ(v.size(), 72u);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<double>(i % 4 + 1));
  // A temporary input may be overwritten in place: the result is the same.
  Tensor in_place = nn::bias_add(kiln::zeros(Shape{2, 2}), kiln::constant({1.f, 2.f}));
  expect_tensor<float>(in_place, Shape{2, 2}, {1, 2, 1, 2});
}

TEST(NnOpsBiasAdd, InferAndErrors) {
  auto t = infer1("BiasAdd", {{kiln::float32, Shape{None, 8}}, {kiln::float32, Shape{8}}}, {});
  EXPECT_EQ(t.shape, (Shape{None, 8}));
  t = infer1("BiasAdd", {{kiln::float32, Shape{4, None}}, {kiln::float32, Shape{8}}}, {});
  EXPECT_EQ(t.shape, (Shape{4, 8}));
  expect_error<kiln::InvalidArgument>(
      [] { nn::bias_add(kiln::zeros(Shape{2, 3}), kiln::zeros(Shape{4})); },
      {"BiasAdd", "4 elements", "last dim is 3", "(2, 3)", "(4,)"});
  expect_error<kiln::InvalidArgument>(
      [] { nn::bias_add(kiln::zeros(Shape{2, 3}), kiln::zeros(Shape{1, 3})); },
      {"BiasAdd", "bias must have rank 1", "(1, 3)"});
  expect_error<kiln::InvalidArgument>(
      [] { nn::bias_add(kiln::zeros(Shape{2, 3}), kiln::zeros(Shape{3}, kiln::float64)); },
      {"BiasAdd", "same dtype", "float32", "float64"});
  expect_error<kiln::InvalidArgument>(
      [] { nn::bias_add(kiln::constant(1.f), kiln::zeros(Shape{1})); },
      {"BiasAdd", "value must have rank >= 1"});
}

// ============================================================================
// The oneDNN primitive cache and the registry entries
// ============================================================================

TEST(NnOpsCache, SecondCallReusesThePrimitive) {
  Tensor x = kiln::ones(Shape{1, 13, 11, 3});
  Tensor w = kiln::ones(Shape{3, 3, 3, 2});
  auto& cache = ops::onednn::primitive_cache();
  nn::conv2d(x, w, 1, "SAME");
  uint64_t hits = cache.hits(), misses = cache.misses();
  Tensor y = nn::conv2d(x, w, 1, "SAME");
  EXPECT_EQ(cache.hits(), hits + 1);
  EXPECT_EQ(cache.misses(), misses);
  EXPECT_EQ(y.to_vector<float>()[12 * 11 + 5], 27.f);  // an interior pixel: 3x3x3 ones
  EXPECT_LE(cache.size(), 256u);
}

TEST(NnOpsCache, BoundedLru) {
  ops::onednn::PrimitiveCache cache(2);
  int made = 0;
  auto make = [&] { ++made; return std::shared_ptr<const void>(std::make_shared<int>(made)); };
  auto key = [](int64_t v) {
    ops::onednn::PrimitiveKey k(9);
    k.add(v);
    return k;
  };
  cache.get(key(1), make);
  cache.get(key(2), make);
  cache.get(key(1), make);  // 1 is now the most recent
  cache.get(key(3), make);  // evicts 2
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(made, 3);
  cache.get(key(1), make);
  EXPECT_EQ(made, 3);
  cache.get(key(2), make);
  EXPECT_EQ(made, 4);
}

TEST(NnOpsCache, ConcurrentCallsAgree) {
  auto xv = pseudo_random<float>(2 * 12 * 12 * 4, 13);
  auto fv = pseudo_random<float>(3 * 3 * 4 * 8, 14);
  Tensor x = kiln::constant(xv, Shape{2, 12, 12, 4});
  Tensor w = kiln::constant(fv, Shape{3, 3, 4, 8});
  Tensor a = kiln::constant(pseudo_random<float>(40 * 30, 15), Shape{40, 30});
  std::vector<float> conv_ref = nn::conv2d(x, w, 1, "SAME").to_vector<float>();
  std::vector<float> mm_ref = kiln::matmul(a, a, false, true).to_vector<float>();
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (nn::conv2d(x, w, 1, "SAME").to_vector<float>() != conv_ref) ++bad[t];
        if (kiln::matmul(a, a, false, true).to_vector<float>() != mm_ref) ++bad[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

TEST(NnOpsRegistry, SamplesRunAndInferMatchesKernel) {
  for (const char* name : {"MatMul", "Conv2D", "MaxPool", "AvgPool", "Softmax", "LogSoftmax", "BiasAdd"}) {
    const detail::OpDef& op = schema::OpRegistry::global().get(name);
    ASSERT_NE(op.samples, nullptr) << name;
    auto samples = op.samples();
    EXPECT_GE(samples.size(), 1u) << name;
    for (auto& s : samples) {
      auto out = runtime::run_eager(op, s.inputs, s.attrs);
      ASSERT_EQ(out.size(), 1u) << name;
      EXPECT_GT(out[0].size(), 0) << name;
    }
  }
}

// conv2d_transpose is conv2d's gradient with respect to its input (TF's
// definition), for every padding, stride and dilation.
TEST(NnOpsConv2DTranspose, IsTheGradientOfConv2DWithRespectToItsInput) {
  struct Case {
    kiln::Shape x, f;
    std::vector<int64_t> strides;
    const char* padding;
    int64_t dilation;
  };
  for (const Case& c : {Case{{2, 5, 6, 3}, {3, 3, 3, 4}, {2, 2}, "same", 1}, Case{{1, 7, 7, 2}, {2, 3, 2, 5}, {3, 2}, "valid", 1},
                        Case{{1, 6, 6, 2}, {2, 2, 2, 3}, {1, 1}, "same", 2}}) {
    Tensor x = kiln::random::uniform(c.x, -1, 1), f = kiln::random::uniform(c.f, -1, 1);
    kiln::GradientTape tape;
    tape.watch(x);
    Tensor y = kiln::nn::conv2d(x, f, c.strides, c.padding, c.dilation);
    Tensor dy = kiln::random::uniform(y.shape(), -1, 1);
    Tensor dx = tape.gradient(std::vector<Tensor>{y}, std::vector<kiln::GradientSource>{x}, {dy})[0];
    Tensor t = kiln::nn::conv2d_transpose(dy, f, c.x, c.strides, c.padding, c.dilation);
    ASSERT_EQ(t.shape(), c.x);
    EXPECT_TRUE(kiln::core::same_bits(t, dx)) << c.padding;
  }
}

TEST(NnOpsConv2DTranspose, TracedWithAnUnknownBatchMatchesEager) {
  Tensor f = kiln::random::uniform({3, 3, 2, 4}, -1, 1);
  auto up = kiln::function(
      [&](const Tensor& x) { return kiln::nn::conv2d_transpose(x, f, Shape{None, 8, 8, 2}, 2, "same"); },
      {.input_signature = std::vector<kiln::TensorSpec>{kiln::TensorSpec(Shape{None, 4, 4, 4})}});
  for (int64_t batch : {1, 3}) {
    Tensor x = kiln::random::uniform({batch, 4, 4, 4}, -1, 1);
    Tensor eager = kiln::nn::conv2d_transpose(x, f, Shape{batch, 8, 8, 2}, 2, "same");
    Tensor traced = up(x);
    EXPECT_TRUE(kiln::core::same_bits(eager, traced));
  }
  EXPECT_EQ(up.tracing_count(), 1);
}

TEST(NnOpsConv2DTranspose, Errors) {
  Tensor f = kiln::zeros({3, 3, 2, 4});
  expect_error<kiln::InvalidArgument>([&] { kiln::nn::conv2d_transpose(kiln::zeros({1, 4, 4, 4}), f, Shape{1, 8, 8}, 2, "same"); },
                                      {"conv2d_transpose: output_shape must be [batch, height, width, channels]", "(1, 8, 8)"});
  // The input is not what conv2d of output_shape gives.
  expect_error<kiln::InvalidArgument>([&] { kiln::nn::conv2d_transpose(kiln::zeros({1, 5, 4, 4}), f, Shape{1, 8, 8, 2}, 2, "same"); },
                                      {"Conv2DBackpropInput", "(1, 5, 4, 4)", "(1, 4, 4, 4)"});
}
