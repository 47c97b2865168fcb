#pragma once
// The 8-lane forms of float32 elementwise ops (OpDef::lane_form): on every
// lane a form computes the bits the op's contiguous float32 loop (its
// OpDef::elementwise entry, which the eager kernels run) computes for that
// element, so a fused program can keep a chain's values in vector registers
// from op to op (exec/fused_lanes.cpp) and still match eager results bitwise.
// A fused step takes the form only where it runs that very loop.
//
// Only sources built for AVX2 + FMA (the library's) see the forms;
// KILN_VECTOR_MATH (ops/vector_math_lanes.h) says whether they exist.
#include <cstdint>

#include "ops/elementwise.h"
#include "ops/vector_math_lanes.h"

#if KILN_VECTOR_MATH
namespace kiln::ops::lanes {

// The forms, named by the ops' OpDef::lane_form.
using LaneOp = schema::LaneForm;

constexpr int lane_arity(LaneOp op) { return op <= LaneOp::kMinimum ? 2 : 1; }

// The functors' formulas on 8 lanes (math_functors.h; the transcendentals
// are vector_math's own kernels, which the float32 loops run).
template <LaneOp Op>
inline __m256 lane(__m256 a, __m256 b) {
  if constexpr (Op == LaneOp::kAdd) return _mm256_add_ps(a, b);
  else if constexpr (Op == LaneOp::kSub) return _mm256_sub_ps(a, b);
  else if constexpr (Op == LaneOp::kMul) return _mm256_mul_ps(a, b);
  else if constexpr (Op == LaneOp::kDiv) return _mm256_div_ps(a, b);
  // (a > b || isnan(a)) ? a : b, and its mirror.
  else if constexpr (Op == LaneOp::kMaximum)
    return _mm256_blendv_ps(b, a, _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), vmath::is_nan(a)));
  else if constexpr (Op == LaneOp::kMinimum)
    return _mm256_blendv_ps(b, a, _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), vmath::is_nan(a)));
  else static_assert(Op == LaneOp::kAdd, "not a binary lane op");
}

template <LaneOp Op>
inline __m256 lane(__m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  if constexpr (Op == LaneOp::kNeg) return _mm256_xor_ps(x, vmath::splat(-0.0f));  // the sign bit, as -x
  else if constexpr (Op == LaneOp::kAbs) return vmath::abs(x);
  else if constexpr (Op == LaneOp::kSquare) return _mm256_mul_ps(x, x);
  else if constexpr (Op == LaneOp::kRelu) return _mm256_blendv_ps(x, zero, _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
  else if constexpr (Op == LaneOp::kSqrt) return _mm256_sqrt_ps(x);
  else if constexpr (Op == LaneOp::kRsqrt) return _mm256_div_ps(vmath::splat(1.0f), _mm256_sqrt_ps(x));
  else if constexpr (Op == LaneOp::kExp) return vmath::exp8(x);
  else if constexpr (Op == LaneOp::kLog) return vmath::log8(x);
  else if constexpr (Op == LaneOp::kLog1p) return vmath::log1p8(x);
  else if constexpr (Op == LaneOp::kTanh) return vmath::tanh8(x);
  else if constexpr (Op == LaneOp::kSigmoid) return vmath::sigmoid8(x);
  else static_assert(Op == LaneOp::kNeg, "not a unary lane op");
}

// Calls f.template operator()<Op>() with `op` (not kNone) as a constant: one
// switch, inlined (as f should be) so that an interpreter loop dispatches
// through a jump table and keeps its values in registers.
template <class F>
[[gnu::always_inline]] inline void visit_lane_op(LaneOp op, F&& f) {
  switch (op) {
#define KILN_LANE_CASE(Name) \
  case LaneOp::Name: return f.template operator()<LaneOp::Name>();
    KILN_LANE_CASE(kAdd) KILN_LANE_CASE(kSub) KILN_LANE_CASE(kMul) KILN_LANE_CASE(kDiv)
    KILN_LANE_CASE(kMaximum) KILN_LANE_CASE(kMinimum) KILN_LANE_CASE(kNeg) KILN_LANE_CASE(kAbs)
    KILN_LANE_CASE(kSquare) KILN_LANE_CASE(kRelu) KILN_LANE_CASE(kSqrt) KILN_LANE_CASE(kRsqrt)
    KILN_LANE_CASE(kExp) KILN_LANE_CASE(kLog) KILN_LANE_CASE(kLog1p) KILN_LANE_CASE(kTanh)
    KILN_LANE_CASE(kSigmoid)
#undef KILN_LANE_CASE
    case LaneOp::kNone: break;
  }
}

}  // namespace kiln::ops::lanes
#endif  // KILN_VECTOR_MATH
