// Panels (ops/nn_internal.h): a matrix, or its transpose, laid out as the
// column panels oneDNN's AVX-512 matmul reads its b in, whole or a few rows
// at a time (Adam's update writes a variable's panels band by band).
#include <algorithm>
#include <cstdint>
#include <cstring>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/nn_internal.h"

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

// The threads share the groups of 64 rows.
Tensor in_transposed_panels(const Tensor& b) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  return panels_of(b, Shape{k / kWidth, n, kWidth}, kWidth,
                   [&](const float* rows, int64_t first, int64_t count, float* to) {
                     rows_into_transposed_panels(rows, first, count, n, to);
                   });
}

}  // namespace kiln::ops
