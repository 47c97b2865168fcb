#pragma once
// The predict body most clients send, read without a JSON document:
// {"instances" or "inputs": nested lists of numbers} with an optional
// "signature_name". Building nlohmann's document for a 28x28 image (one node
// and one strtod per number, then a copy per instance) cost more than the
// model's own call; this reads the numbers straight into one array.
//
// It accepts only a strict subset of JSON: anything else (objects or strings
// in the payload, other keys, escapes, empty or ragged lists, odd numbers)
// returns nullopt and the request takes the full reader (tensor_json.h), whose
// answers, errors included, are therefore unchanged.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensor_json.h"

namespace kiln::serve {

struct NumericBody {
  std::string signature_name = "serving_default";
  bool row_format = true;      // "instances" (else "inputs")
  std::vector<int64_t> dims;   // of the payload: for "instances", the stacked batch
  std::vector<double> values;  // row-major
  bool all_integers = true;    // every number written without '.' or exponent
};

std::optional<NumericBody> read_numeric_body(std::string_view body);

// The tensor of a signature's only input, or nullopt when its dtype cannot
// take the numbers as they were written (the full reader then names the
// element); InvalidArgument, as the full reader's, when the shape does not fit.
std::optional<TensorMap> numeric_tensors(const NumericBody& body, const std::vector<saved_model::TensorInfo>& inputs);

}  // namespace kiln::serve
