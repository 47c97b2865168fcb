#pragma once
// Automatic differentiation (docs/design-notes.md, "Autodiff"): GradientTape records the ops that
// touch watched tensors and variables, eagerly or while tracing, and replays
// them backwards through each op's registered gradient. Gradient code is made
// of ordinary ops, so inside kiln::function the backward pass is part of the
// graph, and a tape can record another tape's gradient (higher orders).
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln {

namespace detail {
struct TapeState;
}

// What a gradient is taken with respect to: a Tensor or a Variable.
class GradientSource {
 public:
  GradientSource(const Tensor& tensor) : tensor_(tensor) {}
  GradientSource(const Variable& variable) : tensor_(variable.handle()), variable_(variable) {}
  const Tensor& tensor() const { return tensor_; }
  const Variable* variable() const { return variable_ ? &variable_ : nullptr; }

 private:
  Tensor tensor_;
  Variable variable_;
};

struct GradientTapeOptions {
  // A persistent tape allows several gradient() calls; otherwise the second
  // call is a FailedPrecondition error.
  bool persistent = false;
  // Trainable variables read while recording are watched without a watch().
  bool watch_accessed_variables = true;
};

class GradientTape {
 public:
  // Records from construction until gradient() (non-persistent tapes),
  // stop_recording() or destruction. Tapes nest: an outer tape records the ops
  // an inner tape's gradient() runs, which gives gradients of gradients.
  explicit GradientTape(GradientTapeOptions options = {});
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  void watch(const Tensor& tensor);
  void watch(const Variable& variable);
  // The variables this tape watched, in the order they were first watched.
  std::vector<Variable> watched_variables() const;

  // Pauses recording until the returned guard is destroyed.
  class Pause {
   public:
    explicit Pause(detail::TapeState* state);
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    detail::TapeState* state_;
    bool was_recording_;
  };
  [[nodiscard]] Pause stop_recording();

  // d(sum of targets)/d(source) for each source: a target that is not a scalar
  // is summed, as in TF, unless its output gradient is given (same shape).
  // A source the targets do not depend on (or an integer one) gets an
  // undefined Tensor (`!result.defined()`), by choice, rather than zeros.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets,
                               const std::vector<GradientSource>& sources,
                               const std::vector<Tensor>& output_gradients = {});
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<GradientSource>& sources);
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Variable>& sources);
  // tape.gradient(loss, {w, b}) with Tensors and Variables mixed.
  std::vector<Tensor> gradient(const Tensor& target, std::initializer_list<GradientSource> sources) {
    return gradient(target, std::vector<GradientSource>(sources));
  }
  Tensor gradient(const Tensor& target, const GradientSource& source);

 private:
  std::unique_ptr<detail::TapeState> state_;
};

// JAX's value_and_grad for a function of tensors: the returned callable gives
// (f(args...), the gradient of f with respect to each argument). Works
// eagerly and inside kiln::function.
//
//   auto vg = kiln::value_and_grad([](const Tensor& x) { return sum(x * x); });
//   auto [value, grads] = vg(kiln::constant({1.f, 2.f}));   // 5, {[2, 4]}
template <class F> auto value_and_grad(F f) {
  return [f = std::move(f)](const auto&... args) {
    GradientTape tape;
    (tape.watch(args), ...);
    Tensor value = f(args...);
    std::vector<Tensor> grads = tape.gradient(value, std::vector<GradientSource>{GradientSource(args)...});
    return std::pair<Tensor, std::vector<Tensor>>{value, std::move(grads)};
  };
}

// TF's tf.gradients, for code being traced (kiln::function, a cond branch,
// a loop body): the symbolic gradient of sum(ys) (each y weighted by its
// grad_ys entry when given) with respect to each x, built from the nodes
// traced so far. xs may be any tensors of the graph (parameters, intermediate
// values, captures) or variables it reads. No gradient flows through a value
// in `stop_gradients` to what computes it (it still gets its own gradient
// when it is an x). An x the ys do not depend on gets an undefined Tensor.
// Outside a trace it is a FailedPrecondition error: use a GradientTape.
std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<GradientSource>& xs,
                              const std::vector<Tensor>& grad_ys = {},
                              const std::vector<Tensor>& stop_gradients = {});

// The identity, through which no gradient flows.
Tensor stop_gradient(Tensor x, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
