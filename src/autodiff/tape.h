#pragma once
// GradientTape's state (docs/design-notes.md, "Autodiff"). A tape records, in program order, the
// ops whose inputs depend on what it watches, in the dispatch context it was
// created in (eager, or one graph being traced): ops inside a nested graph
// belong to that graph's own op (If, While, Call), which is recorded instead.
#include <unordered_set>
#include <vector>

#include "kiln/gradient.h"
#include "runtime/dispatch.h"

namespace kiln::autodiff {

// One recorded op.
struct TapeEntry {
  const detail::OpDef* op;
  detail::SmallVector<Tensor, 3> inputs;
  runtime::TensorList outputs;
  schema::Attrs attrs;
};

}  // namespace kiln::autodiff

namespace kiln::detail {

struct TapeState {
  GradientTapeOptions options;
  DispatchHandler* context = nullptr;  // the handler the tape was created under
  bool recording = true;
  bool used = false;  // gradient() was called (non-persistent tapes allow one)
  // Tensors that depend on a watched tensor or variable, by identity; the
  // tape holds each of them (in `entries` or `watched_tensors`), so an id is
  // never reused while it is here.
  std::unordered_set<const TensorImpl*> watched;
  std::vector<Tensor> watched_tensors;
  std::vector<Variable> variables;
  std::vector<autodiff::TapeEntry> entries;

  void watch(const Tensor& t);
  void watch(const Variable& v);
  bool watches_any(std::span<const Tensor> inputs) const;
  void add(const OpDef& op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
           const schema::Attrs& attrs);
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, const std::vector<GradientSource>& sources,
                               const std::vector<Tensor>& output_gradients);
};

}  // namespace kiln::detail
