#pragma once
// Calls a generic lambda with the C++ type of a dtype:
//   visit_dtype(d, [&]<class T>() { ... });
//
// visit_dtype and visit_numeric cover the core dtypes (float32, float64,
// int32, int64, uint8, bool, string) that every kernel handles, so a kernel
// instantiates nothing for the others; a kernel that handles more says so by
// calling visit_all_dtypes (every dtype with values) or visit_extended.
#include <complex>
#include <string>

#include <fmt/format.h>

#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/half.h"

namespace kiln::core {

// A dtype reached a kernel that has no loop for it (its op's inference let it
// through): InvalidArgument naming the dtype, never a crash.
[[noreturn]] void throw_no_kernel_for(DType dtype);

// The dtypes added after the core ones; calls f with their C++ type.
template <class F> decltype(auto) visit_extended(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float16: return f.template operator()<float16_t>();
    case DType::BFloat16: return f.template operator()<bfloat16_t>();
    case DType::Int8: return f.template operator()<int8_t>();
    case DType::Int16: return f.template operator()<int16_t>();
    case DType::UInt16: return f.template operator()<uint16_t>();
    case DType::UInt32: return f.template operator()<uint32_t>();
    case DType::UInt64: return f.template operator()<uint64_t>();
    case DType::Complex64: return f.template operator()<std::complex<float>>();
    case DType::Complex128: return f.template operator()<std::complex<double>>();
    default: break;
  }
  throw_no_kernel_for(dtype);
}

template <class F> decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
    case DType::String: return f.template operator()<std::string>();
    case DType::Resource: throw Internal("visit_dtype: resource handles hold no values");
    default: break;
  }
  throw_no_kernel_for(dtype);
}

// The core numeric dtypes only (float, int, uint8, bool); strings throw Internal.
template <class F> decltype(auto) visit_numeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
    case DType::String:
    case DType::Resource: break;
    default: throw_no_kernel_for(dtype);
  }
  throw Internal(fmt::format("visit_numeric: dtype {} is not numeric", dtype_name(dtype)));
}

// Every dtype that holds values, strings included.
template <class F> decltype(auto) visit_all_dtypes(DType dtype, F&& f) {
  if (dtype > DType::Resource) return visit_extended(dtype, f);
  return visit_dtype(dtype, f);
}

// Every dtype that holds numbers (bool and complex included, strings not).
template <class F> decltype(auto) visit_all_numeric(DType dtype, F&& f) {
  if (dtype > DType::Resource) return visit_extended(dtype, f);
  return visit_numeric(dtype, f);
}

}  // namespace kiln::core
