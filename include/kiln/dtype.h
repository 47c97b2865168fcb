#pragma once
// Element types of a Tensor.
#include <cstdint>
#include <string_view>

namespace kiln {

// Resource is the dtype of a Variable's handle inside graphs (as TF's
// tf.resource): it never holds numbers. The dtypes after Resource came later:
// they are appended so the numbers of the first eight never change (files
// store dtype names, but the Python package passes these numbers around).
enum class DType : uint8_t {
  Float32, Float64, Int32, Int64, UInt8, Bool, String, Resource,
  Float16, BFloat16, Int8, Int16, UInt16, UInt32, UInt64, Complex64, Complex128
};

inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType int64 = DType::Int64;
inline constexpr DType uint8 = DType::UInt8;
inline constexpr DType boolean = DType::Bool;  // `bool` is a keyword
inline constexpr DType string = DType::String;
inline constexpr DType float16 = DType::Float16;
inline constexpr DType bfloat16 = DType::BFloat16;
inline constexpr DType int8 = DType::Int8;
inline constexpr DType int16 = DType::Int16;
inline constexpr DType uint16 = DType::UInt16;
inline constexpr DType uint32 = DType::UInt32;
inline constexpr DType uint64 = DType::UInt64;
inline constexpr DType complex64 = DType::Complex64;
inline constexpr DType complex128 = DType::Complex128;

inline constexpr int kNumDTypes = 17;

// TensorFlow's names: "float32", "int32", "string", "bfloat16", ...
std::string_view dtype_name(DType dtype);
// Bytes per element; a string element is a std::string object.
std::size_t dtype_size(DType dtype);

// float16 and bfloat16: 16-bit floats whose ops compute in float32.
constexpr bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
constexpr bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64 || is_half(d); }
constexpr bool is_unsigned(DType d) {
  return d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64;
}
constexpr bool is_integer(DType d) {
  return d == DType::Int32 || d == DType::Int64 || d == DType::Int8 || d == DType::Int16 || is_unsigned(d);
}
constexpr bool is_complex(DType d) { return d == DType::Complex64 || d == DType::Complex128; }
// Real numbers (not complex, not bool).
constexpr bool is_numeric(DType d) { return is_floating(d) || is_integer(d); }
// The dtypes Kiln had first (float32, float64, int32, int64, uint8, bool,
// string): every kernel handles them; the others only where an op says so.
constexpr bool is_core_dtype(DType d) { return static_cast<int>(d) < static_cast<int>(DType::Resource); }
// The real part's dtype of a complex dtype (complex64 -> float32), else itself.
constexpr DType real_dtype(DType d) {
  return d == DType::Complex64 ? DType::Float32 : d == DType::Complex128 ? DType::Float64 : d;
}

}  // namespace kiln
