// A kiln::Module as a saved-model object tree, through Module's public API
// only (variables(), submodules(), methods(), name()): a module's direct children are
// its submodules that no other submodule holds, its own variables are those
// no child holds.
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "io/saved_model_format.h"
#include "kiln/module.h"

namespace kiln::saved_model {

namespace {

// "dense/kernel:0" -> "kernel" (the last scope part, without the index).
std::string member_name(const std::string& variable_name) {
  std::string name = variable_name;
  std::size_t colon = name.rfind(':');
  if (colon != std::string::npos && colon + 1 < name.size() &&
      name.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    name.resize(colon);
  if (std::size_t slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  return name.empty() ? "variable" : name;
}

std::string unique(std::unordered_set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int n = 1; !taken.insert(name).second; ++n) name = fmt::format("{}_{}", base, n);
  return name;
}

Object object_of(const Module& m, int depth) {
  if (depth > io::kMaxObjectDepth)
    throw InvalidArgument(fmt::format("saved_model::save: modules are nested more than {} deep", io::kMaxObjectDepth));
  std::vector<std::shared_ptr<Module>> subs = m.submodules();
  std::unordered_set<const Module*> nested;  // below some other submodule
  for (const auto& s : subs)
    for (const auto& t : s->submodules()) nested.insert(t.get());
  Object obj;
  std::unordered_set<std::string> taken;
  std::unordered_set<const void*> held_by_children;
  std::vector<std::shared_ptr<Module>> children;
  for (const auto& s : subs) {
    if (nested.count(s.get())) continue;
    children.push_back(s);
    for (const Variable& v : s->variables()) held_by_children.insert(v.state().get());
  }
  for (const Variable& v : m.variables())
    if (!held_by_children.count(v.state().get())) obj.add(unique(taken, member_name(v.name())), v);
  for (const auto& c : children) obj.add(unique(taken, c->name()), object_of(*c, depth + 1));
  for (const Module::NamedMethod& method : m.methods()) obj.functions.emplace_back(unique(taken, method.name), method.traces());
  return obj;
}

}  // namespace

Object module_object(const Module& module) { return object_of(module, 0); }

void save(const Module& module, const std::string& dir, const Signatures& signatures) {
  save(module_object(module), dir, signatures);
}

}  // namespace kiln::saved_model
