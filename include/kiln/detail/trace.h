#pragma once
// Trace keys and the flattening of C++ arguments and results (docs/design-notes.md, "kiln::function").
// A key is a sequence of generic atoms, so that other front ends (Python)
// can produce keys too: a tensor gives (dtype, shape), a number, bool,
// string or enum gives its value, containers give their structure.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "kiln/detail/small_vector.h"
#include "kiln/tensor.h"

namespace kiln {

// The type and shape a tensor argument must have; kiln::None for a dim that
// may vary. Used in input_signature and get_concrete_function. A name, as
// TF's TensorSpec(shape, dtype, name), names the graph's parameter and so a
// saved signature's input; it does not change which calls the spec accepts.
struct TensorSpec {
  Shape shape;
  DType dtype = DType::Float32;
  std::string name;
  TensorSpec(Shape shape, DType dtype = DType::Float32, std::string name = {})
      : shape(shape), dtype(dtype), name(std::move(name)) {}
  // "TensorSpec(shape=(None,), dtype=int32)", "TensorSpec(shape=(), dtype=float32, name='a')"
  std::string to_string() const;
};

namespace detail {

struct KeyAtom {
  enum class Kind : uint8_t {
    Tensor, Variable, Int, Float, Bool, String, List, Tuple, Map, Optional, Struct, End,
    Resource  // an object fed to the graph as a Resource tensor, keyed by `s` (its type and spec)
  };
  Kind kind = Kind::Tensor;
  DType dtype = DType::Float32;  // Tensor, Variable; the C++ type's dtype for numbers
  Shape shape;                   // Tensor, Variable
  int64_t i = 0;                 // Int, Bool, container sizes, Optional presence
  double f = 0;                  // Float
  std::string s;                 // String, Struct (type name)

  friend bool operator==(const KeyAtom& a, const KeyAtom& b) {
    return a.kind == b.kind && a.dtype == b.dtype && a.shape == b.shape && a.i == b.i &&
           (a.f == b.f || (a.f != a.f && b.f != b.f)) && a.s == b.s;
  }
};

struct TraceKey {
  SmallVector<KeyAtom, 4> atoms;
  std::size_t hash = 0;
  void add(KeyAtom atom);
  friend bool operator==(const TraceKey& a, const TraceKey& b);
};
struct TraceKeyHash {
  std::size_t operator()(const TraceKey& k) const { return k.hash; }
};

// Collects a call's key and its tensor leaves (tensors, variable handles).
class Flattener {
 public:
  explicit Flattener(bool specs_allowed = false) : specs_allowed_(specs_allowed) {}
  Flattener(const Flattener&) = delete;  // leaf_names may point at this object
  Flattener& operator=(const Flattener&) = delete;
  void tensor(const Tensor& t);
  void spec(const TensorSpec& spec);
  void variable(const Tensor& handle, DType dtype, const Shape& shape);
  // An object passed to the graph as a Resource tensor (a Dataset), keyed by
  // `key` alone: calls with equal keys share a trace.
  void resource(const Tensor& handle, std::string key);
  void integer(int64_t v, DType natural);
  void floating(double v, DType natural);
  void boolean(bool v);
  void string(std::string v);
  void begin(KeyAtom::Kind kind, int64_t size, std::string name = {});
  void end();

  TraceKey key;
  SmallVector<Tensor, 4> leaves;  // null handles stand for specs
  // Names for the graph's parameters, one per leaf, asked for only when a
  // call traces (a front end that knows parameter names, like Python, sets
  // it; a call that hits the cache pays nothing). Unset: arg0, arg1, ...
  struct LeafNames {
    std::vector<std::string> (*fn)(const void* source) = nullptr;
    const void* source = nullptr;
    std::vector<std::string> operator()() const { return fn ? fn(source) : std::vector<std::string>{}; }
  } leaf_names;

 private:
  bool specs_allowed_;
  std::vector<std::string> spec_names_;  // the names of the specs among the leaves
};

// Hands out the symbolic tensors that replace the leaves while tracing.
class Rebuilder {
 public:
  explicit Rebuilder(std::span<const Tensor> leaves) : leaves_(leaves) {}
  const Tensor& next() { return leaves_[pos_++]; }

 private:
  std::span<const Tensor> leaves_;
  std::size_t pos_ = 0;
};

// Collects what a traced callable returned: tensor leaves and the structure
// (container sizes) needed to rebuild it after each call.
class ResultFlattener {
 public:
  void leaf(const Tensor& t) { leaves.push_back(t); }
  // A part of a composite value (a TensorArray's buffer, mask and size)
  // whose shape a loop may change: a traced loop relaxes its dims, where a
  // user's tensor that changes shape is an error (TF's shape invariants).
  void internal_leaf(const Tensor& t) {
    internal.push_back(leaves.size());
    leaves.push_back(t);
  }
  // An internal leaf whose rank is not fixed yet (an unwritten TensorArray's
  // buffer takes its rank from the first write): a loop lets its rank change.
  void leaf_of_any_rank(const Tensor& t) {
    any_rank.push_back(leaves.size());
    internal_leaf(t);
  }
  void size(int64_t n) { sizes.push_back(n); }
  std::vector<Tensor> leaves;
  std::vector<int64_t> sizes;
  std::vector<std::size_t> any_rank;  // indices into leaves
  std::vector<std::size_t> internal;  // indices into leaves
  // What a front end keeps with the traced graph (Python: the structure of
  // the result), stored in the graph's cache entry by the trace itself, so
  // whoever finds the entry finds it too.
  std::shared_ptr<const void> front_end_data;
};

// The flat results of a graph call: inline for the few tensors most
// functions return, so a call need not allocate for them.
using ResultLeaves = SmallVector<Tensor, 4>;

// Hands out `leaves` (moving each out) and the container sizes in order.
class ResultReader {
 public:
  ResultReader(std::span<Tensor> leaves, const std::vector<int64_t>& sizes) : leaves_(leaves), sizes_(sizes) {}
  Tensor leaf() { return std::move(leaves_[leaf_pos_++]); }
  int64_t size() { return sizes_[size_pos_++]; }

 private:
  std::span<Tensor> leaves_;
  const std::vector<int64_t>& sizes_;
  std::size_t leaf_pos_ = 0, size_pos_ = 0;
};

template <class T> inline constexpr bool always_false = false;

template <class T, class Enable = void> struct TraceTraits {
  static_assert(always_false<T>,
                "kiln::function cannot trace this argument or result type. Use Tensor, Variable, "
                "TensorSpec, numbers, bool, std::string, enums, std::vector/array/tuple/pair/map/"
                "optional of those, or a struct that declares KILN_FIELDS(...).");
};

template <> struct TraceTraits<Tensor> {
  using Rebuilt = Tensor;
  static void flatten(const Tensor& t, Flattener& f) { f.tensor(t); }
  static Tensor rebuild(const Tensor&, Rebuilder& r) { return r.next(); }
  static void flatten_result(const Tensor& t, ResultFlattener& f) { f.leaf(t); }
  static Tensor unflatten(ResultReader& r) { return r.leaf(); }
};

template <> struct TraceTraits<TensorSpec> {
  using Rebuilt = Tensor;
  static void flatten(const TensorSpec& s, Flattener& f) { f.spec(s); }
  static Tensor rebuild(const TensorSpec&, Rebuilder& r) { return r.next(); }
};

// Numbers and enums are keyed by value: a new value traces again.
template <class T>
struct TraceTraits<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>>> {
  using Rebuilt = T;
  static void flatten(const T& v, Flattener& f) {
    if constexpr (std::is_same_v<T, bool>) f.boolean(v);
    else if constexpr (std::is_enum_v<T>)
      f.integer(static_cast<int64_t>(v), DType::Int64);
    else if constexpr (std::is_floating_point_v<T>)
      f.floating(static_cast<double>(v), sizeof(T) == 4 ? DType::Float32 : DType::Float64);
    else
      f.integer(static_cast<int64_t>(v), sizeof(T) <= 4 ? DType::Int32 : DType::Int64);
  }
  static T rebuild(const T& v, Rebuilder&) { return v; }
};

template <> struct TraceTraits<std::string> {
  using Rebuilt = std::string;
  static void flatten(const std::string& v, Flattener& f) { f.string(v); }
  static std::string rebuild(const std::string& v, Rebuilder&) { return v; }
};
template <> struct TraceTraits<const char*> {
  using Rebuilt = const char*;
  static void flatten(const char* v, Flattener& f) { f.string(v); }
  static const char* rebuild(const char* v, Rebuilder&) { return v; }
};

template <class T> using Traits = TraceTraits<std::remove_cvref_t<T>>;

template <class T> struct TraceTraits<std::vector<T>> {
  using Rebuilt = std::vector<typename Traits<T>::Rebuilt>;
  static void flatten(const std::vector<T>& v, Flattener& f) {
    f.begin(KeyAtom::Kind::List, static_cast<int64_t>(v.size()));
    for (const T& x : v) Traits<T>::flatten(x, f);
    f.end();
  }
  static Rebuilt rebuild(const std::vector<T>& v, Rebuilder& r) {
    Rebuilt out;
    out.reserve(v.size());
    for (const T& x : v) out.push_back(Traits<T>::rebuild(x, r));
    return out;
  }
  static void flatten_result(const std::vector<T>& v, ResultFlattener& f) {
    f.size(static_cast<int64_t>(v.size()));
    for (const T& x : v) Traits<T>::flatten_result(x, f);
  }
  static auto unflatten(ResultReader& r) {
    int64_t n = r.size();
    std::vector<decltype(Traits<T>::unflatten(r))> out;
    out.reserve(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) out.push_back(Traits<T>::unflatten(r));
    return out;
  }
};

template <class T, std::size_t N> struct TraceTraits<std::array<T, N>> {
  using Rebuilt = std::array<typename Traits<T>::Rebuilt, N>;
  static void flatten(const std::array<T, N>& v, Flattener& f) {
    f.begin(KeyAtom::Kind::List, static_cast<int64_t>(N));
    for (const T& x : v) Traits<T>::flatten(x, f);
    f.end();
  }
  static Rebuilt rebuild(const std::array<T, N>& v, Rebuilder& r) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return Rebuilt{Traits<T>::rebuild(v[I], r)...};
    }(std::make_index_sequence<N>());
  }
  static void flatten_result(const std::array<T, N>& v, ResultFlattener& f) {
    for (const T& x : v) Traits<T>::flatten_result(x, f);
  }
  static auto unflatten(ResultReader& r) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<decltype(Traits<T>::unflatten(r)), N>{((void)I, Traits<T>::unflatten(r))...};
    }(std::make_index_sequence<N>());
  }
};

template <class... Ts> struct TraceTraits<std::tuple<Ts...>> {
  using Rebuilt = std::tuple<typename Traits<Ts>::Rebuilt...>;
  static void flatten(const std::tuple<Ts...>& v, Flattener& f) {
    f.begin(KeyAtom::Kind::Tuple, static_cast<int64_t>(sizeof...(Ts)));
    std::apply([&](const auto&... x) { (Traits<decltype(x)>::flatten(x, f), ...); }, v);
    f.end();
  }
  static Rebuilt rebuild(const std::tuple<Ts...>& v, Rebuilder& r) {
    return std::apply([&](const auto&... x) { return Rebuilt{Traits<decltype(x)>::rebuild(x, r)...}; }, v);
  }
  static void flatten_result(const std::tuple<Ts...>& v, ResultFlattener& f) {
    std::apply([&](const auto&... x) { (Traits<decltype(x)>::flatten_result(x, f), ...); }, v);
  }
  static auto unflatten(ResultReader& r) {
    // Braced initialization evaluates left to right.
    return std::tuple<decltype(Traits<Ts>::unflatten(r))...>{Traits<Ts>::unflatten(r)...};
  }
};

template <class A, class B> struct TraceTraits<std::pair<A, B>> {
  using Rebuilt = std::pair<typename Traits<A>::Rebuilt, typename Traits<B>::Rebuilt>;
  static void flatten(const std::pair<A, B>& v, Flattener& f) {
    f.begin(KeyAtom::Kind::Tuple, 2);
    Traits<A>::flatten(v.first, f);
    Traits<B>::flatten(v.second, f);
    f.end();
  }
  static Rebuilt rebuild(const std::pair<A, B>& v, Rebuilder& r) {
    auto first = Traits<A>::rebuild(v.first, r);
    return Rebuilt{std::move(first), Traits<B>::rebuild(v.second, r)};
  }
  static void flatten_result(const std::pair<A, B>& v, ResultFlattener& f) {
    Traits<A>::flatten_result(v.first, f);
    Traits<B>::flatten_result(v.second, f);
  }
  static auto unflatten(ResultReader& r) {
    auto first = Traits<A>::unflatten(r);
    auto second = Traits<B>::unflatten(r);
    return std::pair<decltype(first), decltype(second)>{std::move(first), std::move(second)};
  }
};

template <class K, class V> struct TraceTraits<std::map<K, V>> {
  using Rebuilt = std::map<K, typename Traits<V>::Rebuilt>;
  static void flatten(const std::map<K, V>& m, Flattener& f) {
    f.begin(KeyAtom::Kind::Map, static_cast<int64_t>(m.size()));
    for (const auto& [k, v] : m) {
      Traits<K>::flatten(k, f);
      Traits<V>::flatten(v, f);
    }
    f.end();
  }
  static Rebuilt rebuild(const std::map<K, V>& m, Rebuilder& r) {
    Rebuilt out;
    for (const auto& [k, v] : m) out.emplace(k, Traits<V>::rebuild(v, r));
    return out;
  }
};

template <class T> struct TraceTraits<std::optional<T>> {
  using Rebuilt = std::optional<typename Traits<T>::Rebuilt>;
  static void flatten(const std::optional<T>& v, Flattener& f) {
    f.begin(KeyAtom::Kind::Optional, v.has_value() ? 1 : 0);
    if (v) Traits<T>::flatten(*v, f);
    f.end();
  }
  static Rebuilt rebuild(const std::optional<T>& v, Rebuilder& r) {
    if (!v) return std::nullopt;
    return Traits<T>::rebuild(*v, r);
  }
  static void flatten_result(const std::optional<T>& v, ResultFlattener& f) {
    f.size(v ? 1 : 0);
    if (v) Traits<T>::flatten_result(*v, f);
  }
  static auto unflatten(ResultReader& r) {
    using U = decltype(Traits<T>::unflatten(r));
    if (r.size() == 0) return std::optional<U>();
    return std::optional<U>(Traits<T>::unflatten(r));
  }
};

// A user struct takes part once it declares its fields with KILN_FIELDS.
template <class T>
struct TraceTraits<T, std::void_t<decltype(std::declval<const T&>().kiln_fields())>> {
  using Rebuilt = T;
  static void flatten(const T& v, Flattener& f) {
    auto fields = v.kiln_fields();
    f.begin(KeyAtom::Kind::Struct, static_cast<int64_t>(std::tuple_size_v<decltype(fields)>),
            typeid(T).name());
    std::apply([&](const auto&... x) { (Traits<decltype(x)>::flatten(x, f), ...); }, fields);
    f.end();
  }
  static T rebuild(const T& v, Rebuilder& r) {
    T out = v;
    auto in = v.kiln_fields();
    auto dst = out.kiln_fields();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((std::get<I>(dst) = Traits<std::tuple_element_t<I, decltype(in)>>::rebuild(std::get<I>(in), r)), ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(in)>>());
    return out;
  }
};

}  // namespace detail
}  // namespace kiln

// Inside a struct: KILN_FIELDS(weights, bias, scale) lets kiln::function take
// the struct as an argument (tensors become graph inputs, other fields keys).
#define KILN_FIELDS(...)                                          \
  auto kiln_fields() { return std::tie(__VA_ARGS__); }            \
  auto kiln_fields() const { return std::tie(__VA_ARGS__); }
