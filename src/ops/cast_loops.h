#pragma once
// The element conversion of Cast, shared by its eager kernel and by fused
// elementwise kernels (one implementation, so both give the same bits).
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/half.h"
#include "schema/op_def.h"

namespace kiln::ops {

// Float to integer as TF's CPU kernel gives it on x86 (a static_cast there,
// compiled by GCC to cvttss2si / cvttsd2si), without C++'s undefined
// behaviour: truncation toward zero; NaN and values outside int32 (int64)
// give the instruction's "integer indefinite" value, INT32_MIN (INT64_MIN),
// so +inf, -inf, 1e10 and NaN all give INT32_MIN. Narrower types take the
// low bits of the int32 conversion (uint8: 300.7 -> 44, -1.5 -> 255, NaN ->
// 0), uint32 the low 32 bits of the int64 one, and uint64 converts values
// from 2^63 up as v - 2^63 with the top bit set back (NaN -> 2^63, inf -> 0),
// as GCC's code does. (XLA saturates instead; Kiln follows the TF kernel.)
template <class To, class From> inline To float_to_int(From v) {
  if constexpr (std::is_same_v<To, int32_t> || std::is_same_v<To, int64_t> || std::is_same_v<To, long long>) {
    constexpr int bits = std::numeric_limits<To>::digits;  // 31 or 63
    constexpr From limit = static_cast<From>(uint64_t(1) << bits);  // 2^31 or 2^63, exact
    return v >= -limit && v < limit ? static_cast<To>(v) : std::numeric_limits<To>::min();
  } else if constexpr (sizeof(To) < 4) {
    return static_cast<To>(static_cast<uint32_t>(float_to_int<int32_t>(v)));
  } else if constexpr (sizeof(To) == 4) {
    return static_cast<To>(static_cast<uint64_t>(float_to_int<int64_t>(v)));
  } else {
    constexpr From two63 = static_cast<From>(uint64_t(1) << 63);
    if (!(v >= two63)) return static_cast<To>(float_to_int<int64_t>(v));
    return static_cast<To>(static_cast<uint64_t>(float_to_int<int64_t>(v - two63)) ^ (uint64_t(1) << 63));
  }
}

template <class T> inline constexpr bool is_complex_type = false;
template <class R> inline constexpr bool is_complex_type<std::complex<R>> = true;

// Cast's element conversion between any two numeric dtypes (bool included),
// as TF's Cast: float16 and bfloat16 go through float (double and integers
// round to float first, as Eigen::half(T) does); complex to real keeps the
// real part (to bool as well: TF's cast reads a.real()), real to complex has
// a zero imaginary part.
template <class To, class From> inline To convert(From v) {
  if constexpr (is_complex_type<From>) {
    if constexpr (is_complex_type<To>) {
      using R = typename To::value_type;
      return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return convert<To>(v.real());
    }
  } else if constexpr (is_complex_type<To>) {
    return To(convert<typename To::value_type>(v), typename To::value_type(0));
  } else if constexpr (is_half_type<From>) {
    if constexpr (std::is_same_v<To, From>) return v;
    else return convert<To>(static_cast<float>(v));
  } else if constexpr (is_half_type<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <class To, class From> inline void cast_range(const From* s, To* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(s[i]);
}

template <class To, class From> void cast_loop(const void* const* in, void* out, int64_t n) {
  cast_range<To, From>(static_cast<const From*>(in[0]), static_cast<To*>(out), n);
}

// Cast's values of `in` written into `out` (allocated, same shape).
void cast_into(const Tensor& in, Tensor& out);

// The contiguous loop converting `from` to `to` (numeric and bool dtypes),
// nullptr for strings and resources.
schema::ElementwiseLoop cast_loop_for(DType from, DType to);

}  // namespace kiln::ops
