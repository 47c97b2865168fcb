#include "grpc_api.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "tensor_json.h"
#include "tensor_proto.h"

namespace kiln::serve {

namespace {

namespace tfs = tensorflow::serving;

grpc::StatusCode grpc_code(Code code) {
  switch (code) {
    case Code::InvalidArgument: return grpc::StatusCode::INVALID_ARGUMENT;
    case Code::FailedPrecondition: return grpc::StatusCode::FAILED_PRECONDITION;
    case Code::NotFound: return grpc::StatusCode::NOT_FOUND;
    case Code::DeadlineExceeded: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case Code::ResourceExhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case Code::Unavailable: return grpc::StatusCode::UNAVAILABLE;
    case Code::Unimplemented: return grpc::StatusCode::UNIMPLEMENTED;
    case Code::Internal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::UNKNOWN;
}

// Runs one call: OK, or the ServeError as a gRPC status with TF's code; the
// call counted by model (names no model serves under "", as REST counts
// them), API and status.
grpc::Status handle(const ModelRegistry& models, Metrics& metrics, const std::string& model, const std::string& api,
                    const std::function<void()>& body) {
  const auto start = Clock::now();
  grpc::Status status = grpc::Status::OK;
  std::string name = "OK";
  try {
    body();
  } catch (const ServeError& e) {
    name = code_name(e.code());
    status = grpc::Status(grpc_code(e.code()), e.what());
  } catch (const std::exception& e) {
    name = "INTERNAL";
    status = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
  metrics.record_request(models.has(model) ? model : std::string(), api, name, std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  return status;
}

VersionRef version_ref(const tfs::ModelSpec& spec) {
  VersionRef ref;
  if (spec.has_version()) ref.version = spec.version().value();
  if (spec.version_choice_case() == tfs::ModelSpec::kVersionLabel) ref.label = spec.version_label();
  return ref;
}

void check_spec(const tfs::ModelSpec& spec, bool has_spec) {
  if (!has_spec) fail(Code::InvalidArgument, "Missing ModelSpec");
  if (spec.name().empty()) fail(Code::InvalidArgument, "Missing ModelSpec name");
}

// The earlier of the client's gRPC deadline and --rest_api_timeout_in_ms.
Clock::time_point deadline_of(const grpc::ServerContext& context, int64_t timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto client = context.deadline();
  if (client != std::chrono::system_clock::time_point::max()) {
    const auto left = client - std::chrono::system_clock::now();
    deadline = std::min(deadline, Clock::now() + std::chrono::duration_cast<Clock::duration>(left));
  }
  return deadline;
}

// The outputs output_filter names (every output when it names none).
std::vector<const saved_model::TensorInfo*> filtered_outputs(const saved_model::LoadedSignature& sig,
                                                             const google::protobuf::RepeatedPtrField<std::string>& filter) {
  std::vector<const saved_model::TensorInfo*> out;
  if (filter.empty()) {
    for (const auto& info : sig.outputs()) out.push_back(&info);
    return out;
  }
  std::set<std::string> seen;
  for (const std::string& alias : filter) {
    if (!seen.insert(alias).second) fail(Code::InvalidArgument, fmt::format("duplicate output tensor alias: {}", alias));
    auto it = std::find_if(sig.outputs().begin(), sig.outputs().end(), [&](const auto& i) { return i.name == alias; });
    if (it == sig.outputs().end()) {
      std::vector<std::string> names;
      for (const auto& info : sig.outputs()) names.push_back(info.name);
      fail(Code::InvalidArgument, fmt::format("output tensor alias not found in signature: {} Outputs expected to be in "
                                              "the set {{{}}}.",
                                              alias, fmt::join(names, ",")));
    }
    out.push_back(&*it);
  }
  return out;
}

void fill_spec(tfs::ModelSpec& spec, const std::string& name, int64_t version, const std::string& signature) {
  spec.set_name(name);
  spec.mutable_version()->set_value(version);
  spec.set_signature_name(signature);
}

}  // namespace

grpc::Status PredictionServiceImpl::Predict(grpc::ServerContext* context, const tfs::PredictRequest* request,
                                            tfs::PredictResponse* response) {
  const tfs::ModelSpec& spec = request->model_spec();
  return handle(models_, metrics_, spec.name(), "Predict", [&] {
    check_spec(spec, request->has_model_spec());
    const Clock::time_point deadline = deadline_of(*context, options_.rest_api_timeout_in_ms);
    // The version is held until the response is written (a reload meanwhile
    // leaves this request on the version it started with).
    const Predictor::Target target = predictor_.find(spec.name(), version_ref(spec), spec.signature_name());
    const std::vector<const saved_model::TensorInfo*> outputs = filtered_outputs(*target.signature, request->output_filter());
    TensorMap inputs;
    for (const auto& [name, proto] : request->inputs())
      inputs.emplace(name, from_tensor_proto(proto, name, options_.rest_api_max_body_bytes));
    check_inputs(inputs, target.signature->inputs());
    TensorMap results = predictor_.run(target, std::move(inputs), deadline);
    for (const saved_model::TensorInfo* info : outputs) {
      auto it = results.find(info->name);
      if (it == results.end()) fail(Code::Internal, fmt::format("the model returned no output '{}'", info->name));
      to_tensor_proto(it->second, (*response->mutable_outputs())[info->name]);
    }
    fill_spec(*response->mutable_model_spec(), spec.name(), target.servable->version(), target.signature_name);
  });
}

grpc::Status PredictionServiceImpl::GetModelMetadata(grpc::ServerContext*, const tfs::GetModelMetadataRequest* request,
                                                     tfs::GetModelMetadataResponse* response) {
  const tfs::ModelSpec& spec = request->model_spec();
  return handle(models_, metrics_, spec.name(), "GetModelMetadata", [&] {
    check_spec(spec, request->has_model_spec());
    if (request->metadata_field().empty())
      fail(Code::InvalidArgument, "GetModelMetadataRequest must specify at least one metadata_field");
    for (const std::string& field : request->metadata_field())
      if (field != "signature_def") fail(Code::InvalidArgument, fmt::format("Metadata field {} is not supported", field));
    std::shared_ptr<const Servable> servable = models_.servable(spec.name(), version_ref(spec));
    tfs::SignatureDefMap defs;
    auto add = [](const saved_model::TensorInfo& info, google::protobuf::Map<std::string, tensorflow::TensorInfo>& to) {
      tensorflow::TensorInfo& t = to[info.name];
      t.set_name(info.tensor_name);
      t.set_dtype(proto_dtype(info.dtype));
      to_shape_proto(info.shape, *t.mutable_tensor_shape());
    };
    for (const auto& [name, sig] : servable->model().signatures()) {
      tensorflow::SignatureDef& def = (*defs.mutable_signature_def())[name];
      for (const auto& info : sig.inputs()) add(info, *def.mutable_inputs());
      for (const auto& info : sig.outputs()) add(info, *def.mutable_outputs());
      def.set_method_name("tensorflow/serving/predict");
    }
    (*response->mutable_metadata())["signature_def"].PackFrom(defs);
    fill_spec(*response->mutable_model_spec(), spec.name(), servable->version(), "");
  });
}

grpc::Status ModelServiceImpl::GetModelStatus(grpc::ServerContext*, const tfs::GetModelStatusRequest* request,
                                              tfs::GetModelStatusResponse* response) {
  const tfs::ModelSpec& spec = request->model_spec();
  return handle(models_, metrics_, spec.name(), "GetModelStatus", [&] {
    check_spec(spec, request->has_model_spec());
    for (const VersionStatus& v : models_.status(spec.name(), version_ref(spec))) {
      tfs::ModelVersionStatus& s = *response->add_model_version_status();
      s.set_version(v.version);
      s.set_state(v.state == "AVAILABLE" ? tfs::ModelVersionStatus::AVAILABLE
                  : v.state == "LOADING" ? tfs::ModelVersionStatus::LOADING
                                         : tfs::ModelVersionStatus::END);
      s.mutable_status()->set_error_code(v.ok ? tensorflow::error::OK
                                              : static_cast<tensorflow::error::Code>(grpc_code(v.code)));
      s.mutable_status()->set_error_message(v.error);
    }
  });
}

}  // namespace kiln::serve
