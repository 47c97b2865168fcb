// MatMul's padded copy of b (ops/matmul_layout.h): where oneDNN 2.6's AVX2 sgemm
// would read b's rows in place at a stride of a multiple of 4 KB, MatMul
// copies them into longer rows first. The copy must never change a bit: on any
// machine, the product with the copy (forced on) is the product without it
// (forced off), eagerly and traced, at one thread and two, whatever the
// operands' transposes and batches; and the rule picks the shapes oneDNN's
// no-copy threshold sends to that kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include <kiln/kiln.h>

#include "core/tensor_impl.h"
#include "kernel_test_util.h"
#include "test_util.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"
#include "runtime/dispatch.h"

namespace {

using kiln::ops::MatmulBPadding;
using kiln::testing::ThreadCount;
using kiln::testing::uniform;

using PaddingMode = kiln::testing::MatmulPaddingMode;

std::vector<float> product(MatmulBPadding mode, const kiln::Tensor& a, const kiln::Tensor& b, bool ta = false,
                           bool tb = false) {
  PaddingMode scope(mode);
  return kiln::matmul(a, b, ta, tb).to_vector<float>();
}

// The copy is for oneDNN's AVX2 sgemm (gemm:jit). Where its AVX-512 brgemm
// runs MNIST's dense1 instead (seen on Zen 5), a b in longer rows takes
// another blocking and gives other bits; there MatMul's rule never pads, and
// no weight is kept in longer rows (the layout is wanted where the rule would
// copy), so those products never run.
bool longer_rows_keep_the_bits_here() {
  using dims = dnnl::memory::dims;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const dnnl::memory::desc a({50, 3136}, dnnl::memory::data_type::f32, dims{3136, 1});
  const dnnl::memory::desc b({3136, 1024}, dnnl::memory::data_type::f32, dims{1024, 1});
  const dnnl::memory::desc c({50, 1024}, dnnl::memory::data_type::f32, dims{1024, 1});
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), engine);
  return std::string_view(pd.impl_info_str()).starts_with("gemm:jit");
}

#define SKIP_UNLESS_LONGER_ROWS_KEEP_THE_BITS()                                           \
  if (!longer_rows_keep_the_bits_here()) {                                                \
    EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 3136, 1024));                               \
    GTEST_SKIP() << "oneDNN's brgemm runs these products here: MatMul never pads b for it"; \
  }

void expect_same_bits(const std::vector<float>& want, const std::vector<float>& got) {
  ASSERT_EQ(want.size(), got.size());
  kiln::testing::expect_same_bits(want, got.data());
}

// The MNIST dense layer at both batches, the rule's edges (32 rows; 300 of
// 1024 columns, just under oneDNN's threshold), other multiples of 512
// columns, and shapes the rule leaves alone (768 and 1000 columns, 400 rows),
// which must come out the same when the copy is forced.
const struct {
  int64_t rows, k, n;
} kCases[] = {{50, 3136, 1024}, {256, 3136, 1024}, {16, 64, 512},   {300, 128, 1024}, {20, 33, 2048},
              {37, 200, 1536},  {50, 100, 768},    {50, 100, 1000}, {400, 64, 1024}};

TEST(MatmulPadding, ThePaddedCopyGivesTheBitsOfBReadInPlace) {
  SKIP_UNLESS_LONGER_ROWS_KEEP_THE_BITS();
  for (const auto& c : kCases) {
    SCOPED_TRACE(testing::Message() << c.rows << " x " << c.k << " x " << c.n);
    kiln::Tensor a = kiln::constant(uniform(c.rows * c.k, 1), kiln::Shape{c.rows, c.k});
    kiln::Tensor b = kiln::constant(uniform(c.k * c.n, 2), kiln::Shape{c.k, c.n});
    for (int threads : {1, 2}) {
      ThreadCount scope(threads);
      const std::vector<float> in_place = product(MatmulBPadding::kNever, a, b);
      expect_same_bits(in_place, product(MatmulBPadding::kAlways, a, b));
      expect_same_bits(in_place, product(MatmulBPadding::kByRule, a, b));
      // A folded batch ([2, rows, k] x [k, n]) is one product with more rows.
      kiln::Tensor batched = kiln::reshape(kiln::concat({a, a}, 0), kiln::Shape{2, c.rows, c.k});
      const std::vector<float> folded = product(MatmulBPadding::kNever, batched, b);
      expect_same_bits(folded, product(MatmulBPadding::kAlways, batched, b));
    }
  }
}

// Not a stand-in for oneDNN's own tests: a check that the copy feeds the
// product the right rows (a wrong stride or a stale buffer shows here).
TEST(MatmulPadding, ThePaddedProductIsTheProduct) {
  const int64_t rows = 24, k = 70, n = 512;
  std::vector<float> av = uniform(rows * k, 3), bv = uniform(k * n, 4);
  kiln::Tensor a = kiln::constant(av, kiln::Shape{rows, k}), b = kiln::constant(bv, kiln::Shape{k, n});
  const std::vector<float> got = product(MatmulBPadding::kAlways, a, b);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < k; ++i) {
        exact += double(av[r * k + i]) * bv[i * n + j];
        magnitude += std::fabs(double(av[r * k + i]) * bv[i * n + j]);
      }
      ASSERT_LE(std::fabs(got[r * n + j] - exact), 2 * k * 0x1p-24 * magnitude) << "row " << r << " column " << j;
    }
  // A second b of the same shape: the copy is made on every call.
  std::vector<float> bv2 = uniform(k * n, 5);
  kiln::Tensor b2 = kiln::constant(bv2, kiln::Shape{k, n});
  expect_same_bits(product(MatmulBPadding::kNever, a, b2), product(MatmulBPadding::kAlways, a, b2));
}

// A transposed or batched b is read in place whatever the mode; a transposed
// a with one b is padded like any other.
TEST(MatmulPadding, TransposedOrBatchedOperandsKeepTheirBits) {
  const int64_t rows = 32, k = 96, n = 512;
  kiln::Tensor a = kiln::constant(uniform(rows * k, 6), kiln::Shape{rows, k});
  kiln::Tensor bt = kiln::constant(uniform(n * k, 7), kiln::Shape{n, k});
  expect_same_bits(product(MatmulBPadding::kNever, a, bt, false, true),
                   product(MatmulBPadding::kAlways, a, bt, false, true));
  kiln::Tensor a3 = kiln::constant(uniform(2 * rows * k, 8), kiln::Shape{2, rows, k});
  kiln::Tensor b3 = kiln::constant(uniform(2 * k * n, 9), kiln::Shape{2, k, n});
  expect_same_bits(product(MatmulBPadding::kNever, a3, b3), product(MatmulBPadding::kAlways, a3, b3));
  kiln::Tensor at = kiln::constant(uniform(k * rows, 10), kiln::Shape{k, rows});
  kiln::Tensor b = kiln::constant(uniform(k * n, 11), kiln::Shape{k, n});
  expect_same_bits(product(MatmulBPadding::kNever, at, b, true, false),
                   product(MatmulBPadding::kAlways, at, b, true, false));
}

// The dense layer's forward, fused in a graph (FusedMatMul runs MatMul's
// kernel), against eager with the copy off.
TEST(MatmulPadding, TracedDenseLayerGivesTheEagerBits) {
  SKIP_UNLESS_LONGER_ROWS_KEEP_THE_BITS();
  const int64_t rows = 50, k = 3136, n = 1024;
  kiln::Tensor x = kiln::constant(uniform(rows * k, 12), kiln::Shape{rows, k});
  kiln::Tensor w = kiln::constant(uniform(k * n, 13), kiln::Shape{k, n});
  kiln::Tensor bias = kiln::constant(uniform(n, 14), kiln::Shape{n});
  auto dense = kiln::function([](const kiln::Tensor& x, const kiln::Tensor& w, const kiln::Tensor& b) {
    return kiln::relu(kiln::nn::bias_add(kiln::matmul(x, w), b));
  });
  std::vector<float> eager;
  {
    PaddingMode scope(MatmulBPadding::kNever);
    eager = kiln::relu(kiln::nn::bias_add(kiln::matmul(x, w), bias)).to_vector<float>();
  }
  for (MatmulBPadding mode : {MatmulBPadding::kByRule, MatmulBPadding::kAlways}) {
    PaddingMode scope(mode);
    expect_same_bits(eager, dense(x, w, bias).to_vector<float>());
  }
}

// A b kept in longer rows (the ab_padded weight layout, ops/matmul_layout.h)
// gives the bits of the dense b, transposed or not: the dense layer's
// forward (x W) and its input gradient (dy W^T) included.
TEST(MatmulPadding, BKeptInLongerRowsGivesTheBitsOfTheDenseB) {
  SKIP_UNLESS_LONGER_ROWS_KEEP_THE_BITS();
  const kiln::ops::MatmulLayout& layout = *kiln::ops::find_layout("ab_padded");
  const struct {
    int64_t rows, k, n;
    bool tb;
  } cases[] = {{50, 3136, 1024, false}, {50, 1024, 3136, true}, {256, 3136, 1024, false}, {256, 1024, 3136, true},
               {24, 70, 512, false},    {3, 40, 1024, false},   {3, 1024, 40, true},      {40, 64, 100, true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.rows << " x " << c.k << " x " << c.n << (c.tb ? " (b transposed)" : ""));
    kiln::Tensor a = kiln::constant(uniform(c.rows * c.k, 21), kiln::Shape{c.rows, c.k});
    kiln::Tensor b = c.tb ? kiln::constant(uniform(c.n * c.k, 22), kiln::Shape{c.n, c.k})
                          : kiln::constant(uniform(c.k * c.n, 22), kiln::Shape{c.k, c.n});
    const kiln::Tensor in[] = {a, layout.pack(b)};
    const kiln::schema::Attrs attrs{
        {"transpose_a", false}, {"transpose_b", c.tb}, {kiln::ops::kMatmulBLayout, std::string(layout.name)}};
    for (int threads : {1, 2}) {
      ThreadCount scope(threads);
      expect_same_bits(kiln::matmul(a, b, false, c.tb).to_vector<float>(),
                       kiln::runtime::run_eager(kiln::ops::matmul_op(), in, attrs)[0].to_vector<float>());
    }
  }
}

// The shapes that oneDNN 2.6's AVX2 sgemm sends to its no-copy kernel (1/M +
// 1/N >= 0.0038) with b's rows a multiple of 4 KB apart, from 32 rows on. On
// CPUs with AVX-512 oneDNN keeps such strides off that kernel itself.
TEST(MatmulPadding, TheRuleTakesOneDnnsNoCopyShapesWithConflictingRows) {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  if ((isa & avx512) == avx512) {
    EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 3136, 1024));
    GTEST_SKIP() << "this CPU has AVX-512: MatMul never pads b here";
  }
  EXPECT_TRUE(kiln::ops::matmul_pads_b(50, 3136, 1024));   // MNIST's dense1, batch 50
  EXPECT_TRUE(kiln::ops::matmul_pads_b(256, 3136, 1024));  // and 256
  EXPECT_TRUE(kiln::ops::matmul_pads_b(64, 50, 1024));     // a band of its weight gradient
  EXPECT_TRUE(kiln::ops::matmul_pads_b(32, 64, 1024));
  EXPECT_TRUE(kiln::ops::matmul_pads_b(300, 1024, 2048));
  EXPECT_FALSE(kiln::ops::matmul_pads_b(400, 3136, 1024));  // oneDNN copies b itself
  EXPECT_FALSE(kiln::ops::matmul_pads_b(3136, 50, 1024));   // dense1's weight gradient
  EXPECT_FALSE(kiln::ops::matmul_pads_b(16, 3136, 1024));   // the copy would cost more
  EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 3136, 512));    // rows 2 KB apart: as much
  EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 3136, 1000));
  EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 3136, 768));
  EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 8, 1024));
  EXPECT_TRUE(kiln::ops::matmul_pads_b(50, 4096, 4096));    // 16M elements, the largest copied
  EXPECT_FALSE(kiln::ops::matmul_pads_b(50, 4097, 4096));
}

}  // namespace
