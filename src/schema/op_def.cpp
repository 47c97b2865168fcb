#include <fmt/format.h>

#include <mutex>
#include <unordered_set>

#include "schema/op_def.h"

namespace kiln::schema {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    registry::register_all_ops(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(const detail::OpDef& op) {
  if (find(op.name)) throw Internal(fmt::format("op '{}' is registered twice", op.name));
  ops_.push_back(&op);
}

const detail::OpDef* OpRegistry::find(std::string_view name) const {
  for (const detail::OpDef* op : ops_)
    if (op->name == name) return op;
  return nullptr;
}

const detail::OpDef& OpRegistry::get(std::string_view name) const {
  if (const detail::OpDef* op = find(name)) return *op;
  throw NotFound(fmt::format("no op named '{}' is registered", name));
}

void InferContext::missing_input(int i) const {
  throw InvalidArgument(fmt::format("{}: input {} is missing (the node has {} inputs)", op_.name, i, num_inputs_));
}

void InferContext::too_many_elements(const Shape& shape) const {
  fail("output {} would have shape {}, more elements than a tensor may have (2^48 = {})", outputs_.size(),
       shape.to_string(), Shape::kMaxElements);
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

namespace {

constexpr int64_t kCompareByValueLimit = 64;

std::size_t shape_hash(const Shape& shape) {
  std::size_t h = static_cast<std::size_t>(shape.rank() + 1);
  for (int64_t d : shape.dims()) h = h * 1000003u + static_cast<std::size_t>(d);
  return h;
}

bool tensors_equal(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl()) return true;
  if (a.is_symbolic() || b.is_symbolic() || a.dtype() != b.dtype() || a.shape() != b.shape() ||
      a.size() > kCompareByValueLimit)
    return false;
  return core::same_bits(a, b);
}

std::size_t tensor_hash(const Tensor& t) {
  std::size_t h = static_cast<std::size_t>(t.dtype()) * 31 + shape_hash(t.shape());
  if (t.is_symbolic() || t.size() > kCompareByValueLimit) return h ^ std::hash<const void*>()(t.impl());
  if (t.dtype() == DType::String) {
    for (const std::string& s : t.to_vector<std::string>()) h = h * 131 ^ std::hash<std::string>()(s);
    return h;
  }
  const auto* bytes = static_cast<const unsigned char*>(core::raw_data(t));
  for (std::size_t i = 0; i < static_cast<std::size_t>(t.size()) * dtype_size(t.dtype()); ++i)
    h = h * 131 + bytes[i];
  return h;
}

bool values_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Tensor>) return tensors_equal(x, y);
        else return x == y;
      },
      a);
}

std::size_t value_hash(const AttrValue& v) {
  struct Visitor {
    std::size_t operator()(int64_t x) const { return std::hash<int64_t>()(x); }
    std::size_t operator()(double x) const { return std::hash<double>()(x); }
    std::size_t operator()(bool x) const { return x; }
    std::size_t operator()(const std::string& x) const { return std::hash<std::string>()(x); }
    std::size_t operator()(DType x) const { return static_cast<std::size_t>(x); }
    std::size_t operator()(const Shape& x) const { return shape_hash(x); }
    std::size_t operator()(const std::vector<int64_t>& x) const {
      std::size_t h = x.size();
      for (int64_t e : x) h = h * 31 + static_cast<std::size_t>(e);
      return h;
    }
    std::size_t operator()(const Tensor& t) const { return tensor_hash(t); }
    std::size_t operator()(const std::shared_ptr<const graph::Graph>& g) const {
      return std::hash<const void*>()(g.get());
    }
    std::size_t operator()(const std::shared_ptr<const HostCallback>& c) const {
      return std::hash<const void*>()(c.get());
    }
  };
  return std::visit(Visitor{}, v) * 7 + v.index();
}

}  // namespace

bool attrs_equal(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  for (const Attr& x : a) {
    const AttrValue* y = b.find(x.name);
    if (!y || !values_equal(x.value, *y)) return false;
  }
  return true;
}

std::size_t attrs_hash(const Attrs& attrs) {
  std::size_t h = 0;
  for (const Attr& a : attrs) h += std::hash<std::string_view>()(a.name) * 17 + value_hash(a.value);
  return h;
}

std::string attr_value_to_string(const AttrValue& value) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const {
      std::string out = "\"";
      for (char c : v) {
        switch (c) {
          case '\n': out += "\\n"; break;
          case '\t': out += "\\t"; break;
          case '"': out += "\\\""; break;
          case '\\': out += "\\\\"; break;
          default: out += c;
        }
      }
      return out + "\"";
    }
    std::string operator()(DType v) const { return std::string(dtype_name(v)); }
    std::string operator()(const Shape& v) const { return v.to_string(); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
    std::string operator()(const Tensor& t) const {
      return fmt::format("<{} {}>", dtype_name(t.dtype()), t.shape().to_string());
    }
    std::string operator()(const std::shared_ptr<const graph::Graph>&) const { return "<graph>"; }
    std::string operator()(const std::shared_ptr<const HostCallback>&) const { return "<callback>"; }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace kiln::schema
