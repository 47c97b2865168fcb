#pragma once
// The scalar formula of every elementwise math op, written once. Eager
// kernels (contiguous, scalar-broadcast and strided paths) and the fused
// graph kernels all call these same functions, so traced and eager results
// are bitwise equal (docs/design-notes.md, "Graph passes"). Keep them free of fast-math tricks.
//
// A functor has:
//   kDTypes  the input dtypes it accepts (a mask of dtype_bit values)
//   kToBool  true when the output is bool (comparisons), else the input dtype
//   kGrain   optional: parallel grain (elements) for costly formulas
//   apply    the formula, a static template over the element type
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/parallel.h"
#include "kiln/dtype.h"
#include "ops/vector_math.h"

namespace kiln::ops {

constexpr uint32_t dtype_bit(DType d) { return 1u << static_cast<int>(d); }
// float16 and bfloat16 run through float32 (elementwise.h's apply1/apply2).
inline constexpr uint32_t kFloatMask = dtype_bit(DType::Float32) | dtype_bit(DType::Float64) |
                                       dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16);
inline constexpr uint32_t kIntMask = dtype_bit(DType::Int32) | dtype_bit(DType::Int64) | dtype_bit(DType::UInt8) |
                                     dtype_bit(DType::Int8) | dtype_bit(DType::Int16) | dtype_bit(DType::UInt16) |
                                     dtype_bit(DType::UInt32) | dtype_bit(DType::UInt64);
inline constexpr uint32_t kNumberMask = kFloatMask | kIntMask;
inline constexpr uint32_t kComplexMask = dtype_bit(DType::Complex64) | dtype_bit(DType::Complex128);
inline constexpr uint32_t kBoolMask = dtype_bit(DType::Bool);
inline constexpr uint32_t kStringMask = dtype_bit(DType::String);

// Costly formulas (exp, tanh, pow, ...) split over threads sooner.
inline constexpr int64_t kTranscendentalGrain = core::kParallelGrain / 8;

template <class F>
constexpr int64_t grain_of() {
  if constexpr (requires { F::kGrain; }) return F::kGrain;
  else return core::kParallelGrain;
}

// ---- Integer helpers: signed overflow wraps (two's complement) instead of
// being undefined behaviour; the loops still vectorize.
template <class T> constexpr T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T> constexpr T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T> constexpr T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // uint8 promotes to int (255 * 255 fits); wider types multiply unsigned.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <class T> constexpr T wrap_neg(T a) { return wrap_sub(T(0), a); }

// ---- Binary arithmetic --------------------------------------------------
struct AddFn {
  static constexpr uint32_t kDTypes = kNumberMask | kComplexMask | kStringMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, std::string>) return a + b;
    else return wrap_add(a, b);
  }
};

struct SubFn {
  static constexpr uint32_t kDTypes = kNumberMask | kComplexMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return wrap_sub(a, b); }
};

struct MulFn {
  static constexpr uint32_t kDTypes = kNumberMask | kComplexMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return wrap_mul(a, b); }
};

// True division of floats (divide() casts integers to floats first).
struct RealDivFn {
  static constexpr uint32_t kDTypes = kFloatMask | kComplexMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return a / b; }
};

// C's a / b and a % b on integers, defined everywhere: 0 for b == 0 (the
// kernels raise before a zero divisor reaches a loop), INT_MIN / -1 wraps.
template <class T> constexpr T int_trunc_div(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrap_neg(a);
  }
  return static_cast<T>(a / b);
}
template <class T> constexpr T int_trunc_mod(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}
// Whether a truncated remainder r must move by b to take the divisor's sign.
template <class T> constexpr bool moves_to_divisor_sign(T r, T b) {
  return r != T(0) && ((r < T(0)) != (b < T(0)));
}

// TensorFlow's floor division and modulo. Floats: floordiv is floor(a / b)
// (floordiv(1, 0.1) = 10, floordiv(inf, 8) = inf) and mod is fmod(a, b)
// moved to the divisor's sign when nonzero (mod(-0, 1) = -0, mod(x, 0) =
// nan), as TF's google_floor_div_real / google_floor_fmod; so floordiv * b +
// mod == a need not hold exactly, as in TF. Integers: the quotient rounds
// toward -inf and the remainder takes the divisor's sign; a zero divisor is
// InvalidArgument (elementwise.h's int_division_op); INT_MIN // -1 wraps.
struct FloorDivFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return std::floor(a / b);
    else return moves_to_divisor_sign(int_trunc_mod(a, b), b) ? static_cast<T>(int_trunc_div(a, b) - 1)
                                                               : int_trunc_div(a, b);
  }
};

struct FloorModFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    T r;
    if constexpr (std::is_floating_point_v<T>) r = std::fmod(a, b);
    else r = int_trunc_mod(a, b);
    return moves_to_divisor_sign(r, b) ? static_cast<T>(r + b) : r;
  }
};

// C's division and remainder (tf.truncatediv / tf.truncatemod): the quotient
// rounds toward 0, the remainder takes the dividend's sign. TruncateDiv takes
// integers only (as TF's kernels); TruncateMod of floats is fmod.
struct TruncateDivFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return int_trunc_div(a, b); }
};

struct TruncateModFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return std::fmod(a, b);
    else return int_trunc_mod(a, b);
  }
};

// (a - b)^2, wrapping for integers.
struct SquaredDifferenceFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    T d = wrap_sub(a, b);
    return wrap_mul(d, d);
  }
};

// Integer powers by squaring (wrapping on overflow). A negative exponent
// has no integer result except for bases 1 and -1: it gives 0 otherwise
// (TensorFlow raises an error, which a kernel cannot do).
struct PowFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  static constexpr int64_t kGrain = kTranscendentalGrain;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return T(0);  // unreachable: the Pow kernel rejects it (check_integer_exponent)
      }
      T result = 1, base = a;
      for (T e = b; e != 0; e = static_cast<T>(e >> 1)) {
        if (e & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    }
  }
};

// NaN-propagating, as NumPy's and TensorFlow's maximum/minimum.
struct MaximumFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return (a > b || std::isnan(a)) ? a : b;
    else return a > b ? a : b;
  }
};

struct MinimumFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return (a < b || std::isnan(a)) ? a : b;
    else return a < b ? a : b;
  }
};

// ---- Comparisons and logic (bool results) -------------------------------
#define KILN_COMPARE_FN(Name, Mask, expr)                                      \
  struct Name {                                                                \
    static constexpr uint32_t kDTypes = Mask;                                  \
    static constexpr bool kToBool = true;                                      \
    template <class T> static bool apply(const T& a, const T& b) { return expr; } \
  };
KILN_COMPARE_FN(EqualFn, kNumberMask | kComplexMask | kBoolMask | kStringMask, a == b)
KILN_COMPARE_FN(NotEqualFn, kNumberMask | kComplexMask | kBoolMask | kStringMask, a != b)
KILN_COMPARE_FN(LessFn, kNumberMask, a < b)
KILN_COMPARE_FN(LessEqualFn, kNumberMask, a <= b)
KILN_COMPARE_FN(GreaterFn, kNumberMask, a > b)
KILN_COMPARE_FN(GreaterEqualFn, kNumberMask, a >= b)
#undef KILN_COMPARE_FN

// Bitwise on bools (0/1) so the loops stay branch-free.
struct LogicalAndFn {
  static constexpr uint32_t kDTypes = kBoolMask;
  static constexpr bool kToBool = true;
  template <class T> static bool apply(bool a, bool b) { return a & b; }
};
struct LogicalOrFn {
  static constexpr uint32_t kDTypes = kBoolMask;
  static constexpr bool kToBool = true;
  template <class T> static bool apply(bool a, bool b) { return a | b; }
};
struct LogicalNotFn {
  static constexpr uint32_t kDTypes = kBoolMask;
  static constexpr bool kToBool = true;
  template <class T> static bool apply(bool a) { return !a; }
};

// ---- Unary ----------------------------------------------------------------
// IEEE negation for floats (the sign bit flips: neg(+0) = -0, as TF);
// integers wrap (neg(INT_MIN) = INT_MIN).
struct NegFn {
  static constexpr uint32_t kDTypes = kNumberMask | kComplexMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x) {
    if constexpr (std::is_floating_point_v<T> || !std::is_integral_v<T>) return -x;
    else return wrap_neg(x);
  }
};

struct AbsFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
    else if constexpr (std::is_signed_v<T>) return x < 0 ? wrap_neg(x) : x;
    else return x;
  }
};

// -1, 0 or 1 (TF's sign): both zeros give +0; nan stays nan.
struct SignFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == x ? T(0) : x));
    else return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};

// Rounding (the SSE4.1 round instructions with -march=x86-64-v3). Round is
// TF's Round: half to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2), the sign of zero
// kept (-0.4 -> -0); integers are their own rounding. Rint is the same
// function on floats (TF's Rint: the current rounding mode, which Kiln never
// changes from round-to-nearest-even).
struct RoundFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x) {
    if constexpr (std::is_floating_point_v<T>) return std::nearbyint(x);
    else return x;
  }
};

struct SquareFn {
  static constexpr uint32_t kDTypes = kNumberMask | kComplexMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x) { return wrap_mul(x, x); }
};

// max(x, 0); nan stays nan.
struct ReluFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x) { return x < T(0) ? T(0) : x; }
};

// The float functors that take complex64/128 too (std::sqrt, exp and log of std::complex).
template <class F> inline constexpr uint32_t kAlsoComplex = 0;
struct SqrtFn;
struct ExpFn;
struct LogFn;
struct SinFn;
struct CosFn;
struct TanhFn;
template <> inline constexpr uint32_t kAlsoComplex<SqrtFn> = kComplexMask;
template <> inline constexpr uint32_t kAlsoComplex<SinFn> = kComplexMask;
template <> inline constexpr uint32_t kAlsoComplex<CosFn> = kComplexMask;
template <> inline constexpr uint32_t kAlsoComplex<TanhFn> = kComplexMask;
template <> inline constexpr uint32_t kAlsoComplex<ExpFn> = kComplexMask;
template <> inline constexpr uint32_t kAlsoComplex<LogFn> = kComplexMask;

#define KILN_FLOAT_UNARY_FN(Name, grain, expr)                    \
  struct Name {                                                   \
    static constexpr uint32_t kDTypes = kFloatMask | kAlsoComplex<Name>; \
    static constexpr bool kToBool = false;                        \
    static constexpr int64_t kGrain = grain;                      \
    template <class T> static T apply(T x) { return expr; }       \
  };
KILN_FLOAT_UNARY_FN(FloorFn, core::kParallelGrain, std::floor(x))
KILN_FLOAT_UNARY_FN(CeilFn, core::kParallelGrain, std::ceil(x))
KILN_FLOAT_UNARY_FN(RintFn, core::kParallelGrain, std::nearbyint(x))
KILN_FLOAT_UNARY_FN(SqrtFn, core::kParallelGrain, std::sqrt(x))
KILN_FLOAT_UNARY_FN(RsqrtFn, core::kParallelGrain, T(1) / std::sqrt(x))
KILN_FLOAT_UNARY_FN(SinFn, kTranscendentalGrain, std::sin(x))
KILN_FLOAT_UNARY_FN(CosFn, kTranscendentalGrain, std::cos(x))
KILN_FLOAT_UNARY_FN(ErfFn, kTranscendentalGrain, std::erf(x))
// log(1 + e^x) without overflow for large x or loss for very negative x.
KILN_FLOAT_UNARY_FN(SoftplusFn, kTranscendentalGrain, (x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::abs(x))))
KILN_FLOAT_UNARY_FN(SoftsignFn, kTranscendentalGrain, x / (T(1) + std::abs(x)))
// x for x > 0, e^x - 1 below (expm1 keeps the bits near 0).
KILN_FLOAT_UNARY_FN(EluFn, kTranscendentalGrain, x > T(0) ? x : std::expm1(x))
// Klambauer et al.'s constants, as TF's Selu.
KILN_FLOAT_UNARY_FN(SeluFn, kTranscendentalGrain,
                    x > T(0) ? T(1.0507009873554804934193349852946) * x
                             : T(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717) *
                                   std::expm1(x))
#undef KILN_FLOAT_UNARY_FN

// Transcendentals with a vectorized float32 formula (ops/vector_math.h):
// float32 uses it everywhere (apply on one value, apply_f32 on contiguous
// ranges, the same code), float64 the std:: function.
#define KILN_VECTOR_UNARY_FN(Name, kernel, expr)                                       \
  struct Name {                                                                        \
    static constexpr uint32_t kDTypes = kFloatMask | kAlsoComplex<Name>;               \
    static constexpr bool kToBool = false;                                             \
    static constexpr int64_t kGrain = kTranscendentalGrain;                            \
    template <class T> static T apply(T x) {                                           \
      if constexpr (std::is_same_v<T, float>) return vmath::kernel##_f32(x);           \
      else return expr;                                                                \
    }                                                                                  \
    static void apply_f32(const float* x, float* o, int64_t n) { vmath::kernel##_f32(x, o, n); } \
  };
KILN_VECTOR_UNARY_FN(ExpFn, exp, std::exp(x))
KILN_VECTOR_UNARY_FN(LogFn, log, std::log(x))
KILN_VECTOR_UNARY_FN(Log1pFn, log1p, std::log1p(x))
KILN_VECTOR_UNARY_FN(TanhFn, tanh, std::tanh(x))
KILN_VECTOR_UNARY_FN(SigmoidFn, sigmoid, T(1) / (T(1) + std::exp(-x)))
#undef KILN_VECTOR_UNARY_FN

// ---- Ternary --------------------------------------------------------------
// Select: cond ? x : y (kDTypes are x's and y's dtypes; cond is bool).
struct SelectFn {
  static constexpr uint32_t kDTypes = kNumberMask | kComplexMask | kBoolMask | kStringMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(bool c, const T& x, const T& y) { return c ? x : y; }
};

// clip: min(max(x, lo), hi), from the same formulas as maximum and minimum.
struct ClipFn {
  static constexpr uint32_t kDTypes = kNumberMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T x, T lo, T hi) {
    return MinimumFn::apply<T>(MaximumFn::apply<T>(x, lo), hi);
  }
};

}  // namespace kiln::ops
