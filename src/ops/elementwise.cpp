#include "ops/elementwise.h"

#include <fmt/format.h>

namespace kiln::ops {

std::string dtype_list(uint32_t mask) {
  std::string s;
  for (int d = 0; d < kNumDTypes; ++d) {
    if (!(mask & (1u << d))) continue;
    if (!s.empty()) s += ", ";
    s += dtype_name(static_cast<DType>(d));
  }
  return s;
}

void check_dtype(const schema::InferContext& c, DType dtype, uint32_t mask, const char* arg) {
  if (mask & dtype_bit(dtype)) return;
  std::string_view op = c.op().name;
  if ((mask & ~kComplexMask) == kFloatMask)
    c.fail("{} needs a floating-point tensor (float16, bfloat16, float32 or float64), but {} has dtype {}; convert it "
           "first, e.g. kiln::cast({}, kiln::float32)",
           op, arg, dtype_name(dtype), arg);
  if (mask == kBoolMask)
    c.fail("{} needs bool tensors, but {} has dtype {}", op, arg, dtype_name(dtype));
  c.fail("{} does not support dtype {} (argument {}); it supports {}", op, dtype_name(dtype), arg,
         dtype_list(mask));
}

void check_same_dtype(const schema::InferContext& c, int i, int j, const char* i_name, const char* j_name) {
  if (c.dtype(i) == c.dtype(j)) return;
  c.fail("{} has dtype {} but {} has dtype {}; both must have the same dtype (convert one with "
         "kiln::cast)",
         i_name, dtype_name(c.dtype(i)), j_name, dtype_name(c.dtype(j)));
}

void check_integer_divisor(const schema::KernelContext& c, const Tensor& divisor) {
  core::visit_all_numeric(divisor.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* p = core::data_of<T>(divisor);
      const int64_t n = divisor.size();
      bool zero = false;
      for (int64_t i = 0; i < n; ++i) zero |= p[i] == T(0);
      if (zero) throw InvalidArgument(fmt::format("{}: integer division by zero", c.op.name));
    }
  });
}

void check_integer_exponent(const schema::KernelContext& c, const Tensor& exponent) {
  core::visit_all_numeric(exponent.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      const T* p = core::data_of<T>(exponent);
      const int64_t n = exponent.size();
      bool negative = false;
      for (int64_t i = 0; i < n; ++i) negative |= p[i] < T(0);
      if (negative)
        throw InvalidArgument(fmt::format("{}: integers to negative integer powers are not allowed", c.op.name));
    }
  });
}

}  // namespace kiln::ops
