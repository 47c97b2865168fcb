#include "http_api.h"

#include <fmt/format.h>
#include <httplib.h>

#include "io/cli.h"
#include "numeric_body.h"
#include "status.h"

namespace kiln::serve {

namespace {

// A TensorInfo proto as JSON (sizes are int64, which proto JSON writes as strings).
json tensor_info_json(const saved_model::TensorInfo& info) {
  json dims = json::array();
  if (info.shape.has_known_rank())
    for (int64_t d : info.shape) dims.push_back({{"size", std::to_string(d < 0 ? -1 : d)}, {"name", ""}});
  return {{"dtype", io::tf_dtype(info.dtype)},
          {"tensor_shape", {{"dim", dims}, {"unknown_rank", !info.shape.has_known_rank()}}},
          {"name", info.tensor_name}};
}

// The version or label a model route names (its groups 2 and 3).
VersionRef version_of(const httplib::Match& m) {
  VersionRef ref;
  if (m.size() > 3 && m[3].matched && m[3].length() > 0) ref.label = m[3].str();
  if (m.size() <= 2 || !m[2].matched || m[2].length() == 0) return ref;
  try {
    ref.version = std::stoll(m[2].str());
  } catch (const std::exception&) {
    fail(Code::InvalidArgument, fmt::format("Failed to convert version: {} to numeric.", m[2].str()));
  }
  return ref;
}

std::string error_json(const std::string& message) { return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace); }

constexpr const char* kJson = "application/json";

}  // namespace

std::string HttpApi::model_status(const std::string& name, const VersionRef& ref) {
  json list = json::array();
  for (const VersionStatus& v : models_.status(name, ref))
    list.push_back({{"version", std::to_string(v.version)},
                    {"state", v.state},
                    {"status", {{"error_code", v.ok ? "OK" : std::string(code_name(v.code))},
                                {"error_message", v.error}}}});
  return json{{"model_version_status", list}}.dump(1);
}

std::string HttpApi::model_metadata(const std::string& name, const VersionRef& ref) {
  std::shared_ptr<const Servable> servable = models_.servable(name, ref);
  json defs = json::object();
  for (const auto& [sig_name, sig] : servable->model().signatures()) {
    json inputs = json::object(), outputs = json::object();
    for (const auto& info : sig.inputs()) inputs[info.name] = tensor_info_json(info);
    for (const auto& info : sig.outputs()) outputs[info.name] = tensor_info_json(info);
    defs[sig_name] = {{"inputs", inputs}, {"outputs", outputs}, {"method_name", "tensorflow/serving/predict"}};
  }
  json doc = {{"model_spec", {{"name", name}, {"signature_name", ""}, {"version", std::to_string(servable->version())}}},
              {"metadata", {{"signature_def", {{"signature_def", defs}}}}}};
  return doc.dump(1);
}

std::string HttpApi::predict(const std::string& name, const VersionRef& ref, const std::string& body,
                             Clock::time_point deadline) {
  if (!models_.has(name)) models_.servable(name, ref);  // NotFound before the body is read, as TF Serving
  // Most bodies are a list of numbers: read straight into the tensor.
  if (std::optional<NumericBody> numeric = read_numeric_body(body)) {
    const Predictor::Target target = predictor_.find(name, ref, numeric->signature_name);
    if (std::optional<TensorMap> inputs = numeric_tensors(*numeric, target.signature->inputs())) {
      TensorMap outputs = predictor_.run(target, std::move(*inputs), deadline);
      return predict_response(outputs, target.signature->outputs(), numeric->row_format);
    }
  }
  json doc = parse_body(body);
  PredictRequest request = read_predict_request(doc);
  // The version is held until the response is written: a reload meanwhile
  // leaves this request on the version it started with.
  const Predictor::Target target = predictor_.find(name, ref, request.signature_name);
  TensorMap inputs = request_tensors(request, target.signature->inputs());
  TensorMap outputs = predictor_.run(target, std::move(inputs), deadline);
  return predict_response(outputs, target.signature->outputs(), request.row_format);
}

void HttpApi::add_routes(httplib::Server& server) {
  // Every handler: the answer, or {"error": ...} with the HTTP status of
  // TF's code; the request counted by API and status.
  auto handle = [this](const std::string& model, const std::string& api, httplib::Response& res,
                       const std::function<std::string()>& body) {
    const auto start = Clock::now();
    std::string status = "OK";
    try {
      res.set_content(body(), kJson);
    } catch (const ServeError& e) {
      status = code_name(e.code());
      res.status = http_status(e.code());
      res.set_content(error_json(e.what()), kJson);
    } catch (const std::exception& e) {
      status = "INTERNAL";
      res.status = 500;
      res.set_content(error_json(e.what()), kJson);
    }
    const double micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    // Names no model serves are counted under "": a client cannot grow the label sets.
    metrics_.record_request(models_.has(model) ? model : std::string(), api, status, micros);
  };
  const std::string model = R"(/v1/models/([^/:]+)(?:/versions/(-?\d+)|/labels/([^/:]+))?)";
  server.Get(model + "/metadata", [=, this](const httplib::Request& req, httplib::Response& res) {
    handle(req.matches[1], "GetModelMetadata", res, [&] { return model_metadata(req.matches[1], version_of(req.matches)); });
  });
  server.Get(model, [=, this](const httplib::Request& req, httplib::Response& res) {
    handle(req.matches[1], "GetModelStatus", res, [&] { return model_status(req.matches[1], version_of(req.matches)); });
  });
  // The body is read here, not by httplib: httplib refuses a form-encoded body
  // over 8 KiB (its compiled-in limit), and `curl -d`, TF Serving's own
  // example, sends that content type. --rest_api_max_body_bytes still holds
  // (httplib answers 413 past it, and the reader returns false).
  server.Post(model + ":(predict|classify|regress)", [=, this](const httplib::Request& req, httplib::Response& res,
                                                             const httplib::ContentReader& read) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.rest_api_timeout_in_ms);
    std::string body;
    if (!read([&](const char* data, std::size_t n) {
          body.append(data, n);
          return true;
        }))
      return;
    handle(req.matches[1], "Predict", res, [&]() -> std::string {
      if (req.matches[4] != "predict")
        fail(Code::Unimplemented, fmt::format("kiln-serve does not implement :{} (only :predict)", req.matches[4].str()));
      return predict(req.matches[1], version_of(req.matches), body, deadline);
    });
  });
  server.Get("/monitoring/prometheus/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
  });
  auto malformed = [=](const httplib::Request& req, httplib::Response& res) {
    handle("", "Malformed", res, [&]() -> std::string {
      fail(Code::InvalidArgument, fmt::format("Malformed request: {} {}", req.method, req.path));
    });
  };
  server.Get("/v1/.*", malformed);
  server.Post("/v1/.*", malformed);
  // httplib's own refusals (413 for a body over the limit, 404, ...) in the
  // API's {"error": ...} form.
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message = res.status == 413   ? "Request body is larger than the server's limit"
                          : res.status == 404 ? fmt::format("Not found: {} {}", req.method, req.path)
                                              : fmt::format("HTTP error {}", res.status);
    res.set_content(error_json(message), kJson);
  });
  server.set_payload_max_length(static_cast<std::size_t>(options_.rest_api_max_body_bytes));
}

}  // namespace kiln::serve
