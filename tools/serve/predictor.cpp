#include "predictor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace kiln::serve {

Predictor::Target Predictor::find(const std::string& model, const VersionRef& ref,
                                  const std::string& signature_name) const {
  Target t;
  t.servable = models_.servable(model, ref);
  t.signature_name = signature_name.empty() ? "serving_default" : signature_name;
  t.signature = &t.servable->signature(t.signature_name);
  return t;
}

TensorMap Predictor::run(const Target& target, TensorMap inputs, Clock::time_point deadline) {
  if (++pending_ > options_.rest_api_max_pending_requests) {
    --pending_;
    fail(Code::ResourceExhausted, fmt::format("Too many requests: {} predictions are already waiting",
                                              options_.rest_api_max_pending_requests));
  }
  struct Release {
    std::atomic<int64_t>& n;
    ~Release() { --n; }
  } release{pending_};
  if (Clock::now() > deadline) fail(Code::DeadlineExceeded, "Deadline exceeded");
  TensorMap outputs = target.servable->predict(target.signature_name, std::move(inputs), deadline);
  if (Clock::now() > deadline) fail(Code::DeadlineExceeded, "Deadline exceeded");
  return outputs;
}

void check_inputs(const TensorMap& inputs, const std::vector<saved_model::TensorInfo>& infos) {
  std::set<std::string> want, sent, missing, extra;
  for (const auto& info : infos) want.insert(info.name);
  for (const auto& [name, t] : inputs) sent.insert(name);
  std::set_difference(want.begin(), want.end(), sent.begin(), sent.end(), std::inserter(missing, missing.end()));
  std::set_difference(sent.begin(), sent.end(), want.begin(), want.end(), std::inserter(extra, extra.end()));
  if (!missing.empty() || !extra.empty())
    fail(Code::InvalidArgument,
         fmt::format("input size does not match signature: {}!={} len({{{}}}) != len({{{}}}). Sent extra: {{{}}}. "
                     "Missing but required: {{{}}}.",
                     sent.size(), want.size(), fmt::join(sent, ","), fmt::join(want, ","), fmt::join(extra, ","),
                     fmt::join(missing, ",")));
  for (const auto& info : infos) {
    const Tensor& t = inputs.at(info.name);
    if (t.dtype() != info.dtype)
      fail(Code::InvalidArgument, fmt::format("Expects arg[{}] to be {} but {} is provided", info.name,
                                              tf_type_name(info.dtype), tf_type_name(t.dtype())));
    check_shape_fits(info, t.shape());
  }
}

}  // namespace kiln::serve
