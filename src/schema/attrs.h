#pragma once
// Typed op attributes: the non-tensor arguments of an op (axes, a dtype, a
// shape, a constant's value, a nested graph). Names are interned strings so
// that attrs compare and hash cheaply.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/small_vector.h"
#include "kiln/tensor.h"

namespace kiln::graph {
class Graph;
}

namespace kiln::schema {

// A C++ callback run by a graph (kiln::host_function).
struct HostCallback {
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn;
};

using AttrValue = std::variant<int64_t, double, bool, std::string, DType, Shape,
                               std::vector<int64_t>, Tensor, std::shared_ptr<const graph::Graph>,
                               std::shared_ptr<const HostCallback>>;

// Returns a string with static lifetime equal to `name` (attrs keep names as
// string_views; literals need no interning, names read from files do).
std::string_view intern(std::string_view name);

struct Attr {
  std::string_view name;
  AttrValue value;
};

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<Attr> init) : items_(init) {}

  Attrs& set(std::string_view name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const {
    for (const Attr& a : items_)
      if (a.name == name) return &a.value;
    return nullptr;
  }
  // Throws Internal when missing or of another type (a bug in an op).
  template <class T> const T& get(std::string_view name) const {
    const AttrValue* v = find(name);
    if (!v || !std::holds_alternative<T>(*v)) missing(name);
    return std::get<T>(*v);
  }
  template <class T> T get_or(std::string_view name, T fallback) const {
    const AttrValue* v = find(name);
    return v && std::holds_alternative<T>(*v) ? std::get<T>(*v) : fallback;
  }
  int64_t get_int(std::string_view name) const { return get<int64_t>(name); }
  bool get_bool(std::string_view name) const { return get<bool>(name); }
  double get_float(std::string_view name) const { return get<double>(name); }
  DType get_dtype(std::string_view name) const { return get<DType>(name); }
  const Shape& get_shape(std::string_view name) const { return get<Shape>(name); }
  const std::vector<int64_t>& get_ints(std::string_view name) const {
    return get<std::vector<int64_t>>(name);
  }
  const std::string& get_string(std::string_view name) const { return get<std::string>(name); }

  const Attr* begin() const { return items_.begin(); }
  const Attr* end() const { return items_.end(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }

 private:
  [[noreturn]] void missing(std::string_view name) const;
  detail::SmallVector<Attr, 3> items_;
};

// Structural equality and hash, for hash-consing nodes while tracing. Small
// tensors (constants) compare by value, large ones by identity.
bool attrs_equal(const Attrs& a, const Attrs& b);
std::size_t attrs_hash(const Attrs& attrs);

// Text of one attr value as the graph printer shows it.
std::string attr_value_to_string(const AttrValue& value);

}  // namespace kiln::schema
