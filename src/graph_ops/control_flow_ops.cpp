// If, StatefulIf, While, StatefulWhile: ops whose attrs are nested graphs.
// Their kernels run the nested graphs' compiled plans (cached per graph).
#include "graph_ops/control_flow_ops.h"

#include "graph_ops/graph_gradients.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "core/tensor_impl.h"
#include "exec/cancellation.h"
#include "trace/tracing_context.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "runtime/dispatch.h"

namespace kiln::graph_ops {

using schema::InferContext;
using schema::KernelContext;
using detail::OpDef;
using schema::OpSample;
using schema::TensorType;
using GraphPtr = std::shared_ptr<const graph::Graph>;

std::string type_text(const TensorType& t) {
  return fmt::format("{} {}", dtype_name(t.dtype), t.shape.to_string());
}

std::shared_ptr<const exec::Plan> PlanCache::get(const GraphPtr& graph) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(graph.get());
  // An expired entry is another graph that lived at the same address.
  if (it != entries_.end() && !it->second.graph.expired()) return it->second.plan;
  std::shared_ptr<const exec::Plan> plan = compile_(graph);
  entries_[graph.get()] = Entry{graph, plan};
  if (entries_.size() >= sweep_at_) {
    for (auto e = entries_.begin(); e != entries_.end();)
      e = e->second.graph.expired() ? entries_.erase(e) : std::next(e);
    sweep_at_ = std::max<std::size_t>(64, 2 * entries_.size());
  }
  return plan;
}

std::shared_ptr<const exec::Plan> plan_for(const GraphPtr& graph) {
  // The plan must not own its graph: the cache would keep every graph alive.
  // Callers hold the graph (the node's attrs) while they run the plan.
  static auto* cache = new PlanCache([](const GraphPtr& g) {
    return std::make_shared<const exec::Plan>(GraphPtr(std::shared_ptr<const void>(), g.get()));
  });
  return cache->get(graph);
}

void check_feeds(const InferContext& c, const graph::Graph& g, int first, std::string_view what) {
  std::vector<const graph::Node*> feeds(g.parameters().begin(), g.parameters().end());
  for (const graph::Capture& cap : g.captures()) feeds.push_back(cap.placeholder);
  int given = c.num_inputs() - first;
  if (given != static_cast<int>(feeds.size()))
    c.fail("{} takes {} inputs, got {}", what, feeds.size(), given);
  for (int i = 0; i < given; ++i) {
    const TensorType& want = feeds[i]->outputs[0];
    TensorType got{c.dtype(first + i), c.shape(first + i)};
    if (got.dtype != want.dtype || !got.shape.is_compatible_with(want.shape))
      c.fail("input {} is {} but {} expects {}", first + i, type_text(got), what, type_text(want));
  }
}

namespace {

const GraphPtr& graph_attr(const InferContext& c, std::string_view name) {
  const GraphPtr& g = c.attrs().get<GraphPtr>(name);
  if (!g) c.fail("attr {} is an empty graph", name);
  return g;
}

TensorType input_type(const InferContext& c, int i) { return {c.dtype(i), c.shape(i)}; }

}  // namespace

Shape merge_shapes(const Shape& a, const Shape& b) {
  if (!a.has_known_rank() || !b.has_known_rank() || a.rank() != b.rank()) return Shape::unknown_rank();
  Shape out = a;
  for (int d = 0; d < a.rank(); ++d)
    if (a[d] != b[d]) out[d] = None;
  return out;
}

namespace {

// ---- If / StatefulIf -----------------------------------------------------
void if_infer(InferContext& c) {
  if (c.num_inputs() < 1) c.fail("needs pred as its first input");
  TensorType pred = input_type(c, 0);
  if (pred.dtype != DType::Bool || (pred.shape.is_fully_defined() && pred.shape.num_elements() != 1))
    c.fail("pred must be a bool tensor with one element, got {}", type_text(pred));
  const graph::Graph& then_g = *graph_attr(c, "then_branch");
  const graph::Graph& else_g = *graph_attr(c, "else_branch");
  check_feeds(c, then_g, 1, "then_branch");
  check_feeds(c, else_g, 1, "else_branch");
  const auto& a = then_g.results();
  const auto& b = else_g.results();
  if (a.size() != b.size())
    c.fail("then_branch returns {} tensors but else_branch returns {}", a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const TensorType& ta = then_g.type_of(a[k]);
    const TensorType& tb = else_g.type_of(b[k]);
    if (ta.dtype != tb.dtype)
      c.fail("output {} is {} in then_branch but {} in else_branch", k, type_text(ta), type_text(tb));
    c.add_output(ta.dtype, merge_shapes(ta.shape, tb.shape));
  }
}

void if_kernel(KernelContext& c) {
  // infer saw the concrete pred: one bool element.
  bool pred = *c.in<bool>(0);
  const GraphPtr& branch = c.attrs.get<GraphPtr>(pred ? "then_branch" : "else_branch");
  detail::ResultLeaves out = plan_for(branch)->run(c.inputs.subspan(1));
  for (std::size_t k = 0; k < c.outputs.size(); ++k) c.outputs[k] = std::move(out[k]);
}

// A small graph for the samples: `fn` gets symbolic parameters, then the
// captures of `captures` (all of them, used or not).
template <class F>
GraphPtr sample_graph(const char* name, const std::vector<TensorType>& params,
                      const std::vector<Tensor>& captures, F fn) {
  auto g = std::make_shared<graph::Graph>(name);
  trace::TracingContext ctx(g);
  std::vector<Tensor> args;
  for (std::size_t i = 0; i < params.size(); ++i)
    args.push_back(ctx.add_parameter(params[i], fmt::format("var{}", i)));
  for (const Tensor& t : captures) args.push_back(ctx.symbolic(ctx.value_of(t)));
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    for (const Tensor& r : fn(args)) g->results().push_back(ctx.value_of(r));
  }
  g->drop_capture_sources();
  return g;
}

std::vector<OpSample> if_samples() {
  Tensor x = constant({1.f, 2.f});
  GraphPtr then_g = sample_graph("then", {}, {x}, [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] * a[0]};
  });
  GraphPtr else_g = sample_graph("else", {}, {x}, [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{-a[0]};
  });
  schema::Attrs attrs{{"then_branch", then_g}, {"else_branch", else_g}};
  return {{{constant(true), x}, attrs}, {{constant(false), x}, attrs}};
}

// ---- While / StatefulWhile -------------------------------------------------
void while_infer(InferContext& c) {
  const graph::Graph& cond = *graph_attr(c, "cond");
  const graph::Graph& body = *graph_attr(c, "body");
  check_feeds(c, body, 0, "body");
  check_feeds(c, cond, 0, "cond");
  if (cond.parameters().size() != body.parameters().size())
    c.fail("cond takes {} loop variables but body takes {}", cond.parameters().size(), body.parameters().size());
  if (cond.results().size() != 1 || cond.type_of(cond.results()[0]).dtype != DType::Bool)
    c.fail("cond must return one bool tensor");
  const auto& params = body.parameters();
  if (body.results().size() != params.size())
    c.fail("body returns {} tensors for {} loop variables", body.results().size(), params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const TensorType& var = params[i]->outputs[0];
    const TensorType& next = body.type_of(body.results()[i]);
    if (next.dtype != var.dtype || !next.shape.is_compatible_with(var.shape))
      c.fail("loop variable {} is {} but body returns {}", i, type_text(var), type_text(next));
    c.add_output(var.dtype, var.shape);
  }
}

std::atomic<int64_t> max_while_iterations{0};

void while_kernel(KernelContext& c) {
  const GraphPtr& cond_g = c.attrs.get<GraphPtr>("cond");
  const GraphPtr& body_g = c.attrs.get<GraphPtr>("body");
  std::shared_ptr<const exec::Plan> cond = plan_for(cond_g);
  std::shared_ptr<const exec::Plan> body = plan_for(body_g);
  std::size_t num_vars = c.outputs.size();
  // The loop variables, then the captures (which stay). A plan's last use
  // of an input that no one else holds is taken over: the body then holds
  // the only handle from the first iteration on.
  detail::SmallVector<Tensor, 8> args;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (i < c.consumable.size() && core::is_exclusively_owned(c.consumable[i]))
      args.push_back(std::move(c.consumable[i]));
    else
      args.push_back(c.inputs[i]);
  }
  std::span<const Tensor> feed(args.data(), args.size());
  const int64_t limit = max_while_iterations.load(std::memory_order_relaxed);
  for (int64_t iterations = 0;; ++iterations) {
    detail::ResultLeaves p = cond->run(feed);
    if (p[0].size() != 1)
      throw InvalidArgument(fmt::format(
          "While: cond returned a bool tensor of shape {}; it must have one element", p[0].shape().to_string()));
    if (!*core::data_of<bool>(p[0])) break;
    // Checked here too: a body with no ops never reaches the executor's check.
    exec::check_cancellation([&] { return fmt::format("iteration {} of a While loop", iterations + 1); });
    if (iterations == limit && limit > 0)
      throw ResourceExhausted(fmt::format(
          "While: the loop wants more than {} iterations, the limit set by set_max_while_iterations", limit));
    // The body gets the only handles to the loop variables, so it may
    // update them in place (TensorArray writes).
    detail::ResultLeaves next = body->run_consuming(std::span<Tensor>(args.data(), args.size()), num_vars);
    for (std::size_t i = 0; i < num_vars; ++i) args[i] = std::move(next[i]);
  }
  for (std::size_t i = 0; i < num_vars; ++i) c.outputs[i] = std::move(args[i]);
}

std::vector<OpSample> while_samples() {
  Tensor limit = constant(3);
  std::vector<TensorType> vars{{DType::Int32, Shape{}}, {DType::Float32, Shape{2}}};
  GraphPtr cond = sample_graph("cond", vars, {limit}, [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] < a[2]};
  });
  GraphPtr body = sample_graph("body", vars, {limit}, [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] + 1, a[1] * 2.f};
  });
  schema::Attrs attrs{{"cond", cond}, {"body", body}};
  // A product per step, which the gradient's re-run stacks
  // (while_accumulators.h): the backward loop reads it.
  Tensor w = constant({{0.5f, -0.3f}, {0.8f, 0.2f}});
  std::vector<TensorType> rows{{DType::Int32, Shape{}}, {DType::Float32, Shape{1, 2}}};
  GraphPtr rows_cond = sample_graph("cond", rows, {limit, w}, [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] < a[2]};
  });
  GraphPtr rows_body = sample_graph("body", rows, {limit, w}, [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{a[0] + 1, tanh(matmul(a[1], a[3]))};
  });
  schema::Attrs rows_attrs{{"cond", rows_cond}, {"body", rows_body}};
  return {{{constant(0), constant({1.f, 2.f}), limit}, attrs},
          {{constant(5), constant({1.f, 2.f}), limit}, attrs},
          {{constant(0), constant({{1.f, -2.f}}), limit, w}, rows_attrs}};
}

constexpr OpDef kIf{.name = "If", .infer = if_infer, .kernel = if_kernel,
                    .flags = schema::kSetsOwnOutputs | schema::kCostlyToRecompute, .samples = if_samples,
                    .gradient = if_gradient};
constexpr OpDef kStatefulIf{.name = "StatefulIf", .infer = if_infer, .kernel = if_kernel,
                            .flags = schema::kStateful | schema::kSetsOwnOutputs | schema::kCostlyToRecompute,
                            .samples = if_samples, .gradient = if_gradient};
constexpr OpDef kWhile{.name = "While", .infer = while_infer, .kernel = while_kernel,
                       .flags = schema::kSetsOwnOutputs | schema::kCostlyToRecompute | schema::kConsumesInputs,
                       .samples = while_samples, .gradient = while_gradient};
constexpr OpDef kStatefulWhile{
    .name = "StatefulWhile", .infer = while_infer, .kernel = while_kernel,
    .flags = schema::kStateful | schema::kSetsOwnOutputs | schema::kCostlyToRecompute | schema::kConsumesInputs,
    .samples = while_samples, .gradient = while_gradient};

}  // namespace

void set_max_while_iterations(int64_t iterations) {
  max_while_iterations.store(iterations, std::memory_order_relaxed);
}

const OpDef& if_op(bool stateful) { return stateful ? kStatefulIf : kIf; }
const OpDef& while_op(bool stateful) { return stateful ? kStatefulWhile : kWhile; }

void register_control_flow_ops(schema::OpRegistry& r) {
  r.add(if_op(false));
  r.add(if_op(true));
  r.add(while_op(false));
  r.add(while_op(true));
}

}  // namespace kiln::graph_ops
