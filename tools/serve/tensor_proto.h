#pragma once
// TensorFlow's TensorProto (the gRPC API's tensors) to and from Kiln tensors,
// as tf.make_tensor_proto writes them and tf.make_ndarray reads them: the
// values in the dtype's typed field (float_val, int_val, ...) or as raw bytes
// in tensor_content; fewer typed values than the shape holds repeat the last
// one, as TF's Tensor::FromProto does.
#include <cstdint>

#include "kiln/saved_model.h"
#include "kiln/tensor.h"
#include <tensorflow/core/framework/tensor.pb.h>  // generated from tools/serve/proto

namespace kiln::serve {

// The tensor a request's TensorProto holds, named `name` in errors;
// InvalidArgument for a dtype Kiln has not, a shape that is not one, values
// that do not fill it, or more than `max_bytes` of data.
Tensor from_tensor_proto(const tensorflow::TensorProto& proto, const std::string& name, int64_t max_bytes);

// The tensor in the typed field of its dtype (TF Serving's responses).
void to_tensor_proto(const Tensor& t, tensorflow::TensorProto& proto);

// Kiln's dtype as TF's DataType enum (DT_INVALID for a resource).
tensorflow::DataType proto_dtype(DType d);
// A signature's shape as a TensorShapeProto (-1 for an unknown dim).
void to_shape_proto(const Shape& shape, tensorflow::TensorShapeProto& proto);

}  // namespace kiln::serve
