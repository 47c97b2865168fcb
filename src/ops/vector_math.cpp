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
#if KILN_VECTOR_MATH_16
float tanh_f32(float x) { return one<tanh8>(x); }
void tanh_f32(const float* x, float* o, int64_t n) {
  if (has_avx512())
    map16<lanes16::tanh16>(x, o, n);
  else
    map<tanh8>(x, o, n);
}
void tanh_f32_8lanes(const float* x, float* o, int64_t n) { map<tanh8>(x, o, n); }
#else
KILN_VMATH_DEFINE(tanh, std::tanh(x))
void tanh_f32_8lanes(const float* x, float* o, int64_t n) { tanh_f32(x, o, n); }
#endif
KILN_VMATH_DEFINE(sigmoid, x < 0 ? std::exp(x) / (1.0f + std::exp(x)) : 1.0f / (1.0f + std::exp(-x)))
#undef KILN_VMATH_DEFINE

}  // namespace kiln::ops::vmath
