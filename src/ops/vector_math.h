#pragma once
// Vectorized float32 exp, log, log1p, tanh and sigmoid (AVX2 + FMA, 8 lanes).
//
// One implementation serves every caller: the contiguous loops run it 8
// elements at a time (a masked load/store for the tail) and the scalar
// functor runs the same code on a broadcast value, so a result never depends
// on where an element falls in a loop, how parallel_for split the range or
// how fusion tiled it: eager and traced results stay bitwise equal.
//
// Accuracy (checked by tests/vector_math_test.cpp against double-precision
// std:: functions over a dense sweep of float32 inputs): exp 1.5 ulp, log
// and log1p 1 ulp, tanh 1.5 ulp, sigmoid 2.5 ulp. Checked once over all 2^32
// float32 inputs, the largest errors are 1.071, 0.854, 0.857, 1.225, 2.402.
// Special values follow the std:: functions: NaN propagates, exp overflows
// to +inf and underflows (through the denormals) to +0, log(0) = -inf,
// log(x < 0) = NaN, log(+inf) = +inf, tanh saturates to +-1 and keeps the
// sign of zero.
//
// The formulas (own implementation, classical methods):
//   exp:   x = n ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2 split in two),
//          e^r by its degree-7 Taylor polynomial (truncation < 0.05 ulp),
//          times 2^n applied in two halves so denormal results round once.
//   log:   x = 2^k (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), s = f / (2 + f),
//          log(1 + f) = f - hf + s (hf + R(s^2)) with hf = f^2 / 2 and R the
//          atanh series 2s^2/3 + 2s^4/5 + 2s^6/7 + 2s^8/9 (|s| < 0.172).
//   log1p: u = 1 + x rounded, log1p(x) = log(u) + (x - (u - 1)) / u.
//   tanh:  |x| < 0.625: x + x^3 Q(x^2), Q a degree-4 relative-error fit
//          (Lawson-weighted least squares, 0.04 ulp); else
//          sign(x) (1 - 2 / (e^{2|x|} + 1)), |x| capped at 9.25, e^{2|x|} + 1
//          as 2^n (1 + s) + 1 in one FMA, s = e^r - 1 by the exp polynomial.
//          The 8-lane loop runs blocks of 32 values all below 0.625 in
//          magnitude on the polynomial alone (vector_math.cpp; same bits).
//   sigmoid: 1 / (1 + e^{-x}) for x >= 0, e^x / (1 + e^x) for x < 0 (so
//          tiny results do not go through an overflowed e^{-x}).
#include <cstdint>

namespace kiln::ops::vmath {

// Defined in vector_math.cpp (the 8-lane kernels in vector_math_lanes.h),
// compiled with the library's flags, so every includer (tests and benches
// are built without -march) gets the one definition. The pointer form runs
// over n contiguous floats (o may alias x); the one-value form gives the same
// bits as the loop for that value.
#define KILN_VMATH_DECLARE(name)                                  \
  float name##_f32(float x);                                      \
  void name##_f32(const float* x, float* o, int64_t n);
KILN_VMATH_DECLARE(exp)
KILN_VMATH_DECLARE(log)
KILN_VMATH_DECLARE(log1p)
KILN_VMATH_DECLARE(tanh)
KILN_VMATH_DECLARE(sigmoid)
#undef KILN_VMATH_DECLARE

// Whether the contiguous loops run their 16-lane AVX-512 forms
// (vector_math_lanes16.h; tanh so far): where the CPU has AVX-512F/DQ/BW/VL
// and KILN_DISABLE_AVX512 is unset, decided once. The bits are the 8-lane
// forms', so this changes speed only.
bool has_avx512();
// tanh's 8-lane loop whatever the CPU has, to compare the forms against.
void tanh_f32_8lanes(const float* x, float* o, int64_t n);

}  // namespace kiln::ops::vmath
