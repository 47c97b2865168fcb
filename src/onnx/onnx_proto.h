#pragma once
// ONNX's protobuf messages (Debian's libonnx-dev: onnx-ml.proto's generated
// classes, linked from libonnx_proto) and the conversions between them and
// Kiln's dtypes, shapes and tensors, shared by export and import.
#include <onnx/onnx_pb.h>

#include <string>

#include "core/tensor_impl.h"

namespace kiln::onnx {

namespace pb = ::onnx;

// The ONNX element type of a Kiln dtype; throws InvalidArgument naming `what`
// for one ONNX has no form of (string, resource).
int to_onnx_dtype(DType dtype, const std::string& what);
// The Kiln dtype of an ONNX element type; throws Unimplemented naming `what`
// for one Kiln lacks (float16, int8, complex...).
DType from_onnx_dtype(int elem_type, const std::string& what);

// A TensorProto holding `value` (raw_data, little-endian as ONNX requires).
void to_tensor_proto(const Tensor& value, const std::string& name, pb::TensorProto& out);
// The tensor a TensorProto holds (raw_data or the typed fields); throws
// InvalidArgument naming `what` for a malformed one (sizes that do not
// match the dims, negative or huge dims, external data).
Tensor from_tensor_proto(const pb::TensorProto& proto, const std::string& what);

}  // namespace kiln::onnx
