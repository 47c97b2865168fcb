#pragma once
// The element conversion of Cast, shared by its eager kernel and by fused
// elementwise kernels (one implementation, so both give the same bits).
#include <cstdint>
#include <limits>
#include <type_traits>

#include "schema/op_def.h"

namespace kiln::ops {

// Float to integer as TF's CPU kernel gives it on x86 (a static_cast there,
// compiled to cvttss2si / cvttsd2si), without C++'s undefined behaviour:
// truncation toward zero; NaN and values outside int32 (int64) give the
// instruction's "integer indefinite" value, INT32_MIN (INT64_MIN), so
// +inf, -inf, 1e10 and NaN all give INT32_MIN; uint8 takes the low 8 bits
// of the int32 conversion (300.7 -> 44, -1.5 -> 255, NaN -> 0). (XLA
// saturates instead; Kiln follows the TF kernel.)
template <class To, class From> inline To float_to_int(From v) {
  if constexpr (std::is_same_v<To, uint8_t>) {
    return static_cast<uint8_t>(static_cast<uint32_t>(float_to_int<int32_t>(v)));
  } else {
    constexpr int bits = std::numeric_limits<To>::digits;  // 31 or 63
    constexpr From limit = static_cast<From>(uint64_t(1) << bits);  // 2^31 or 2^63, exact
    return v >= -limit && v < limit ? static_cast<To>(v) : std::numeric_limits<To>::min();
  }
}

template <class To, class From> inline To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) return v != From(0);
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) return float_to_int<To>(v);
  else return static_cast<To>(v);
}

template <class To, class From> inline void cast_range(const From* s, To* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(s[i]);
}

template <class To, class From> void cast_loop(const void* const* in, void* out, int64_t n) {
  cast_range<To, From>(static_cast<const From*>(in[0]), static_cast<To*>(out), n);
}

// The contiguous loop converting `from` to `to` (numeric and bool dtypes),
// nullptr for strings and resources.
schema::ElementwiseLoop cast_loop_for(DType from, DType to);

}  // namespace kiln::ops
