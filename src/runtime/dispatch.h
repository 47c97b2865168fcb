#pragma once
// The one dispatch point (docs/architecture.md, "The life of an op"). Every public op function packs its
// attrs and calls dispatch(); a thread-local handler decides whether the op
// runs now (eager) or is recorded into a graph (tracing).
#include <atomic>
#include <span>

#include "core/small_vector.h"
#include "runtime/profiler.h"
#include "schema/op_def.h"

namespace kiln {
class Variable;
}

namespace kiln::runtime {

using TensorList = detail::SmallVector<Tensor, 2>;

}  // namespace kiln::runtime

namespace kiln::detail {

// Receives ops instead of eager execution: kiln::function's tracing context.
class DispatchHandler {
 public:
  virtual ~DispatchHandler() = default;
  virtual runtime::TensorList dispatch(const OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                                       const SourceLocation& loc) = 0;
  // A Variable was created while this handler was active.
  virtual void variable_created() {}
};

}  // namespace kiln::detail

namespace kiln::runtime {

// Sees every op while at least one GradientTape is alive on this thread
// (docs/design-notes.md, "Autodiff"). The tape machinery lives in src/autodiff; the dispatch point
// only knows this hook.
class TapeHook {
 public:
  virtual ~TapeHook() = default;
  // Runs the op (through the handler, or eagerly) and records it on the tapes
  // that watch one of its inputs.
  virtual TensorList dispatch(const detail::OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                              const SourceLocation& loc) = 0;
  // Records an op that already ran (a Function called eagerly runs its graph
  // directly, then is recorded as one Call op). Its outputs are tensors of
  // their own (Plan::run gives them their identities), never its inputs.
  virtual void record(const detail::OpDef& op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                      const schema::Attrs& attrs) = 0;
  // A Variable was read: tapes that watch accessed variables watch it.
  virtual void variable_accessed(const Variable& variable) = 0;
};

struct ThreadState {
  detail::DispatchHandler* handler = nullptr;
  TapeHook* tapes = nullptr;  // set while a tape is alive on this thread
};
inline thread_local ThreadState thread_state;

// Sets the handler for the current thread for the lifetime of the guard.
class DispatchHandlerGuard {
 public:
  explicit DispatchHandlerGuard(detail::DispatchHandler* handler) : saved_(thread_state.handler) {
    thread_state.handler = handler;
  }
  ~DispatchHandlerGuard() { thread_state.handler = saved_; }
  DispatchHandlerGuard(const DispatchHandlerGuard&) = delete;
  DispatchHandlerGuard& operator=(const DispatchHandlerGuard&) = delete;

 private:
  detail::DispatchHandler* saved_;
};

// Runs `op` now on concrete inputs: infer, allocate, kernel. An input whose
// only handle is its entry in `inputs` may be overwritten by an in-place
// kernel: callers pass handles they drop afterwards (or hold copies). `loc`
// (where the op was written) only serves error messages. `consumable`: see
// schema::KernelContext (a plan passes it to kConsumesInputs ops).
TensorList run_eager(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                     const SourceLocation* loc = nullptr, std::span<Tensor> consumable = {});

// The part of run_eager after inference: allocate outputs of `types` (or let
// the kernel set them), run the kernel. The executor calls it directly for
// steps whose types are known when the plan is built.
TensorList run_kernel(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                      std::span<const schema::TensorType> types, const SourceLocation* loc = nullptr,
                      std::span<Tensor> consumable = {});

// The kernel alone, on outputs the caller allocated with the inferred types
// (the executor places them in its arena); checks numerics when enabled.
void run_kernel_into(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                     TensorList& outputs, const SourceLocation* loc = nullptr);

// kiln::debugging::enable_check_numerics: every op's float outputs are
// checked for NaN and Inf.
extern std::atomic<bool> check_numerics_enabled;

// run_eager, recorded by the profiler (runtime/profiler.h).
TensorList run_eager_profiled(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                              const SourceLocation& loc);

// Runs `op` through the current handler, or eagerly; tapes do not see it.
inline TensorList dispatch_untaped(const detail::OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                                   const SourceLocation& loc) {
  if (detail::DispatchHandler* h = thread_state.handler) [[unlikely]]
    return h->dispatch(op, inputs, std::move(attrs), loc);
  if (profiling::on()) [[unlikely]]
    return run_eager_profiled(op, inputs, attrs, loc);
  return run_eager(op, inputs, attrs, &loc);
}

inline TensorList dispatch(const detail::OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                           const SourceLocation& loc) {
  if (TapeHook* tapes = thread_state.tapes) [[unlikely]]
    return tapes->dispatch(op, inputs, std::move(attrs), loc);
  return dispatch_untaped(op, inputs, std::move(attrs), loc);
}

// For ops with exactly one output.
inline Tensor dispatch1(const detail::OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                        const SourceLocation& loc) {
  TensorList out = dispatch(op, inputs, std::move(attrs), loc);
  return std::move(out[0]);
}

// Throws InvalidArgument (naming `op_name`) when `dtype` cannot hold `value`
// exactly: 1.5 as int32, 300 as uint8, a number as a string.
void check_representable(const Scalar& value, DType dtype, std::string_view op_name);

}  // namespace kiln::runtime
