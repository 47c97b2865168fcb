// Backward graphs of Call and If. The backward graph of a graph f takes f's
// inputs and the upstream gradients of its results, replays f's pure nodes
// under a tape (recomputation: f keeps no intermediates for us) and returns
// the gradients of the inputs asked for. It is traced once per (f, which
// results have a gradient, which inputs want one) and cached, so an eager
// Function called under a tape gets a compiled backward pass.
#include "autodiff/graph_gradients.h"

#include <map>
#include <mutex>
#include <unordered_set>

#include "function/call_op.h"
#include "function/control_flow_ops.h"
#include "function/tracing_context.h"
#include "kiln/gradient.h"
#include "ops/creation.h"

namespace kiln::detail {

namespace {

using graph::Graph;
using graph::Node;
using GraphPtr = std::shared_ptr<const Graph>;

// Runs f's nodes again in the current dispatch context, f's parameters then
// captures fed by `feeds`. Stateful nodes nothing reads (print, variable
// updates) are skipped: a backward pass must not repeat side effects.
// Stateful nodes whose outputs are read (variable reads, random draws) run
// again: a variable is read anew, and a random draw is drawn again.
std::vector<Tensor> replay(const Graph& f, std::span<const Tensor> feeds) {
  std::unordered_map<const Node*, TensorList> values;
  std::size_t k = 0;
  for (const Node* p : f.parameters()) values[p] = TensorList{feeds[k++]};
  for (const graph::Capture& c : f.captures()) values[c.placeholder] = TensorList{feeds[k++]};
  std::unordered_set<const Node*> read;
  for (const auto& n : f.nodes())
    for (const graph::Value& v : n->inputs) read.insert(v.node);
  for (const graph::Value& v : f.results()) read.insert(v.node);
  for (const auto& n : f.nodes()) {
    if (values.count(n.get())) continue;
    if (n->is_stateful() && !read.count(n.get())) continue;
    SmallVector<Tensor, 3> inputs;
    for (const graph::Value& v : n->inputs) inputs.push_back(values.at(v.node)[static_cast<size_t>(v.index)]);
    values[n.get()] = dispatch(*n->op, std::span<const Tensor>(inputs.data(), inputs.size()), Attrs(n->attrs),
                               n->location);
  }
  std::vector<Tensor> results;
  for (const graph::Value& v : f.results()) results.push_back(values.at(v.node)[static_cast<size_t>(v.index)]);
  return results;
}

std::vector<TensorType> feed_types(const Graph& f) {
  std::vector<TensorType> types;
  for (const Node* p : f.parameters()) types.push_back(p->outputs[0]);
  for (const graph::Capture& c : f.captures()) types.push_back(c.placeholder->outputs[0]);
  return types;
}

// In a graph being traced by `ctx`: parameters for f's feeds and for the
// given result gradients; then, under a tape, f replayed and differentiated.
// Returns the gradient of each feed (undefined where none flows).
struct Traced {
  std::vector<Tensor> feeds, dys, grads;
};
Traced differentiate(function_detail::TracingContext& ctx, const Graph& f, const std::vector<bool>& has_dy,
                     const std::vector<bool>& wanted) {
  Traced t;
  std::vector<TensorType> types = feed_types(f);
  for (std::size_t i = 0; i < types.size(); ++i) t.feeds.push_back(ctx.add_parameter(types[i], fmt::format("x{}", i)));
  for (std::size_t j = 0; j < f.results().size(); ++j)
    if (has_dy[j]) t.dys.push_back(ctx.add_parameter(f.type_of(f.results()[j]), fmt::format("dy{}", j)));
  DispatchHandlerGuard guard(&ctx);
  GradientTape tape({.persistent = false, .watch_accessed_variables = false});
  std::vector<GradientSource> sources;
  for (std::size_t i = 0; i < t.feeds.size(); ++i) {
    if (!wanted[i]) continue;
    tape.watch(t.feeds[i]);
    sources.emplace_back(t.feeds[i]);
  }
  std::vector<Tensor> ys = replay(f, t.feeds);
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

std::mutex cache_mutex;
std::map<CacheKey, std::shared_ptr<const Backward>> cache;

template <class Build>
std::shared_ptr<const Backward> cached(const GraphPtr& f, const GraphPtr& other, std::vector<bool> has_dy,
                                       std::vector<bool> wanted, Build build) {
  CacheKey key{f.get(), other.get(), std::move(has_dy), std::move(wanted)};
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = cache.find(key);
    if (it != cache.end() && it->second->forward.lock() == f) return it->second;
  }
  std::shared_ptr<const Backward> b = build(key.has_dy, key.wanted);
  std::lock_guard<std::mutex> lock(cache_mutex);
  // Forget entries whose forward graph is gone (bounded by live graphs).
  for (auto it = cache.begin(); it != cache.end();)
    it = it->second->forward.expired() ? cache.erase(it) : std::next(it);
  cache[key] = b;
  return b;
}

std::vector<bool> has_grad(const GradContext& c, std::size_t n) {
  std::vector<bool> has(n);
  for (std::size_t j = 0; j < n; ++j) has[j] = c.grads[j].defined();
  return has;
}

bool is_stateful_graph(const Graph& g) { return !g.stateful_nodes().empty(); }

}  // namespace

// ---- Call -------------------------------------------------------------------------
void call_gradient(GradContext& c) {
  const GraphPtr& f = c.attrs.get<GraphPtr>("f");
  std::vector<bool> wanted(c.inputs.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) wanted[i] = c.needs(static_cast<int>(i));
  auto b = cached(f, nullptr, has_grad(c, c.outputs.size()), wanted,
                  [&](const std::vector<bool>& has_dy, const std::vector<bool>& want) {
                    auto g = std::make_shared<Graph>(f->name() + "_grad");
                    function_detail::TracingContext ctx(g);
                    Traced t = differentiate(ctx, *f, has_dy, want);
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
  SmallVector<Tensor, 8> inputs(c.inputs.begin(), c.inputs.end());
  for (const Tensor& g : c.grads)
    if (g.defined()) inputs.push_back(g);
  TensorList grads = dispatch(function_detail::call_op(is_stateful_graph(*b->graph)),
                              std::span<const Tensor>(inputs.data(), inputs.size()), Attrs{{"f", b->graph}},
                              SourceLocation());
  for (std::size_t k = 0; k < b->grad_of.size(); ++k) c.set(b->grad_of[k], std::move(grads[k]));
}

// ---- If -------------------------------------------------------------------------
// Both backward branches take (captures..., dys...) and return the gradient of
// each capture that either branch differentiates; a branch that does not
// gives zeros.
void if_gradient(GradContext& c) {
  const GraphPtr& then_f = c.attrs.get<GraphPtr>("then_branch");
  const GraphPtr& else_f = c.attrs.get<GraphPtr>("else_branch");
  std::vector<bool> wanted(c.inputs.size() - 1);  // the captures (pred is not differentiable)
  for (std::size_t i = 0; i < wanted.size(); ++i) wanted[i] = c.needs(static_cast<int>(i + 1));
  auto b = cached(then_f, else_f, has_grad(c, c.outputs.size()), wanted,
                  [&](const std::vector<bool>& has_dy, const std::vector<bool>& want) {
                    auto tg = std::make_shared<Graph>("then_grad"), eg = std::make_shared<Graph>("else_grad");
                    function_detail::TracingContext tctx(tg), ectx(eg);
                    Traced tt = differentiate(tctx, *then_f, has_dy, want);
                    Traced et = differentiate(ectx, *else_f, has_dy, want);
                    auto out = std::make_shared<Backward>();
                    for (std::size_t i = 0; i < want.size(); ++i) {
                      bool in_then = tt.grads[i].defined(), in_else = et.grads[i].defined();
                      if (!in_then && !in_else) continue;
                      const Tensor& like = in_then ? tt.grads[i] : et.grads[i];
                      if (!like.shape().is_fully_defined() && (in_then != in_else) &&
                          tt.feeds[i].dtype() == DType::Resource)
                        throw Unimplemented("the gradient of a cond for a variable of unknown shape read in one branch only");
                      auto zeros_for = [&](function_detail::TracingContext& ctx, const Traced& t) {
                        DispatchHandlerGuard guard(&ctx);
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
  SmallVector<Tensor, 8> inputs(c.inputs.begin(), c.inputs.end());
  for (const Tensor& g : c.grads)
    if (g.defined()) inputs.push_back(g);
  bool stateful = is_stateful_graph(*b->graph) || is_stateful_graph(*b->else_graph);
  TensorList grads = dispatch(function_detail::if_op(stateful), std::span<const Tensor>(inputs.data(), inputs.size()),
                              Attrs{{"then_branch", b->graph}, {"else_branch", b->else_graph}}, SourceLocation());
  for (std::size_t k = 0; k < b->grad_of.size(); ++k) c.set(b->grad_of[k], std::move(grads[k]));
}

}  // namespace kiln::detail
