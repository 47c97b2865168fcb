#pragma once
// The one dispatch point (DESIGN.md §4). Every public op function packs its
// attrs and calls dispatch(); a thread-local handler decides whether the op
// runs now (eager) or is recorded into a graph (tracing).
#include <atomic>
#include <span>

#include "core/small_vector.h"
#include "ops/op_def.h"

namespace kiln::detail {

using TensorList = SmallVector<Tensor, 2>;

// Receives ops instead of eager execution: kiln::function's tracing context.
class DispatchHandler {
 public:
  virtual ~DispatchHandler() = default;
  virtual TensorList dispatch(const OpDef& op, std::span<const Tensor> inputs, Attrs&& attrs,
                              const SourceLocation& loc) = 0;
  // A Variable was created while this handler was active.
  virtual void variable_created() {}
};

struct ThreadState {
  DispatchHandler* handler = nullptr;
};
inline thread_local ThreadState thread_state;

// Sets the handler for the current thread for the lifetime of the guard.
class DispatchHandlerGuard {
 public:
  explicit DispatchHandlerGuard(DispatchHandler* handler) : saved_(thread_state.handler) {
    thread_state.handler = handler;
  }
  ~DispatchHandlerGuard() { thread_state.handler = saved_; }
  DispatchHandlerGuard(const DispatchHandlerGuard&) = delete;
  DispatchHandlerGuard& operator=(const DispatchHandlerGuard&) = delete;

 private:
  DispatchHandler* saved_;
};

// Runs `op` now on concrete inputs: infer, allocate, kernel. An input whose
// only handle is its entry in `inputs` may be overwritten by an in-place
// kernel: callers pass handles they drop afterwards (or hold copies). `loc`
// (where the op was written) only serves error messages.
TensorList run_eager(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
                     const SourceLocation* loc = nullptr);

// The part of run_eager after inference: allocate outputs of `types` (or let
// the kernel set them), run the kernel. The executor calls it directly for
// steps whose types are known when the plan is built.
TensorList run_kernel(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs,
                      std::span<const TensorType> types, const SourceLocation* loc = nullptr);

// kiln::debugging::enable_check_numerics: every op's float outputs are
// checked for NaN and Inf.
extern std::atomic<bool> check_numerics_enabled;

inline TensorList dispatch(const OpDef& op, std::span<const Tensor> inputs, Attrs&& attrs,
                           const SourceLocation& loc) {
  if (DispatchHandler* h = thread_state.handler) [[unlikely]]
    return h->dispatch(op, inputs, std::move(attrs), loc);
  return run_eager(op, inputs, attrs, &loc);
}

// For ops with exactly one output.
inline Tensor dispatch1(const OpDef& op, std::span<const Tensor> inputs, Attrs&& attrs,
                        const SourceLocation& loc) {
  TensorList out = dispatch(op, inputs, std::move(attrs), loc);
  return std::move(out[0]);
}

// Throws InvalidArgument (naming `op_name`) when `dtype` cannot hold `value`
// exactly: 1.5 as int32, 300 as uint8, a number as a string.
void check_representable(const Scalar& value, DType dtype, std::string_view op_name);

// A C++ scalar as a tensor of `dtype`, raising InvalidArgument (naming
// `op_name`) when `dtype` cannot hold the value exactly (1.5 as int32).
Tensor scalar_to_tensor(const Scalar& value, DType dtype, std::string_view op_name,
                        const SourceLocation& loc);

// The two inputs of a binary op: a weakly typed scalar takes the other
// operand's dtype; two tensors keep theirs (the op checks they agree).
struct BinaryInputs {
  Tensor inputs[2];
};
BinaryInputs binary_inputs(const Operand& a, const Operand& b, std::string_view op_name);

}  // namespace kiln::detail
