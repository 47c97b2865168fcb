// GradientTape: recording through the dispatch hook, and the backward pass.
#include "autodiff/tape.h"

#include <algorithm>
#include <unordered_map>

#include "kiln/math.h"
#include "ops/variable_ops.h"

namespace kiln {
namespace detail {

namespace {

// Real and complex floating dtypes carry gradients (complex ones by TF's
// convention, dL/dRe + i dL/dIm: docs/design-notes.md, "Complex gradients").
bool differentiable(DType dtype) { return is_floating(dtype) || is_complex(dtype) || dtype == DType::Resource; }

// The tapes alive on one thread, innermost last. It is the thread's TapeHook
// while it holds at least one tape.
class TapeRecorder final : public runtime::TapeHook {
 public:
  std::vector<TapeState*> tapes;

  runtime::TensorList dispatch(const OpDef& op, std::span<const Tensor> inputs, schema::Attrs&& attrs,
                               const SourceLocation& loc) override {
    SmallVector<TapeState*, 2> recording;
    if (!op.is(schema::kNotDifferentiable)) {
      for (TapeState* t : tapes)
        if (records(*t, inputs)) recording.push_back(t);
    }
    if (recording.empty()) return runtime::dispatch_untaped(op, inputs, std::move(attrs), loc);
    // The tape holds the inputs from here on, so no kernel writes over them.
    // Every output is a tensor of its own (core::give_own_identity), never
    // one of the inputs, so the tape can key values by identity.
    SmallVector<Tensor, 3> kept(inputs.begin(), inputs.end());
    schema::Attrs kept_attrs = attrs;
    runtime::TensorList out = runtime::dispatch_untaped(op, inputs, std::move(attrs), loc);
    std::span<const Tensor> kept_in(kept.data(), kept.size());
    std::span<const Tensor> outs(out.data(), out.size());
    for (TapeState* t : recording) t->add(op, kept_in, outs, kept_attrs);
    return out;
  }

  void record(const OpDef& op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
              const schema::Attrs& attrs) override {
    if (op.is(schema::kNotDifferentiable)) return;
    for (TapeState* t : tapes)
      if (records(*t, inputs)) t->add(op, inputs, outputs, attrs);
  }

  void variable_accessed(const Variable& v) override {
    if (!v.trainable()) return;
    for (TapeState* t : tapes)
      if (active(*t) && t->options.watch_accessed_variables) t->watch(v);
  }

 private:
  static bool active(const TapeState& t) { return t.recording && t.context == runtime::thread_state.handler; }

  // Trainable variables reach a Call/If/While as captured resource handles:
  // reading them inside the nested graph happened while it was traced, so
  // the tape learns of them here.
  static void watch_accessed_resources(TapeState& t, std::span<const Tensor> inputs) {
    if (!t.options.watch_accessed_variables) return;
    for (const Tensor& in : inputs) {
      if (in.dtype() != DType::Resource || in.is_symbolic() || t.watched.count(in.impl())) continue;
      if (ops::resource_state(in).trainable) t.watch(Variable::from_handle(in));
    }
  }

  static bool records(TapeState& t, std::span<const Tensor> inputs) {
    if (!active(t)) return false;
    watch_accessed_resources(t, inputs);
    return t.watches_any(inputs);
  }
};

thread_local TapeRecorder recorder;

// Activates / deactivates a tape on this thread.
void push_tape(TapeState* tape) {
  recorder.tapes.push_back(tape);
  runtime::thread_state.tapes = &recorder;
}

void pop_tape(TapeState* tape) {
  auto& tapes = recorder.tapes;
  tapes.erase(std::remove(tapes.begin(), tapes.end(), tape), tapes.end());
  if (tapes.empty()) runtime::thread_state.tapes = nullptr;
}

}  // namespace

void TapeState::watch(const Tensor& t) {
  if (!t.defined()) throw InvalidArgument("GradientTape::watch: the tensor is null");
  if (watched.insert(t.impl()).second) watched_tensors.push_back(t);
}

void TapeState::watch(const Variable& v) {
  if (!v) throw InvalidArgument("GradientTape::watch: the variable is null");
  if (watched.count(v.handle().impl())) return;
  watch(v.handle());
  variables.push_back(v);
}

bool TapeState::watches_any(std::span<const Tensor> inputs) const {
  if (watched.empty()) return false;
  for (const Tensor& in : inputs)
    if (watched.count(in.impl())) return true;
  return false;
}

void TapeState::add(const OpDef& op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                    const schema::Attrs& attrs) {
  autodiff::TapeEntry e{&op, SmallVector<Tensor, 3>(inputs.begin(), inputs.end()),
              runtime::TensorList(outputs.begin(), outputs.end()), attrs};
  for (const Tensor& out : outputs)
    if (differentiable(out.dtype())) watched.insert(out.impl());
  entries.push_back(std::move(e));
}

namespace {

using GradMap = std::unordered_map<const TensorImpl*, Tensor>;

void accumulate(GradMap& grads, const Tensor& of, Tensor g) {
  auto [it, fresh] = grads.try_emplace(of.impl(), g);
  if (!fresh) it->second = add(it->second, g);
}

}  // namespace

std::vector<Tensor> TapeState::gradient(const std::vector<Tensor>& targets,
                                        const std::vector<GradientSource>& sources,
                                        const std::vector<Tensor>& output_gradients) {
  if (used && !options.persistent)
    throw FailedPrecondition(
        "GradientTape::gradient: a non-persistent tape can compute gradients only once; create it "
        "with {.persistent = true} to call gradient() several times");
  if (!output_gradients.empty() && output_gradients.size() != targets.size())
    throw InvalidArgument(fmt::format("GradientTape::gradient: {} output gradients for {} targets",
                                      output_gradients.size(), targets.size()));
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (!targets[i].defined()) throw InvalidArgument(fmt::format("GradientTape::gradient: target {} is null", i));
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].tensor().defined())
      throw InvalidArgument(fmt::format("GradientTape::gradient: source {} is null", i));

  // The backward ops are not recorded on this tape (outer tapes do record
  // them: that is how gradients of gradients work).
  bool was_recording = recording;
  recording = false;
  struct Restore {
    TapeState* t;
    bool r;
    ~Restore() { t->recording = r; }
  } restore{this, was_recording};

  // Forward: which entries lie on a path from a source.
  std::unordered_set<const TensorImpl*> source_ids;
  for (const GradientSource& s : sources) source_ids.insert(s.tensor().impl());
  std::unordered_set<const TensorImpl*> reach = source_ids;
  std::vector<char> relevant(entries.size(), 0);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const autodiff::TapeEntry& e = entries[i];
    bool hit = std::any_of(e.inputs.begin(), e.inputs.end(), [&](const Tensor& t) { return reach.count(t.impl()); });
    if (!hit) continue;
    relevant[i] = 1;
    for (const Tensor& out : e.outputs) reach.insert(out.impl());
  }

  GradMap grads;
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const Tensor& y = targets[k];
    if (!is_floating(y.dtype()) && !is_complex(y.dtype())) continue;  // integer targets carry no gradient
    Tensor seed = output_gradients.empty() || !output_gradients[k].defined() ? ones_like(y) : output_gradients[k];
    if (seed.dtype() != y.dtype() || (!seed.is_symbolic() && !y.is_symbolic() && seed.shape() != y.shape()))
      throw InvalidArgument(fmt::format(
          "GradientTape::gradient: output gradient {} is {} {}, its target is {} {}", k, dtype_name(seed.dtype()),
          seed.shape().to_string(), dtype_name(y.dtype()), y.shape().to_string()));
    accumulate(grads, y, std::move(seed));
  }

  for (std::size_t i = entries.size(); i-- > 0;) {
    if (!relevant[i]) continue;
    const autodiff::TapeEntry& e = entries[i];
    SmallVector<Tensor, 2> dys(e.outputs.size());
    bool any = false;
    for (std::size_t j = 0; j < e.outputs.size(); ++j) {
      auto it = grads.find(e.outputs[j].impl());
      if (it == grads.end()) continue;
      dys[j] = it->second;
      any = true;
      if (!source_ids.count(it->first)) grads.erase(it);  // consumed: free it early
    }
    if (!any) continue;
    SmallVector<bool, 4> wanted(e.inputs.size());
    bool want_any = false;
    for (std::size_t j = 0; j < e.inputs.size(); ++j) {
      wanted[j] = differentiable(e.inputs[j].dtype()) && reach.count(e.inputs[j].impl());
      want_any = want_any || wanted[j];
    }
    if (!want_any) continue;
    if (!e.op->gradient)
      throw Unimplemented(fmt::format("GradientTape::gradient: op {} has no gradient", e.op->name));
    schema::GradContext c{.op = *e.op,
                          .inputs = std::span<const Tensor>(e.inputs.data(), e.inputs.size()),
                          .outputs = std::span<const Tensor>(e.outputs.data(), e.outputs.size()),
                          .attrs = e.attrs,
                          .grads = std::span<const Tensor>(dys.data(), dys.size()),
                          .input_grads = SmallVector<Tensor, 4>(e.inputs.size()),
                          .wanted = std::span<const bool>(wanted.data(), wanted.size())};
    e.op->gradient(c);
    for (std::size_t j = 0; j < e.inputs.size(); ++j)
      if (wanted[j] && c.input_grads[j].defined()) accumulate(grads, e.inputs[j], std::move(c.input_grads[j]));
  }

  std::vector<Tensor> result;
  result.reserve(sources.size());
  for (const GradientSource& s : sources) {
    auto it = grads.find(s.tensor().impl());
    result.push_back(it == grads.end() ? Tensor() : it->second);
  }
  if (!options.persistent) {
    used = true;
    restore.r = false;  // a used non-persistent tape records nothing more
    entries.clear();
    entries.shrink_to_fit();
  }
  return result;
}

}  // namespace detail

// ---- public API --------------------------------------------------------------

GradientTape::GradientTape(GradientTapeOptions options) : state_(std::make_unique<detail::TapeState>()) {
  state_->options = options;
  state_->context = runtime::thread_state.handler;
  detail::push_tape(state_.get());
}

GradientTape::~GradientTape() { detail::pop_tape(state_.get()); }

void GradientTape::watch(const Tensor& tensor) { state_->watch(tensor); }
void GradientTape::watch(const Variable& variable) { state_->watch(variable); }
std::vector<Variable> GradientTape::watched_variables() const { return state_->variables; }

GradientTape::Pause::Pause(detail::TapeState* state) : state_(state), was_recording_(state->recording) {
  state_->recording = false;
}
GradientTape::Pause::~Pause() { state_->recording = was_recording_; }
GradientTape::Pause GradientTape::stop_recording() { return Pause(state_.get()); }

std::vector<Tensor> GradientTape::gradient(const std::vector<Tensor>& targets,
                                           const std::vector<GradientSource>& sources,
                                           const std::vector<Tensor>& output_gradients) {
  return state_->gradient(targets, sources, output_gradients);
}
std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<GradientSource>& sources) {
  return state_->gradient({target}, sources, {});
}
std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Variable>& sources) {
  return state_->gradient({target}, std::vector<GradientSource>(sources.begin(), sources.end()), {});
}
Tensor GradientTape::gradient(const Tensor& target, const GradientSource& source) {
  return state_->gradient({target}, {source}, {})[0];
}

}  // namespace kiln
