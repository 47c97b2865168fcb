// gemv_f32 (src/ops/gemv.h), MatMul's float32 kernel for a few rows times a
// matrix: its bits are exactly the documented order of operations (whatever
// the thread count, vector width and other rows), its values are within the
// rounding bound of a double-precision product and of oneDNN's kernel, and
// the MatMul shapes that have a few rows take it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <kiln/kiln.h>

#include "core/tensor_impl.h"
#include "counting_allocator.h"
#include "kernel_test_util.h"
#include "ops/gemv.h"

namespace {

using kiln::ops::gemv_f32;
using kiln::ops::kGemvBlockRows;
using kiln::testing::expect_same_bits;
using kiln::testing::ThreadCount;
using kiln::testing::uniform;

// The order gemv.h promises, one scalar operation at a time: per column, an
// FMA chain over each block of rows, the blocks' sums added in block order.
std::vector<float> documented_order(const std::vector<float>& x, const std::vector<float>& b, int64_t ldb, int64_t k,
                                    int64_t n) {
  std::vector<float> y(n);
  for (int64_t j = 0; j < n; ++j) {
    float total = 0.f;
    for (int64_t row = 0; row < k; row += kGemvBlockRows) {
      float block = 0.f;
      for (int64_t i = row; i < std::min(k, row + kGemvBlockRows); ++i) block = std::fma(x[i], b[i * ldb + j], block);
      total = row == 0 ? block : total + block;
    }
    y[j] = total;
  }
  return y;
}

struct GemvShape {
  int64_t k, n, ldb;
};

// Rows around a block's edge, columns around the 2048-column tile's edge and
// the vector width, a padded row stride.
const GemvShape kShapes[] = {{1, 1, 1},      {3, 7, 7},       {255, 17, 17},   {256, 9, 12},   {257, 1024, 1024},
                             {1000, 33, 40}, {3136, 1024, 1024}, {700, 2049, 2049}, {513, 4100, 4103}};

TEST(Gemv, BitsAreTheDocumentedOrderForAnyThreadCount) {
  for (const GemvShape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "k=" << s.k << " n=" << s.n << " ldb=" << s.ldb);
    std::vector<float> x = uniform(s.k, 1), b = uniform(s.k * s.ldb, 2);
    std::vector<float> want = documented_order(x, b, s.ldb, s.k, s.n);
    // Three rows stored column by column (a transposed a), the middle one x.
    std::vector<float> three = uniform(3 * s.k, 9);
    for (int64_t i = 0; i < s.k; ++i) three[3 * i + 1] = x[i];
    for (int threads : {1, 2, 3}) {
      ThreadCount scope(threads);
      std::vector<float> y(s.n, NAN), y3(3 * s.n, NAN);
      gemv_f32({x.data(), 1, s.k, 1}, b.data(), s.ldb, s.k, s.n, y.data());
      expect_same_bits(want, y.data());
      gemv_f32({three.data(), 3, 1, 3}, b.data(), s.ldb, s.k, s.n, y3.data());
      expect_same_bits(want, y3.data() + s.n);
    }
  }
}

TEST(Gemv, WithinTheRoundingBoundOfTheExactProduct) {
  for (const GemvShape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << "k=" << s.k << " n=" << s.n);
    std::vector<float> x = uniform(s.k, 3), b = uniform(s.k * s.ldb, 4);
    std::vector<float> y(s.n);
    gemv_f32({x.data(), 1, s.k, 1}, b.data(), s.ldb, s.k, s.n, y.data());
    // Each sum rounds at most once per row of its block and once per block.
    const int64_t roundings = std::min(s.k, kGemvBlockRows) + (s.k + kGemvBlockRows - 1) / kGemvBlockRows;
    for (int64_t j = 0; j < s.n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < s.k; ++i) {
        exact += double(x[i]) * b[i * s.ldb + j];
        magnitude += std::fabs(double(x[i]) * b[i * s.ldb + j]);
      }
      ASSERT_LE(std::fabs(y[j] - exact), roundings * 0x1p-24 * magnitude) << "column " << j;
    }
  }
}

TEST(Gemv, InfinitiesAndNaNsPropagateAsInTheProduct) {
  const float inf = std::numeric_limits<float>::infinity();
  // Column 0 meets +inf, column 1 +inf and -inf, column 2 0 * inf, column 3 a NaN.
  std::vector<float> x{1.f, 2.f, 0.f, 1.f}, b{inf, inf, 1.f, NAN, 1.f, -inf, 1.f, 1.f, 5.f, 5.f, inf, 1.f,
                                              1.f, 1.f, 1.f, 1.f};
  std::vector<float> y(4);
  gemv_f32({x.data(), 1, 4, 1}, b.data(), 4, 4, 4, y.data());
  EXPECT_EQ(y[0], inf);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(Gemv, NoRowsGiveZerosAndNoColumnsWriteNothing) {
  std::vector<float> y{NAN, NAN};
  gemv_f32({nullptr, 1, 0, 1}, nullptr, 2, 0, 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{0.f, 0.f}));
  gemv_f32({nullptr, 1, 5, 1}, nullptr, 0, 5, 0, nullptr);
}

// The blocks' partial sums live in a buffer the calling thread grows once.
TEST(Gemv, AWarmCallAllocatesNothing) {
  const int64_t k = 3136, n = 1024;
  std::vector<float> x = uniform(k, 7), b = uniform(k * n, 8), y(n);
  gemv_f32({x.data(), 1, k, 1}, b.data(), n, k, n, y.data());
  EXPECT_EQ(kiln::testing::count_heap_allocations([&] { gemv_f32({x.data(), 1, k, 1}, b.data(), n, k, n, y.data()); }), 0);
}

// MatMul with up to kGemvMaxRows rows (however its dims are spelled) runs
// gemv_f32, each row with the bits it has alone; one row more runs oneDNN,
// which must agree within the rounding bound.
TEST(Gemv, MatMulOfAFewRowsTakesItAndAgreesWithOneDnn) {
  const int64_t k = 3136, n = 1024, rows = kiln::ops::kGemvMaxRows + 1;
  std::vector<float> av = uniform(rows * k, 5), bv = uniform(k * n, 6);
  std::vector<std::vector<float>> want;
  for (int64_t m = 0; m < rows; ++m)
    want.push_back(documented_order(std::vector<float>(av.begin() + m * k, av.begin() + (m + 1) * k), bv, n, k, n));
  kiln::Tensor a = kiln::constant(av, kiln::Shape{rows, k}), b = kiln::constant(bv, kiln::Shape{k, n});
  auto first_rows = [&](int64_t m) { return kiln::slice(a, {0, 0}, {m, k}); };
  for (int64_t m = 1; m <= kiln::ops::kGemvMaxRows; ++m) {
    const kiln::Tensor spellings[] = {
        kiln::matmul(first_rows(m), b),
        kiln::matmul(kiln::transpose(first_rows(m)), b, /*transpose_a=*/true),
        kiln::matmul(kiln::reshape(first_rows(m), kiln::Shape{1, m, k}), b),
        kiln::matmul(first_rows(m), kiln::reshape(b, kiln::Shape{1, k, n})),
    };
    for (const kiln::Tensor& y : spellings) {
      SCOPED_TRACE(testing::Message() << m << " rows, " << y.shape().to_string());
      ASSERT_EQ(y.size(), m * n);
      for (int64_t r = 0; r < m; ++r) expect_same_bits(want[r], kiln::core::data_of<float>(y) + r * n);
    }
  }
  kiln::Tensor onednn = kiln::matmul(a, b);
  for (int64_t r = 0; r < rows; ++r) {
    const float* o = kiln::core::data_of<float>(onednn) + r * n;
    for (int64_t j = 0; j < n; ++j) {
      double magnitude = 0;
      for (int64_t i = 0; i < k; ++i) magnitude += std::fabs(double(av[r * k + i]) * bv[i * n + j]);
      ASSERT_LE(std::fabs(want[r][j] - o[j]), 2 * k * 0x1p-24 * magnitude) << "row " << r << " column " << j;
    }
  }
}

}  // namespace
