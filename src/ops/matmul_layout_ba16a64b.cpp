// BA16a64b: b [k, n] as n / 64 column panels one after another, each a
// row-major [k, 64] block (a [n / 64, k, 64] tensor). oneDNN's AVX-512 matmul
// (brgemm) picks this layout for its b itself and reads a dense b markedly
// slower at few rows; given b so, it runs the same kernel with the same bits
// (Layouts.* tests). Asked of oneDNN per shape, so nothing here assumes a CPU.
// A trained weight may be held in panels alone: Adam reads and writes its
// rows here, and a dense layer's input gradient (a b^T) reads the panels with
// Kiln's own AVX-512 kernel, which sums as oneDNN's product of the dense b
// transposed does (docs/design-notes.md, "Weight layouts").
#include <algorithm>
#include <cstring>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <omp.h>

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/gemv.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"
#include "ops/onednn.h"
#include "ops/vector_math.h"
#include "runtime/dispatch.h"

namespace kiln::ops {

namespace {

constexpr int64_t kWidth = 64;
// Kiln's kernel reads the panels transposed up to this many rows of a (one
// block of its tiles); past that oneDNN on the dense b is as fast or faster.
constexpr int64_t kTransposedMaxRows = 96;

dnnl::memory::desc panels_desc(int64_t k, int64_t n) {
  return dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::BA16a64b);
}

// Whole blocks of 16 rows and 64 columns (oneDNN would pad others).
bool fits(int64_t k, int64_t n) { return k >= 16 && k % 16 == 0 && n >= kWidth && n % kWidth == 0; }

// Where oneDNN's matmul, free to choose b's layout for these shapes, picks
// exactly this one: brgemm on AVX-512 (ONEDNN_MAX_CPU_ISA included), and
// more rows than gemv_f32 takes.
bool wants(int64_t rows, int64_t k, int64_t n) {
  if (rows <= kGemvMaxRows || !fits(k, n)) return false;
  struct Answer {
    bool yes = false;
  };
  onednn::PrimitiveKey key(/*kind=*/8);
  for (int64_t v : {rows, k, n}) key.add(v);
  return onednn::cached<Answer>(key, [&] {
    auto answer = std::make_shared<Answer>();
    try {
      using dims = dnnl::memory::dims;
      const dnnl::memory::desc a = onednn::plain_desc(dims{rows, k}, dims{k, 1});
      const dnnl::memory::desc c = onednn::plain_desc(dims{rows, n}, dims{n, 1});
      const dnnl::memory::desc any({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, any, c), attr, onednn::engine());
      answer->yes = pd.weights_desc() == panels_desc(k, n);
    } catch (const dnnl::error&) {
    }
    return answer;
  })->yes;
}

Shape packed_shape(int64_t k, int64_t n) { return Shape{n / kWidth, k, kWidth}; }

bool unpacked_shape(const Shape& packed, int64_t& k, int64_t& n) {
  if (!packed.is_fully_defined() || packed.rank() != 3 || packed[2] != kWidth) return false;
  k = packed[1];
  n = packed[0] * kWidth;
  return true;
}

// Row r's 64-column chunks to their panels; the threads share the rows.
Tensor pack(const Tensor& b) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  Tensor panels = core::make_tensor(DType::Float32, packed_shape(k, n));
  const float* from = core::data_of<float>(b);
  float* to = core::data_of<float>(panels);
  core::parallel_for(
      k,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t p = 0; p < n / kWidth; ++p)
            std::memcpy(to + (p * k + r) * kWidth, from + r * n + p * kWidth, kWidth * sizeof(float));
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(n, 1)));
  return panels;
}

// MatMul's primitive for a dense [rows, k] x [k, n], b described as panels:
// the same kernel, so the same bits.
bool multiply(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out) {
  onednn::PrimitiveKey key(/*kind=*/10);
  for (int64_t v : {rows, k, n}) key.add(v);
  return onednn::matmul_with_b(
      key, rows, k, n, [](int64_t k, int64_t n, int64_t) { return panels_desc(k, n); }, 0, a,
      core::data_of<float>(b), out);
}

// A row's 64 columns of a panel are one run.
int64_t run(const Tensor&) { return kWidth; }
int64_t offset(const Tensor& packed, int64_t row, int64_t col) {
  return ((col / kWidth) * packed.shape()[1] + row) * kWidth + col % kWidth;
}

// Rows [first, first + count) of the [k, n] matrix out of its panels, a
// panel at a time: each panel's part is one stretch of memory, a stream the
// hardware prefetcher follows.
void read_rows(const Tensor& packed, int64_t first, int64_t count, float* rows) {
  const int64_t k = packed.shape()[1], n = packed.shape()[0] * kWidth;
  const float* panels = core::data_of<float>(packed);
  for (int64_t p = 0; p < n / kWidth; ++p) {
    const float* from = panels + (p * k + first) * kWidth;
    for (int64_t r = 0; r < count; ++r) std::memcpy(rows + r * n + p * kWidth, from + r * kWidth, kWidth * sizeof(float));
  }
}

Tensor unpack(const Tensor& packed) {
  const int64_t k = packed.shape()[1], n = packed.shape()[0] * kWidth;
  Tensor b = core::make_tensor(DType::Float32, Shape{k, n});
  float* to = core::data_of<float>(b);
  core::parallel_for(
      k, [&](int64_t begin, int64_t end) { read_rows(packed, begin, end - begin, to + begin * n); },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(n, 1)));
  return b;
}

// ---- a times the transpose of b, b in panels ----------------------------------
// out [rows, n] = a [rows, k] b^T, b [n, k] in its panels P [k / 64, n, 64]
// (P[c][r][j] = b[r][64 c + j]). Each output is oneDNN's sum for the dense
// product: chains of `chain` FMAs in order along k, each from +0, added in
// order (transposed_chain finds the chain length by comparing with oneDNN,
// once per shape and thread count). The threads share the output's columns
// 64 at a time; for each 64 x 64 block of P (64 columns of out, 64 steps of
// k), the block is transposed into L1 so that each step of k reads 64
// columns' b as 4 vectors, and a [rows, 64] tile of out is multiplied into,
// 6 rows at a time with each row's a broadcast (24 accumulators).

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

#define KILN_PANELS_AVX512 __attribute__((target("avx512f")))
constexpr int64_t kRowBlock = kTransposedMaxRows;  // rows of out whose tiles a thread keeps (2 x 24 KB)

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


// oneDNN's chain length for a [rows, k] x [n, k]^T, or 0 where none of whole
// panels gives its bits (or the kernel cannot run): both products of one a
// and b of probe values.
int64_t transposed_chain(int64_t rows, int64_t k, int64_t n) {
  if (rows < 1 || !can_multiply_by_transposed_panels(k, n, kWidth)) return 0;
  struct Answer {
    int64_t chain = 0;
  };
  onednn::PrimitiveKey key(/*kind=*/9);
  for (int64_t v : {rows, k, n, static_cast<int64_t>(omp_get_max_threads())}) key.add(v);
  return onednn::cached<Answer>(key, [&] {
    auto answer = std::make_shared<Answer>();
    const Tensor a = core::make_tensor(DType::Float32, Shape{rows, k});
    const Tensor b = core::make_tensor(DType::Float32, Shape{n, k});
    fill_probe_values({a, b});
    const Tensor in[] = {a, b};
    const Tensor dense =
        runtime::run_eager(matmul_op(), in, schema::Attrs{{"transpose_a", false}, {"transpose_b", true}})[0];
    const Tensor panels = pack(b);
    std::vector<float> ours(static_cast<std::size_t>(rows * n));
    for (int64_t chain = k; chain >= kWidth && chain % kWidth == 0; chain /= 2) {
      if (k % chain != 0) continue;
      multiply_by_transposed_panels(core::data_of<float>(a), rows, k, core::data_of<float>(panels), n, chain,
                                    ours.data());
      if (std::memcmp(ours.data(), core::data_of<float>(dense), ours.size() * sizeof(float)) == 0) {
        answer->chain = chain;
        break;
      }
    }
    return answer;
  })->chain;
}

bool multiplies_transposed(int64_t rows, int64_t k, int64_t n) {
  return rows <= kTransposedMaxRows && transposed_chain(rows, k, n) != 0;
}

bool multiply_transposed(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out) {
  const int64_t chain = transposed_chain(rows, k, n);
  if (!chain) return false;
  multiply_by_transposed_panels(a, rows, k, core::data_of<float>(b), n, chain, out);
  return true;
}

}  // namespace

const MatmulLayout& ba16a64b_layout() {
  // The fields in MatmulLayout's order.
  static const MatmulLayout layout{"BA16a64b", true, fits, wants, packed_shape, unpacked_shape, pack, multiply,
                                   unpack, run, offset, multiplies_transposed, multiply_transposed};
  return layout;
}

}  // namespace kiln::ops
