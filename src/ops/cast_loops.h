#pragma once
// The element conversion of Cast, shared by its eager kernel and by fused
// elementwise kernels (one implementation, so both give the same bits).
#include <cstdint>
#include <type_traits>

#include "schema/op_def.h"

namespace kiln::detail {

template <class To, class From> inline To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) return v != From(0);
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
ElementwiseLoop cast_loop_for(DType from, DType to);

}  // namespace kiln::detail
