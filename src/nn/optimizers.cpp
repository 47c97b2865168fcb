// Optimizers: state created on the first apply, clipping and weight decay,
// and the SGD, Adam, RMSprop and Adagrad updates.
#include "kiln/nn/optimizers.h"

#include <fmt/format.h>

#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "kiln/training_ops.h"

namespace kiln::nn {

Optimizer::Optimizer(std::string name, LearningRate learning_rate, std::vector<std::string> slot_names,
                     UpdateOptions update, double slot_initial_value)
    : Module(std::move(name)),
      learning_rate_(std::move(learning_rate)),
      slot_names_(std::move(slot_names)),
      update_(update),
      slot_initial_value_(slot_initial_value) {
  if (!(learning_rate_.value() >= 0))
    throw InvalidArgument(
        fmt::format("{}: learning_rate must be >= 0, got {}", this->name(), learning_rate_.value()));
  if (update_.clipnorm && update_.global_clipnorm)
    throw InvalidArgument(fmt::format("{}: at most one of clipnorm and global_clipnorm can be set, got clipnorm={} "
                                      "and global_clipnorm={}",
                                      this->name(), *update_.clipnorm, *update_.global_clipnorm));
  for (auto [label, value] : {std::pair{"clipnorm", update_.clipnorm}, {"clipvalue", update_.clipvalue},
                              {"global_clipnorm", update_.global_clipnorm},
                              {"weight_decay", std::optional<double>(update_.weight_decay)}})
    if (value && !(*value >= 0))
      throw InvalidArgument(fmt::format("{}: {} must be >= 0, got {}", this->name(), label, *value));
}

std::vector<Tensor> Optimizer::clipped(const std::vector<Tensor>& grads, SourceLocation loc) const {
  std::vector<Tensor> out = grads;
  auto norm = [&](const Tensor& g) { return sqrt(sum(square(g, loc)), loc); };
  if (update_.clipnorm)
    for (Tensor& g : out)
      if (g.defined()) g = g * (*update_.clipnorm / maximum(norm(g), *update_.clipnorm, loc));
  if (update_.global_clipnorm) {
    // Summed in float32 whatever the variables' dtypes, as tf.clip_by_global_norm's
    // one norm for all of them.
    Tensor squares;
    for (const Tensor& g : out)
      if (g.defined()) {
        Tensor sq = cast(sum(square(g, loc)), DType::Float32, loc);
        squares = squares.defined() ? squares + sq : sq;
      }
    Tensor scale = *update_.global_clipnorm / maximum(sqrt(squares, loc), *update_.global_clipnorm, loc);
    for (Tensor& g : out)
      if (g.defined()) g = g * cast(scale, g.dtype(), loc);
  }
  if (update_.clipvalue)
    for (Tensor& g : out)
      if (g.defined()) g = clip(g, -*update_.clipvalue, *update_.clipvalue, loc);
  return out;
}

double Optimizer::learning_rate() const {
  if (const auto& schedule = learning_rate_.schedule())
    return (*schedule)(iterations_ ? iterations_.read_value() : constant(int64_t{0})).item<float>();
  return learning_rate_var_ ? learning_rate_var_.read_value().item<float>() : learning_rate_.value();
}

void Optimizer::set_learning_rate(double learning_rate) {
  if (const auto& schedule = learning_rate_.schedule())
    throw FailedPrecondition(fmt::format("{}: this optimizer was created with a {} as its learning rate, hence its "
                                         "learning rate is not settable",
                                         name(), schedule->class_name()));
  if (!(learning_rate >= 0))
    throw InvalidArgument(fmt::format("{}: learning_rate must be >= 0, got {}", name(), learning_rate));
  if (learning_rate_var_)
    learning_rate_var_.assign(constant(static_cast<float>(learning_rate)));
  else
    learning_rate_ = learning_rate;
}

Variable Optimizer::slot(const Variable& var, std::string_view slot_name) const {
  if (!var) return {};
  auto it = slots_.find(var.state().get());
  if (it == slots_.end()) return {};
  for (std::size_t i = 0; i < slot_names_.size(); ++i)
    if (slot_names_[i] == slot_name) return it->second[i];
  return {};
}

void Optimizer::create_state(const std::vector<Variable>& vars) {
  if (!iterations_) {
    iterations_ = add_variable("iter", [] { return constant(int64_t{0}); }, /*trainable=*/false);
    learning_rate_var_ =
        add_variable("learning_rate", [this] { return constant(static_cast<float>(learning_rate())); }, false);
  }
  if (slot_names_.empty()) return;
  for (const Variable& var : vars) {
    auto [it, inserted] = slots_.try_emplace(var.state().get());
    if (!inserted) continue;
    // "dense/kernel:0" -> slot "Adam/dense/kernel/m:0" (Keras' names).
    std::string base = var.name();
    if (std::size_t colon = base.rfind(':'); colon != std::string::npos) base.resize(colon);
    for (const std::string& slot_name : slot_names_)
      it->second.push_back(
          add_variable(base + "/" + slot_name, [&] { return fill(var.shape(), slot_initial_value_, var.dtype()); },
                       false));
  }
}

void Optimizer::apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& vars,
                                SourceLocation loc) {
  // Formatted only for an error: no allocation on the training step.
  auto who = [this] { return fmt::format("{}.apply_gradients", name()); };
  if (grads.size() != vars.size())
    throw InvalidArgument(fmt::format("{}: got {} gradients for {} variables (one per variable; an undefined "
                                      "Tensor skips its variable)",
                                      who(), grads.size(), vars.size()));
  // Everything is checked before any state changes.
  bool any = false;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (!vars[i]) throw InvalidArgument(fmt::format("{}: variable {} is null", who(), i));
    if (!is_floating(vars[i].dtype()))
      throw InvalidArgument(fmt::format("{}: variable {} ('{}') is {}; only float32 and float64 variables train", who(),
                                        i, vars[i].name(), dtype_name(vars[i].dtype())));
    if (!grads[i].defined()) continue;
    any = true;
    if (grads[i].dtype() != vars[i].dtype() || !vars[i].shape().is_compatible_with(grads[i].shape()))
      throw InvalidArgument(fmt::format("{}: gradient {} is {} {} but variable '{}' is {} {}", who(), i,
                                        dtype_name(grads[i].dtype()), grads[i].shape().to_string(), vars[i].name(),
                                        dtype_name(vars[i].dtype()), vars[i].shape().to_string()));
  }
  if (!any)
    throw InvalidArgument(fmt::format("{}: no gradient for any of the {} variables (all undefined)", who(), vars.size()));
  create_state(vars);
  const bool clips = update_.clipnorm || update_.clipvalue || update_.global_clipnorm;
  const std::vector<Tensor>& gradients = clips ? clipped(grads, loc) : grads;

  Tensor iterations = iterations_.read_value(loc);
  Tensor step = iterations + 1;
  // The schedule at the count before this update (Keras'); the variable
  // shows the rate used.
  if (const auto& schedule = learning_rate_.schedule()) learning_rate_var_.assign((*schedule)(iterations), loc);
  Tensor lr = learning_rate_var_.read_value(loc);
  // The step's rate in each variable dtype (float32, float64), computed once.
  Tensor rate_as[2];
  static const std::vector<Variable> kNoSlots;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (!gradients[i].defined()) continue;
    DType d = vars[i].dtype();
    if (update_.weight_decay != 0)
      vars[i].assign_sub(vars[i].read_value(loc) * (cast(lr, d, loc) * update_.weight_decay), loc);
    int k = d == DType::Float64;
    if (!rate_as[k].defined()) rate_as[k] = step_rate(cast(lr, d, loc), step, loc);
    const std::vector<Variable>& slots = slot_names_.empty() ? kNoSlots : slots_.at(vars[i].state().get());
    apply_dense(gradients[i], vars[i], slots, rate_as[k], loc);
  }
  iterations_.assign_add(1, loc);
}

SGD::SGD(LearningRate learning_rate, SGDOptions options)
    : Optimizer(std::move(options.name), std::move(learning_rate),
                options.momentum == 0 ? std::vector<std::string>{} : std::vector<std::string>{"momentum"},
                options.update),
      momentum_(options.momentum),
      nesterov_(options.nesterov) {
  if (!(momentum_ >= 0 && momentum_ <= 1))
    throw InvalidArgument(fmt::format("{}: momentum must be in [0, 1], got {}", name(), momentum_));
}

void SGD::apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots, const Tensor& lr,
                      SourceLocation loc) {
  if (momentum_ == 0) {
    var.assign_sub(lr * grad, loc);
    return;
  }
  const Variable& velocity = slots[0];
  Tensor v = velocity.read_value(loc) * momentum_ - lr * grad;
  velocity.assign(v, loc);
  var.assign_add(nesterov_ ? v * momentum_ - lr * grad : v, loc);
}

Adam::Adam(LearningRate learning_rate, AdamOptions options)
    : Optimizer(std::move(options.name), std::move(learning_rate), {"m", "v"}, options.update),
      beta_1_(options.beta_1),
      beta_2_(options.beta_2),
      epsilon_(options.epsilon) {
  if (!(beta_1_ >= 0 && beta_1_ < 1) || !(beta_2_ >= 0 && beta_2_ < 1))
    throw InvalidArgument(
        fmt::format("{}: beta_1 and beta_2 must be in [0, 1), got {} and {}", name(), beta_1_, beta_2_));
  if (!(epsilon_ > 0)) throw InvalidArgument(fmt::format("{}: epsilon must be > 0, got {}", name(), epsilon_));
}

Tensor Adam::step_rate(const Tensor& lr, const Tensor& step, SourceLocation loc) const {
  Tensor t = cast(step, lr.dtype(), loc);
  return lr * sqrt(1 - pow(beta_2_, t, loc), loc) / (1 - pow(beta_1_, t, loc));
}

void Adam::apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots,
                       const Tensor& alpha, SourceLocation loc) {
  // One fused pass (the composite formula's bits): m, v and var in place.
  apply_adam(var, slots[0], slots[1], grad, alpha, beta_1_, beta_2_, epsilon_, loc);
}

namespace {
AdamOptions with_weight_decay(AdamOptions options, double weight_decay) {
  options.update.weight_decay = weight_decay;
  return options;
}
}  // namespace

AdamW::AdamW(LearningRate learning_rate, double weight_decay, AdamOptions options)
    : Adam(std::move(learning_rate), with_weight_decay(std::move(options), weight_decay)) {}

RMSprop::RMSprop(LearningRate learning_rate, RMSpropOptions options)
    : Optimizer(std::move(options.name), std::move(learning_rate),
                options.momentum == 0 ? std::vector<std::string>{"rms"} : std::vector<std::string>{"rms", "momentum"},
                options.update),
      rho_(options.rho),
      momentum_(options.momentum),
      epsilon_(options.epsilon) {
  if (!(rho_ >= 0 && rho_ <= 1)) throw InvalidArgument(fmt::format("{}: rho must be in [0, 1], got {}", name(), rho_));
  if (!(momentum_ >= 0 && momentum_ <= 1))
    throw InvalidArgument(fmt::format("{}: momentum must be in [0, 1], got {}", name(), momentum_));
}

void RMSprop::apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots,
                          const Tensor& lr, SourceLocation loc) {
  Tensor ms = slots[0].read_value(loc) * rho_ + square(grad, loc) * (1 - rho_);
  slots[0].assign(ms, loc);
  if (momentum_ == 0) {
    var.assign_sub(lr * grad / (sqrt(ms, loc) + epsilon_), loc);
    return;
  }
  Tensor mom = slots[1].read_value(loc) * momentum_ + lr * grad / sqrt(ms + epsilon_, loc);
  slots[1].assign(mom, loc);
  var.assign_sub(mom, loc);
}

Adagrad::Adagrad(LearningRate learning_rate, AdagradOptions options)
    : Optimizer(std::move(options.name), std::move(learning_rate), {"accumulator"}, options.update,
                options.initial_accumulator_value),
      epsilon_(options.epsilon) {
  if (!(options.initial_accumulator_value >= 0))
    throw InvalidArgument(fmt::format("{}: initial_accumulator_value must be >= 0, got {}", name(),
                                      options.initial_accumulator_value));
}

void Adagrad::apply_dense(const Tensor& grad, const Variable& var, const std::vector<Variable>& slots,
                          const Tensor& lr, SourceLocation loc) {
  slots[0].assign_add(square(grad, loc), loc);
  var.assign_sub(lr * grad / sqrt(slots[0].read_value(loc) + epsilon_, loc), loc);
}

}  // namespace kiln::nn
