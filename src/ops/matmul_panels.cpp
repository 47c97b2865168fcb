// Panels (ops/nn_internal.h): a matrix, or its transpose, laid out as the
// column panels oneDNN's AVX-512 matmul reads its b in, whole or a few rows
// at a time (Adam's update writes a variable's panels band by band); and the
// product that reads a matrix's panels transposed (a dense layer's input
// gradient from the panels its forward read).
#include <algorithm>
#include <cstdint>
#include <cstring>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/nn_internal.h"
#include "ops/vector_math.h"

namespace kiln::ops {

namespace {

constexpr int64_t kWidth = kMatmulPanelWidth;

// Element (r, c) of a [k, n] matrix in the panels of its transpose
// ([k / 64, n, 64]).
int64_t transposed_at(int64_t r, int64_t c, int64_t n) { return ((r / kWidth) * n + c) * kWidth + r % kWidth; }

void rows_into_transposed_panels_plain(const float* rows, int64_t first, int64_t count, int64_t n, float* panels) {
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < n; ++c) panels[transposed_at(first + r, c, n)] = rows[r * n + c];
}

#ifdef __AVX2__
// The 8 x 8 block at `from` (rows `from_stride` apart) transposed to `to`
// (rows `to_stride` apart).
inline void transpose_8x8(const float* from, int64_t from_stride, float* to, int64_t to_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(from + i * from_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  // s[0..3] hold columns {0,4}, {1,5}, {2,6}, {3,7} of rows 0-3; s[4..7] of rows 4-7.
  __m256 s[8];
  for (int half = 0; half < 8; half += 4) {
    s[half] = _mm256_shuffle_ps(t[half], t[half + 2], 0x44);
    s[half + 1] = _mm256_shuffle_ps(t[half], t[half + 2], 0xEE);
    s[half + 2] = _mm256_shuffle_ps(t[half + 1], t[half + 3], 0x44);
    s[half + 3] = _mm256_shuffle_ps(t[half + 1], t[half + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(to + j * to_stride, _mm256_permute2f128_ps(s[j], s[j + 4], 0x20));
    _mm256_storeu_ps(to + (j + 4) * to_stride, _mm256_permute2f128_ps(s[j], s[j + 4], 0x31));
  }
}

// A whole group of 64 rows (`rows`, n columns) into its panel `to`
// ([n, 64]): 16 columns (a cache line of each row) at a time transposed into
// a block in L1, which is then streamed out whole. Streaming stores: a
// weight's panels outsize the caches (Adam's update streams the variable and
// its slots between the writes and the next step's read), and a plain store
// would first read each line in for nothing.
void group_into_transposed_panel(const float* rows, int64_t n, float* to) {
  constexpr int64_t kColumns = 16;
  alignas(32) float block[kColumns * kWidth];
  int64_t c = 0;
  for (; c + kColumns <= n; c += kColumns) {
    for (int64_t i = 0; i < kWidth; i += 8) {
      transpose_8x8(rows + i * n + c, n, block + i, kWidth);
      transpose_8x8(rows + i * n + c + 8, n, block + 8 * kWidth + i, kWidth);
    }
    for (int64_t j = 0; j < kColumns * kWidth; j += 8)
      _mm256_stream_ps(to + c * kWidth + j, _mm256_load_ps(block + j));
  }
  for (; c < n; ++c)
    for (int64_t i = 0; i < kWidth; ++i) to[c * kWidth + i] = rows[i * n + c];
}
#endif

}  // namespace

void rows_into_panels(const float* rows, int64_t first, int64_t count, int64_t k, int64_t n, float* panels) {
  constexpr int64_t w = kWidth;
#ifdef __AVX2__
  // Streaming stores, as above.
  if (reinterpret_cast<std::uintptr_t>(panels) % 32 == 0) {
    for (int64_t r = 0; r < count; ++r)
      for (int64_t p = 0; p < n / w; ++p) {
        const float* from = rows + r * n + p * w;
        float* to = panels + (p * k + first + r) * w;
        for (int64_t i = 0; i < w; i += 8) _mm256_stream_ps(to + i, _mm256_loadu_ps(from + i));
      }
    _mm_sfence();
    return;
  }
#endif
  for (int64_t r = 0; r < count; ++r)
    for (int64_t p = 0; p < n / w; ++p)
      std::memcpy(panels + (p * k + first + r) * w, rows + r * n + p * w, w * sizeof(float));
}

void rows_into_transposed_panels(const float* rows, int64_t first, int64_t count, int64_t n, float* panels) {
#ifdef __AVX2__
  if (reinterpret_cast<std::uintptr_t>(panels) % 32 == 0) {
    // Rows before the first whole group, the whole groups, the rows after.
    const int64_t end = first + count;
    const int64_t body = std::min(end, (first + kWidth - 1) / kWidth * kWidth);
    rows_into_transposed_panels_plain(rows, first, body - first, n, panels);
    int64_t r = body;
    for (; r + kWidth <= end; r += kWidth)
      group_into_transposed_panel(rows + (r - first) * n, n, panels + (r / kWidth) * n * kWidth);
    _mm_sfence();
    rows_into_transposed_panels_plain(rows + (r - first) * n, r, end - r, n, panels);
    return;
  }
#endif
  rows_into_transposed_panels_plain(rows, first, count, n, panels);
}

namespace {

// A new float32 tensor of `shape` made from the rows of matrix b by
// fill(rows, first, count, to), the threads sharing b's rows `unit` at a time.
template <class Fill>
Tensor panels_of(const Tensor& b, Shape shape, int64_t unit, Fill&& fill) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  Tensor panels = core::make_tensor(DType::Float32, std::move(shape));
  const float* from = core::data_of<float>(b);
  float* to = core::data_of<float>(panels);
  core::parallel_for(
      k / unit,
      [&](int64_t first, int64_t last) { fill(from + first * unit * n, first * unit, (last - first) * unit, to); },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(unit * n, 1)));
  return panels;
}

}  // namespace

Tensor in_panels(const Tensor& b) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  return panels_of(b, Shape{n / kWidth, k, kWidth}, 1, [&](const float* rows, int64_t first, int64_t count, float* to) {
    rows_into_panels(rows, first, count, k, n, to);
  });
}

Tensor rows_of_panels(const Tensor& panels) {
  const int64_t groups = panels.shape()[0], k = panels.shape()[1], n = groups * kWidth;
  Tensor b = core::make_tensor(DType::Float32, Shape{k, n});
  const float* from = core::data_of<float>(panels);
  float* to = core::data_of<float>(b);
  core::parallel_for(
      k,
      [&](int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r)
          for (int64_t p = 0; p < groups; ++p)
            std::memcpy(to + r * n + p * kWidth, from + (p * k + r) * kWidth, kWidth * sizeof(float));
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(n, 1)));
  return b;
}

// The threads share the groups of 64 rows.
Tensor in_transposed_panels(const Tensor& b) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  return panels_of(b, Shape{k / kWidth, n, kWidth}, kWidth,
                   [&](const float* rows, int64_t first, int64_t count, float* to) {
                     rows_into_transposed_panels(rows, first, count, n, to);
                   });
}

// ---- a times the transpose of b, b in panels ----------------------------------
// out [rows, n] = a [rows, k] b^T, b [n, k] in its panels P [k / 64, n, 64]
// (P[c][r][j] = b[r][64 c + j]). Each output is oneDNN's sum for the dense
// product: chains of `chain` FMAs in order along k, each from +0, added in
// order (MatMul finds the chain length by comparing with oneDNN, once per
// shape). The threads share the output's columns 64 at a time; for each
// 64 x 64 block of P (64 columns of out, 64 steps of k), the block is
// transposed into L1 so that each step of k reads 64 columns' b as 4
// vectors, and a [rows, 64] tile of out is multiplied into, 6 rows at a time
// with each row's a broadcast (24 accumulators).

namespace {

#ifdef __AVX2__
#define KILN_PANELS_AVX512 __attribute__((target("avx512f")))
constexpr int64_t kRowBlock = kMatmulTransposedPanelsMaxRows;  // rows of out whose tiles a thread keeps (2 x 24 KB)

// R rows' chains (in `acc`, rows 64 floats apart) advanced by 64 steps of k:
// `block` the transposed P block ([64 steps][64 columns]), `a` the rows' a
// at the first step (rows `lda` apart).
template <int R>
KILN_PANELS_AVX512 void advance_chains(const float* block, const float* a, int64_t lda, float* acc, bool from_zero) {
  __m512 c[R][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 4; ++v) c[r][v] = from_zero ? _mm512_setzero_ps() : _mm512_load_ps(acc + r * kWidth + 16 * v);
  for (int64_t j = 0; j < kWidth; ++j) {
    const float* b = block + j * kWidth;
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), b2 = _mm512_load_ps(b + 32),
                 b3 = _mm512_load_ps(b + 48);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + j]);
      c[r][0] = _mm512_fmadd_ps(x, b0, c[r][0]);
      c[r][1] = _mm512_fmadd_ps(x, b1, c[r][1]);
      c[r][2] = _mm512_fmadd_ps(x, b2, c[r][2]);
      c[r][3] = _mm512_fmadd_ps(x, b3, c[r][3]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 4; ++v) _mm512_store_ps(acc + r * kWidth + 16 * v, c[r][v]);
}

// Columns [col, col + 64) of rows [row, row + rows) of out.
KILN_PANELS_AVX512 void transposed_panels_tile(const float* a, int64_t k, const float* panels, int64_t n,
                                              int64_t chain, int64_t row, int64_t rows, int64_t col, float* out) {
  alignas(64) float block[kWidth * kWidth];
  alignas(64) float chains[kRowBlock * kWidth];
  alignas(64) float total[kRowBlock * kWidth];
  for (int64_t start = 0; start < k; start += chain) {
    for (int64_t step = start; step < start + chain; step += kWidth) {
      // P's block: 64 rows of b (columns of out), 64 steps of k each.
      const float* p = panels + ((step / kWidth) * n + col) * kWidth;
      for (int64_t i = 0; i < kWidth; i += 8)
        for (int64_t j = 0; j < kWidth; j += 8) transpose_8x8(p + i * kWidth + j, kWidth, block + j * kWidth + i, kWidth);
      const bool from_zero = step == start;
      const float* a_step = a + row * k + step;
      int64_t r = 0;
      for (; r + 6 <= rows; r += 6) advance_chains<6>(block, a_step + r * k, k, chains + r * kWidth, from_zero);
      for (; r + 2 <= rows; r += 2) advance_chains<2>(block, a_step + r * k, k, chains + r * kWidth, from_zero);
      for (; r < rows; ++r) advance_chains<1>(block, a_step + r * k, k, chains + r * kWidth, from_zero);
    }
    for (int64_t e = 0; e < rows * kWidth; e += 16) {
      const __m512 c = _mm512_load_ps(chains + e);
      _mm512_store_ps(total + e, start == 0 ? c : _mm512_add_ps(_mm512_load_ps(total + e), c));
    }
  }
  for (int64_t r = 0; r < rows; ++r) std::memcpy(out + (row + r) * n + col, total + r * kWidth, kWidth * sizeof(float));
}
#undef KILN_PANELS_AVX512
#endif

}  // namespace

bool can_multiply_by_transposed_panels(int64_t k, int64_t n, int64_t chain) {
#ifdef __AVX2__
  return vmath::has_avx512() && k > 0 && n > 0 && n % kWidth == 0 && chain > 0 && chain % kWidth == 0 &&
         k % chain == 0;
#else
  return false;
#endif
}

void multiply_by_transposed_panels(const float* a, int64_t rows, int64_t k, const float* panels, int64_t n,
                                   int64_t chain, float* out) {
#ifdef __AVX2__
  // Rows in blocks of equal size, at most kRowBlock; the threads take
  // whole columns of tiles, so that each does as many rows.
  const int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock, block_rows = (rows + row_blocks - 1) / row_blocks;
  core::parallel_for(
      row_blocks * (n / kWidth),
      [&](int64_t first, int64_t last) {
        for (int64_t t = first; t < last; ++t) {
          const int64_t row = t % row_blocks * block_rows, col = t / row_blocks * kWidth;
          transposed_panels_tile(a, k, panels, n, chain, row, std::min(block_rows, rows - row), col, out);
        }
      },
      1);
#endif
}

}  // namespace kiln::ops
