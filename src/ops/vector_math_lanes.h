#pragma once
// The 8-lane AVX2 + FMA kernels behind vector_math.h (formulas and accuracy
// there), inline so that other kernels built for the same target (the fused
// elementwise program's lanes, ops/lane_ops.h) run the very same code on
// values held in registers. KILN_VECTOR_MATH says whether they exist: only
// sources compiled with -mavx2 -mfma (the library's) see them.
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cmath>
#define KILN_VECTOR_MATH 1
#else
#define KILN_VECTOR_MATH 0
#endif

#if KILN_VECTOR_MATH
namespace kiln::ops::vmath {

inline __m256 splat(float v) { return _mm256_set1_ps(v); }
inline __m256 is_nan(__m256 x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }
// a*b + c, rounded once (an explicit FMA: -ffp-contract=off never makes one).
inline __m256 fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
inline __m256 abs(__m256 x) { return _mm256_andnot_ps(splat(-0.0f), x); }
// 2^n for integer lanes n in [-126, 127].
inline __m256 pow2(__m256i n) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// Whole n nearest to xn * k (k = log2(e), or 2 log2(e) for e^{2x}), found by
// adding and taking off 1.5 * 2^23 (the sum's last bit is the units place;
// shorter latency than vroundps). The FMA rounds once, so on a tie n may
// differ from round(fl(xn k)): either is a valid n.
inline __m256 nearest_n(__m256 xn, float k) {
  const __m256 shifter = splat(12582912.0f);
  return _mm256_sub_ps(fma(xn, splat(k), shifter), shifter);
}

// e^x / 2^n for x in [-104, 89] and n from nearest_n (|x - n ln2| <= ln2/2
// and a hair).
inline __m256 exp_reduced(__m256 x, __m256 n) {
  // ln2_hi * n is exact for |n| <= 2^8 and x - n ln2_hi is exact (its bits
  // end above 2^-25), so r carries only the rounding of the ln2_lo term.
  __m256 r = fma(n, splat(-0.693145751953125f), x);
  r = fma(n, splat(-1.42860676533018e-06f), r);
  // 1 + r + r^2 (c2 + c3 r + ... + c7 r^5), the bracket evaluated in pairs
  // (Estrin) rather than by Horner: half the dependent steps, since a chain
  // of small ops waits on each one's latency.
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 c23 = fma(splat(1.0f / 6), r, splat(0.5f));
  const __m256 c45 = fma(splat(1.0f / 120), r, splat(1.0f / 24));
  const __m256 c67 = fma(splat(1.0f / 5040), r, splat(1.0f / 720));
  const __m256 q = fma(fma(c67, r2, c45), r2, c23);
  return _mm256_add_ps(fma(q, r2, r), splat(1.0f));
}

inline __m256 exp8(__m256 x) {
  // Beyond these bounds the result is +inf or +0 whatever the polynomial
  // says; the clamp keeps n in [-150, 129] so the two halves of 2^n below
  // are normal floats. (min/max return their second operand on NaN, so NaN
  // is restored at the end.)
  const __m256 xc = _mm256_max_ps(_mm256_min_ps(x, splat(89.0f)), splat(-104.0f));
  const __m256 n = nearest_n(xc, 1.44269504088896341f);
  const __m256 p = exp_reduced(xc, n);
  // 2^n = 2^(n >> 1) * 2^(n - (n >> 1)): the first product is exact, the
  // second rounds once (to a denormal, or overflows to +inf).
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, pow2(n1)), pow2(n2));
  return _mm256_blendv_ps(y, x, is_nan(x));
}

// log(x) + c for a small correction c (0 for log itself; log1p's rounding
// correction), folded in with the low part of k ln2 so it costs no accuracy.
inline __m256 log8_plus(__m256 x, __m256 c) {
  // Denormals are scaled into the normal range first.
  const __m256 tiny = _mm256_cmp_ps(x, splat(1.17549435e-38f), _CMP_LT_OQ);
  const __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, splat(8388608.0f)), tiny);
  const __m256 k_adjust = _mm256_and_ps(tiny, splat(-23.0f));
  const __m256i bits = _mm256_castps_si256(xs);
  __m256i k = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  // m in [1, 2); halve it (exactly) above sqrt(2) so f = m - 1 stays small.
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000)));
  const __m256 big = _mm256_cmp_ps(m, splat(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, splat(0.5f)), big);
  k = _mm256_sub_epi32(k, _mm256_castps_si256(_mm256_and_ps(big, _mm256_castsi256_ps(_mm256_set1_epi32(-1)))));
  const __m256 kf = _mm256_add_ps(_mm256_cvtepi32_ps(k), k_adjust);
  const __m256 f = _mm256_sub_ps(m, splat(1.0f));  // exact (Sterbenz)
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(splat(2.0f), f));
  const __m256 z = _mm256_mul_ps(s, s);
  __m256 R = splat(2.0f / 9);
  R = fma(R, z, splat(2.0f / 7));
  R = fma(R, z, splat(2.0f / 5));
  R = fma(R, z, splat(2.0f / 3));
  R = _mm256_mul_ps(R, z);
  const __m256 hf = _mm256_mul_ps(_mm256_mul_ps(splat(0.5f), f), f);
  // k ln2_hi is exact (ln2_hi has 16 significant bits, |k| < 2^8).
  const __m256 lo = fma(kf, splat(1.42860676533018e-06f), c);
  const __m256 t = _mm256_sub_ps(hf, fma(s, _mm256_add_ps(hf, R), lo));
  __m256 y = fma(kf, splat(0.693145751953125f), _mm256_sub_ps(f, t));
  // Special values, last one wins: x < 0 -> NaN, 0 -> -inf, +inf -> +inf, NaN -> NaN.
  const __m256 inf = splat(INFINITY);
  y = _mm256_blendv_ps(y, splat(NAN), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, splat(-INFINITY), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
  y = _mm256_blendv_ps(y, inf, _mm256_cmp_ps(x, inf, _CMP_EQ_OQ));
  return _mm256_blendv_ps(y, x, is_nan(x));
}

inline __m256 log8(__m256 x) { return log8_plus(x, _mm256_setzero_ps()); }

inline __m256 log1p8(__m256 x) {
  const __m256 one = splat(1.0f);
  const __m256 u = _mm256_add_ps(one, x);
  // The rounding error of 1 + x, relative to u (0 where u is exact).
  __m256 c = _mm256_div_ps(_mm256_sub_ps(x, _mm256_sub_ps(u, one)), u);
  c = _mm256_andnot_ps(_mm256_cmp_ps(u, splat(INFINITY), _CMP_EQ_OQ), c);  // x = +inf: no correction
  const __m256 y = log8_plus(u, c);
  // log1p(+-0) = +-0 (the formula would give +0 for -0).
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
}

// Q's coefficients, highest first (tanh16_small_magnitude uses them too).
inline constexpr float kTanhSmallQ[] = {-0.005704983603209257f, 0.0206390842795372f, -0.05373971536755562f,
                                        0.13331441581249237f, -0.3333328068256378f};

// tanh's odd polynomial on |x| < 0.625 (and NaN): |x| + |x|^3 Q(x^2),
// without the sign (denormals give |x|).
inline __m256 tanh8_small_magnitude(__m256 ax) {
  const __m256 z = _mm256_mul_ps(ax, ax);
  __m256 q = splat(kTanhSmallQ[0]);
  for (int i = 1; i < 5; ++i) q = fma(q, z, splat(kTanhSmallQ[i]));
  return fma(_mm256_mul_ps(q, z), ax, ax);
}

inline __m256 tanh8(__m256 x) {
  const __m256 ax = abs(x);
  // Large |x|: 1 - 2 / (e^{2t} + 1), t = min(|x|, 9.25) (from |x| = 9.02 on
  // the result rounds to 1). The steps:
  // - t by an integer min (non-negative floats order as their bits; NaN
  //   becomes 9.25 and takes the small branch below);
  // - e^{2t} = 2^n (1 + s): the FMA gives 1.5 * 2^23 + 127 + n, whose low
  //   bits are n's biased exponent (n <= 27), so 2^n is one shift. t k is
  //   never an exact half (k's odd 24-bit mantissa would need t's to hold
  //   2^41), so the bias does not change which n is nearest;
  // - r = 2t - n ln2 by one FMA with ln2 rounded to float (its error,
  //   n * 1.9e-9, is scaled down by tanh' <= 0.35 to far below an ulp);
  // - s = e^r - 1 by the Taylor polynomial of exp_reduced in two halves,
  //   r + r^2 (c2 + c3 r) + r^4 (c4 + c5 r + (c6 + c7 r) r^2) (short chains
  //   for the latency a run of dependent tanh ops waits on);
  // - e^{2t} + 1 = fma(s, 2^n, 2^n + 1), rounded once.
  // ((e - 1) / (e + 1) would save the subtraction but rounds twice before
  // the division: 2.8 ulp.)
  // The sign goes onto the blended magnitude: one OR for both branches (the
  // rounding is symmetric, so -(1 - 2/e) has the bits of -1 - -2/e), which
  // also keeps tanh(-0) = -0 and NaN's sign.
  const __m256 t = _mm256_castsi256_ps(_mm256_min_epi32(_mm256_castps_si256(ax), _mm256_castps_si256(splat(9.25f))));
  const __m256 shifter = splat(12582912.0f + 127);
  const __m256 shifted = fma(t, splat(2 * 1.44269504088896341f), shifter);
  const __m256 n = _mm256_sub_ps(shifted, shifter);
  const __m256 pow2n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(shifted), 23));
  const __m256 r = fma(n, splat(-0.693147180559945309f), _mm256_add_ps(t, t));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 low = fma(r2, fma(splat(1.0f / 6), r, splat(0.5f)), r);
  const __m256 high = fma(fma(splat(1.0f / 5040), r, splat(1.0f / 720)), r2, fma(splat(1.0f / 120), r, splat(1.0f / 24)));
  const __m256 s = fma(_mm256_mul_ps(r2, r2), high, low);
  const __m256 e1 = fma(s, pow2n, _mm256_add_ps(pow2n, splat(1.0f)));
  const __m256 large = _mm256_sub_ps(splat(1.0f), _mm256_div_ps(splat(2.0f), e1));
  const __m256 magnitude =
      _mm256_blendv_ps(large, tanh8_small_magnitude(ax), _mm256_cmp_ps(ax, splat(0.625f), _CMP_NGE_UQ));
  return _mm256_or_ps(magnitude, _mm256_and_ps(x, splat(-0.0f)));
}

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so that e^{|x|}
// never overflows where the result is a tiny (even denormal) number.
inline __m256 sigmoid8(__m256 x) {
  const __m256 one = splat(1.0f);
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), abs(x)));
  const __m256 num = _mm256_blendv_ps(one, e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_div_ps(num, _mm256_add_ps(one, e));
}

}  // namespace kiln::ops::vmath
#endif  // KILN_VECTOR_MATH
