// Backward graphs of Call and If. The backward graph of a graph f takes f's
// inputs and the upstream gradients of its results, replays f's pure nodes
// under a tape (recomputation: f keeps no intermediates for us) and returns
// the gradients of the inputs asked for. It is traced once per (f, which
// results have a gradient, which inputs want one) and cached, so an eager
// Function called under a tape gets a compiled backward pass.
#include "graph_ops/graph_gradients.h"

#include <algorithm>
#include <map>
#include <optional>
#include <mutex>
#include <unordered_set>

#include "graph_ops/call_op.h"
#include "graph_ops/control_flow_ops.h"
#include "graph_ops/replay.h"
#include "trace/tracing_context.h"
#include "kiln/array.h"
#include "kiln/gradient.h"
#include "kiln/math.h"
#include "ops/creation.h"

namespace kiln::graph_ops {

namespace {

using graph::Graph;
using graph::Node;
using GraphPtr = std::shared_ptr<const Graph>;

// Whether a backward pass takes n's outputs from the forward run: n has
// side effects or draws anew each run, no gradient flows through it, and its
// outputs are numbers (a handle is replayed like a variable read).
bool from_forward(const Node& n) {
  if (!n.is_stateful() || !n.op->is(schema::kNotDifferentiable) || n.outputs.empty()) return false;
  for (const schema::TensorType& t : n.outputs)
    if (t.dtype == DType::Resource || t.dtype == DType::String) return false;
  return true;
}

// The results of f that hold all outputs of a from_forward node: the
// backward graph takes those from the forward op's outputs.
std::vector<bool> forward_results(const Graph& f) {
  std::unordered_map<const Node*, int> returned;
  for (const graph::Value& v : f.results()) ++returned[v.node];
  std::vector<bool> out(f.results().size());
  for (std::size_t j = 0; j < out.size(); ++j) {
    const Node* n = f.results()[j].node;
    out[j] = from_forward(*n) && returned[n] >= static_cast<int>(n->outputs.size());
  }
  return out;
}

std::vector<schema::TensorType> feed_types(const Graph& f) {
  std::vector<schema::TensorType> types;
  for (const Node* p : f.parameters()) types.push_back(p->outputs[0]);
  for (const graph::Capture& c : f.captures()) types.push_back(c.placeholder->outputs[0]);
  return types;
}

// In a graph being traced by `ctx`: parameters for f's feeds, for the given
// result gradients, and for the forward op's outputs `from_op` types (an If's
// output type, which may be a stand-in's in the branch that did not draw it); then,
// under a tape, f replayed (taking those outputs) and differentiated.
// Returns the gradient of each feed (undefined where none flows).
struct Traced {
  std::vector<Tensor> feeds, dys, grads;
};
Traced differentiate(trace::TracingContext& ctx, const Graph& f, const std::vector<bool>& has_dy,
                     const std::vector<bool>& wanted, const std::vector<std::optional<schema::TensorType>>& from_op) {
  Traced t;
  std::vector<schema::TensorType> types = feed_types(f);
  for (std::size_t i = 0; i < types.size(); ++i) t.feeds.push_back(ctx.add_parameter(types[i], fmt::format("x{}", i)));
  for (std::size_t j = 0; j < f.results().size(); ++j)
    if (has_dy[j]) t.dys.push_back(ctx.add_parameter(f.type_of(f.results()[j]), fmt::format("dy{}", j)));
  std::vector<Tensor> given(f.results().size());
  std::vector<bool> mine = forward_results(f);
  for (std::size_t j = 0; j < f.results().size(); ++j) {
    if (!from_op[j]) continue;
    Tensor p = ctx.add_parameter(*from_op[j], fmt::format("y{}", j));
    if (mine[j]) given[j] = std::move(p);
  }
  runtime::DispatchHandlerGuard guard(&ctx);
  GradientTape tape({.persistent = false, .watch_accessed_variables = false});
  std::vector<GradientSource> sources;
  for (std::size_t i = 0; i < t.feeds.size(); ++i) {
    if (!wanted[i]) continue;
    tape.watch(t.feeds[i]);
    sources.emplace_back(t.feeds[i]);
  }
  std::vector<Tensor> ys = replay(f, t.feeds, given);
  std::vector<Tensor> targets;
  for (std::size_t j = 0; j < ys.size(); ++j)
    if (has_dy[j]) targets.push_back(ys[j]);
  std::vector<Tensor> grads = tape.gradient(targets, sources, t.dys);
  t.grads.resize(t.feeds.size());
  for (std::size_t i = 0, k = 0; i < t.feeds.size(); ++i)
    if (wanted[i]) t.grads[i] = std::move(grads[k++]);
  return t;
}

struct Backward {
  std::weak_ptr<const Graph> forward;  // the cache key's graph, to detect reuse
  GraphPtr graph;                      // feeds..., dys... -> gradients of `grad_of`
  GraphPtr else_graph;                 // If only: the else branch's backward
  std::vector<int> grad_of;
};

struct CacheKey {
  const Graph* forward;
  const Graph* other;  // If: the else branch
  std::vector<bool> has_dy, wanted;
  bool operator<(const CacheKey& o) const {
    return std::tie(forward, other, has_dy, wanted) < std::tie(o.forward, o.other, o.has_dy, o.wanted);
  }
};

// Never destroyed: its graphs hold tensors, which must not outlive the
// allocator at exit (the other graph caches do the same).
std::mutex& cache_mutex() {
  static auto* m = new std::mutex();
  return *m;
}
std::map<CacheKey, std::shared_ptr<const Backward>>& backward_cache() {
  static auto* c = new std::map<CacheKey, std::shared_ptr<const Backward>>();
  return *c;
}

template <class Build>
std::shared_ptr<const Backward> cached(const GraphPtr& f, const GraphPtr& other, std::vector<bool> has_dy,
                                       std::vector<bool> wanted, Build build) {
  CacheKey key{f.get(), other.get(), std::move(has_dy), std::move(wanted)};
  auto& cache = backward_cache();
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = cache.find(key);
    if (it != cache.end() && it->second->forward.lock() == f) return it->second;
  }
  std::shared_ptr<const Backward> b = build(key.has_dy, key.wanted);
  std::lock_guard<std::mutex> lock(cache_mutex());
  // Forget entries whose forward graph is gone (bounded by live graphs).
  for (auto it = cache.begin(); it != cache.end();)
    it = it->second->forward.expired() ? cache.erase(it) : std::next(it);
  cache[key] = b;
  return b;
}

std::vector<bool> has_grad(const schema::GradContext& c, std::size_t n) {
  std::vector<bool> has(n);
  for (std::size_t j = 0; j < n; ++j) has[j] = c.grads[j].defined();
  return has;
}

// What a backward graph takes: the forward op's inputs, the defined upstream
// gradients, and the forward outputs `from_op` marks.
detail::SmallVector<Tensor, 8> backward_inputs(const schema::GradContext& c,
                                               const std::vector<std::optional<schema::TensorType>>& from_op) {
  detail::SmallVector<Tensor, 8> inputs(c.inputs.begin(), c.inputs.end());
  for (const Tensor& g : c.grads)
    if (g.defined()) inputs.push_back(g);
  for (std::size_t j = 0; j < from_op.size(); ++j)
    if (from_op[j]) inputs.push_back(c.outputs[j]);
  return inputs;
}

}  // namespace

std::vector<graph::Value> values_for_backward(const Graph& g) {
  std::vector<graph::Value> out;
  if (g.stateful_nodes().empty()) return out;
  std::unordered_set<const Node*> read;
  for (const auto& n : g.nodes())
    for (const graph::Value& v : n->inputs) read.insert(v.node);
  for (const Node* n : g.stateful_nodes()) {
    if (!from_forward(*n) || !read.count(n)) continue;
    for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) {
      graph::Value v{const_cast<Node*>(n), k};
      if (std::find(g.results().begin(), g.results().end(), v) == g.results().end()) out.push_back(v);
    }
  }
  return out;
}

GraphPtr with_values_for_backward(const GraphPtr& f) {
  if (f->stateful_nodes().empty()) return f;
  struct Entry {
    std::weak_ptr<const Graph> forward;
    GraphPtr with;
  };
  static auto* mutex = new std::mutex();
  static auto* cache = new std::unordered_map<const Graph*, Entry>();
  {
    std::lock_guard<std::mutex> lock(*mutex);
    auto it = cache->find(f.get());
    if (it != cache->end() && it->second.forward.lock() == f) return it->second.with;
  }
  GraphPtr with = f;
  if (!values_for_backward(*f).empty()) {
    std::shared_ptr<Graph> g = f->clone(f->name());
    for (const graph::Value& v : values_for_backward(*g)) g->results().push_back(v);
    with = g;
  }
  std::lock_guard<std::mutex> lock(*mutex);
  for (auto it = cache->begin(); it != cache->end();)
    it = it->second.forward.expired() ? cache->erase(it) : std::next(it);
  (*cache)[f.get()] = Entry{f, with};
  return with;
}

// ---- Call -------------------------------------------------------------------------
void call_gradient(schema::GradContext& c) {
  const GraphPtr& f = c.attrs.get<GraphPtr>("f");
  std::vector<bool> wanted(c.inputs.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) wanted[i] = c.needs(static_cast<int>(i));
  std::vector<bool> mine = forward_results(*f);
  std::vector<std::optional<schema::TensorType>> from_op(mine.size());
  for (std::size_t j = 0; j < mine.size(); ++j)
    if (mine[j]) from_op[j] = f->type_of(f->results()[j]);
  auto b = cached(f, nullptr, has_grad(c, c.outputs.size()), wanted,
                  [&](const std::vector<bool>& has_dy, const std::vector<bool>& want) {
                    auto g = std::make_shared<Graph>(f->name() + "_grad");
                    trace::TracingContext ctx(g);
                    Traced t = differentiate(ctx, *f, has_dy, want, from_op);
                    auto out = std::make_shared<Backward>();
                    for (std::size_t i = 0; i < t.grads.size(); ++i) {
                      if (!t.grads[i].defined()) continue;
                      g->results().push_back(ctx.value_of(t.grads[i]));
                      out->grad_of.push_back(static_cast<int>(i));
                    }
                    if (!g->captures().empty())
                      throw Internal("the backward graph of a call captured an outer tensor");
                    out->forward = f;
                    out->graph = g;
                    return out;
                  });
  if (b->grad_of.empty()) return;
  detail::SmallVector<Tensor, 8> inputs = backward_inputs(c, from_op);
  runtime::TensorList grads = runtime::dispatch(call_op(is_stateful_graph(*b->graph)),
                              std::span<const Tensor>(inputs.data(), inputs.size()), schema::Attrs{{"f", b->graph}},
                              SourceLocation());
  for (std::size_t k = 0; k < b->grad_of.size(); ++k) c.set(b->grad_of[k], std::move(grads[k]));
}

// ---- If -------------------------------------------------------------------------
// Both backward branches take (captures..., dys...) and return the gradient of
// each capture that either branch differentiates; a branch that does not
// gives zeros.
void if_gradient(schema::GradContext& c) {
  const GraphPtr& then_f = c.attrs.get<GraphPtr>("then_branch");
  const GraphPtr& else_f = c.attrs.get<GraphPtr>("else_branch");
  std::vector<bool> wanted(c.inputs.size() - 1);  // the captures (pred is not differentiable)
  for (std::size_t i = 0; i < wanted.size(); ++i) wanted[i] = c.needs(static_cast<int>(i + 1));
  // The outputs either branch takes from the forward run: both backward
  // branches take the same inputs.
  std::vector<bool> from_then = forward_results(*then_f), from_else = forward_results(*else_f);
  std::vector<std::optional<schema::TensorType>> from_op(from_then.size());
  for (std::size_t j = 0; j < from_op.size(); ++j) {
    if (!from_then[j] && !from_else[j]) continue;
    const schema::TensorType& a = then_f->type_of(then_f->results()[j]);
    from_op[j] = schema::TensorType{a.dtype, merge_shapes(a.shape, else_f->type_of(else_f->results()[j]).shape)};
  }
  auto b = cached(then_f, else_f, has_grad(c, c.outputs.size()), wanted,
                  [&](const std::vector<bool>& has_dy, const std::vector<bool>& want) {
                    auto tg = std::make_shared<Graph>("then_grad"), eg = std::make_shared<Graph>("else_grad");
                    trace::TracingContext tctx(tg), ectx(eg);
                    Traced tt = differentiate(tctx, *then_f, has_dy, want, from_op);
                    Traced et = differentiate(ectx, *else_f, has_dy, want, from_op);
                    auto out = std::make_shared<Backward>();
                    for (std::size_t i = 0; i < want.size(); ++i) {
                      bool in_then = tt.grads[i].defined(), in_else = et.grads[i].defined();
                      if (!in_then && !in_else) continue;
                      const Tensor& like = in_then ? tt.grads[i] : et.grads[i];
                      if (!like.shape().is_fully_defined() && (in_then != in_else) &&
                          tt.feeds[i].dtype() == DType::Resource)
                        throw Unimplemented("the gradient of a cond for a variable of unknown shape read in one branch only");
                      auto zeros_for = [&](trace::TracingContext& ctx, const Traced& t) {
                        runtime::DispatchHandlerGuard guard(&ctx);
                        return t.feeds[i].dtype() == DType::Resource ? zeros(like.shape(), like.dtype())
                                                                     : zeros_like(t.feeds[i]);
                      };
                      Tensor gt = in_then ? tt.grads[i] : zeros_for(tctx, tt);
                      Tensor ge = in_else ? et.grads[i] : zeros_for(ectx, et);
                      tg->results().push_back(tctx.value_of(gt));
                      eg->results().push_back(ectx.value_of(ge));
                      out->grad_of.push_back(static_cast<int>(i + 1));
                    }
                    if (!tg->captures().empty() || !eg->captures().empty())
                      throw Internal("the backward graph of a cond captured an outer tensor");
                    out->forward = then_f;
                    out->graph = tg;
                    out->else_graph = eg;
                    return out;
                  });
  if (b->grad_of.empty()) return;
  detail::SmallVector<Tensor, 8> inputs = backward_inputs(c, from_op);
  bool stateful = is_stateful_graph(*b->graph) || is_stateful_graph(*b->else_graph);
  runtime::TensorList grads =
      runtime::dispatch(if_op(stateful), std::span<const Tensor>(inputs.data(), inputs.size()),
                        schema::Attrs{{"then_branch", b->graph}, {"else_branch", b->else_graph}}, SourceLocation());
  for (std::size_t k = 0; k < b->grad_of.size(); ++k) c.set(b->grad_of[k], std::move(grads[k]));
}

}  // namespace kiln::graph_ops
