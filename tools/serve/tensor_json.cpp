#include "tensor_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>

#include "core/tensor_impl.h"
#include "io/json_util.h"
#include "status.h"

namespace kiln::serve {

namespace {

using saved_model::TensorInfo;

std::string_view json_type_name(const json& v) {
  if (v.is_string()) return "String";
  if (v.is_boolean()) return "Bool";
  if (v.is_number()) return "Number";
  if (v.is_object()) return "Object";
  if (v.is_array()) return "Array";
  return "Null";
}

[[noreturn]] void wrong_type(const json& v, DType d) {
  fail(Code::InvalidArgument, fmt::format("JSON Value: {} Type: {} is not of expected type: {}",
                                          v.dump(-1, ' ', false, json::error_handler_t::replace), json_type_name(v),
                                          tf_type_name(d)));
}

// {"b64": "..."}: a string leaf, not a nested object.
bool is_b64(const json& v) { return v.is_object() && v.size() == 1 && v.contains("b64"); }

int64_t integer_leaf(const json& v, DType d, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) fail(Code::InvalidArgument, fmt::format("{} is out of {} range", u, tf_type_name(d)));
    return static_cast<int64_t>(u);
  }
  if (!v.is_number_integer()) wrong_type(v, d);
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) fail(Code::InvalidArgument, fmt::format("{} is out of {} range", x, tf_type_name(d)));
  return x;
}

double float_leaf(const json& v, DType d) {
  if (!v.is_number()) wrong_type(v, d);
  return v.get<double>();
}

void store_leaf(const Tensor& t, std::size_t i, const json& v, const std::string& input) {
  const DType d = t.dtype();
  switch (d) {
    case DType::Float32: core::data_of<float>(t)[i] = static_cast<float>(float_leaf(v, d)); break;
    case DType::Float64: core::data_of<double>(t)[i] = float_leaf(v, d); break;
    case DType::Int32: core::data_of<int32_t>(t)[i] = static_cast<int32_t>(integer_leaf(v, d, INT32_MIN, INT32_MAX)); break;
    case DType::Int64: core::data_of<int64_t>(t)[i] = integer_leaf(v, d, INT64_MIN, INT64_MAX); break;
    case DType::UInt8: core::data_of<uint8_t>(t)[i] = static_cast<uint8_t>(integer_leaf(v, d, 0, 255)); break;
    case DType::Bool:
      if (!v.is_boolean()) wrong_type(v, d);
      core::data_of<bool>(t)[i] = v.get<bool>();
      break;
    case DType::String:
      if (v.is_string()) {
        core::data_of<std::string>(t)[i] = v.get<std::string>();
      } else if (is_b64(v) && v["b64"].is_string()) {
        try {
          core::data_of<std::string>(t)[i] = io::base64_decode(v["b64"].get<std::string>(), io::Where("b64"));
        } catch (const Error& e) {
          fail(Code::InvalidArgument, fmt::format("Unable to base64 decode the value of input '{}'", input));
        }
      } else {
        wrong_type(v, d);
      }
      break;
    case DType::Resource:
      fail(Code::InvalidArgument, fmt::format("input '{}' is a resource, which a request cannot give", input));
    default:
      fail(Code::Unimplemented, fmt::format("input '{}': kiln-serve does not serve {} tensors yet", input, tf_type_name(d)));
  }
}

// A tensor of the input's dtype from nested lists; the shape must fit the
// signature's (same rank, equal known dims). `instances`: the value stacks the
// instances' values of the input (named: the instances are objects), so an
// element's error names its instance, as TF Serving's do.
Tensor to_tensor(const json& value, const TensorInfo& info, bool instances = false, bool named = false) {
  std::vector<int64_t> dims;
  for (const json* p = &value; p->is_array(); p = &(*p)[0]) {
    dims.push_back(static_cast<int64_t>(p->size()));
    if (p->empty()) break;
  }
  std::vector<const json*> leaves;
  std::function<void(const json&, std::size_t)> walk = [&](const json& v, std::size_t depth) {
    if (depth < dims.size()) {
      if (!v.is_array() || static_cast<int64_t>(v.size()) != dims[depth])
        fail(Code::InvalidArgument,
             fmt::format("Failed to process element: {} of '{}' field: the nested lists are not rectangular",
                         depth, info.name));
      for (const json& e : v) walk(e, depth + 1);
    } else {
      if (v.is_array())
        fail(Code::InvalidArgument, fmt::format("Input '{}': the nested lists are not rectangular", info.name));
      leaves.push_back(&v);
    }
  };
  walk(value, 0);
  const Shape shape(dims);
  check_shape_fits(info, shape);
  Tensor t = core::make_tensor(info.dtype, shape);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    try {
      store_leaf(t, i, *leaves[i], info.name);
    } catch (const ServeError& e) {
      if (!instances) throw;
      const std::size_t row = i / (leaves.size() / static_cast<std::size_t>(dims[0]));
      fail(e.code(), fmt::format("Failed to process element: {}{} of 'instances' list. Error: Invalid argument: {}",
                                 row, named ? " key: " + info.name : "", e.what()));
    }
  }
  return t;
}

bool is_named(const json& v) { return v.is_object() && !is_b64(v); }

// Every instance is an object with exactly the signature's inputs as keys,
// or every one a bare value of its only input.
void check_instances(const json& instances, const std::vector<TensorInfo>& inputs) {
  const bool named = is_named(instances[0]);
  if (!named && inputs.size() > 1)
    fail(Code::InvalidArgument, "instances is a plain list, but expecting list of objects as multiple input tensors "
                                "required as per tensorinfo_map");
  std::set<std::string> names;
  for (const TensorInfo& info : inputs) names.insert(info.name);
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const json& instance = instances[i];
    if (named != is_named(instance))
      fail(Code::InvalidArgument, fmt::format("Expecting {} at item {} of input list",
                                              named ? "object but got list" : "value/list but got object", i));
    if (!named) continue;
    std::set<std::string> keys;
    for (const auto& [key, value] : instance.items()) keys.insert(key);
    if (keys != names)
      fail(Code::InvalidArgument,
           fmt::format("Failed to process element: {} of 'instances' list. JSON object: {} must only have keys: {}", i,
                       instance.dump(-1, ' ', false, json::error_handler_t::replace), fmt::join(names, ",")));
  }
}

void append_float(std::string& out, double x, bool single) {
  if (std::isnan(x)) {
    out += "NaN";
    return;
  }
  if (std::isinf(x)) {
    out += x < 0 ? "-Infinity" : "Infinity";
    return;
  }
  char buf[64];
  auto r = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(x)) : std::to_chars(buf, buf + sizeof buf, x);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void append_string(std::string& out, const std::string& s, bool b64) {
  if (!b64) {
    try {
      out += json(s).dump();
      return;
    } catch (const json::exception&) {
      // Not UTF-8: bytes go out as base64, which any client can read back.
    }
  }
  out += "{\"b64\": ";
  out += json(io::base64_encode(s)).dump();
  out += "}";
}

void append_element(std::string& out, const Tensor& t, int64_t i, bool b64) {
  switch (t.dtype()) {
    case DType::Float32: append_float(out, core::data_of<float>(t)[i], true); break;
    case DType::Float64: append_float(out, core::data_of<double>(t)[i], false); break;
    case DType::Int32: out += std::to_string(core::data_of<int32_t>(t)[i]); break;
    case DType::Int64: out += std::to_string(core::data_of<int64_t>(t)[i]); break;
    case DType::UInt8: out += std::to_string(core::data_of<uint8_t>(t)[i]); break;
    case DType::Bool: out += core::data_of<bool>(t)[i] ? "true" : "false"; break;
    case DType::String: append_string(out, core::data_of<std::string>(t)[i], b64); break;
    case DType::Resource: fail(Code::Internal, "a resource output cannot be written as JSON");
    default: fail(Code::Unimplemented, fmt::format("kiln-serve does not serve {} tensors yet", tf_type_name(t.dtype())));
  }
}

// Elements [offset, offset + size of dims[dim:]) as nested lists.
void append_values(std::string& out, const Tensor& t, int dim, int64_t& offset, bool b64) {
  if (dim == t.rank()) {
    append_element(out, t, offset++, b64);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < t.shape()[dim]; ++i) {
    if (i) out += ", ";
    append_values(out, t, dim + 1, offset, b64);
  }
  out += ']';
}

// TF writes a string output whose name ends in "_bytes" as base64.
bool wants_b64(const std::string& name) { return name.size() >= 6 && name.compare(name.size() - 6, 6, "_bytes") == 0; }

int64_t row_size(const Tensor& t) {
  int64_t n = 1;
  for (int i = 1; i < t.rank(); ++i) n *= t.shape()[i];
  return n;
}

}  // namespace

// TF's names for dtypes in messages (DataTypeString): Kiln's names but three.
std::string_view tf_type_name(DType d) {
  switch (d) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "half";
    default: return dtype_name(d);
  }
}

void check_shape_fits(const TensorInfo& info, const Shape& shape) {
  const Shape& want = info.shape;
  bool fits = !want.has_known_rank() || want.rank() == shape.rank();
  for (int i = 0; fits && want.has_known_rank() && i < want.rank(); ++i) fits = want[i] < 0 || want[i] == shape[i];
  if (!fits)
    fail(Code::InvalidArgument, fmt::format("Input '{}' has shape {}, which does not fit the signature's {}", info.name,
                                            shape.to_string(), want.to_string()));
}

// Deeper JSON is refused before it is parsed: walking and printing a value
// recurse once per level, so a body of a million '[' would overflow the stack.
constexpr int kMaxNesting = 64;

void check_nesting(std::string_view body) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        fail(Code::InvalidArgument, fmt::format("JSON Parse error: nested deeper than {} levels at offset: {}",
                                                kMaxNesting, i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

json parse_body(std::string_view body) {
  check_nesting(body);
  try {
    return json::parse(body);
  } catch (const json::parse_error& e) {
    fail(Code::InvalidArgument, fmt::format("JSON Parse error: {} at offset: {}", e.what(), e.byte));
  } catch (const json::exception& e) {  // a number past double's range (1e400)
    fail(Code::InvalidArgument, fmt::format("JSON Parse error: {}", e.what()));
  }
}

PredictRequest read_predict_request(const json& body) {
  if (!body.is_object()) fail(Code::InvalidArgument, "JSON Parse error: the request body is not a JSON object");
  PredictRequest r;
  if (auto it = body.find("signature_name"); it != body.end()) {
    if (!it->is_string()) fail(Code::InvalidArgument, "'signature_name' key must be a string value.");
    r.signature_name = it->get<std::string>();
  }
  auto instances = body.find("instances"), inputs = body.find("inputs");
  if (instances != body.end() && inputs != body.end())
    fail(Code::InvalidArgument, "Not formatted correctly expecting only one of 'inputs' or 'instances' keys exist");
  if (instances == body.end() && inputs == body.end())
    fail(Code::InvalidArgument, "Missing 'inputs' or 'instances' key");
  r.row_format = instances != body.end();
  r.payload = r.row_format ? &*instances : &*inputs;
  if (r.row_format && !r.payload->is_array())
    fail(Code::InvalidArgument, "Excepting 'instances' to be an list/array");  // TF's spelling
  if (r.row_format && r.payload->empty()) fail(Code::InvalidArgument, "No values in 'instances' array");
  return r;
}

TensorMap request_tensors(const PredictRequest& request, const std::vector<TensorInfo>& inputs) {
  TensorMap tensors;
  const json& payload = *request.payload;
  if (request.row_format) {
    check_instances(payload, inputs);
    const bool named = is_named(payload[0]);
    for (const TensorInfo& info : inputs) {
      // The instances' values for this input, stacked along a new first dim.
      json column = json::array();
      for (const json& instance : payload) column.push_back(named ? instance[info.name] : instance);
      tensors.emplace(info.name, to_tensor(column, info, true, named));
    }
    return tensors;
  }
  if (is_named(payload)) {
    for (const TensorInfo& info : inputs) {
      auto it = payload.find(info.name);
      if (it == payload.end())
        fail(Code::InvalidArgument, fmt::format("Missing named input: {} in 'inputs' object.", info.name));
      tensors.emplace(info.name, to_tensor(*it, info));
    }
    return tensors;
  }
  if (inputs.size() != 1)
    fail(Code::InvalidArgument, "inputs is a plain value/list, but expecting an object as multiple input tensors "
                                "required as per tensorinfo_map");
  tensors.emplace(inputs[0].name, to_tensor(payload, inputs[0]));
  return tensors;
}

std::string tensor_json(const Tensor& t, bool bytes_as_b64) {
  std::string out;
  int64_t offset = 0;
  append_values(out, t, 0, offset, bytes_as_b64);
  return out;
}

std::string predict_response(const TensorMap& outputs, const std::vector<TensorInfo>& infos, bool row_format) {
  std::vector<std::pair<std::string, const Tensor*>> named;
  for (const TensorInfo& info : infos) {
    auto it = outputs.find(info.name);
    if (it == outputs.end()) fail(Code::Internal, fmt::format("the model returned no output '{}'", info.name));
    named.emplace_back(info.name, &it->second);
  }
  std::string out;
  if (!row_format) {
    out = "{\"outputs\": ";
    if (named.size() == 1) {
      out += tensor_json(*named[0].second, wants_b64(named[0].first));
    } else {
      out += '{';
      for (std::size_t i = 0; i < named.size(); ++i) {
        if (i) out += ", ";
        out += json(named[i].first).dump() + ": " + tensor_json(*named[i].second, wants_b64(named[i].first));
      }
      out += '}';
    }
    return out + "}";
  }
  int64_t rows = -1;
  for (const auto& [name, t] : named) {
    if (t->rank() < 1) fail(Code::InvalidArgument, fmt::format("Tensor name: {} has no shape information", name));
    if (rows >= 0 && t->shape()[0] != rows)
      fail(Code::InvalidArgument, fmt::format("Tensor name: {} has inconsistent batch size: {} expecting: {}", name,
                                              t->shape()[0], rows));
    rows = t->shape()[0];
  }
  out = "{\"predictions\": [";
  for (int64_t r = 0; r < rows; ++r) {
    if (r) out += ", ";
    if (named.size() > 1) out += '{';
    for (std::size_t i = 0; i < named.size(); ++i) {
      const Tensor& t = *named[i].second;
      if (named.size() > 1) out += (i ? ", " : "") + json(named[i].first).dump() + ": ";
      int64_t offset = r * row_size(t);
      append_values(out, t, 1, offset, wants_b64(named[i].first));
    }
    if (named.size() > 1) out += '}';
  }
  return out + "]}";
}

}  // namespace kiln::serve
