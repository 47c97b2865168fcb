#pragma once
// 16-lane AVX-512 forms of vector_math_lanes.h's kernels, for CPUs that have
// AVX-512 (picked at run time: the library is built for x86-64-v3). Each is
// the 8-lane kernel's formula, operation for operation, on wider registers:
// every lane rounds the same IEEE operations in the same order, so the bits
// equal the 8-lane kernel's (tests compare them over a sweep of all float32
// exponents; checked once over all 2^32 inputs). Even where the CPU runs a
// 512-bit operation as two 256-bit halves, half as many instructions are
// decoded (docs/design-notes.md, "Graph passes"; figures in docs/perf-log.md).
#include "ops/vector_math_lanes.h"

#if KILN_VECTOR_MATH && (defined(__GNUC__) || defined(__clang__))
#define KILN_VECTOR_MATH_16 1
#define KILN_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))

namespace kiln::ops::vmath::lanes16 {

KILN_TARGET_AVX512 inline __m512 splat(float v) { return _mm512_set1_ps(v); }
// Integer min and shift in their zero-masked forms with every lane set (the
// same instructions): GCC 12's unmasked forms read an "undefined" vector and
// warn that it may be used uninitialized (GCC bug 105593).
KILN_TARGET_AVX512 inline __m512i min_epi32(__m512i a, __m512i b) { return _mm512_maskz_min_epi32(0xFFFF, a, b); }
KILN_TARGET_AVX512 inline __m512i shift_left_23(__m512i a) { return _mm512_maskz_slli_epi32(0xFFFF, a, 23); }
KILN_TARGET_AVX512 inline __m512 fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
KILN_TARGET_AVX512 inline __m512 abs(__m512 x) { return _mm512_andnot_ps(splat(-0.0f), x); }

// tanh8_small_magnitude: the odd polynomial on |x| < 0.625 (and NaN).
KILN_TARGET_AVX512 inline __m512 tanh16_small_magnitude(__m512 ax) {
  const __m512 z = _mm512_mul_ps(ax, ax);
  __m512 q = splat(kTanhSmallQ[0]);
  for (int i = 1; i < 5; ++i) q = fma(q, z, splat(kTanhSmallQ[i]));
  return fma(_mm512_mul_ps(q, z), ax, ax);
}

// tanh8 (the comments there explain each step); the blend is a mask blend.
KILN_TARGET_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512 ax = abs(x);
  const __m512 t = _mm512_castsi512_ps(min_epi32(_mm512_castps_si512(ax), _mm512_castps_si512(splat(9.25f))));
  const __m512 shifter = splat(12582912.0f + 127);
  const __m512 shifted = fma(t, splat(2 * 1.44269504088896341f), shifter);
  const __m512 n = _mm512_sub_ps(shifted, shifter);
  const __m512 pow2n = _mm512_castsi512_ps(shift_left_23(_mm512_castps_si512(shifted)));
  const __m512 r = fma(n, splat(-0.693147180559945309f), _mm512_add_ps(t, t));
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 low = fma(r2, fma(splat(1.0f / 6), r, splat(0.5f)), r);
  const __m512 high = fma(fma(splat(1.0f / 5040), r, splat(1.0f / 720)), r2, fma(splat(1.0f / 120), r, splat(1.0f / 24)));
  const __m512 s = fma(_mm512_mul_ps(r2, r2), high, low);
  const __m512 e1 = fma(s, pow2n, _mm512_add_ps(pow2n, splat(1.0f)));
  const __m512 large = _mm512_sub_ps(splat(1.0f), _mm512_div_ps(splat(2.0f), e1));
  const __m512 magnitude =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, splat(0.625f), _CMP_NGE_UQ), large, tanh16_small_magnitude(ax));
  return _mm512_or_ps(magnitude, _mm512_and_ps(x, splat(-0.0f)));
}

}  // namespace kiln::ops::vmath::lanes16
#else
#define KILN_VECTOR_MATH_16 0
#endif
