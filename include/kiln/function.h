#pragma once
// kiln::function: write eager code, run it as a graph (docs/design-notes.md, "kiln::function").
//
//   auto f = kiln::function([](const kiln::Tensor& x) { return x * x + 1; });
//   kiln::Tensor y = f(kiln::constant({1.f, 2.f}));   // traces, then runs the graph
//   y = f(kiln::constant({3.f, 4.f}));                // same signature: no retrace
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/detail/trace.h"
#include "kiln/tensor.h"

namespace kiln {

struct FunctionOptions {
  // Fixes a single trace: every call must fit these specs (None dims allowed).
  std::optional<std::vector<TensorSpec>> input_signature;
  // Shown in graphs, errors and logs (default "function").
  std::string name;
  // Off: a call that misses only because dims differ traces once more with
  // those dims unknown (at most 2 traces for varying batch sizes). On: every
  // new shape traces.
  bool exact_shapes = false;
  // Runs every call eagerly as well and compares; a difference throws,
  // naming the first op whose results differ.
  bool verify = false;
  // Traces kept at most (the least recently used one is dropped).
  int max_cache_entries = 64;
};

enum class RetraceCause { Shape, DType, Value, Structure, Relaxed, NewVariable };

// Why a call traced again, as data.
struct RetraceRecord {
  int trace_number = 0;  // 2 for the first retrace
  std::string path;      // "arg 0", "arg 1[2]", ...
  std::string old_spec, new_spec;
  RetraceCause cause = RetraceCause::Shape;
  // One line: "trace 2: arg 0: float32 (3,) -> float32 (5,) (shape changed)".
  std::string text() const;
};

struct CacheInfo {
  int64_t hits = 0, misses = 0, traces = 0, entries = 0;
};

// What a function call returns when its structure is not known statically
// (ConcreteFunction calls): a list of tensors that converts to a Tensor when
// there is exactly one.
class Outputs {
 public:
  Outputs() = default;
  explicit Outputs(std::vector<Tensor> values) : values_(std::move(values)) {}
  // A graph call's results, moved out.
  explicit Outputs(detail::ResultLeaves&& leaves)
      : values_(std::make_move_iterator(leaves.begin()), std::make_move_iterator(leaves.end())) {}
  operator Tensor() const;
  const Tensor& operator[](std::size_t i) const { return values_.at(i); }
  std::size_t size() const { return values_.size(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }
  const std::vector<Tensor>& values() const { return values_; }

 private:
  std::vector<Tensor> values_;
};

namespace detail {
struct TracedGraph;
class FunctionCore;

// A non-owning reference to the callable that traces (no allocation per call).
struct TraceFnRef {
  void* object;
  void (*call)(void* object, std::span<const Tensor> leaves, ResultFlattener& out);
  template <class L> explicit TraceFnRef(L& l)
      : object(&l), call([](void* o, std::span<const Tensor> leaves, ResultFlattener& out) {
          (*static_cast<L*>(o))(leaves, out);
        }) {}
};

struct CallResult {
  ResultLeaves leaves;
  std::shared_ptr<const TracedGraph> concrete;  // keeps the result structure alive
  const std::vector<int64_t>& sizes() const;
};

bool functions_run_eagerly();
// Whether ops are being recorded into a graph on this thread.
bool is_tracing();
}  // namespace detail

// A read-only view of a traced graph.
class GraphView {
 public:
  explicit GraphView(std::shared_ptr<const detail::TracedGraph> impl) : impl_(std::move(impl)) {}
  int num_nodes() const;
  std::string to_string() const;
  std::string to_dot() const;

 private:
  std::shared_ptr<const detail::TracedGraph> impl_;
};

// One traced graph: callable with strict dtype/shape checks, printable,
// inspectable.
class ConcreteFunction {
 public:
  explicit ConcreteFunction(std::shared_ptr<const detail::TracedGraph> impl) : impl_(std::move(impl)) {}

  template <class... Args> Outputs operator()(const Args&... args) const {
    detail::Flattener flat;
    (detail::Traits<Args>::flatten(args, flat), ...);
    return call_flat(flat);
  }
  GraphView graph() const { return GraphView(impl_); }
  const std::string& name() const;
  // The graph's explicit inputs and its outputs, as specs.
  std::vector<TensorSpec> inputs() const;
  std::vector<TensorSpec> outputs() const;
  // "ConcreteFunction name(arg0: float32 (None,)) -> float32 (None,)"
  std::string to_string() const;
  // The traced graph and plan (for the saved-model writer and tools).
  const std::shared_ptr<const detail::TracedGraph>& impl() const { return impl_; }
  // A call with arguments already flattened (front ends that build their own
  // keys: Python). The key must match the traced one, as for operator().
  Outputs call_flat(const detail::Flattener& flat) const;

 private:
  std::shared_ptr<const detail::TracedGraph> impl_;
};

namespace detail {

// Everything of a Function that does not depend on the callable's type:
// the cache, tracing, relaxation, the retrace log.
class FunctionCore {
 public:
  explicit FunctionCore(FunctionOptions options);
  ~FunctionCore();
  CallResult call(Flattener& flat, TraceFnRef trace);
  CallResult call_in_trace(Flattener& flat, TraceFnRef trace);
  std::shared_ptr<const TracedGraph> concrete(Flattener& flat, TraceFnRef trace);
  int tracing_count() const;
  std::vector<RetraceRecord> retrace_log() const;
  CacheInfo cache_info() const;
  void expect_max_traces(int n);
  const FunctionOptions& options() const;
  // Every trace in the cache, least recently used first.
  std::vector<std::shared_ptr<const TracedGraph>> concrete_functions() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace detail

template <class F> class Function {
 public:
  Function(F callable, FunctionOptions options)
      : callable_(std::make_shared<F>(std::move(callable))),
        core_(std::make_shared<detail::FunctionCore>(std::move(options))) {}

  template <class... Args> auto operator()(const Args&... args) const {
    using R = std::invoke_result_t<F&, typename detail::Traits<Args>::Rebuilt&...>;
    if (detail::functions_run_eagerly()) {
      if constexpr (std::is_void_v<R>) return (*callable_)(args...);
      else return eager_result<R>((*callable_)(args...));
    }
    detail::Flattener flat;
    (detail::Traits<Args>::flatten(args, flat), ...);
    auto trace = make_trace<R>(args...);
    detail::TraceFnRef ref(trace);
    // Called while another function is traced: one call node running this
    // function's own (cached) graph.
    detail::CallResult result = detail::is_tracing() ? core_->call_in_trace(flat, ref) : core_->call(flat, ref);
    if constexpr (std::is_void_v<R>) {
      return;
    } else {
      detail::ResultReader reader(std::span<Tensor>(result.leaves.data(), result.leaves.size()), result.sizes());
      return detail::Traits<R>::unflatten(reader);
    }
  }

  // The graph for these arguments (tensors, or TensorSpecs where a tensor
  // goes), tracing it if needed.
  template <class... Args> ConcreteFunction get_concrete_function(const Args&... args) const {
    using R = std::invoke_result_t<F&, typename detail::Traits<Args>::Rebuilt&...>;
    detail::Flattener flat(/*specs_allowed=*/true);
    (detail::Traits<Args>::flatten(args, flat), ...);
    auto trace = make_trace<R>(args...);
    detail::TraceFnRef ref(trace);
    return ConcreteFunction(core_->concrete(flat, ref));
  }

  int tracing_count() const { return core_->tracing_count(); }
  std::vector<RetraceRecord> retrace_log() const { return core_->retrace_log(); }
  CacheInfo cache_info() const { return core_->cache_info(); }
  // From now on, a trace beyond n in total throws FailedPrecondition (tests
  // use it to pin a retrace budget).
  void expect_max_traces(int n) const { core_->expect_max_traces(n); }
  const FunctionOptions& options() const { return core_->options(); }
  // Every graph traced so far that is still cached, least recently used first (what a
  // saved model stores for this function).
  std::vector<ConcreteFunction> concrete_functions() const {
    std::vector<ConcreteFunction> out;
    for (auto& impl : core_->concrete_functions()) out.emplace_back(std::move(impl));
    return out;
  }

 private:
  template <class R, class... Args> auto make_trace(const Args&... args) const {
    return [this, &args...](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
      detail::Rebuilder rebuilder(leaves);
      // Braced initialization rebuilds the arguments left to right.
      std::tuple<typename detail::Traits<Args>::Rebuilt...> rebuilt{
          detail::Traits<Args>::rebuild(args, rebuilder)...};
      if constexpr (std::is_void_v<R>) {
        std::apply(*callable_, rebuilt);
      } else {
        R result = std::apply(*callable_, rebuilt);
        detail::Traits<R>::flatten_result(result, out);
      }
    };
  }
  template <class R, class V> static auto eager_result(V&& v) {
    // run_functions_eagerly: results come back as the graph would give them.
    detail::ResultFlattener out;
    detail::Traits<R>::flatten_result(v, out);
    detail::ResultReader reader(out.leaves, out.sizes);
    return detail::Traits<R>::unflatten(reader);
  }

  std::shared_ptr<F> callable_;
  std::shared_ptr<detail::FunctionCore> core_;
};

// Wraps a callable. Each call wraps anew: a new Function starts with an
// empty cache.
template <class F>
Function<std::decay_t<F>> function(F&& callable, FunctionOptions options = {}) {
  return Function<std::decay_t<F>>(std::forward<F>(callable), std::move(options));
}

namespace detail {
template <class F, std::size_t... I>
void trace_signature(const Function<F>& f, const std::vector<TensorSpec>& specs, std::index_sequence<I...>) {
  if constexpr (std::is_invocable_v<F&, decltype((void)I, std::declval<Tensor&>())...>)
    if (specs.size() == sizeof...(I)) f.get_concrete_function(specs[I]...);
}

// Every trace of `f` (what a saved model stores); a function with an
// input_signature (of up to 8 tensors) that was never called is traced now,
// as TF does on save.
template <class F> std::vector<ConcreteFunction> traces_of(const Function<F>& f) {
  std::vector<ConcreteFunction> fs = f.concrete_functions();
  const auto& specs = f.options().input_signature;
  if (!fs.empty() || !specs) return fs;
  [&]<std::size_t... N>(std::index_sequence<N...>) {
    (trace_signature(f, *specs, std::make_index_sequence<N>()), ...);
  }(std::make_index_sequence<9>());
  return f.concrete_functions();
}
}  // namespace detail

namespace config {
// Makes every Function call run its callable eagerly (for debugging).
void run_functions_eagerly(bool enable);
bool functions_run_eagerly();
}  // namespace config

}  // namespace kiln
