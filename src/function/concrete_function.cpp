// TracedGraph (one traced graph + plan) and the public ConcreteFunction.
#include <fmt/format.h>

#include "function/traced_graph.h"
#include "function/trace_cache.h"
#include "graph_ops/call_op.h"
#include "graph_ops/control_flow_ops.h"
#include "graph_ops/graph_gradients.h"
#include "passes/passes.h"

namespace kiln {
namespace detail {

TracedGraph::Inputs TracedGraph::inputs(std::span<const Tensor> leaves) const {
  const auto& captures = graph->captures();
  Inputs in;
  in.reserve(leaves.size() + captures.size());
  for (const Tensor& t : leaves) in.push_back(t);
  for (const graph::Capture& c : captures) in.push_back(c.outer);
  return in;
}

ResultLeaves TracedGraph::run(std::span<const Tensor> leaves) const {
  Inputs in = inputs(leaves);
  return plan->run(std::span<const Tensor>(in.data(), in.size()));
}

ResultLeaves TracedGraph::call(std::span<const Tensor> leaves) const {
  if (runtime::TapeHook* tapes = runtime::thread_state.tapes) [[unlikely]]
    return function_impl::record_call(*tapes, *this, leaves, nullptr);
  return run(leaves);
}

const std::vector<int64_t>& CallResult::sizes() const { return concrete->result_sizes; }

}  // namespace detail

namespace function_impl {

namespace {
// The plan of an optimized copy of `g` (a graph run directly rather than
// inside an optimized caller), cached while `g` lives.
std::shared_ptr<const exec::Plan> optimized_plan_for(const std::shared_ptr<const graph::Graph>& g) {
  static auto* cache = new graph_ops::PlanCache([](const std::shared_ptr<const graph::Graph>& graph) {
    return std::make_shared<const exec::Plan>(passes::optimize(*graph, passes::PassOptions::from_env()));
  });
  return cache->get(g);
}
}  // namespace

detail::ResultLeaves record_call(runtime::TapeHook& tapes, const detail::TracedGraph& impl,
                                 std::span<const Tensor> leaves, detail::ResultLeaves* ran) {
  detail::TracedGraph::Inputs inputs = impl.inputs(leaves);
  std::span<const Tensor> in(inputs.data(), inputs.size());
  std::shared_ptr<const graph::Graph> g = impl.graph;
  detail::ResultLeaves out;
  if (ran) {
    out = std::move(*ran);
  } else {
    g = graph_ops::with_values_for_backward(impl.graph);
    out = g == impl.graph ? impl.plan->run(in) : optimized_plan_for(g)->run(in);
  }
  bool stateful = !g->stateful_nodes().empty();
  tapes.record(graph_ops::call_op(stateful), in, out, schema::Attrs{{"f", g}});
  out.resize(impl.graph->results().size());
  return out;
}

std::vector<std::string> atom_paths(const detail::TraceKey& key) {
  std::vector<std::string> paths;
  struct Level {
    std::string path;
    int64_t next = 0;
  };
  std::vector<Level> stack;
  int64_t top = 0;
  auto next_path = [&]() -> std::string {
    if (stack.empty()) return fmt::format("arg {}", top++);
    Level& l = stack.back();
    return fmt::format("{}[{}]", l.path, l.next++);
  };
  for (const detail::KeyAtom& a : key.atoms) {
    switch (a.kind) {
      case detail::KeyAtom::Kind::End:
        paths.push_back(stack.empty() ? "" : stack.back().path);
        if (!stack.empty()) stack.pop_back();
        break;
      case detail::KeyAtom::Kind::List:
      case detail::KeyAtom::Kind::Tuple:
      case detail::KeyAtom::Kind::Map:
      case detail::KeyAtom::Kind::Optional:
      case detail::KeyAtom::Kind::Struct: {
        std::string p = next_path();
        paths.push_back(p);
        stack.push_back({p, 0});
        break;
      }
      default: paths.push_back(next_path());
    }
  }
  return paths;
}

}  // namespace function_impl

using detail::KeyAtom;

Outputs ConcreteFunction::call_flat(const detail::Flattener& flat) const {
  const detail::TraceKey& want = impl_->key;
  const detail::TraceKey& got = flat.key;
  std::vector<std::string> paths = function_impl::atom_paths(want);
  auto fail = [&](const std::string& what) {
    throw InvalidArgument(fmt::format("ConcreteFunction {}: {}", to_string(), what));
  };
  if (std::optional<function_impl::KeyMismatch> m = function_impl::mismatch(want, got)) {
    std::size_t i = m->atom;
    if (m->why == function_impl::KeyMismatch::Why::Size)
      fail(fmt::format("the arguments do not have the structure it was traced for ({} key atoms, got {})",
                       want.atoms.size(), got.atoms.size()));
    const KeyAtom& w = want.atoms[i];
    const KeyAtom& g = got.atoms[i];
    if (m->why == function_impl::KeyMismatch::Why::Kind)
      fail(fmt::format("{} was expected to be a {}, but is {}", paths[i], function_impl::atom_text(w),
                       function_impl::atom_text(g)));
    if (m->why == function_impl::KeyMismatch::Why::Spec)
      fail(fmt::format("{} was expected to be a {} tensor of shape {}, but is a {} tensor of shape {}", paths[i],
                       dtype_name(w.dtype), w.shape.to_string(), dtype_name(g.dtype), g.shape.to_string()));
    fail(fmt::format("{} was traced as {}, but is {}", paths[i], function_impl::atom_text(w),
                     function_impl::atom_text(g)));
  }
  return Outputs(impl_->call(std::span<const Tensor>(flat.leaves.data(), flat.leaves.size())));
}

const std::string& ConcreteFunction::name() const { return impl_->name; }

std::vector<TensorSpec> ConcreteFunction::inputs() const {
  std::vector<TensorSpec> specs;
  for (const graph::Node* p : impl_->graph->parameters())
    specs.emplace_back(p->outputs[0].shape, p->outputs[0].dtype);
  return specs;
}

std::vector<TensorSpec> ConcreteFunction::outputs() const {
  std::vector<TensorSpec> specs;
  for (const graph::Value& v : impl_->graph->results()) {
    const schema::TensorType& t = impl_->graph->type_of(v);
    specs.emplace_back(t.shape, t.dtype);
  }
  return specs;
}

std::string ConcreteFunction::to_string() const {
  std::vector<std::string> ins, outs;
  for (const graph::Node* p : impl_->graph->parameters())
    ins.push_back(fmt::format("{}: {} {}", p->name, dtype_name(p->outputs[0].dtype), p->outputs[0].shape.to_string()));
  for (const TensorSpec& s : outputs()) outs.push_back(fmt::format("{} {}", dtype_name(s.dtype), s.shape.to_string()));
  return fmt::format("{}({}) -> ({})", impl_->name, fmt::join(ins, ", "), fmt::join(outs, ", "));
}

int GraphView::num_nodes() const { return impl_->graph->num_nodes(); }
std::string GraphView::to_string() const { return impl_->graph->to_string(); }
std::string GraphView::to_dot() const { return impl_->graph->to_dot(); }

}  // namespace kiln
