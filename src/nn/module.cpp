// kiln::Module: variable and submodule tracking, freezing, name scopes.
#include "kiln/module.h"

#include <deque>
#include <unordered_set>

#include "kiln/error.h"
#include "kiln/init_scope.h"

namespace kiln {

Module::Module(std::string name) : name_(std::move(name)) {
  if (name_.empty()) throw InvalidArgument("Module: the name is empty");
  if (name_.find('/') != std::string::npos || name_.find(':') != std::string::npos)
    throw InvalidArgument("Module: the name '" + name_ +
                          "' contains '/' or ':', which separate the parts of variable names");
}

Module::~Module() = default;
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&&) noexcept = default;

std::string Module::scoped_name(std::string_view name) const {
  std::string out = name_;
  out += '/';
  out += name;
  std::size_t colon = name.rfind(':');
  bool has_index = colon != std::string_view::npos && colon + 1 < name.size() &&
                   name.find_first_not_of("0123456789", colon + 1) == std::string_view::npos;
  if (!has_index) out += ":0";
  return out;
}

Variable Module::add_variable(std::string_view name, const Tensor& initial_value, bool trainable,
                              SourceLocation loc) {
  return track(Variable(initial_value, VariableOptions{.name = scoped_name(name), .trainable = trainable}, loc));
}

Variable Module::add_variable(std::string_view name, const std::function<Tensor()>& initializer, bool trainable,
                              SourceLocation loc) {
  Tensor initial;
  {
    InitScope eager;
    initial = initializer();
  }
  // Created outside the scope, so a function being traced sees the creation.
  return add_variable(name, initial, trainable, loc);
}

Variable Module::track(Variable variable) {
  if (!variable) throw InvalidArgument("Module '" + name_ + "': cannot track a null Variable");
  variables_.push_back(variable);
  return variable;
}

void Module::track_module(std::shared_ptr<Module> module) {
  if (!module) throw InvalidArgument("Module '" + name_ + "': cannot track a null module");
  if (module.get() == this) throw InvalidArgument("Module '" + name_ + "': cannot track itself");
  children_.push_back(std::move(module));
}

void Module::set_trainable(bool trainable) {
  trainable_ = trainable;
  for (const auto& child : submodules()) child->trainable_ = trainable;
}

// Depth first, own variables before the children's; each variable once, so
// a layer shared by two parents is counted once.
void Module::collect(std::vector<Variable>& out, bool trainable_only,
                     std::unordered_set<const void*>& seen) const {
  if (trainable_only && !trainable_) return;
  for (const Variable& v : variables_) {
    if (trainable_only && !v.trainable()) continue;
    if (seen.insert(v.state().get()).second) out.push_back(v);
  }
  for (const auto& child : children_) child->collect(out, trainable_only, seen);
}

std::vector<Variable> Module::variables() const {
  std::vector<Variable> out;
  std::unordered_set<const void*> seen;
  collect(out, false, seen);
  return out;
}

std::vector<Variable> Module::trainable_variables() const {
  std::vector<Variable> out;
  std::unordered_set<const void*> seen;
  collect(out, true, seen);
  return out;
}

std::vector<Variable> Module::non_trainable_variables() const {
  std::unordered_set<const void*> trainable;
  for (const Variable& v : trainable_variables()) trainable.insert(v.state().get());
  std::vector<Variable> out;
  for (Variable& v : variables())
    if (!trainable.count(v.state().get())) out.push_back(std::move(v));
  return out;
}

std::vector<std::shared_ptr<Module>> Module::submodules() const {
  std::vector<std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> seen{this};
  std::deque<const Module*> queue{this};
  while (!queue.empty()) {
    const Module* m = queue.front();
    queue.pop_front();
    for (const auto& child : m->children_) {
      if (!seen.insert(child.get()).second) continue;
      out.push_back(child);
      queue.push_back(child.get());
    }
  }
  return out;
}

}  // namespace kiln
