#include "http_api.h"

#include <fmt/format.h>
#include <httplib.h>

#include "io/cli.h"
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

std::optional<int64_t> version_of(const httplib::Match& m, std::size_t group) {
  if (m.size() <= group || !m[group].matched || m[group].length() == 0) return std::nullopt;
  try {
    return std::stoll(m[group].str());
  } catch (const std::exception&) {
    fail(Code::InvalidArgument, fmt::format("Failed to convert version: {} to numeric.", m[group].str()));
  }
}

std::string error_json(const std::string& message) { return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace); }

constexpr const char* kJson = "application/json";

}  // namespace

void HttpApi::check_name(const std::string& name, std::optional<int64_t> version) const {
  if (name == options_.model_name) return;
  if (version) fail(Code::NotFound, fmt::format("Servable not found for request: Specific({}, {})", name, *version));
  fail(Code::NotFound, fmt::format("Servable not found for request: Latest({})", name));
}

std::string HttpApi::model_status(const std::string& name, std::optional<int64_t> version) {
  if (name != options_.model_name) fail(Code::NotFound, fmt::format("Could not find any versions of model {}", name));
  return models_.status(version).dump(1);
}

std::string HttpApi::model_metadata(const std::string& name, std::optional<int64_t> version) {
  check_name(name, version);
  std::shared_ptr<const Servable> servable = models_.get(version);
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

std::string HttpApi::predict(const std::string& name, std::optional<int64_t> version, const std::string& body,
                             Clock::time_point deadline) {
  check_name(name, version);
  json doc = parse_body(body);
  PredictRequest request = read_predict_request(doc);
  // The version is held until the response is written: a reload meanwhile
  // leaves this request on the version it started with.
  std::shared_ptr<const Servable> servable = models_.get(version);
  const saved_model::LoadedSignature& sig = servable->signature(request.signature_name);
  TensorMap inputs = request_tensors(request, sig.inputs());
  if (++pending_ > options_.rest_api_max_pending_requests) {
    --pending_;
    fail(Code::ResourceExhausted, fmt::format("Too many requests: {} predictions are already waiting",
                                              options_.rest_api_max_pending_requests));
  }
  struct Release {
    std::atomic<int64_t>& n;
    ~Release() { --n; }
  } release{pending_};
  TensorMap outputs = servable->predict(request.signature_name, std::move(inputs), deadline);
  if (Clock::now() > deadline) fail(Code::DeadlineExceeded, "Deadline exceeded");
  return predict_response(outputs, sig.outputs(), request.row_format);
}

void HttpApi::add_routes(httplib::Server& server) {
  // Every handler: the answer, or {"error": ...} with the HTTP status of
  // TF's code; the request counted by API and status.
  auto handle = [this](const std::string& api, httplib::Response& res, const std::function<std::string()>& body) {
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
    metrics_.record_request(options_.model_name, api, status, micros);
  };
  const std::string model = R"(/v1/models/([^/:]+)(?:/versions/(-?\d+))?)";
  server.Get(model + "/metadata", [=, this](const httplib::Request& req, httplib::Response& res) {
    handle("GetModelMetadata", res, [&] { return model_metadata(req.matches[1], version_of(req.matches, 2)); });
  });
  server.Get(model, [=, this](const httplib::Request& req, httplib::Response& res) {
    handle("GetModelStatus", res, [&] { return model_status(req.matches[1], version_of(req.matches, 2)); });
  });
  server.Post(model + ":(predict|classify|regress)", [=, this](const httplib::Request& req, httplib::Response& res) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.rest_api_timeout_in_ms);
    handle("Predict", res, [&]() -> std::string {
      if (req.matches[3] != "predict")
        fail(Code::Unimplemented, fmt::format("kiln-serve does not implement :{} (only :predict)", req.matches[3].str()));
      return predict(req.matches[1], version_of(req.matches, 2), req.body, deadline);
    });
  });
  server.Get("/monitoring/prometheus/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
  });
  auto malformed = [=](const httplib::Request& req, httplib::Response& res) {
    handle("Malformed", res, [&]() -> std::string {
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
