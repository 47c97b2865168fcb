#pragma once
// One loaded version of the model: the saved model, warmed up (each
// signature called once, so the first request pays no trace or plan
// building), and, with batching on, a Batcher per signature that can batch.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "batcher.h"
#include "call_slots.h"
#include "kiln/saved_model.h"
#include "metrics.h"
#include "options.h"
#include "tensor_json.h"

namespace kiln::serve {

class Servable {
 public:
  // Loads DIR/<version> and warms it up; throws ServeError naming what failed.
  Servable(const std::string& model_name, int64_t version, const std::string& path, const Options& options,
           Metrics& metrics, CallSlots& slots);
  Servable(const Servable&) = delete;
  Servable& operator=(const Servable&) = delete;

  int64_t version() const { return version_; }
  const saved_model::Loaded& model() const { return model_; }
  // The signature; FailedPrecondition when there is none of that name.
  const saved_model::LoadedSignature& signature(const std::string& name) const;
  // Runs the signature on `inputs` (checked against it by the caller),
  // batched with other requests when the signature can be.
  TensorMap predict(const std::string& signature_name, TensorMap inputs, Clock::time_point deadline) const;

 private:
  TensorMap call(const saved_model::LoadedSignature& signature, const TensorMap& inputs) const;

  int64_t version_;
  CallSlots& slots_;
  saved_model::Loaded model_;
  // Batchers last: destroyed first, so their threads end before the model goes.
  std::map<std::string, std::unique_ptr<Batcher>> batchers_;
};

// A kiln::Error (or another exception) as a ServeError with TF's code.
[[noreturn]] void rethrow_as_serve_error(const std::string& context);

}  // namespace kiln::serve
