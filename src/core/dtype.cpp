#include <complex>
#include <memory>
#include <string>

#include "kiln/dtype.h"

namespace kiln {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::Bool: return "bool";
    case DType::String: return "string";
    case DType::Resource: return "resource";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
  }
  return "unknown";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::UInt8: return 1;
    case DType::Bool: return 1;
    case DType::String: return sizeof(std::string);
    case DType::Resource: return sizeof(std::shared_ptr<void>);
    case DType::Float16: return 2;
    case DType::BFloat16: return 2;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::UInt16: return 2;
    case DType::UInt32: return 4;
    case DType::UInt64: return 8;
    case DType::Complex64: return sizeof(std::complex<float>);
    case DType::Complex128: return sizeof(std::complex<double>);
  }
  return 0;
}

}  // namespace kiln

#include <fmt/format.h>

#include "core/dtype_switch.h"

namespace kiln::core {

void throw_no_kernel_for(DType dtype) {
  throw InvalidArgument(fmt::format("no kernel for dtype {}: Kiln has this op for float32, float64, int32, "
                                    "int64, uint8 and bool only (cast first, e.g. with kiln::cast)",
                                    dtype_name(dtype)));
}

}  // namespace kiln::core
