#pragma once
// Runs a loaded model's signatures on small inputs, so that fuzzing reaches
// the kernels and not only the loader: the libFuzzer target and the corpus
// test (tests/saved_model_corpus_test.cpp) share it.
#include <cstddef>
#include <map>
#include <string>

#include "core/allocator.h"
#include "graph_ops/control_flow_ops.h"
#include "kiln/cancellation.h"
#include "kiln/saved_model.h"
#include "kiln/tensor.h"

namespace kiln::fuzz {

// The limits a fuzz run works under, for its lifetime (the fuzz targets hold
// one for good; the corpus tests one per test): a hostile model's huge
// tensor (a Fill of 2^33 floats) is ResourceExhausted at 1 GiB, before
// libFuzzer's malloc limit (-rss_limit_mb) calls it a crash, and its loop of
// 2^31 legal iterations is ResourceExhausted after 10,000, before libFuzzer's
// -timeout does.
struct FuzzLimits {
  FuzzLimits() {
    core::set_max_allocation_bytes(std::size_t{1} << 30);
    graph_ops::set_max_while_iterations(10000);
  }
  ~FuzzLimits() {
    core::set_max_allocation_bytes(0);
    graph_ops::set_max_while_iterations(0);
  }
  FuzzLimits(const FuzzLimits&) = delete;
  FuzzLimits& operator=(const FuzzLimits&) = delete;
};

// An input for `info`: unknown dims are 1, an unknown rank a scalar; values
// are 1 (true, "a"), so loops bounded by an input stay short. Undefined when
// the spec cannot be fed (a resource, or more than `max_elements`).
inline Tensor small_input(const saved_model::TensorInfo& info, int64_t max_elements = 4096) {
  if (info.dtype == DType::Resource) return {};
  Shape shape;
  if (info.shape.has_known_rank()) {
    int64_t n = 1;
    for (int64_t d : info.shape.dims()) {
      int64_t dim = d < 0 ? 1 : d;
      if (dim > max_elements || (n *= dim) > max_elements) return {};
      shape.push_back(dim);
    }
  }
  Scalar one = info.dtype == DType::String ? Scalar("a") : info.dtype == DType::Bool ? Scalar(true) : Scalar(1);
  return fill(shape, one, info.dtype);
}

// Runs `sig` on small inputs; false, not run, when one cannot be fed.
// kiln::Error (a hostile model's bad sizes, failed asserts) propagates to the
// caller; the fuzz targets catch it, the corpus tests check it. A run past 3
// s (a long loop under the iteration limit) is DeadlineExceeded, before
// libFuzzer's -timeout calls it a hang.
inline bool run_signature(const saved_model::LoadedSignature& sig) {
  std::map<std::string, Tensor> inputs;
  for (const saved_model::TensorInfo& info : sig.inputs()) {
    Tensor t = small_input(info);
    if (!t.defined()) return false;
    inputs.emplace(info.name, t);
  }
  sig(inputs, {.timeout = std::chrono::seconds(3)});
  return true;
}

// Runs every signature that small inputs can feed; how many ran.
inline int run_signatures(const saved_model::Loaded& model) {
  int ran = 0;
  for (const auto& [name, sig] : model.signatures()) ran += run_signature(sig) ? 1 : 0;
  return ran;
}

}  // namespace kiln::fuzz
