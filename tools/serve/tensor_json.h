#pragma once
// TF Serving's JSON tensors (the REST API's predict request and response):
// the row format {"instances": [...]} (one entry per example, stacked along
// a new batch dim) and the columnar format {"inputs": ...} (whole tensors),
// nested lists of numbers, bools or strings, {"b64": "..."} for bytes.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/saved_model.h"
#include "kiln/tensor.h"

namespace kiln::serve {

using json = nlohmann::ordered_json;
using TensorMap = std::map<std::string, Tensor>;

// The request body as JSON; a syntax error is InvalidArgument with TF
// Serving's "JSON Parse error: ..." text.
json parse_body(std::string_view body);

struct PredictRequest {
  std::string signature_name = "serving_default";
  bool row_format = true;  // "instances" (else "inputs")
  const json* payload = nullptr;  // the value of "instances" / "inputs", inside the parsed body
};
// Reads the request's keys; `body` must outlive the result.
PredictRequest read_predict_request(const json& body);

// The signature's inputs from the request's payload, each checked against
// the signature's dtype and shape (an unknown dim takes any size).
TensorMap request_tensors(const PredictRequest& request, const std::vector<saved_model::TensorInfo>& inputs);

// {"predictions": [...]} (row format: row i of every output) or
// {"outputs": ...}; a single output is written without its name, as TF does.
std::string predict_response(const TensorMap& outputs, const std::vector<saved_model::TensorInfo>& infos,
                             bool row_format);

// One value as JSON text: float32 in its shortest form that reads back the
// same float ("0.1", not 0.100000001), "3.0" for whole floats, NaN and
// Infinity as TF Serving writes them.
std::string tensor_json(const Tensor& t, bool bytes_as_b64 = false);

// TF's name for a dtype in messages ("float", "int32": DataTypeString).
std::string_view tf_type_name(DType d);

// InvalidArgument unless `shape` fits the input's (same rank, equal known dims).
void check_shape_fits(const saved_model::TensorInfo& info, const Shape& shape);

}  // namespace kiln::serve
