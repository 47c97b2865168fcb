#pragma once
// kiln::Module: an object that owns variables and other modules, as
// tf.Module (docs/design-notes.md, "Modules and nn"). Layers, models, optimizers and metrics are
// Modules; so is a user's model.
//
//   struct Demo : kiln::Module {
//     kiln::Variable x = add_variable("x", kiln::constant(1.f));  // "demo/x:0"
//     kiln::Method<kiln::Tensor(const kiln::Tensor&)> addprint = method<kiln::Tensor(const kiln::Tensor&)>(
//         "addprint", [this](const kiln::Tensor& a) { x.assign_add(a); return x.read_value(); },
//         {.input_signature = std::vector{kiln::TensorSpec({}, kiln::DType::Float32, "a")}});
//     Demo() : kiln::Module("demo") {}
//   };
//
// Tracking is explicit (C++ has no attribute reflection): a module registers
// its variables with add_variable/track and its submodules with track.
// Submodules are held by shared_ptr, so moving a module never leaves a
// dangling reference behind, except that a `method` captures `this`: a module
// with methods must not be moved (declare its move constructor deleted).
#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kiln/function.h"
#include "kiln/variable.h"

namespace kiln {

// A member function traced by kiln::function (tf.function on a method):
// Method<Tensor(const Tensor&)>. Its type does not depend on the lambda, so
// it can be a data member.
template <class Signature> using Method = Function<std::function<Signature>>;

class Module {
 public:
  // `name` is used as given (tf.Module does not make names unique; Keras
  // layers do, see kiln::nn::unique_name).
  explicit Module(std::string name);
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;

  const std::string& name() const { return name_; }
  // The prefix of this module's variable names: "dense" gives "dense/kernel:0".
  const std::string& name_scope() const { return name_; }

  // This module's variables, then its submodules' (depth first, in the order
  // they were tracked), each once.
  std::vector<Variable> variables() const;
  // The variables that training updates: none of a frozen module's, and
  // only those whose own `trainable()` is true.
  std::vector<Variable> trainable_variables() const;
  // variables() minus trainable_variables().
  std::vector<Variable> non_trainable_variables() const;
  // Every module below this one (children, their children, ...), breadth
  // first, each once; not this module itself.
  std::vector<std::shared_ptr<Module>> submodules() const;

  bool trainable() const { return trainable_; }
  // Freezes (false) or unfreezes this module and every module below it, as
  // Keras' `layer.trainable = False`. Variables keep their own flag; a
  // frozen module hides them from trainable_variables().
  void set_trainable(bool trainable);

  // "dense/kernel:0": the name scope, the name, and the output index TF shows
  // for a variable. A name already ending in ":N" is kept as it is.
  std::string scoped_name(std::string_view name) const;

  // The named methods of this module itself, in order of definition.
  struct NamedMethod {
    std::string name;
    std::function<std::vector<ConcreteFunction>()> traces;  // every trace, as saving sees them
  };
  const std::vector<NamedMethod>& methods() const { return methods_; }

 protected:
  // Creates a variable named scoped_name(name) and tracks it.
  Variable add_variable(std::string_view name, const Tensor& initial_value, bool trainable = true,
                        SourceLocation loc = SourceLocation::current());
  // The same, with the initial value computed by `initializer` under an
  // InitScope: eagerly, even while a kiln::function traces, so the variable
  // has its value at once (Keras' add_weight). Use it for variables a module
  // creates lazily on its first call.
  Variable add_variable(std::string_view name, const std::function<Tensor()>& initializer, bool trainable = true,
                        SourceLocation loc = SourceLocation::current());
  // Tracks a variable made elsewhere (its name is kept).
  Variable track(Variable variable);
  // Tracks a submodule shared with others.
  template <class M>
    requires std::derived_from<M, Module>
  std::shared_ptr<M> track(std::shared_ptr<M> module) {
    track_module(module);
    return module;
  }
  // Tracks a submodule given by value: `auto fc = track(nn::Dense(4));`.
  template <class M>
    requires(std::derived_from<std::remove_cvref_t<M>, Module> && !std::is_lvalue_reference_v<M>)
  std::shared_ptr<std::remove_cvref_t<M>> track(M&& module) {
    return track(std::make_shared<std::remove_cvref_t<M>>(std::move(module)));
  }
  // A traced member function; its default name is this module's name.
  template <class Signature, class F>
  Method<Signature> method(F&& body, FunctionOptions options = {}) const {
    if (options.name.empty()) options.name = name_;
    return kiln::function(std::function<Signature>(std::forward<F>(body)), std::move(options));
  }
  // A traced member function that belongs to the module under `name`, as a
  // tf.function attribute of a tf.Module: saved_model::save(module, dir)
  // saves every trace of it without its being listed. The function's own
  // default name is `name` too.
  template <class Signature, class F>
  Method<Signature> method(std::string name, F&& body, FunctionOptions options = {}) {
    if (options.name.empty()) options.name = name;
    Method<Signature> m = kiln::function(std::function<Signature>(std::forward<F>(body)), std::move(options));
    methods_.push_back({std::move(name), [m] { return detail::traces_of(m); }});
    return m;
  }
  // The submodules tracked by this module itself, in order.
  const std::vector<std::shared_ptr<Module>>& children() const { return children_; }

 private:
  void track_module(std::shared_ptr<Module> module);
  void collect(std::vector<Variable>& out, bool trainable_only,
               std::unordered_set<const void*>& seen) const;

  std::string name_;
  bool trainable_ = true;
  std::vector<Variable> variables_;
  std::vector<std::shared_ptr<Module>> children_;
  std::vector<NamedMethod> methods_;
};

}  // namespace kiln
