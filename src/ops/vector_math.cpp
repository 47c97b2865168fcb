// The float32 transcendentals of vector_math.h (formulas and accuracy there).
#include "ops/vector_math.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "ops/vector_math_lanes16.h"

namespace kiln::ops::vmath {

#if KILN_VECTOR_MATH
namespace {

// Applies K to n contiguous floats; o may alias x (each block of 8 is read
// before it is written).
template <__m256 (*K)(__m256)>
inline void map(const float* x, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, K(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lane);
    _mm256_maskstore_ps(o + i, mask, K(_mm256_maskload_ps(x + i, mask)));
  }
}

// The same K on one value (the scalar functor: strided paths, constant
// folding), bitwise equal to what map gives for that value.
template <__m256 (*K)(__m256)>
inline float one(float x) {
  return _mm256_cvtss_f32(K(_mm256_set1_ps(x)));
}

// tanh's 8-lane loop. Where every value of a block of 32 has |x| < 0.625,
// tanh8 takes its odd polynomial on every lane, so the block can run that
// branch alone: a third of the operations, the same bits. Which blocks
// qualify shows only in their inputs, so the loop guesses from the block
// before (the first from its first 8 values): after a block computed whole
// whose values were all small, it computes the next block's polynomial
// first, checks, and computes that block whole where a lane was larger.
// Finding a block's largest |x| costs about 5% on mixed inputs, so after two
// mixed blocks in a row the rest of the call runs the plain loop.
constexpr int kTanhBlock = 32;

// tanh8 on one block; true if every |x| < 0.625 (NaN's bits order above).
[[gnu::always_inline]] inline bool tanh_block_whole(const float* x, float* o) {
  __m256i largest = _mm256_setzero_si256();
  for (int j = 0; j < kTanhBlock; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    _mm256_storeu_ps(o + j, tanh8(v));
    largest = _mm256_max_epi32(largest, _mm256_castps_si256(abs(v)));
  }
  const __m256i large = _mm256_cmpgt_epi32(largest, _mm256_set1_epi32(0x3f1fffff));  // >= 0.625f
  return _mm256_testz_si256(large, large);
}

// The odd polynomial on one block, written only if every |x| < 0.625 (o may
// be x, which a block computed whole afterwards still reads).
[[gnu::always_inline]] inline bool tanh_block_small(const float* x, float* o) {
  __m256 y[kTanhBlock / 8];
  __m256 large = _mm256_setzero_ps();
  for (int j = 0; j < kTanhBlock / 8; ++j) {
    const __m256 v = _mm256_loadu_ps(x + 8 * j);
    const __m256 ax = abs(v);
    large = _mm256_or_ps(large, _mm256_cmp_ps(ax, splat(0.625f), _CMP_NLT_US));
    y[j] = _mm256_or_ps(tanh8_small_magnitude(ax), _mm256_and_ps(v, splat(-0.0f)));
  }
  if (!_mm256_testz_ps(large, large)) return false;
  for (int j = 0; j < kTanhBlock / 8; ++j) _mm256_storeu_ps(o + 8 * j, y[j]);
  return true;
}

void tanh_map8(const float* x, float* o, int64_t n) {
  int64_t i = 0;
  // The first block's guess: its first 8 values.
  bool guess_small =
      n >= kTanhBlock && _mm256_movemask_ps(_mm256_cmp_ps(abs(_mm256_loadu_ps(x)), splat(0.625f), _CMP_LT_OQ)) == 0xff;
  for (int mixed_in_a_row = 0; i + kTanhBlock <= n && mixed_in_a_row < 2; i += kTanhBlock) {
    if (guess_small && tanh_block_small(x + i, o + i)) continue;
    guess_small = tanh_block_whole(x + i, o + i);
    mixed_in_a_row = guess_small ? 0 : mixed_in_a_row + 1;
  }
  map<tanh8>(x + i, o + i, n - i);
}

#if KILN_VECTOR_MATH_16
// map on 16 lanes (a masked load/store for the tail).
template <__m512 (*K)(__m512)>
KILN_TARGET_AVX512 void map16(const float* x, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(o + i, K(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(o + i, mask, K(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

// tanh_map8's small blocks on 16 lanes: blocks of 64 (four registers, as
// there), the same guesses, tanh16's bits.
constexpr int kTanhBlock16 = 64;

[[gnu::always_inline]] KILN_TARGET_AVX512 inline bool tanh_block16_whole(const float* x, float* o) {
  __m512i largest = _mm512_setzero_si512();
  for (int j = 0; j < kTanhBlock16; j += 16) {
    const __m512 v = _mm512_loadu_ps(x + j);
    _mm512_storeu_ps(o + j, lanes16::tanh16(v));
    largest = _mm512_maskz_max_epi32(0xFFFF, largest, _mm512_castps_si512(lanes16::abs(v)));
  }
  return _mm512_cmpgt_epi32_mask(largest, _mm512_set1_epi32(0x3f1fffff)) == 0;  // all < 0.625f
}

[[gnu::always_inline]] KILN_TARGET_AVX512 inline bool tanh_block16_small(const float* x, float* o) {
  __m512 y[kTanhBlock16 / 16];
  __mmask16 large = 0;
  for (int j = 0; j < kTanhBlock16 / 16; ++j) {
    const __m512 v = _mm512_loadu_ps(x + 16 * j);
    const __m512 ax = lanes16::abs(v);
    large |= _mm512_cmp_ps_mask(ax, lanes16::splat(0.625f), _CMP_NLT_US);
    y[j] = _mm512_or_ps(lanes16::tanh16_small_magnitude(ax), _mm512_and_ps(v, lanes16::splat(-0.0f)));
  }
  if (large != 0) return false;
  for (int j = 0; j < kTanhBlock16 / 16; ++j) _mm512_storeu_ps(o + 16 * j, y[j]);
  return true;
}

KILN_TARGET_AVX512 void tanh_map16(const float* x, float* o, int64_t n) {
  int64_t i = 0;
  bool guess_small =
      n >= kTanhBlock16 &&
      _mm512_cmp_ps_mask(lanes16::abs(_mm512_loadu_ps(x)), lanes16::splat(0.625f), _CMP_LT_OQ) == 0xFFFF;
  for (int mixed_in_a_row = 0; i + kTanhBlock16 <= n && mixed_in_a_row < 2; i += kTanhBlock16) {
    if (guess_small && tanh_block16_small(x + i, o + i)) continue;
    guess_small = tanh_block16_whole(x + i, o + i);
    mixed_in_a_row = guess_small ? 0 : mixed_in_a_row + 1;
  }
  map16<lanes16::tanh16>(x + i, o + i, n - i);
}
#endif

}  // namespace
#endif  // KILN_VECTOR_MATH

bool has_avx512() {
#if KILN_VECTOR_MATH_16
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                          std::getenv("KILN_DISABLE_AVX512") == nullptr;
  return has;
#else
  return false;
#endif
}

#if KILN_VECTOR_MATH
#define KILN_VMATH_DEFINE(name, fallback)                                          \
  float name##_f32(float x) { return one<name##8>(x); }                             \
  void name##_f32(const float* x, float* o, int64_t n) { map<name##8>(x, o, n); }
#else
// Without AVX2/FMA the std:: functions (glibc's float versions).
#define KILN_VMATH_DEFINE(name, fallback)                                          \
  float name##_f32(float x) { return fallback; }                                    \
  void name##_f32(const float* x, float* o, int64_t n) {                            \
    for (int64_t i = 0; i < n; ++i) o[i] = name##_f32(x[i]);                        \
  }
#endif
KILN_VMATH_DEFINE(exp, std::exp(x))
KILN_VMATH_DEFINE(log, std::log(x))
KILN_VMATH_DEFINE(log1p, std::log1p(x))
#if KILN_VECTOR_MATH
float tanh_f32(float x) { return one<tanh8>(x); }
void tanh_f32(const float* x, float* o, int64_t n) {
#if KILN_VECTOR_MATH_16
  if (has_avx512()) return tanh_map16(x, o, n);
#endif
  tanh_map8(x, o, n);
}
void tanh_f32_8lanes(const float* x, float* o, int64_t n) { tanh_map8(x, o, n); }
#else
KILN_VMATH_DEFINE(tanh, std::tanh(x))
void tanh_f32_8lanes(const float* x, float* o, int64_t n) { tanh_f32(x, o, n); }
#endif
KILN_VMATH_DEFINE(sigmoid, x < 0 ? std::exp(x) / (1.0f + std::exp(x)) : 1.0f / (1.0f + std::exp(-x)))
#undef KILN_VMATH_DEFINE

}  // namespace kiln::ops::vmath
