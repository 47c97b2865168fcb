#include "ops/gemv.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"

namespace kiln::detail {

namespace {

// Columns swept per pass over a block: their running sums (8 KB) stay in L1
// while the block's rows stream past.
constexpr int64_t kTileColumns = 2048;
// Multiply-adds a thread should get before a second one is worth waking.
constexpr int64_t kParallelMacs = 4 * kParallelGrain;

// out[j] = sum over i < rows of x[i] * b[i * ldb + j] (j < cols), each
// column one chain of FMAs in row order. Four rows per pass, so that each
// running sum is loaded and stored once per four multiply-adds. std::fma is
// one rounding in every lane width, so the vectorized loop and its scalar
// remainder give the same bits.
void sweep_rows(const float* x, const float* b, int64_t ldb, int64_t rows, int64_t cols, float* out) {
  std::fill(out, out + cols, 0.f);
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    const float* r0 = b + i * ldb;
    const float *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
    const float x0 = x[i], x1 = x[i + 1], x2 = x[i + 2], x3 = x[i + 3];
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      out[j] = std::fma(x3, r3[j], std::fma(x2, r2[j], std::fma(x1, r1[j], std::fma(x0, r0[j], out[j]))));
  }
  for (; i < rows; ++i) {
    const float* r = b + i * ldb;
    const float xi = x[i];
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) out[j] = std::fma(xi, r[j], out[j]);
  }
}

}  // namespace

void gemv_f32(const float* x, const float* b, int64_t ldb, int64_t k, int64_t n, float* y) {
  if (n <= 0) return;
  if (k <= 0) {
    std::fill(y, y + n, 0.f);
    return;
  }
  const int64_t blocks = (k + kGemvBlockRows - 1) / kGemvBlockRows;
  const int64_t tiles = (n + kTileColumns - 1) / kTileColumns;
  // Block 0's sums go straight to y, the others' to `partial` (one row of n
  // per block, 1/256 of B's size), added to y below. The calling thread's
  // buffer, grown once, so that a warm call allocates nothing.
  thread_local std::vector<float> partial_rows;
  if (blocks > 1) partial_rows.resize(std::max(partial_rows.size(), static_cast<std::size_t>((blocks - 1) * n)));
  float* const partial = partial_rows.data();
  // Units in block order, so that a thread's share of B is one stretch of
  // memory.
  const int64_t unit_macs = std::min(k, kGemvBlockRows) * std::min(n, kTileColumns);
  parallel_for(
      blocks * tiles,
      [&](int64_t begin, int64_t end) {
        for (int64_t unit = begin; unit < end; ++unit) {
          const int64_t block = unit / tiles, tile = unit % tiles;
          const int64_t row = block * kGemvBlockRows, col = tile * kTileColumns;
          float* out = block == 0 ? y : partial + (block - 1) * n;
          sweep_rows(x + row, b + row * ldb + col, ldb, std::min(kGemvBlockRows, k - row),
                     std::min(kTileColumns, n - col), out + col);
        }
      },
      std::max<int64_t>(1, kParallelMacs / unit_macs));
  if (blocks == 1) return;
  parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t block = 1; block < blocks; ++block) {
      const float* p = partial + (block - 1) * n;
#pragma omp simd
      for (int64_t j = begin; j < end; ++j) y[j] += p[j];
    }
  });
}

}  // namespace kiln::detail
