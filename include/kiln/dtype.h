#pragma once
// Element types of a Tensor.
#include <cstdint>
#include <string_view>

namespace kiln {

// Resource is the dtype of a Variable's handle inside graphs (as TF's
// tf.resource): it never holds numbers.
enum class DType : uint8_t { Float32, Float64, Int32, Int64, UInt8, Bool, String, Resource };

inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType int64 = DType::Int64;
inline constexpr DType uint8 = DType::UInt8;
inline constexpr DType boolean = DType::Bool;  // `bool` is a keyword
inline constexpr DType string = DType::String;

inline constexpr int kNumDTypes = 8;

// TensorFlow's names: "float32", "int32", "string", ...
std::string_view dtype_name(DType dtype);
// Bytes per element; a string element is a std::string object.
std::size_t dtype_size(DType dtype);

constexpr bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }
constexpr bool is_integer(DType d) {
  return d == DType::Int32 || d == DType::Int64 || d == DType::UInt8;
}
constexpr bool is_numeric(DType d) { return is_floating(d) || is_integer(d); }

}  // namespace kiln
