// The type-independent part of kiln::function: cache lookup, tracing, shape
// relaxation, the retrace log.
#include <fmt/format.h>

#include <atomic>
#include <iostream>
#include <list>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "graph_ops/graph_gradients.h"
#include "graph_ops/call_op.h"
#include "graph_ops/control_flow_ops.h"
#include "function/traced_graph.h"
#include "function/trace_cache.h"
#include "trace/tracing_context.h"
#include "passes/passes.h"

namespace kiln {

namespace {
std::atomic<bool> run_eagerly{false};
constexpr int kRetraceWarningThreshold = 5;
}  // namespace

namespace config {
void run_functions_eagerly(bool enable) { run_eagerly.store(enable); }
bool functions_run_eagerly() { return run_eagerly.load(); }
}  // namespace config

namespace detail {

namespace {
using function_impl::Entry;
using function_impl::TraceCache;
}  // namespace

bool functions_run_eagerly() { return run_eagerly.load(std::memory_order_relaxed); }
bool is_tracing() { return runtime::thread_state.handler != nullptr; }

struct FunctionCore::State {
  explicit State(FunctionOptions o) : options(std::move(o)), cache(options.max_cache_entries) {}
  FunctionOptions options;
  mutable std::mutex mutex;
  // The thread tracing this function right now: a call from inside its own
  // trace (recursion) would wait on `mutex` forever, so it is an error.
  std::atomic<std::thread::id> tracing_thread{};
  TraceCache cache;
  // The retrace log and its warning.
  std::vector<RetraceRecord> log;
  std::unordered_map<std::string, int> changes_by_path;
  bool warned = false;
  Entry last_traced;
  CacheInfo info;
  int max_traces = -1;
};

FunctionCore::FunctionCore(FunctionOptions options) {
  if (options.name.empty()) options.name = "function";
  if (options.input_signature && options.exact_shapes)
    throw InvalidArgument(fmt::format(
        "kiln::function '{}': input_signature and exact_shapes cannot be combined", options.name));
  state_ = std::make_unique<State>(std::move(options));
}

FunctionCore::~FunctionCore() = default;

const FunctionOptions& FunctionCore::options() const { return state_->options; }

namespace {

// The signature's specs as a key, checked against a call.
TraceKey signature_key(const std::vector<TensorSpec>& specs) {
  Flattener f(true);
  for (const TensorSpec& s : specs) f.spec(s);
  return std::move(f.key);
}

[[noreturn]] void signature_mismatch(const FunctionOptions& o, const Flattener& call) {
  std::vector<std::string> specs, args;
  for (const TensorSpec& s : *o.input_signature) specs.push_back("  " + s.to_string());
  std::vector<std::string> paths = function_impl::atom_paths(call.key);
  for (std::size_t i = 0; i < call.key.atoms.size(); ++i)
    args.push_back(fmt::format("  {}: {}", paths[i], function_impl::atom_text(call.key.atoms[i])));
  throw InvalidArgument(fmt::format(
      "kiln::function '{}': the arguments do not fit its input_signature.\n arguments:\n{}\n "
      "input_signature:\n{}",
      o.name, fmt::join(args, "\n"), fmt::join(specs, "\n")));
}

// Why `now` missed, compared with `before`: the first atom that differs.
RetraceRecord explain(const TraceKey& before, const TraceKey& now, int trace_number, bool relaxed) {
  RetraceRecord r;
  r.trace_number = trace_number;
  std::vector<std::string> paths = function_impl::atom_paths(now);
  std::size_t n = std::min(before.atoms.size(), now.atoms.size());
  for (std::size_t i = 0; i < n; ++i) {
    const KeyAtom& a = before.atoms[i];
    const KeyAtom& b = now.atoms[i];
    if (a == b) continue;
    r.path = paths[i];
    r.old_spec = function_impl::atom_text(a);
    r.new_spec = function_impl::atom_text(b);
    if (a.kind != b.kind || a.kind == KeyAtom::Kind::List || a.kind == KeyAtom::Kind::Tuple ||
        a.kind == KeyAtom::Kind::Map || a.kind == KeyAtom::Kind::Optional || a.kind == KeyAtom::Kind::Struct ||
        a.kind == KeyAtom::Kind::Resource)
      r.cause = RetraceCause::Structure;
    else if (a.kind == KeyAtom::Kind::Tensor || a.kind == KeyAtom::Kind::Variable)
      r.cause = a.dtype != b.dtype ? RetraceCause::DType
                : relaxed          ? RetraceCause::Relaxed
                                   : RetraceCause::Shape;
    else
      r.cause = RetraceCause::Value;
    return r;
  }
  r.path = paths.empty() ? "arguments" : paths[std::min(n, paths.size() - 1)];
  r.old_spec = fmt::format("{} key atoms", before.atoms.size());
  r.new_spec = fmt::format("{} key atoms", now.atoms.size());
  r.cause = RetraceCause::Structure;
  return r;
}

// Traces the callable into a new graph for `key`. `variables_created` tells
// how many Variables the callable made while tracing.
Entry trace_once(const FunctionOptions& options, const TraceKey& key, const Flattener::LeafNames& names,
                 TraceFnRef trace, int* variables_created) {
  auto graph = std::make_shared<graph::Graph>(options.name);
  trace::TracingContext ctx(graph);
  std::vector<Tensor> params;
  const std::vector<std::string> leaf_names = names();
  std::size_t leaf = 0;
  // The front end's names, else an input_signature spec's name (its specs
  // are the leaves, one to one), else arg<i>.
  auto param_name = [&] {
    std::size_t i = leaf++;
    if (i < leaf_names.size() && !leaf_names[i].empty()) return leaf_names[i];
    if (options.input_signature && i < options.input_signature->size() && !(*options.input_signature)[i].name.empty())
      return (*options.input_signature)[i].name;
    return fmt::format("arg{}", i);
  };
  for (const KeyAtom& a : key.atoms) {
    if (a.kind == KeyAtom::Kind::Tensor)
      params.push_back(ctx.add_parameter({a.dtype, a.shape}, param_name()));
    else if (a.kind == KeyAtom::Kind::Variable || a.kind == KeyAtom::Kind::Resource)  // a resource handle
      params.push_back(ctx.add_parameter({DType::Resource, Shape{}}, param_name()));
  }
  ResultFlattener out;
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    trace.call(trace.object, std::span<const Tensor>(params.data(), params.size()), out);
    for (const Tensor& t : out.leaves) {
      if (!t.defined())
        throw InvalidArgument(fmt::format("kiln::function '{}' returned a null tensor", options.name));
      graph->results().push_back(ctx.value_of(t));
    }
  }
  *variables_created = ctx.variables_created();
  graph->verify();
  auto entry = std::make_shared<TracedGraph>();
  entry->name = options.name;
  entry->graph = graph;
  // The plan runs an optimized copy; the verify option compares the traced
  // graph's values node by node with eager ops, so it runs the graph as traced.
  entry->plan = std::make_unique<exec::Plan>(
      options.verify ? std::shared_ptr<const graph::Graph>(graph)
                     : passes::optimize(*graph, passes::PassOptions::from_env()));
  entry->key = key;
  entry->result_sizes = std::move(out.sizes);
  entry->dispatch_nodes = ctx.dispatch_nodes();
  entry->front_end_data = std::move(out.front_end_data);
  return entry;
}

[[noreturn]] void variables_on_retrace(const FunctionOptions& options, int trace_number) {
  throw FailedPrecondition(fmt::format(
      "kiln::function '{}' created variables on trace {}, after its first trace. Eager code would "
      "make new variables on every call while the graph makes them once, so eager and graph "
      "results would disagree. Create variables only once (for example `if (!v) v = "
      "kiln::Variable(...)`, or in a Module's constructor), or pass them in as arguments.",
      options.name, trace_number));
}

// TF's rule for variables: a trace that creates variables may only be the
// first one. Then the callable is traced once more, and that trace must
// create none; it is the graph used from then on. `first_run` is the
// first trace when it created variables: the caller runs it once, for this
// call, so the variables it initializes from arguments get their values.
Entry trace_entry(const FunctionOptions& options, const TraceKey& key, const Flattener::LeafNames& leaf_names,
                  TraceFnRef trace, int traces_so_far, Entry* first_run) {
  int created = 0;
  Entry e = trace_once(options, key, leaf_names, trace, &created);
  if (created == 0) return e;
  if (traces_so_far > 0) variables_on_retrace(options, traces_so_far + 1);
  *first_run = e;
  Entry again = trace_once(options, key, leaf_names, trace, &created);
  if (created > 0) variables_on_retrace(options, 2);
  return again;
}

// Runs ops eagerly and keeps every op's outputs, in dispatch order.
class RecordingHandler : public DispatchHandler {
 public:
  runtime::TensorList dispatch(const OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                               const SourceLocation& loc) override {
    runtime::TensorList out = runtime::run_eager(op, inputs, attrs, &loc);
    outputs.emplace_back(out.begin(), out.end());
    return out;
  }
  std::vector<std::vector<Tensor>> outputs;
};

// Resource outputs are handles made anew by each run; their values are what count.
bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == DType::Resource ? a.dtype() == b.dtype() && a.shape() == b.shape() : core::same_bits(a, b);
}

std::string value_text(const Tensor& t) {
  return fmt::format("{} {}", dtype_name(t.dtype()), t.shape().to_string());
}

// FunctionOptions::verify: run the graph keeping every value, run the
// callable eagerly recording every op, and compare op by op.
ResultLeaves verify_call(const FunctionOptions& options, const TracedGraph& entry,
                                std::span<const Tensor> leaves, TraceFnRef trace) {
  std::vector<std::vector<Tensor>> graph_values;
  TracedGraph::Inputs inputs = entry.inputs(leaves);
  ResultLeaves results = entry.plan->run(std::span<const Tensor>(inputs.data(), inputs.size()), &graph_values);

  RecordingHandler recorder;
  ResultFlattener eager_out;
  {
    runtime::DispatchHandlerGuard guard(&recorder);
    trace.call(trace.object, leaves, eager_out);
  }
  std::size_t n = std::min(recorder.outputs.size(), entry.dispatch_nodes.size());
  for (std::size_t i = 0; i < n; ++i) {
    const graph::Node* node = entry.dispatch_nodes[i];
    const std::vector<Tensor>& eager = recorder.outputs[i];
    const std::vector<Tensor>& graph_out = graph_values[node->id];
    for (std::size_t k = 0; k < eager.size() && k < graph_out.size(); ++k) {
      if (!graph_out[k].defined() || bitwise_equal(eager[k], graph_out[k])) continue;
      const SourceLocation& loc = node->location;
      throw InvalidArgument(fmt::format(
          "verify: kiln::function '{}': op {} (node '{}', created at {}:{}) gives different results "
          "eagerly and in the graph: output {} is {} eagerly and {} in the graph{}",
          options.name, node->op->name, node->name, loc.file_name(), loc.line(), k, value_text(eager[k]),
          value_text(graph_out[k]),
          eager[k].shape() == graph_out[k].shape() ? " with different values" : ""));
    }
  }
  if (recorder.outputs.size() != entry.dispatch_nodes.size())
    throw InvalidArgument(fmt::format(
        "verify: kiln::function '{}' ran {} ops eagerly but {} while tracing: its C++ control flow "
        "depends on something other than its arguments",
        options.name, recorder.outputs.size(), entry.dispatch_nodes.size()));
  for (std::size_t i = 0; i < results.size() && i < eager_out.leaves.size(); ++i)
    if (!bitwise_equal(results[i], eager_out.leaves[i]))
      throw InvalidArgument(fmt::format("verify: kiln::function '{}': result {} differs eagerly and in the graph",
                                        options.name, i));
  return results;
}

void check_not_recursive(const FunctionCore::State& s) {
  if (s.tracing_thread.load(std::memory_order_relaxed) == std::this_thread::get_id())
    throw Unimplemented(fmt::format(
        "kiln::function '{}' called itself while being traced; recursive functions are not "
        "supported (write the recursion as kiln::while_loop)",
        s.options.name));
}

// Marks the calling thread as tracing `s` for the guard's lifetime.
class TracingMark {
 public:
  explicit TracingMark(FunctionCore::State& s) : s_(s) {
    s_.tracing_thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  ~TracingMark() { s_.tracing_thread.store(std::thread::id(), std::memory_order_relaxed); }

 private:
  FunctionCore::State& s_;
};

}  // namespace

std::shared_ptr<const TracedGraph> FunctionCore::concrete(Flattener& flat, TraceFnRef trace) {
  State& s = *state_;
  check_not_recursive(s);
  std::lock_guard<std::mutex> lock(s.mutex);
  const TraceKey* key = &flat.key;
  TraceKey sig;
  if (s.options.input_signature) {
    sig = signature_key(*s.options.input_signature);
    key = &sig;
  }
  if (Entry e = s.cache.find(*key)) return e;
  ++s.info.misses;
  Entry first_run;
  TracingMark mark(s);
  Entry e = trace_entry(s.options, *key, flat.leaf_names, trace, static_cast<int>(s.info.traces), &first_run);
  // A trace asked for by specs serves every call those specs accept (TF's
  // dispatch to a supertype): f.get_concrete_function(TensorSpec([None]))
  // then f(x) traces once.
  e->relaxed = true;
  // A first trace that initializes variables from arguments cannot run here
  // (specs have no values); reading such a variable later says so.
  ++s.info.traces;
  s.cache.add(*key, e);
  s.info.entries = static_cast<int64_t>(s.cache.entries().size());
  return e;
}

namespace {

// Logs why trace `number` happened (against the previous trace) and warns
// once when retraces keep coming.
void log_retrace(FunctionCore::State& s, const TraceKey& call, int number, bool relaxed) {
  if (!s.last_traced) return;
  RetraceRecord r = explain(s.last_traced->key, call, number, relaxed);
  s.log.push_back(r);
  int changes = ++s.changes_by_path[r.path];
  if (static_cast<int>(s.log.size()) >= kRetraceWarningThreshold && !s.warned) {
    s.warned = true;
    std::cerr << fmt::format(
        "kiln: warning: function '{}' has traced {} times; '{}' keeps changing ({} of the "
        "retraces; last: {}). Pass tensors instead of C++ values that change, use "
        "input_signature, or see retrace_log().\n",
        s.options.name, number, r.path, changes, r.text());
  }
}

// A call no trace accepts: traces the signature's specs (input_signature), or
// the call's key relaxed against the closest existing trace (shape
// relaxation), or the call's key as it is.
Entry trace_for_call(FunctionCore::State& s, const Flattener& flat, TraceFnRef trace, Entry* first_run) {
  ++s.info.misses;
  if (s.options.input_signature) {
    TraceKey sig = signature_key(*s.options.input_signature);
    if (function_impl::mismatch(sig, flat.key)) signature_mismatch(s.options, flat);
    TracingMark mark(s);
    Entry entry = trace_entry(s.options, sig, flat.leaf_names, trace, static_cast<int>(s.info.traces), first_run);
    entry->relaxed = true;
    ++s.info.traces;
    return entry;
  }
  if (s.max_traces >= 0 && s.info.traces + 1 > s.max_traces)
    throw FailedPrecondition(fmt::format(
        "kiln::function '{}' would trace a {}th time, over its budget of {} (expect_max_traces)", s.options.name,
        s.info.traces + 1, s.max_traces));
  TraceCache::Generalized g =
      s.options.exact_shapes ? TraceCache::Generalized{flat.key, nullptr} : s.cache.generalize(flat.key);
  int number = static_cast<int>(s.info.traces) + 1;
  Entry entry;
  {
    TracingMark mark(s);
    entry = trace_entry(s.options, g.key, flat.leaf_names, trace, static_cast<int>(s.info.traces), first_run);
  }
  entry->relaxed = g.from != nullptr;
  log_retrace(s, flat.key, number, entry->relaxed);
  ++s.info.traces;
  s.last_traced = entry;
  return entry;
}

}  // namespace

CallResult FunctionCore::call(Flattener& flat, TraceFnRef trace) {
  State& s = *state_;
  Entry entry, first_run;
  {
    check_not_recursive(s);
    std::lock_guard<std::mutex> lock(s.mutex);
    entry = s.cache.match(flat.key);
    if (entry) [[likely]] {
      ++s.info.hits;
    } else {
      entry = trace_for_call(s, flat, trace, &first_run);
      s.cache.add(flat.key, entry);
      s.info.entries = static_cast<int64_t>(s.cache.entries().size());
    }
  }
  const Entry& runner = first_run ? first_run : entry;
  std::span<const Tensor> leaves_in(flat.leaves.data(), flat.leaves.size());
  if (!s.options.verify) [[likely]] {
    if (runtime::TapeHook* tapes = runtime::thread_state.tapes) [[unlikely]]
      return CallResult{function_impl::record_call(*tapes, *runner, leaves_in, nullptr), runner};
    return CallResult{runner->run(leaves_in), runner};
  }
  ResultLeaves out = verify_call(s.options, *runner, leaves_in, trace);
  if (runtime::TapeHook* tapes = runtime::thread_state.tapes) out = function_impl::record_call(*tapes, *runner, leaves_in, &out);
  return CallResult{std::move(out), runner};
}

CallResult FunctionCore::call_in_trace(Flattener& flat, TraceFnRef trace) {
  std::shared_ptr<const TracedGraph> impl = concrete(flat, trace);
  TracedGraph::Inputs inputs = impl->inputs(std::span<const Tensor>(flat.leaves.data(), flat.leaves.size()));
  // The Call returns what its gradient takes from the forward run after the
  // function's results; the caller sees the results only.
  std::shared_ptr<const graph::Graph> g = graph_ops::with_values_for_backward(impl->graph);
  bool stateful = !g->stateful_nodes().empty();
  runtime::TensorList out =
      runtime::dispatch(graph_ops::call_op(stateful), std::span<const Tensor>(inputs.data(), inputs.size()),
                        schema::Attrs{{"f", g}}, SourceLocation());
  auto end = out.begin() + static_cast<std::ptrdiff_t>(impl->graph->results().size());
  return CallResult{ResultLeaves(std::make_move_iterator(out.begin()), std::make_move_iterator(end)), impl};
}

int FunctionCore::tracing_count() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int>(state_->info.traces);
}

std::vector<RetraceRecord> FunctionCore::retrace_log() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->log;
}

CacheInfo FunctionCore::cache_info() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->info;
}

std::vector<std::shared_ptr<const TracedGraph>> FunctionCore::concrete_functions() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const std::vector<Entry>& entries = state_->cache.entries();
  return {entries.begin(), entries.end()};
}

void FunctionCore::expect_max_traces(int n) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->max_traces = n;
}

}  // namespace detail
}  // namespace kiln
