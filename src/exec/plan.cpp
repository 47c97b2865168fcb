#include "exec/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "core/error_context.h"
#include "exec/cancellation.h"
#include "runtime/dispatch.h"

namespace kiln::exec {

namespace {

std::string location_text(const graph::Node& n) {
  const SourceLocation& loc = n.location;
  if (loc.line() == 0) return node_text(n);
  return fmt::format("{}, created at {}:{}", node_text(n), loc.file_name(), loc.line());
}

// Re-raises the active exception with the same kind, adding where in the
// user's code the failing node came from.
[[noreturn]] void rethrow_at(const graph::Node& n) {
  core::rethrow_with_context("", "\n  raised by " + location_text(n));
}

}  // namespace

// A call's slots. The vectors are recycled per thread (a stack of them,
// since steps run nested plans), so a call does not allocate its frame.
class Plan::Frame {
 public:
  explicit Frame(int num_slots) {
    Pool* pool = pool_();
    if (pool && !pool->free.empty()) {
      slots_ = pool->free.back();
      pool->free.pop_back();
    } else {
      slots_ = new std::vector<Tensor>();
    }
    slots_->resize(static_cast<std::size_t>(num_slots));
  }
  ~Frame() {
    slots_->clear();
    Pool* pool = pool_();
    if (pool && pool->free.size() < Pool::kMax) {
      pool->free.push_back(slots_);
      return;
    }
    delete slots_;
  }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  Tensor& operator[](int slot) { return (*slots_)[static_cast<std::size_t>(slot)]; }
  Tensor* slots() { return slots_->data(); }

 private:
  struct Pool {
    static constexpr std::size_t kMax = 64;
    std::vector<std::vector<Tensor>*> free;
    ~Pool() {
      for (auto* v : free) delete v;
      free.clear();
      gone = true;
    }
    static inline thread_local bool gone = false;
  };
  // nullptr once the thread's pool is destroyed (at thread exit).
  static Pool* pool_() {
    thread_local Pool pool;
    return Pool::gone ? nullptr : &pool;
  }
  std::vector<Tensor>* slots_;
};

namespace {

// One call's arena: a single buffer holding the planned values' headers
// and elements; each value retains it, so it lives as long as they do.
class Arena {
 public:
  Arena(const MemoryPlan& plan, bool enabled)
      : plan_(plan),
        buffer_(enabled && plan.arena_bytes ? core::allocate_buffer(DType::UInt8, plan.arena_bytes) : nullptr) {}
  ~Arena() {
    if (buffer_) core::release(buffer_);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  bool active() const { return buffer_ != nullptr; }

  Tensor value(int allocation, const Shape& shape) const {
    const MemoryPlan::Allocation& a = plan_.allocations[static_cast<std::size_t>(allocation)];
    core::Buffer* slice = core::make_slice(header(allocation), buffer_, a.dtype, a.count,
                                           base() + plan_.data_start + a.offset);
    return core::adopt_buffer(a.dtype, shape, slice);
  }
  // Whether the values whose lifetime ends with `step` are all released;
  // if one is still held (a kernel kept it), their bytes are not free.
  bool released_after(std::size_t step) const {
    for (int a : plan_.ends[step])
      if (static_cast<const core::Buffer*>(header(a))->refs.load(std::memory_order_acquire) != 0) return false;
    return true;
  }

 private:
  char* base() const { return static_cast<char*>(buffer_->data()); }
  void* header(int allocation) const {
    return base() + static_cast<std::size_t>(allocation) * core::Buffer::kHeaderBytes;
  }
  const MemoryPlan& plan_;
  core::Buffer* buffer_;
};

// Runs a step whose outputs have places in the arena.
runtime::TensorList run_in_arena(const Step& step, std::span<const Tensor> inputs, const Arena& arena) {
  const graph::Node& n = *step.node;
  runtime::TensorList outs(n.outputs.size());
  for (std::size_t k = 0; k < outs.size(); ++k) {
    int a = step.arena_allocation[k];
    const schema::TensorType& t = n.outputs[k];
    outs[k] = a >= 0 ? arena.value(a, t.shape) : core::make_tensor(t.dtype, t.shape);
  }
  runtime::run_kernel_into(*n.op, inputs, n.attrs, outs, &n.location);
  return outs;
}

// Allocates a background step's outputs (never in the arena: the work writes
// them after the step) and starts it.
runtime::TensorList start_step(const Step& step, std::span<const Tensor> inputs, void** token) {
  const graph::Node& n = *step.node;
  runtime::TensorList outs(n.outputs.size());
  if (step.static_types) {
    for (std::size_t k = 0; k < outs.size(); ++k) outs[k] = core::make_tensor(n.outputs[k].dtype, n.outputs[k].shape);
  } else {
    schema::InferContext ic(*n.op, inputs, n.attrs);
    n.op->infer(ic);
    for (std::size_t k = 0; k < outs.size(); ++k)
      outs[k] = core::make_tensor(ic.outputs()[k].dtype, ic.outputs()[k].shape);
  }
  schema::KernelContext kc{*n.op, inputs, std::span<Tensor>(outs.data(), outs.size()), n.attrs};
  *token = n.op->start(kc);
  return outs;
}

// The tokens of a call's started background steps. Whatever is still running
// when the call ends or fails is finished here (errors dropped: the call is
// already failing), so no work outlives the values it writes to.
class Background {
 public:
  explicit Background(const std::vector<const graph::Node*>& nodes) : nodes_(nodes) {
    tokens_.resize(nodes.size());
  }
  ~Background() {
    for (std::size_t a = 0; a < tokens_.size(); ++a) {
      if (!tokens_[a]) continue;
      try {
        nodes_[a]->op->finish(std::exchange(tokens_[a], nullptr));
      } catch (...) {
      }
    }
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  void set(int a, void* token) { tokens_[static_cast<std::size_t>(a)] = token; }
  void finish(int a) {
    void* token = std::exchange(tokens_[static_cast<std::size_t>(a)], nullptr);
    if (!token) return;
    const graph::Node& n = *nodes_[static_cast<std::size_t>(a)];
    try {
      n.op->finish(token);
    } catch (...) {
      rethrow_at(n);
    }
  }
  void finish_all() {
    for (std::size_t a = 0; a < tokens_.size(); ++a) finish(static_cast<int>(a));
  }

 private:
  const std::vector<const graph::Node*>& nodes_;
  detail::SmallVector<void*, 4> tokens_;
};

}  // namespace

Plan::Plan(std::shared_ptr<const graph::Graph> g) : graph_(std::move(g)) {
  const graph::Graph& gr = *graph_;
  const auto& nodes = gr.nodes();
  // What the results and the stateful nodes need (placeholders, also
  // live, are graph-only: the caller feeds them).
  const std::vector<char> needed = gr.live_nodes();

  // Slots: one per output of every node (unused ones stay empty).
  std::vector<int> first_slot(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    first_slot[i] = num_slots_;
    num_slots_ += static_cast<int>(nodes[i]->outputs.size());
  }
  auto slot_of = [&](const graph::Value& v) { return first_slot[v.node->id] + v.index; };
  for (const graph::Node* p : gr.parameters()) input_slots_.push_back(first_slot[p->id]);
  for (const graph::Capture& c : gr.captures()) input_slots_.push_back(first_slot[c.placeholder->id]);
  for (const graph::Value& v : gr.results()) result_slots_.push_back(slot_of(v));

  for (const auto& node : nodes) {
    if (!needed[node->id] || node->op->is(schema::kGraphOnly)) continue;
    Step step;
    step.node = node.get();
    for (const graph::Value& v : node->inputs) step.inputs.push_back(slot_of(v));
    for (std::size_t k = 0; k < node->outputs.size(); ++k)
      step.outputs.push_back(first_slot[node->id] + static_cast<int>(k));
    step.last_use.resize(step.inputs.size());
    step.static_types = true;
    for (const graph::Value& v : node->inputs)
      step.static_types &= gr.type_of(v).shape.is_fully_defined();
    for (const schema::TensorType& t : node->outputs) step.static_types &= t.shape.is_fully_defined();
    steps_.push_back(std::move(step));
  }
  hoist_background_steps();
  place_finishes();
  // Last uses, scanning backwards; results and inputs fed by the caller stay.
  std::vector<char> used_later(num_slots_, 0);
  for (int s : result_slots_) used_later[s] = 1;
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    for (int s : it->outputs) {
      it->output_read.push_back(used_later[s] != 0);
      it->drops_outputs |= !used_later[s];
    }
    for (std::size_t k = it->inputs.size(); k-- > 0;) {
      int s = it->inputs[k];
      it->last_use[k] = !used_later[s];
      used_later[s] = 1;
    }
  }
  memory_ = plan_memory(gr, steps_, num_slots_, input_slots_, result_slots_);
}

void Plan::hoist_background_steps() {
  bool any = false;
  for (const Step& st : steps_) any |= st.node->op->start != nullptr;
  if (!any) return;
  // pos[node id]: the node's step index in `out` (-1: no step).
  std::vector<int> pos(graph_->nodes().size(), -1);
  std::vector<Step> out;
  out.reserve(steps_.size());
  int last_background = -1;
  for (Step& st : steps_) {
    const graph::Node& n = *st.node;
    if (!n.op->start) {
      pos[n.id] = static_cast<int>(out.size());
      out.push_back(std::move(st));
      continue;
    }
    // After its inputs' producers, its control inputs, and the background
    // step before it (background steps keep graph order: every process
    // running this graph starts its collectives in the same order).
    int after = last_background;
    for (const graph::Value& v : n.inputs) after = std::max(after, pos[v.node->id]);
    for (const graph::Node* c : n.control_inputs) after = std::max(after, pos[c->id]);
    int at = after + 1;
    out.insert(out.begin() + at, std::move(st));
    for (std::size_t i = static_cast<std::size_t>(at); i < out.size(); ++i) pos[out[i].node->id] = static_cast<int>(i);
    last_background = at;
  }
  steps_ = std::move(out);
}

void Plan::place_finishes() {
  std::vector<int> started_by(static_cast<std::size_t>(num_slots_), -1);
  std::vector<char> finished;
  for (Step& st : steps_) {
    for (int s : st.inputs) {
      int a = started_by[static_cast<std::size_t>(s)];
      if (a >= 0 && !finished[static_cast<std::size_t>(a)]) {
        st.finish_first.push_back(a);
        finished[static_cast<std::size_t>(a)] = 1;
      }
    }
    if (!st.node->op->start) continue;
    st.background = static_cast<int>(background_nodes_.size());
    background_nodes_.push_back(st.node);
    finished.push_back(0);
    for (int s : st.outputs) started_by[static_cast<std::size_t>(s)] = st.background;
  }
}

void Plan::check_inputs(std::size_t num_inputs) const {
  if (num_inputs != input_slots_.size())
    throw Internal(fmt::format("plan of '{}' takes {} inputs, got {}", graph_->name(),
                               input_slots_.size(), num_inputs));
}

namespace {
// A graph's result that is also one of its inputs, a capture or a variable's
// value becomes a tensor of its own once the frame lets go of it.
detail::ResultLeaves with_own_identities(detail::ResultLeaves results) {
  for (Tensor& t : results) core::give_own_identity(t);
  return results;
}
}  // namespace

detail::ResultLeaves Plan::run(std::span<const Tensor> inputs,
                               std::vector<std::vector<Tensor>>* all_values) const {
  check_inputs(inputs.size());
  detail::ResultLeaves results;
  {
    Frame frame(num_slots_);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      core::require_concrete(inputs[i], "running a graph");
      frame[input_slots_[i]] = inputs[i];
    }
    results = execute(frame, all_values);
  }
  return with_own_identities(std::move(results));
}

detail::ResultLeaves Plan::run_consuming(std::span<Tensor> inputs, std::size_t consumed) const {
  check_inputs(inputs.size());
  detail::ResultLeaves results;
  {
    Frame frame(num_slots_);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      core::require_concrete(inputs[i], "running a graph");
      frame[input_slots_[i]] = i < consumed ? std::move(inputs[i]) : inputs[i];
    }
    results = execute(frame, nullptr);
  }
  return with_own_identities(std::move(results));
}

detail::ResultLeaves Plan::execute(Frame& frame, std::vector<std::vector<Tensor>>* all_values) const {
  const bool keep_all = all_values != nullptr;
  // The profiler records this run and each step (checked once per run).
  std::optional<runtime::profiling::EventScope> run_event;
  const bool profiling = runtime::profiling::on();
  if (profiling) [[unlikely]] run_event.emplace();
  // Keeping every value (all_values) defeats the sharing the plan assumes.
  Arena arena(memory_, !keep_all);
  bool arena_usable = arena.active();
  // Declared after the arena: its destructor (finishing leftover work) runs
  // first, while the values the work may touch are still alive.
  Background background(background_nodes_);
  // A step's inputs: a fused optimizer update takes 4 or 5 per variable, and
  // up to 48 need no heap allocation.
  detail::SmallVector<Tensor, 48> args;
  Tensor* slots = frame.slots();
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = steps_[i];
    // A deadline or a cancellation (kiln/cancellation.h) stops the call here.
    check_cancellation([&] { return node_text(*step.node); });
    for (int a : step.finish_first) background.finish(a);
    for (std::size_t k = 0; k < step.inputs.size(); ++k) {
      Tensor& slot = slots[step.inputs[k]];
      if (step.last_use[k] && !keep_all) args.push_back(std::move(slot));
      else args.push_back(slot);
    }
    const graph::Node& n = *step.node;
    std::optional<runtime::profiling::EventScope> step_event;
    if (profiling) [[unlikely]] step_event.emplace();
    try {
      std::span<const Tensor> in(args.data(), args.size());
      std::span<const schema::TensorType> types(n.outputs.data(), n.outputs.size());
      runtime::TensorList outs;
      if (step.background >= 0) [[unlikely]] {
        void* token = nullptr;
        outs = start_step(step, in, &token);
        background.set(step.background, token);
      } else {
        // Inputs moved in at their last use may be taken over by the kernel.
        std::span<Tensor> consumable;
        if (n.op->is(schema::kConsumesInputs) && !keep_all) consumable = std::span<Tensor>(args.data(), args.size());
        outs = step.uses_arena && arena_usable ? run_in_arena(step, in, arena)
               : step.static_types ? runtime::run_kernel(*n.op, in, n.attrs, types, &n.location, consumable)
                                   : runtime::run_eager(*n.op, in, n.attrs, &n.location, consumable);
      }
      if (step_event) [[unlikely]]
        step_event->end_op(runtime::profiling::Kind::GraphOp, n.op->name, &n.name, &graph_->name(), n.location,
                           std::span<const Tensor>(outs.data(), outs.size()));
      args.clear();
      const bool store_all = !step.drops_outputs || keep_all;
      for (std::size_t k = 0; k < step.outputs.size(); ++k)
        if (store_all || step.output_read[k]) slots[step.outputs[k]] = std::move(outs[k]);
    } catch (...) {
      rethrow_at(n);
    }
    // From here on the plan's sharing is unsafe if a value it thought dead
    // is still held: the rest of the call allocates normally.
    if (arena_usable && !arena.released_after(i)) arena_usable = false;
  }
  // Work whose outputs only the caller reads (or nobody).
  background.finish_all();
  if (all_values) {
    const auto& nodes = graph_->nodes();
    all_values->assign(nodes.size(), {});
    int slot = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (std::size_t k = 0; k < nodes[i]->outputs.size(); ++k) (*all_values)[i].push_back(frame[slot++]);
  }
  detail::ResultLeaves results;
  results.reserve(result_slots_.size());
  for (int s : result_slots_) results.push_back(frame[s]);
  if (run_event) [[unlikely]] run_event->end_function(&graph_->name(), graph_);
  return results;
}

}  // namespace kiln::exec
