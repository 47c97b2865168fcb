#include "ops/gemv.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/parallel.h"
#include "kiln/error.h"

namespace kiln::ops {

namespace {

// Columns swept per pass over a block: their running sums (8 KB) stay in L1
// while the block's rows stream past.
constexpr int64_t kTileColumns = 2048;
// Multiply-adds a thread should get before a second one is worth waking.
constexpr int64_t kParallelMacs = 4 * core::kParallelGrain;

// For each row m of `a` (a(m, i) = a[m * a.row + i * a.col], i < depth):
// out[m * ldo + j] = sum over i of a(m, i) * b[i * ldb + j] (j < cols), each
// column one chain of FMAs in row order, the same whatever the other rows.
// Four rows of b per pass, each value of b loaded once for the M rows of a
// (M a template argument, so that the M running sums stay in registers), and
// each running sum loaded and stored once per four multiply-adds. std::fma
// is one rounding in every lane width, so the vectorized loop and its scalar
// remainder give the same bits.
template <int M>
void sweep_rows(const GemvRows& a, const float* b, int64_t ldb, int64_t depth, int64_t cols, float* out, int64_t ldo) {
  for (int m = 0; m < M; ++m) std::fill(out + m * ldo, out + m * ldo + cols, 0.f);
  int64_t i = 0;
  for (; i + 4 <= depth; i += 4) {
    const float* r0 = b + i * ldb;
    const float *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
    float x[M][4];
    for (int m = 0; m < M; ++m)
      for (int t = 0; t < 4; ++t) x[m][t] = a.data[m * a.row + (i + t) * a.col];
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) {
      const float b0 = r0[j], b1 = r1[j], b2 = r2[j], b3 = r3[j];
      for (int m = 0; m < M; ++m) {
        float& o = out[m * ldo + j];
        o = std::fma(x[m][3], b3, std::fma(x[m][2], b2, std::fma(x[m][1], b1, std::fma(x[m][0], b0, o))));
      }
    }
  }
  for (; i < depth; ++i) {
    const float* r = b + i * ldb;
    float x[M];
    for (int m = 0; m < M; ++m) x[m] = a.data[m * a.row + i * a.col];
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j)
      for (int m = 0; m < M; ++m) out[m * ldo + j] = std::fma(x[m], r[j], out[m * ldo + j]);
  }
}

using Sweep = void (*)(const GemvRows&, const float*, int64_t, int64_t, int64_t, float*, int64_t);
static_assert(kGemvMaxRows == 4, "one sweep_rows per row count");
constexpr Sweep kSweeps[kGemvMaxRows] = {sweep_rows<1>, sweep_rows<2>, sweep_rows<3>, sweep_rows<4>};

}  // namespace

void gemv_f32(const GemvRows& a, const float* b, int64_t ldb, int64_t k, int64_t n, float* y) {
  const int64_t out_size = a.count * n;
  if (out_size <= 0) return;
  if (a.count > kGemvMaxRows)
    throw Internal(fmt::format("gemv_f32: {} rows, more than the {} it takes", a.count, kGemvMaxRows));
  if (k <= 0) {
    std::fill(y, y + out_size, 0.f);
    return;
  }
  const int64_t blocks = (k + kGemvBlockRows - 1) / kGemvBlockRows;
  const int64_t tiles = (n + kTileColumns - 1) / kTileColumns;
  // Block 0's sums go straight to y, the others' to `partial` (the size of y
  // per block, a.count/256 of B's size), added to y below. The calling
  // thread's buffer, grown once, so that a warm call allocates nothing.
  thread_local std::vector<float> partial_sums;
  if (blocks > 1)
    partial_sums.resize(std::max(partial_sums.size(), static_cast<std::size_t>((blocks - 1) * out_size)));
  float* const partial = partial_sums.data();
  // Units in block order, so that a thread's share of B is one stretch of
  // memory.
  const int64_t unit_macs = a.count * std::min(k, kGemvBlockRows) * std::min(n, kTileColumns);
  core::parallel_for(
      blocks * tiles,
      [&](int64_t begin, int64_t end) {
        for (int64_t unit = begin; unit < end; ++unit) {
          const int64_t block = unit / tiles, tile = unit % tiles;
          const int64_t row = block * kGemvBlockRows, col = tile * kTileColumns;
          float* out = block == 0 ? y : partial + (block - 1) * out_size;
          const GemvRows block_of_a{a.data + row * a.col, a.count, a.row, a.col};
          kSweeps[a.count - 1](block_of_a, b + row * ldb + col, ldb, std::min(kGemvBlockRows, k - row),
                     std::min(kTileColumns, n - col), out + col, n);
        }
      },
      std::max<int64_t>(1, kParallelMacs / unit_macs));
  if (blocks == 1) return;
  core::parallel_for(out_size, [&](int64_t begin, int64_t end) {
    for (int64_t block = 1; block < blocks; ++block) {
      const float* p = partial + (block - 1) * out_size;
      for (int64_t j = begin; j < end; ++j) y[j] += p[j];
    }
  });
}

}  // namespace kiln::ops
