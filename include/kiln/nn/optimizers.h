#pragma once
// Optimizers, as Keras': SGD (with momentum) and Adam. Their state (the step
// count, the learning rate, one or two slots per variable) lives in
// Variables created on the first apply_gradients, so a training step works
// eagerly and inside kiln::function (where the first trace creates them).
//
//   kiln::nn::Adam opt(1e-3);
//   opt.apply_gradients(grads, model.trainable_variables());
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/module.h"
#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln::nn {

class Optimizer : public Module {
 public:
  // Updates vars[i] with grads[i]. An undefined grads[i] skips vars[i] (no
  // gradient flows to it); a grad must have its variable's dtype and shape.
  // The step count advances once per call.
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& vars,
                       SourceLocation loc = SourceLocation::current());

  // The number of apply_gradients calls so far (int64); null before the first.
  const Variable& iterations() const { return iterations_; }
  double learning_rate() const { return learning_rate_; }
  // Takes effect in traced functions too: the rate is a Variable.
  void set_learning_rate(double learning_rate);
  // The slot `slot_name` ("momentum", "m", "v") of `var`; a null Variable
  // when there is none.
  Variable slot(const Variable& var, std::string_view slot_name) const;

 protected:
  // `slot_names`: the slots made for every variable on its first
  // apply_gradients, in the order apply_dense receives them.
  Optimizer(std::string name, double learning_rate, std::vector<std::string> slot_names);
  // The rate this step applies, from `lr` (the learning rate in a variable
  // dtype) and `step` (the 1-based step count, int64). Computed once per
  // dtype per apply_gradients, not once per variable. Default: `lr`.
  virtual Tensor step_rate(const Tensor& lr, const Tensor& /*step*/, SourceLocation) const { return lr; }
  // One variable's update; `rate` is step_rate's, in the variable's dtype.
  virtual void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots,
                           const Tensor& rate, SourceLocation loc) = 0;

 private:
  void create_state(const std::vector<Variable>& vars);

  double learning_rate_;
  std::vector<std::string> slot_names_;
  Variable iterations_, learning_rate_var_;
  // Slots by the variable they belong to (its state, which is the same for
  // every handle of the variable, traced or not).
  std::unordered_map<const void*, std::vector<Variable>> slots_;
};

// Stochastic gradient descent, Keras' formula:
//   momentum 0:  var -= lr * grad
//   else:        velocity = momentum * velocity - lr * grad; var += velocity
// (nesterov: var += momentum * velocity - lr * grad).
struct SGDOptions {
  double momentum = 0.0;
  bool nesterov = false;
  std::string name = "SGD";
};
class SGD : public Optimizer {
 public:
  explicit SGD(double learning_rate = 0.01, SGDOptions options = {});

 protected:
  void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots, const Tensor& rate,
                   SourceLocation loc) override;

 private:
  double momentum_;
  bool nesterov_;
};

// Adam (Kingma & Ba), Keras' formula with epsilon outside the square root:
//   m = beta1 * m + (1 - beta1) * grad
//   v = beta2 * v + (1 - beta2) * grad^2
//   var -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)
struct AdamOptions {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
  std::string name = "Adam";
};
class Adam : public Optimizer {
 public:
  explicit Adam(double learning_rate = 0.001, AdamOptions options = {});

 protected:
  // lr * sqrt(1 - beta2^t) / (1 - beta1^t).
  Tensor step_rate(const Tensor& lr, const Tensor& step, SourceLocation loc) const override;
  void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots, const Tensor& rate,
                   SourceLocation loc) override;

 private:
  double beta_1_, beta_2_, epsilon_;
};

}  // namespace kiln::nn
