#pragma once
// kiln::InitScope: ops written during its lifetime run eagerly even while a
// kiln::function traces, as TF's tf.init_scope. It is for values computed
// once, such as the initial values of the variables a layer creates on its
// first call: computed here, they exist at once, so the variable has a value
// even when the function's first trace never runs (get_concrete_function).
// Tensors of the graph being traced cannot be used inside the scope.
namespace kiln {

namespace detail {
class DispatchHandler;
}

// The same save/clear/restore as runtime::DispatchHandlerGuard(nullptr), kept
// out of this public header.
class InitScope {
 public:
  InitScope();
  ~InitScope();
  InitScope(const InitScope&) = delete;
  InitScope& operator=(const InitScope&) = delete;

 private:
  detail::DispatchHandler* saved_;  // the tracing handler, restored on exit
};

}  // namespace kiln
