#include <fmt/format.h>

#include <mutex>
#include <unordered_set>

#include "ops/op_def.h"

namespace kiln::detail {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_creation_ops(*r);
    register_math_ops(*r);
    register_reduce_ops(*r);
    register_array_ops(*r);
    register_nn_ops(*r);
    register_print_ops(*r);
    register_random_ops(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(const OpDef& op) {
  if (find(op.name)) throw Internal(fmt::format("op '{}' is registered twice", op.name));
  ops_.push_back(&op);
}

const OpDef* OpRegistry::find(std::string_view name) const {
  for (const OpDef* op : ops_)
    if (op->name == name) return op;
  return nullptr;
}

const OpDef& OpRegistry::get(std::string_view name) const {
  if (const OpDef* op = find(name)) return *op;
  throw NotFound(fmt::format("no op named '{}' is registered", name));
}

void InferContext::fail_message(const std::string& message) const {
  throw InvalidArgument(fmt::format("{}: {}", op_.name, message));
}

std::string_view intern(std::string_view name) {
  static std::mutex mutex;
  static auto* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return *names->emplace(name).first;
}

Attrs& Attrs::set(std::string_view name, AttrValue value) {
  for (Attr& a : items_) {
    if (a.name == name) {
      a.value = std::move(value);
      return *this;
    }
  }
  items_.push_back(Attr{name, std::move(value)});
  return *this;
}

void Attrs::missing(std::string_view name) const {
  throw Internal(fmt::format("attr '{}' is missing or has another type", name));
}

std::string attr_value_to_string(const AttrValue& value) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(DType v) const { return std::string(dtype_name(v)); }
    std::string operator()(const Shape& v) const { return v.to_string(); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
    std::string operator()(const Tensor& t) const {
      return fmt::format("<{} {}>", dtype_name(t.dtype()), t.shape().to_string());
    }
    std::string operator()(const std::shared_ptr<const graph::Graph>&) const { return "<graph>"; }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace kiln::detail
