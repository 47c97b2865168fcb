// Kiln tensors <-> ONNX TensorProto, and the element types of both.
#include <complex>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kiln/error.h"
#include "onnx/onnx_proto.h"

namespace kiln::onnx {

using core::data_of;
using core::make_tensor;
using core::raw_data;

int to_onnx_dtype(DType dtype, const std::string& what) {
  switch (dtype) {
    case DType::Float32: return pb::TensorProto::FLOAT;
    case DType::Float64: return pb::TensorProto::DOUBLE;
    case DType::Int32: return pb::TensorProto::INT32;
    case DType::Int64: return pb::TensorProto::INT64;
    case DType::UInt8: return pb::TensorProto::UINT8;
    case DType::Bool: return pb::TensorProto::BOOL;
    case DType::Float16: return pb::TensorProto::FLOAT16;
    case DType::BFloat16: return pb::TensorProto::BFLOAT16;
    case DType::Int8: return pb::TensorProto::INT8;
    case DType::Int16: return pb::TensorProto::INT16;
    case DType::UInt16: return pb::TensorProto::UINT16;
    case DType::UInt32: return pb::TensorProto::UINT32;
    case DType::UInt64: return pb::TensorProto::UINT64;
    case DType::Complex64: return pb::TensorProto::COMPLEX64;
    case DType::Complex128: return pb::TensorProto::COMPLEX128;
    default:
      throw InvalidArgument(fmt::format("{} is {}, which ONNX models cannot hold", what, dtype_name(dtype)));
  }
}

DType from_onnx_dtype(int elem_type, const std::string& what) {
  switch (elem_type) {
    case pb::TensorProto::FLOAT: return DType::Float32;
    case pb::TensorProto::DOUBLE: return DType::Float64;
    case pb::TensorProto::INT32: return DType::Int32;
    case pb::TensorProto::INT64: return DType::Int64;
    case pb::TensorProto::UINT8: return DType::UInt8;
    case pb::TensorProto::BOOL: return DType::Bool;
    case pb::TensorProto::FLOAT16: return DType::Float16;
    case pb::TensorProto::BFLOAT16: return DType::BFloat16;
    case pb::TensorProto::INT8: return DType::Int8;
    case pb::TensorProto::INT16: return DType::Int16;
    case pb::TensorProto::UINT16: return DType::UInt16;
    case pb::TensorProto::UINT32: return DType::UInt32;
    case pb::TensorProto::UINT64: return DType::UInt64;
    case pb::TensorProto::COMPLEX64: return DType::Complex64;
    case pb::TensorProto::COMPLEX128: return DType::Complex128;
    default: {
      std::string name = pb::TensorProto::DataType_IsValid(elem_type)
                             ? pb::TensorProto::DataType_Name(static_cast<pb::TensorProto::DataType>(elem_type))
                             : fmt::format("unknown type {}", elem_type);
      throw Unimplemented(fmt::format("{} has element type {}, which Kiln does not have", what, name));
    }
  }
}

void to_tensor_proto(const Tensor& value, const std::string& name, pb::TensorProto& out) {
  out.set_name(name);
  out.set_data_type(to_onnx_dtype(value.dtype(), fmt::format("tensor '{}'", name)));
  for (int64_t d : value.shape().dims()) out.add_dims(d);
  // Kiln's buffers are little-endian and bool is one byte, as raw_data wants.
  out.set_raw_data(raw_data(value), static_cast<std::size_t>(value.size()) * dtype_size(value.dtype()));
}

namespace {

// The typed field that holds `dtype`'s values when raw_data is not used.
template <class Field, class E>
void copy_typed(const Field& field, int64_t n, E* dst, const std::string& what) {
  if (field.size() != n)
    throw InvalidArgument(fmt::format("{} holds {} values but its dims make {}", what, field.size(), n));
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<E>(field.Get(static_cast<int>(i)));
}

// float16 and bfloat16 values travel in int32_data as their 16 bits.
template <class Half> void copy_half_bits(const pb::TensorProto& proto, int64_t n, Half* dst, const std::string& what) {
  std::vector<uint16_t> bits(static_cast<std::size_t>(n));
  copy_typed(proto.int32_data(), n, bits.data(), what);
  static_assert(sizeof(Half) == sizeof(uint16_t));
  if (n) std::memcpy(dst, bits.data(), bits.size() * sizeof(uint16_t));
}

// complex values travel in float_data / double_data as (real, imaginary) pairs.
template <class Field, class R>
void copy_complex(const Field& field, int64_t n, std::complex<R>* dst, const std::string& what) {
  std::vector<R> parts(static_cast<std::size_t>(2 * n));
  copy_typed(field, 2 * n, parts.data(), what);
  for (int64_t i = 0; i < n; ++i) dst[i] = std::complex<R>(parts[2 * i], parts[2 * i + 1]);
}

}  // namespace

Tensor from_tensor_proto(const pb::TensorProto& proto, const std::string& what) {
  if (proto.data_location() == pb::TensorProto::EXTERNAL || proto.external_data_size() > 0)
    throw Unimplemented(fmt::format("{} keeps its data in an external file, which Kiln does not read", what));
  if (proto.has_segment()) throw Unimplemented(fmt::format("{} is segmented, which Kiln does not read", what));
  DType dtype = from_onnx_dtype(proto.data_type(), what);
  if (proto.dims_size() > Shape::kMaxRank)
    throw InvalidArgument(fmt::format("{} has rank {}, more than Kiln's {}", what, proto.dims_size(), Shape::kMaxRank));
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims)
    if (d < 0 || d > Shape::kMaxElements) throw InvalidArgument(fmt::format("{} has a dim of {}", what, d));
  Shape shape(dims);
  if (!shape.within_limits())
    throw InvalidArgument(fmt::format("{} has shape {}, more elements than Kiln allows", what, shape.to_string()));
  const int64_t n = shape.num_elements();
  if (proto.has_raw_data()) {
    const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
    if (proto.raw_data().size() != bytes)
      throw InvalidArgument(fmt::format("{} has {} bytes of raw_data but its shape {} of {} needs {}", what,
                                        proto.raw_data().size(), shape.to_string(), dtype_name(dtype), bytes));
    Tensor t = make_tensor(dtype, shape);
    if (bytes) std::memcpy(raw_data(t), proto.raw_data().data(), bytes);
    if (dtype == DType::Bool)  // a byte other than 0 or 1 is not a C++ bool
      for (int64_t i = 0; i < n; ++i) data_of<uint8_t>(t)[i] = data_of<uint8_t>(t)[i] != 0;
    return t;
  }
  Tensor t = make_tensor(dtype, shape);
  switch (dtype) {
    case DType::Float32: copy_typed(proto.float_data(), n, data_of<float>(t), what); break;
    case DType::Float64: copy_typed(proto.double_data(), n, data_of<double>(t), what); break;
    case DType::Int64: copy_typed(proto.int64_data(), n, data_of<int64_t>(t), what); break;
    // int32, uint8 and bool values travel in int32_data.
    case DType::Int32: copy_typed(proto.int32_data(), n, data_of<int32_t>(t), what); break;
    case DType::UInt8: copy_typed(proto.int32_data(), n, data_of<uint8_t>(t), what); break;
    case DType::Bool: {
      copy_typed(proto.int32_data(), n, data_of<uint8_t>(t), what);
      for (int64_t i = 0; i < n; ++i) data_of<uint8_t>(t)[i] = data_of<uint8_t>(t)[i] != 0;
      break;
    }
    // the narrow integers in int32_data too, uint32 and uint64 in uint64_data
    case DType::Int8: copy_typed(proto.int32_data(), n, data_of<int8_t>(t), what); break;
    case DType::Int16: copy_typed(proto.int32_data(), n, data_of<int16_t>(t), what); break;
    case DType::UInt16: copy_typed(proto.int32_data(), n, data_of<uint16_t>(t), what); break;
    case DType::UInt32: copy_typed(proto.uint64_data(), n, data_of<uint32_t>(t), what); break;
    case DType::UInt64: copy_typed(proto.uint64_data(), n, data_of<uint64_t>(t), what); break;
    case DType::Float16: copy_half_bits(proto, n, data_of<float16_t>(t), what); break;
    case DType::BFloat16: copy_half_bits(proto, n, data_of<bfloat16_t>(t), what); break;
    case DType::Complex64: copy_complex(proto.float_data(), n, data_of<std::complex<float>>(t), what); break;
    case DType::Complex128: copy_complex(proto.double_data(), n, data_of<std::complex<double>>(t), what); break;
    default: break;
  }
  return t;
}

}  // namespace kiln::onnx
