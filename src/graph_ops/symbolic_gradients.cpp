// kiln::gradients (TF's tf.gradients): the backward pass of the graph being
// traced, from values that already exist. The graph's nodes become the
// entries of a tape (in their topological order, each value one symbolic
// tensor), and the tape's own backward walk appends the gradient ops to the
// graph, as a GradientTape recording inside the trace would have.
#include <unordered_map>
#include <unordered_set>

#include "autodiff/tape.h"
#include "core/tensor_impl.h"
#include "trace/tracing_context.h"

namespace kiln {

namespace {

struct ValueHash {
  std::size_t operator()(const graph::Value& v) const {
    return std::hash<const void*>()(v.node) * 31u + static_cast<std::size_t>(v.index);
  }
};

trace::TracingContext& current_trace() {
  auto* ctx = dynamic_cast<trace::TracingContext*>(runtime::thread_state.handler);
  if (!ctx)
    throw FailedPrecondition(
        "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.");
  return *ctx;
}

// One symbolic tensor per graph value, so the tape's identity keys match.
class Values {
 public:
  explicit Values(trace::TracingContext& ctx) : ctx_(ctx) {}
  const Tensor& of(const graph::Value& v) {
    auto it = tensors_.find(v);
    if (it == tensors_.end()) it = tensors_.emplace(v, ctx_.symbolic(v)).first;
    return it->second;
  }

 private:
  trace::TracingContext& ctx_;
  std::unordered_map<graph::Value, Tensor, ValueHash> tensors_;
};

}  // namespace

std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<GradientSource>& xs,
                              const std::vector<Tensor>& grad_ys, const std::vector<Tensor>& stop_gradients) {
  trace::TracingContext& ctx = current_trace();
  if (!grad_ys.empty() && grad_ys.size() != ys.size())
    throw InvalidArgument(fmt::format("tf.gradients: {} grad_ys for {} ys", grad_ys.size(), ys.size()));
  for (std::size_t i = 0; i < ys.size(); ++i)
    if (!ys[i].defined()) throw InvalidArgument(fmt::format("tf.gradients: ys[{}] is null", i));
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (!xs[i].tensor().defined()) throw InvalidArgument(fmt::format("tf.gradients: xs[{}] is null", i));

  Values values(ctx);
  std::unordered_set<graph::Value, ValueHash> stopped;
  for (const Tensor& s : stop_gradients)
    if (auto v = ctx.find_value(s)) stopped.insert(*v);

  // The tape: every differentiable node traced so far. A stopped value's
  // producer writes a tensor of its own, which nothing reads, so no gradient
  // reaches the producer through it.
  detail::TapeState tape;
  tape.options.persistent = true;
  const auto& nodes = ctx.graph().nodes();
  const std::size_t traced = nodes.size();  // the backward pass appends more
  for (std::size_t k = 0; k < traced; ++k) {
    const graph::Node& n = *nodes[k];
    if (n.op->is(schema::kNotDifferentiable) || n.outputs.empty() || n.inputs.empty()) continue;
    detail::SmallVector<Tensor, 3> inputs;
    for (const graph::Value& v : n.inputs) inputs.push_back(values.of(v));
    detail::SmallVector<Tensor, 2> outputs;
    for (int j = 0; j < static_cast<int>(n.outputs.size()); ++j) {
      graph::Value v{const_cast<graph::Node*>(&n), j};
      outputs.push_back(stopped.count(v) ? ctx.symbolic(v) : values.of(v));
    }
    tape.add(*n.op, std::span<const Tensor>(inputs.data(), inputs.size()),
             std::span<const Tensor>(outputs.data(), outputs.size()), n.attrs);
  }

  std::vector<Tensor> targets;
  for (const Tensor& y : ys) targets.push_back(values.of(ctx.value_of(y)));
  // An x that is not in this graph (nor captured by it) gets no gradient: a
  // stand-in the tape never saw keeps the result's position.
  std::vector<GradientSource> sources;
  for (const GradientSource& x : xs) {
    auto v = ctx.find_value(x.tensor());
    sources.emplace_back(v ? values.of(*v) : core::make_symbolic(x.tensor().dtype(), x.tensor().shape(), nullptr, 0, {}));
  }
  return tape.gradient(targets, sources, grad_ys);
}

}  // namespace kiln
