#pragma once
// Optimizers, as Keras': SGD (with momentum), Adam, AdamW, RMSprop and
// Adagrad, each with Keras 2.11's gradient clipping and decoupled weight
// decay (UpdateOptions). Their state (the step
// count, the learning rate, one or two slots per variable) lives in
// Variables created on the first apply_gradients, so a training step works
// eagerly and inside kiln::function (where the first trace creates them).
// The learning rate is a number or a schedule (schedules.h) of the step count.
//
//   kiln::nn::Adam opt(1e-3);   // or opt(kiln::nn::ExponentialDecay(1e-3, 1000, 0.96))
//   opt.apply_gradients(grads, model.trainable_variables());
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/module.h"
#include "kiln/nn/schedules.h"
#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln::nn {

// What every optimizer does to the gradients and variables around its own
// update, as Keras 2.11's optimizer arguments of the same names: each
// gradient clipped to norm `clipnorm` (tf.clip_by_norm), then all of them
// to global norm `global_clipnorm` (tf.clip_by_global_norm), then each
// element to [-clipvalue, clipvalue]; and var -= var * weight_decay * lr
// before the update (decoupled weight decay, Loshchilov & Hutter).
struct UpdateOptions {
  std::optional<double> clipnorm, clipvalue, global_clipnorm;
  double weight_decay = 0;
};

class Optimizer : public Module {
 public:
  // Updates vars[i] with grads[i]. An undefined grads[i] skips vars[i] (no
  // gradient flows to it); a grad must have its variable's dtype and shape.
  // The step count advances once per call.
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& vars,
                       SourceLocation loc = SourceLocation::current());

  // The number of apply_gradients calls so far (int64); null before the first.
  const Variable& iterations() const { return iterations_; }
  // The rate the next update applies: the number given, or the schedule's
  // rate at iterations() (computed eagerly).
  double learning_rate() const;
  // Null unless the optimizer was given one.
  const std::shared_ptr<const LearningRateSchedule>& learning_rate_schedule() const {
    return learning_rate_.schedule();
  }
  // Takes effect in traced functions too: the rate is a Variable. Not for an
  // optimizer given a schedule (FailedPrecondition).
  void set_learning_rate(double learning_rate);
  // The slot `slot_name` ("momentum", "m", "v") of `var`; a null Variable
  // when there is none.
  Variable slot(const Variable& var, std::string_view slot_name) const;

 protected:
  // `slot_names`: the slots made for every variable on its first
  // apply_gradients, in the order apply_dense receives them.
  // `slot_initial_value`: every slot's initial value (Adagrad's accumulator).
  Optimizer(std::string name, LearningRate learning_rate, std::vector<std::string> slot_names, UpdateOptions update,
            double slot_initial_value = 0);
  // The rate this step applies, from `lr` (the learning rate in a variable
  // dtype) and `step` (the 1-based step count, int64). Computed once per
  // dtype per apply_gradients, not once per variable. Default: `lr`.
  virtual Tensor step_rate(const Tensor& lr, const Tensor& /*step*/, SourceLocation) const { return lr; }
  // One variable's update; `rate` is step_rate's, in the variable's dtype.
  virtual void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots,
                           const Tensor& rate, SourceLocation loc) = 0;

 private:
  void create_state(const std::vector<Variable>& vars);
  std::vector<Tensor> clipped(const std::vector<Tensor>& grads, SourceLocation loc) const;

  // As given. A number is the "learning_rate" variable's initial value:
  // once that variable exists it is the rate (set_learning_rate assigns it,
  // and so may a user or a restore), as Keras' optimizer variable.
  LearningRate learning_rate_;
  std::vector<std::string> slot_names_;
  UpdateOptions update_;
  double slot_initial_value_;
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
  UpdateOptions update;
};
class SGD : public Optimizer {
 public:
  explicit SGD(LearningRate learning_rate = 0.01, SGDOptions options = {});

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
  UpdateOptions update;
};
class Adam : public Optimizer {
 public:
  explicit Adam(LearningRate learning_rate = 0.001, AdamOptions options = {});

 protected:
  // lr * sqrt(1 - beta2^t) / (1 - beta1^t).
  Tensor step_rate(const Tensor& lr, const Tensor& step, SourceLocation loc) const override;
  void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots, const Tensor& rate,
                   SourceLocation loc) override;

 private:
  double beta_1_, beta_2_, epsilon_;
};

// Adam with decoupled weight decay (Keras' AdamW; its weight_decay wins over
// options.update.weight_decay).
class AdamW : public Adam {
 public:
  explicit AdamW(LearningRate learning_rate = 0.001, double weight_decay = 0.004, AdamOptions options = {.name = "AdamW"});
};

// Keras' RMSprop (not centered):
//   ms = rho * ms + (1 - rho) * grad^2
//   momentum 0:  var -= lr * grad / (sqrt(ms) + epsilon)
//   else:        mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom
struct RMSpropOptions {
  double rho = 0.9;
  double momentum = 0.0;
  double epsilon = 1e-7;
  std::string name = "RMSprop";
  UpdateOptions update;
};
class RMSprop : public Optimizer {
 public:
  explicit RMSprop(LearningRate learning_rate = 0.001, RMSpropOptions options = {});

 protected:
  void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots, const Tensor& rate,
                   SourceLocation loc) override;

 private:
  double rho_, momentum_, epsilon_;
};

// Keras' Adagrad: acc += grad^2 (acc starts at initial_accumulator_value);
// var -= lr * grad / sqrt(acc + epsilon).
struct AdagradOptions {
  double initial_accumulator_value = 0.1;
  double epsilon = 1e-7;
  std::string name = "Adagrad";
  UpdateOptions update;
};
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(LearningRate learning_rate = 0.001, AdagradOptions options = {});

 protected:
  void apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots, const Tensor& rate,
                   SourceLocation loc) override;

 private:
  double epsilon_;
};

}  // namespace kiln::nn
