#include "tensor_proto.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "core/tensor_impl.h"
#include "status.h"
#include "tensor_json.h"

namespace kiln::serve {

namespace {

using tensorflow::TensorProto;

std::optional<DType> kiln_dtype(tensorflow::DataType d) {
  switch (d) {
    case tensorflow::DT_FLOAT: return DType::Float32;
    case tensorflow::DT_DOUBLE: return DType::Float64;
    case tensorflow::DT_INT32: return DType::Int32;
    case tensorflow::DT_INT64: return DType::Int64;
    case tensorflow::DT_UINT8: return DType::UInt8;
    case tensorflow::DT_BOOL: return DType::Bool;
    case tensorflow::DT_STRING: return DType::String;
    default: return std::nullopt;
  }
}

// Copies `values` into the tensor's n elements: none gives zeros, fewer
// repeat the last, more are an error.
template <class T, class Field>
void fill(const Tensor& t, const Field& values, const std::string& name, const char* field) {
  const int64_t n = t.size(), m = values.size();
  if (m > n)
    fail(Code::InvalidArgument, fmt::format("Input '{}': {} has {} values for a tensor of shape {} ({} elements)", name,
                                            field, m, t.shape().to_string(), n));
  T* out = core::data_of<T>(t);
  for (int64_t i = 0; i < n; ++i) out[i] = m == 0 ? T() : static_cast<T>(values[static_cast<int>(std::min(i, m - 1))]);
}

template <class Field>
void fill_uint8(const Tensor& t, const Field& values, const std::string& name) {
  for (int32_t v : values)
    if (v < 0 || v > 255) fail(Code::InvalidArgument, fmt::format("Input '{}': {} is out of uint8 range", name, v));
  fill<uint8_t>(t, values, name, "int_val");
}

}  // namespace

tensorflow::DataType proto_dtype(DType d) {
  switch (d) {
    case DType::Float32: return tensorflow::DT_FLOAT;
    case DType::Float64: return tensorflow::DT_DOUBLE;
    case DType::Int32: return tensorflow::DT_INT32;
    case DType::Int64: return tensorflow::DT_INT64;
    case DType::UInt8: return tensorflow::DT_UINT8;
    case DType::Bool: return tensorflow::DT_BOOL;
    case DType::String: return tensorflow::DT_STRING;
    case DType::Resource: return tensorflow::DT_INVALID;
  }
  return tensorflow::DT_INVALID;
}

void to_shape_proto(const Shape& shape, tensorflow::TensorShapeProto& proto) {
  if (!shape.has_known_rank()) {
    proto.set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape) proto.add_dim()->set_size(d < 0 ? -1 : d);
}

Tensor from_tensor_proto(const TensorProto& proto, const std::string& name, int64_t max_bytes) {
  const std::optional<DType> dtype = kiln_dtype(proto.dtype());
  if (!dtype)
    fail(Code::InvalidArgument, fmt::format("Input '{}': dtype {} is not one kiln-serve takes (float, double, int32, "
                                            "int64, uint8, bool, string)",
                                            name, tensorflow::DataType_Name(proto.dtype())));
  const auto& shape_proto = proto.tensor_shape();
  if (shape_proto.unknown_rank()) fail(Code::InvalidArgument, fmt::format("Input '{}' has an unknown rank", name));
  if (shape_proto.dim_size() > Shape::kMaxRank)
    fail(Code::InvalidArgument, fmt::format("Input '{}' has rank {}, more than Kiln's {}", name, shape_proto.dim_size(),
                                            Shape::kMaxRank));
  std::vector<int64_t> dims;
  const int64_t element_bytes = *dtype == DType::String ? 1 : static_cast<int64_t>(dtype_size(*dtype));
  int64_t n = 1;
  for (const auto& d : shape_proto.dim()) {
    if (d.size() < 0) fail(Code::InvalidArgument, fmt::format("Input '{}' has a negative dim {}", name, d.size()));
    if (d.size() > 0 && n > max_bytes / element_bytes / d.size())
      fail(Code::InvalidArgument,
           fmt::format("Input '{}' is larger than the server's limit of {} bytes", name, max_bytes));
    n *= d.size();
    dims.push_back(d.size());
  }
  Tensor t = core::make_tensor(*dtype, Shape(dims));
  const std::string& content = proto.tensor_content();
  if (!content.empty()) {
    if (*dtype == DType::String)
      fail(Code::InvalidArgument, fmt::format("Input '{}': strings go in string_val, not tensor_content", name));
    if (static_cast<int64_t>(content.size()) != n * element_bytes)
      fail(Code::InvalidArgument, fmt::format("Input '{}': tensor_content has {} bytes, but shape {} of {} needs {}", name,
                                              content.size(), t.shape().to_string(), tf_type_name(*dtype),
                                              n * element_bytes));
    if (*dtype == DType::Bool)
      for (char c : content)
        if (c != 0 && c != 1) fail(Code::InvalidArgument, fmt::format("Input '{}': a bool byte is not 0 or 1", name));
    std::memcpy(core::raw_data(t), content.data(), content.size());
    return t;
  }
  switch (*dtype) {
    case DType::Float32: fill<float>(t, proto.float_val(), name, "float_val"); break;
    case DType::Float64: fill<double>(t, proto.double_val(), name, "double_val"); break;
    case DType::Int32: fill<int32_t>(t, proto.int_val(), name, "int_val"); break;
    case DType::Int64: fill<int64_t>(t, proto.int64_val(), name, "int64_val"); break;
    case DType::UInt8: fill_uint8(t, proto.int_val(), name); break;
    case DType::Bool: fill<bool>(t, proto.bool_val(), name, "bool_val"); break;
    case DType::String: {
      const auto& values = proto.string_val();
      const int64_t m = values.size();
      if (m > n)
        fail(Code::InvalidArgument, fmt::format("Input '{}': string_val has {} values for a tensor of shape {}", name, m,
                                                t.shape().to_string()));
      // Repeated strings are copies: bound their total like the other dtypes'.
      if (m > 0 && m < n && static_cast<int64_t>(values[static_cast<int>(m - 1)].size()) > max_bytes / std::max<int64_t>(1, n))
        fail(Code::InvalidArgument, fmt::format("Input '{}' is larger than the server's limit of {} bytes", name, max_bytes));
      std::string* out = core::data_of<std::string>(t);
      for (int64_t i = 0; i < n; ++i) out[i] = m == 0 ? std::string() : values[static_cast<int>(std::min(i, m - 1))];
      break;
    }
    case DType::Resource: break;
  }
  return t;
}

void to_tensor_proto(const Tensor& t, TensorProto& proto) {
  proto.set_dtype(proto_dtype(t.dtype()));
  to_shape_proto(t.shape(), *proto.mutable_tensor_shape());
  const int64_t n = t.size();
  switch (t.dtype()) {
    case DType::Float32: {
      const float* p = core::data_of<float>(t);
      proto.mutable_float_val()->Add(p, p + n);
      break;
    }
    case DType::Float64: {
      const double* p = core::data_of<double>(t);
      proto.mutable_double_val()->Add(p, p + n);
      break;
    }
    case DType::Int32: {
      const int32_t* p = core::data_of<int32_t>(t);
      proto.mutable_int_val()->Add(p, p + n);
      break;
    }
    case DType::Int64: {
      const int64_t* p = core::data_of<int64_t>(t);
      for (int64_t i = 0; i < n; ++i) proto.add_int64_val(p[i]);
      break;
    }
    case DType::UInt8: {
      const uint8_t* p = core::data_of<uint8_t>(t);
      for (int64_t i = 0; i < n; ++i) proto.add_int_val(p[i]);
      break;
    }
    case DType::Bool: {
      const bool* p = core::data_of<bool>(t);
      for (int64_t i = 0; i < n; ++i) proto.add_bool_val(p[i]);
      break;
    }
    case DType::String: {
      const std::string* p = core::data_of<std::string>(t);
      for (int64_t i = 0; i < n; ++i) proto.add_string_val(p[i]);
      break;
    }
    case DType::Resource: fail(Code::Internal, "a resource output cannot be sent");
    default: fail(Code::Unimplemented, fmt::format("kiln-serve does not serve {} tensors yet", tf_type_name(t.dtype())));
  }
}

}  // namespace kiln::serve
