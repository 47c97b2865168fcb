#include "servable.h"

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "kiln/error.h"
#include "status.h"

namespace kiln::serve {

namespace {

// A signature can be batched when each input has a known rank >= 1 and an
// unknown first dim (the batch).
bool batchable(const saved_model::LoadedSignature& sig) {
  if (sig.inputs().empty()) return false;
  for (const auto& info : sig.inputs())
    if (!info.shape.has_known_rank() || info.shape.rank() < 1 || info.shape[0] >= 0) return false;
  return true;
}

// Zeros (empty strings) of the input's shape, an unknown dim taken as 1.
Tensor warmup_input(const saved_model::TensorInfo& info) {
  std::vector<int64_t> dims;
  if (info.shape.has_known_rank())
    for (int64_t d : info.shape) dims.push_back(d < 0 ? 1 : d);
  Tensor t = core::make_tensor(info.dtype, Shape(dims));
  if (info.dtype == DType::String) return t;
  if (info.dtype == DType::Resource) throw ServeError(Code::FailedPrecondition, "a signature takes a resource input");
  std::memset(core::raw_data(t), 0, static_cast<std::size_t>(t.size()) * dtype_size(info.dtype));
  return t;
}

}  // namespace

void rethrow_as_serve_error(const std::string& context) {
  const std::string prefix = context.empty() ? "" : context + ": ";
  try {
    throw;
  } catch (const ServeError&) {
    throw;
  } catch (const InvalidArgument& e) {
    fail(Code::InvalidArgument, prefix + e.what());
  } catch (const FailedPrecondition& e) {
    fail(Code::FailedPrecondition, prefix + e.what());
  } catch (const OutOfRange& e) {
    fail(Code::InvalidArgument, prefix + e.what());
  } catch (const NotFound& e) {
    fail(Code::NotFound, prefix + e.what());
  } catch (const Unimplemented& e) {
    fail(Code::Unimplemented, prefix + e.what());
  } catch (const ResourceExhausted& e) {
    fail(Code::ResourceExhausted, prefix + e.what());
  } catch (const std::exception& e) {
    fail(Code::Internal, prefix + e.what());
  }
}

Servable::Servable(const std::string& model_name, int64_t version, const std::string& path, const Options& options,
                   Metrics& metrics, CallSlots& slots)
    : version_(version), slots_(slots) {
  try {
    model_ = saved_model::load(path);
    for (const auto& [name, sig] : model_.signatures()) {
      TensorMap inputs;
      for (const auto& info : sig.inputs()) inputs.emplace(info.name, warmup_input(info));
      call(sig, inputs);
    }
  } catch (...) {
    rethrow_as_serve_error(fmt::format("version {} of model '{}' ({})", version, model_name, path));
  }
  if (!options.batching.enabled) return;
  for (const auto& [name, sig] : model_.signatures())
    if (batchable(sig)) {
      const saved_model::LoadedSignature* s = &sig;
      batchers_.emplace(name, std::make_unique<Batcher>([this, s](const TensorMap& in) { return call(*s, in); },
                                                        options.batching, metrics, model_name));
    }
}

const saved_model::LoadedSignature& Servable::signature(const std::string& name) const {
  auto it = model_.signatures().find(name);
  if (it == model_.signatures().end()) fail(Code::FailedPrecondition, fmt::format("Serving signature key \"{}\" not found.", name));
  return it->second;
}

TensorMap Servable::call(const saved_model::LoadedSignature& signature, const TensorMap& inputs) const {
  try {
    CallSlots::Hold hold(slots_);
    return signature(inputs);
  } catch (...) {
    rethrow_as_serve_error("");
  }
}

TensorMap Servable::predict(const std::string& signature_name, TensorMap inputs, Clock::time_point deadline) const {
  const saved_model::LoadedSignature& sig = signature(signature_name);
  if (auto it = batchers_.find(signature_name); it != batchers_.end()) return it->second->run(std::move(inputs), deadline);
  return call(sig, inputs);
}

}  // namespace kiln::serve
