#pragma once
// Calls a generic lambda with the C++ type of a dtype:
//   visit_dtype(d, [&]<class T>() { ... });
#include <string>

#include <fmt/format.h>

#include "kiln/dtype.h"
#include "kiln/error.h"

namespace kiln::core {

template <class F> decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
    case DType::String: return f.template operator()<std::string>();
    case DType::Resource: break;
  }
  throw Internal("visit_dtype: resource handles hold no values");
}

// The numeric dtypes only (float, int, uint8, bool); strings throw Internal.
template <class F> decltype(auto) visit_numeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
    default: break;
  }
  throw Internal(fmt::format("visit_numeric: dtype {} is not numeric", dtype_name(dtype)));
}

}  // namespace kiln::core
