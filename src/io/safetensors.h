#pragma once
// The safetensors file format (the layout Hugging Face's tools read): an
// 8-byte little-endian header length N, N bytes of JSON mapping each tensor's
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the
// data that follows the header), then the raw little-endian values.
#include <string>
#include <string_view>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::io {

struct NamedTensor {
  std::string name;
  Tensor value;
};

// The file's bytes, tensors in the given order. Throws Unimplemented for a
// dtype safetensors cannot hold (string, resource).
std::string safetensors_encode(const std::vector<NamedTensor>& tensors);

// Parses and validates everything (header length and JSON, names, dtypes,
// shapes, offsets in range, covering the data exactly, bool bytes 0 or 1).
// Throws InvalidArgument starting with `what` (the file) and naming the
// tensor and the problem.
std::vector<NamedTensor> safetensors_decode(std::string_view bytes, std::string_view what);

// "F32" for float32...; empty for dtypes safetensors has no name for.
std::string_view safetensors_dtype_name(DType dtype);

}  // namespace kiln::io
