#pragma once
// The predict path both APIs share: find the model version and signature a
// request names, bound the predictions waiting (RESOURCE_EXHAUSTED beyond
// --rest_api_max_pending_requests, REST and gRPC together), run them (through
// the signature's batcher when batching is on) and enforce the deadline. The
// APIs only translate their request and response formats.
#include <atomic>
#include <memory>
#include <string>

#include "model_manager.h"
#include "options.h"

namespace kiln::serve {

class Predictor {
 public:
  Predictor(const Options& options, ModelRegistry& models) : options_(options), models_(models) {}

  // The version and signature a request names ("" is "serving_default").
  struct Target {
    std::shared_ptr<const Servable> servable;  // held until the response is written
    std::string signature_name;
    const saved_model::LoadedSignature* signature = nullptr;
  };
  Target find(const std::string& model, const VersionRef& ref, const std::string& signature_name) const;

  // Runs the target's signature on inputs already checked against it.
  TensorMap run(const Target& target, TensorMap inputs, Clock::time_point deadline);

 private:
  const Options& options_;
  ModelRegistry& models_;
  std::atomic<int64_t> pending_{0};
};

// Checks the request's tensors against the signature's inputs: the same
// names, each of the input's dtype and a shape that fits its (an unknown dim
// takes any size). InvalidArgument naming what differs.
void check_inputs(const TensorMap& inputs, const std::vector<saved_model::TensorInfo>& infos);

}  // namespace kiln::serve
