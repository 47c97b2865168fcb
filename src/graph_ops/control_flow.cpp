// kiln::cond and kiln::while_loop: plain C++ control flow on concrete values;
// while tracing, nested graphs and one If / While op (docs/design-notes.md, "Control flow and TensorArray").
#include "kiln/control_flow.h"

#include <fmt/format.h>

#include "graph_ops/graph_gradients.h"
#include "graph_ops/control_flow_ops.h"
#include "kiln/math.h"
#include "ops/creation.h"
#include "trace/tracing_context.h"
#include "runtime/dispatch.h"

namespace kiln::detail {

namespace {

using trace::TracingContext;
using graph_ops::type_text;
using GraphPtr = std::shared_ptr<const graph::Graph>;

// The tracing context of a nested graph. Variables created inside count for
// the enclosing trace too (kiln::function's create-once rule).
class NestedContext : public TracingContext {
 public:
  NestedContext(std::shared_ptr<graph::Graph> graph, DispatchHandler* parent)
      : TracingContext(std::move(graph)), parent_(parent) {}
  void variable_created() override {
    TracingContext::variable_created();
    if (parent_) parent_->variable_created();
  }

 private:
  DispatchHandler* parent_;
};

TracingContext* current_trace() { return dynamic_cast<TracingContext*>(runtime::thread_state.handler); }

schema::TensorType type_of(const Tensor& t) { return {t.dtype(), t.shape()}; }

// Calls `fn` with `args` under `ctx` and makes what it returned the graph's
// results.
ResultFlattener trace_into(NestedContext& ctx, FlatFnRef fn, std::span<const Tensor> args,
                           const char* who) {
  ResultFlattener out;
  runtime::DispatchHandlerGuard guard(&ctx);
  fn.call(fn.object, args, out);
  for (std::size_t i = 0; i < out.leaves.size(); ++i) {
    if (!out.leaves[i].defined()) throw InvalidArgument(fmt::format("{} returned a null tensor (output {})", who, i));
    ctx.graph().results().push_back(ctx.value_of(out.leaves[i]));
  }
  return out;
}

// Makes `to` capture everything `from` captured (in the same order when `to`
// has captured nothing yet), so that both graphs take one capture list.
void capture_all(NestedContext& to, const graph::Graph& from) {
  for (const graph::Capture& c : from.captures()) to.value_of(c.outer);
}

std::vector<Tensor> outer_captures(const graph::Graph& g) {
  std::vector<Tensor> out;
  for (const graph::Capture& c : g.captures()) out.push_back(c.outer);
  return out;
}

// Same list of outer tensors, same order: what the op's inputs rely on.
void check_same_captures(const graph::Graph& a, const graph::Graph& b) {
  bool same = a.captures().size() == b.captures().size();
  for (std::size_t i = 0; same && i < a.captures().size(); ++i)
    same = a.captures()[i].outer.impl() == b.captures()[i].outer.impl();
  if (!same)
    throw Internal(fmt::format("control flow: graphs '{}' and '{}' capture different tensors", a.name(), b.name()));
}

}  // namespace

bool control_flow_intercepted() { return runtime::thread_state.handler != nullptr; }

bool predicate_value(const Tensor& pred, const char* what) {
  if (!pred.defined()) throw InvalidArgument(fmt::format("{}: pred is a null tensor", what));
  if (pred.is_symbolic())
    throw InvalidArgument(fmt::format(
        "{}: pred is a symbolic tensor of a graph traced by kiln::function, used outside that "
        "function. Return it from the function instead of storing it.",
        what));
  if (pred.dtype() != DType::Bool || pred.size() != 1)
    throw InvalidArgument(fmt::format("{}: pred must be a bool tensor with one element, got {}", what,
                                      type_text(type_of(pred))));
  return pred.item<bool>();
}

namespace {

// A graph that returns `values` (as captures, or as parameters standing for
// them), plus `extra` results traced by a function of the parameters.
template <class Extra>
GraphPtr pass_through_graph(const char* name, const std::vector<Tensor>& values, bool as_params, Extra extra) {
  NestedContext ctx(std::make_shared<graph::Graph>(name), nullptr);
  std::vector<Tensor> args;
  for (std::size_t i = 0; i < values.size(); ++i)
    args.push_back(as_params ? ctx.add_parameter(type_of(values[i]), fmt::format("var{}", i))
                             : ctx.symbolic(ctx.value_of(values[i])));
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    for (const Tensor& t : extra(args)) ctx.graph().results().push_back(ctx.value_of(t));
  }
  ctx.graph().drop_capture_sources();
  return ctx.graph_ptr();
}

// Under a dispatch handler that is not a trace (kiln::function's verify
// option replaying the callable eagerly): the branch or loop ran eagerly
// and unseen; the handler sees one op with its results, the same op the
// trace holds at this point, so the two line up op by op.
std::vector<Tensor> replay_as_if(const Tensor& pred, const std::vector<Tensor>& results, const SourceLocation& loc) {
  GraphPtr g = pass_through_graph("then", results, false, [](const std::vector<Tensor>& a) { return a; });
  std::vector<Tensor> inputs{pred};
  inputs.insert(inputs.end(), results.begin(), results.end());
  runtime::TensorList out =
      runtime::dispatch(graph_ops::if_op(false), inputs, schema::Attrs{{"then_branch", g}, {"else_branch", g}}, loc);
  return std::vector<Tensor>(out.begin(), out.end());
}

std::vector<Tensor> replay_as_while(const std::vector<Tensor>& vars, const SourceLocation& loc) {
  GraphPtr body = pass_through_graph("body", vars, true, [](const std::vector<Tensor>& a) { return a; });
  GraphPtr cond = pass_through_graph("cond", vars, true, [](const std::vector<Tensor>&) {
    return std::vector<Tensor>{constant(false)};
  });
  runtime::TensorList out =
      runtime::dispatch(graph_ops::while_op(false), vars, schema::Attrs{{"cond", cond}, {"body", body}}, loc);
  return std::vector<Tensor>(out.begin(), out.end());
}

// Both branches return, after their results, what If's gradient takes from
// the forward run (graph_ops::values_for_backward): the then branch's values,
// then the else branch's; each branch returns an empty stand-in of the
// dtype and rank of the other's.
void add_values_for_backward(TracingContext& then_ctx, TracingContext& else_ctx) {
  std::vector<graph::Value> tv = graph_ops::values_for_backward(then_ctx.graph());
  std::vector<graph::Value> ev = graph_ops::values_for_backward(else_ctx.graph());
  auto stand_in = [](TracingContext& ctx, const schema::TensorType& t) {
    runtime::DispatchHandlerGuard guard(&ctx);
    Shape s;
    for (int d = 0; d < std::max(t.shape.rank(), 0); ++d) s.push_back(0);
    return ctx.value_of(zeros(s, t.dtype));
  };
  for (const graph::Value& v : tv) {
    then_ctx.graph().results().push_back(v);
    else_ctx.graph().results().push_back(stand_in(else_ctx, then_ctx.graph().type_of(v)));
  }
  for (const graph::Value& v : ev) {
    then_ctx.graph().results().push_back(stand_in(then_ctx, else_ctx.graph().type_of(v)));
    else_ctx.graph().results().push_back(v);
  }
}

std::vector<Tensor> cond_traced(TracingContext* outer, const Tensor& pred, FlatFnRef then_fn, FlatFnRef else_fn,
                                std::vector<int64_t>& sizes, const SourceLocation& loc) {
  if (pred.dtype() != DType::Bool || (pred.shape().is_fully_defined() && pred.size() != 1))
    throw InvalidArgument(
        fmt::format("cond: pred must be a bool tensor with one element, got {}", type_text(type_of(pred))));

  NestedContext then_ctx(std::make_shared<graph::Graph>("then"), outer);
  NestedContext else_ctx(std::make_shared<graph::Graph>("else"), outer);
  ResultFlattener a = trace_into(then_ctx, then_fn, {}, "cond: then_fn");
  // The else graph captures the then graph's tensors first, in order; its own
  // further captures are then added to the then graph, so both end up with
  // the same capture list.
  capture_all(else_ctx, then_ctx.graph());
  ResultFlattener b = trace_into(else_ctx, else_fn, {}, "cond: else_fn");
  capture_all(then_ctx, else_ctx.graph());
  check_same_captures(then_ctx.graph(), else_ctx.graph());

  if (a.sizes != b.sizes || a.leaves.size() != b.leaves.size())
    throw InvalidArgument(fmt::format(
        "cond: then_fn and else_fn return different structures ({} tensors in then_fn, {} in else_fn)",
        a.leaves.size(), b.leaves.size()));
  for (std::size_t k = 0; k < a.leaves.size(); ++k) {
    if (a.leaves[k].dtype() != b.leaves[k].dtype())
      throw InvalidArgument(fmt::format("cond: output {} is {} in then_fn but {} in else_fn", k,
                                        type_text(type_of(a.leaves[k])), type_text(type_of(b.leaves[k]))));
  }
  add_values_for_backward(then_ctx, else_ctx);
  then_ctx.graph().verify();
  else_ctx.graph().verify();

  std::vector<Tensor> inputs{pred};
  for (Tensor& t : outer_captures(then_ctx.graph())) inputs.push_back(std::move(t));
  bool stateful = !then_ctx.graph().stateful_nodes().empty() || !else_ctx.graph().stateful_nodes().empty();
  then_ctx.graph().drop_capture_sources();
  else_ctx.graph().drop_capture_sources();
  schema::Attrs attrs{{"then_branch", GraphPtr(then_ctx.graph_ptr())}, {"else_branch", GraphPtr(else_ctx.graph_ptr())}};
  runtime::TensorList out = runtime::dispatch(graph_ops::if_op(stateful), inputs, std::move(attrs), loc);
  sizes = std::move(a.sizes);
  return std::vector<Tensor>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(a.leaves.size()));
}

// TF's _ShapeLessThanOrEqual: `shape` is at least as specific as `bound`
// (same rank, equal where bound's dim is known; an unknown rank bound takes
// any shape).
bool fits(const Shape& shape, const Shape& bound) {
  if (!bound.has_known_rank()) return true;
  if (!shape.has_known_rank() || shape.rank() != bound.rank()) return false;
  for (int d = 0; d < bound.rank(); ++d)
    if (bound[d] >= 0 && shape[d] != bound[d]) return false;
  return true;
}

const std::string& leaf_name(const LoopSpec& spec, std::size_t i) {
  static const std::string counter = "the iteration counter";
  return i < spec.leaf_names.size() ? spec.leaf_names[i] : counter;
}

// Checks what body_fn returned against the loop variables: same structure,
// dtypes and ranks. Names the variable and both types.
void check_body_result(const std::vector<schema::TensorType>& vars, const std::vector<int64_t>& sizes,
                       const LoopSpec& spec, const ResultFlattener& next) {
  if (next.sizes != sizes || next.leaves.size() != vars.size())
    throw InvalidArgument(fmt::format(
        "while_loop: body_fn returned {} tensors in another structure than the {} loop variables; it "
        "must return the loop variables in the same structure",
        next.leaves.size(), vars.size()));
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const Tensor& t = next.leaves[i];
    if (!t.defined()) throw InvalidArgument(fmt::format("while_loop: body_fn returned a null tensor for loop variable {}", i));
    const Shape& s = t.shape();
    bool rank_ok = !vars[i].shape.has_known_rank() || !s.has_known_rank() || s.rank() == vars[i].shape.rank();
    if (t.dtype() != vars[i].dtype || !rank_ok)
      throw InvalidArgument(fmt::format(
          "while_loop: {} is {} on entry but {} after body_fn; a loop variable keeps its dtype and rank",
          leaf_name(spec, i), type_text(vars[i]), type_text(type_of(t))));
  }
  for (const LoopSpec::Invariant& inv : spec.invariants) {
    const Shape& got = next.leaves[inv.leaf].shape();
    if (!fits(got, inv.shape))
      throw InvalidArgument(fmt::format(
          "while_loop: loop variable {} has shape {} after body_fn, which does not fit its shape invariant {}",
          inv.var, got.to_string(), inv.shape.to_string()));
  }
}

// TF's rule for a traced loop: a tensor of the loop variables without a shape
// invariant (nor relaxed: TensorArray parts, relax_shapes) keeps its entry
// shape; the body may make it more specific, never change or loosen it.
void check_shapes_kept(const std::vector<schema::TensorType>& types, const std::vector<char>& free,
                       const LoopSpec& spec, const ResultFlattener& next) {
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (free[i]) continue;
    const Shape& got = next.leaves[i].shape();
    if (fits(got, types[i].shape)) continue;
    throw InvalidArgument(fmt::format(
        "while_loop: {} enters the loop with shape {}, but has shape {} after one iteration. To allow the shape "
        "to vary across iterations, use the shape_invariants option to specify a less-specific shape (C++: "
        "WhileOptions::shape_invariants, one entry per loop variable, kiln::None for a dim that may vary; "
        "Python: while_loop(cond, body, loop_vars, shape_invariants=[...]))",
        leaf_name(spec, i), types[i].shape.to_string(), got.to_string()));
  }
}

// The loop variables' entry types; those that may change rank get an
// unknown rank; those with a shape invariant get it (after checking that
// they enter with a shape that fits).
std::vector<schema::TensorType> entry_types(const std::vector<Tensor>& vars, const LoopSpec& spec) {
  std::vector<schema::TensorType> types;
  for (const Tensor& t : vars) types.push_back(type_of(t));
  for (std::size_t i : spec.any_rank) types[i].shape = Shape::unknown_rank();
  for (const LoopSpec::Invariant& inv : spec.invariants) {
    const Shape& entry = vars[inv.leaf].shape();
    if (!inv.shape.is_compatible_with(entry))
      throw InvalidArgument(fmt::format(
          "while_loop: loop variable {} enters with shape {}, which does not fit its shape invariant {}", inv.var,
          entry.to_string(), inv.shape.to_string()));
    types[inv.leaf].shape = inv.shape;
  }
  return types;
}

// The iteration limit as a C++ number (-1: none).
int64_t eager_limit(const LoopSpec& spec) {
  if (!spec.maximum_iterations.defined()) return -1;
  return spec.maximum_iterations.item<int32_t>();
}

std::vector<Tensor> while_eager(FlatFnRef cond_fn, FlatFnRef body_fn, std::vector<Tensor> vars,
                                const std::vector<int64_t>& sizes, const LoopSpec& spec) {
  std::vector<schema::TensorType> types = entry_types(vars, spec);
  int64_t limit = eager_limit(spec);
  for (int64_t iteration = 0; limit < 0 || iteration < limit; ++iteration) {
    ResultFlattener c;
    cond_fn.call(cond_fn.object, vars, c);
    if (!predicate_value(c.leaves.at(0), "while_loop: cond_fn")) break;
    ResultFlattener next;
    body_fn.call(body_fn.object, vars, next);
    check_body_result(types, sizes, spec, next);
    vars = std::move(next.leaves);
  }
  return vars;
}

std::vector<Tensor> add_parameters(NestedContext& ctx, const std::vector<schema::TensorType>& types) {
  std::vector<Tensor> params;
  for (std::size_t i = 0; i < types.size(); ++i)
    params.push_back(ctx.add_parameter(types[i], fmt::format("var{}", i)));
  return params;
}

std::vector<Tensor> while_traced(TracingContext* outer, FlatFnRef cond_fn, FlatFnRef body_fn,
                                 const std::vector<Tensor>& vars, const std::vector<int64_t>& sizes,
                                 const LoopSpec& spec, const SourceLocation& loc) {
  std::vector<schema::TensorType> types = entry_types(vars, spec);
  // Leaves checked by their invariant, or relaxed, are free of the
  // keep-your-shape rule; only relaxed ones have dims relaxed.
  std::vector<char> free(types.size(), 0), relax(types.size(), 0);
  for (const LoopSpec::Invariant& inv : spec.invariants) free[inv.leaf] = 1;
  for (std::size_t i : spec.relaxed)
    if (i < types.size()) free[i] = relax[i] = 1;
  // Trace the body; where it changes a relaxed leaf's dim, trace again with
  // that dim unknown (dims only ever become unknown, so this ends).
  std::unique_ptr<NestedContext> body;
  while (true) {
    body = std::make_unique<NestedContext>(std::make_shared<graph::Graph>("body"), outer);
    std::vector<Tensor> params = add_parameters(*body, types);
    ResultFlattener next = trace_into(*body, body_fn, params, "while_loop: body_fn");
    check_body_result(types, sizes, spec, next);
    check_shapes_kept(types, free, spec, next);
    bool relaxed = false;
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (!relax[i]) continue;  // its shape or invariant holds (checked above)
      Shape& s = types[i].shape;
      const Shape& got = next.leaves[i].shape();
      if (s.has_known_rank() && !got.has_known_rank()) {
        s = Shape::unknown_rank();
        relaxed = true;
        continue;
      }
      for (int d = 0; d < s.rank(); ++d) {
        if (s[d] >= 0 && got[d] != s[d]) {
          s[d] = None;
          relaxed = true;
        }
      }
    }
    if (!relaxed) break;
  }
  NestedContext cond(std::make_shared<graph::Graph>("cond"), outer);
  std::vector<Tensor> params = add_parameters(cond, types);
  capture_all(cond, body->graph());
  ResultFlattener c = trace_into(cond, cond_fn, params, "while_loop: cond_fn");
  const Tensor& p = c.leaves.at(0);
  if (p.dtype() != DType::Bool || (p.shape().is_fully_defined() && p.size() != 1))
    throw InvalidArgument(fmt::format(
        "while_loop: cond_fn must return a bool tensor with one element, got {}", type_text(type_of(p))));
  capture_all(*body, cond.graph());
  check_same_captures(body->graph(), cond.graph());
  body->graph().verify();
  cond.graph().verify();

  std::vector<Tensor> inputs = vars;
  for (Tensor& t : outer_captures(body->graph())) inputs.push_back(std::move(t));
  bool stateful = !body->graph().stateful_nodes().empty() || !cond.graph().stateful_nodes().empty();
  body->graph().drop_capture_sources();
  cond.graph().drop_capture_sources();
  schema::Attrs attrs{{"cond", GraphPtr(cond.graph_ptr())}, {"body", GraphPtr(body->graph_ptr())}};
  runtime::TensorList out = runtime::dispatch(graph_ops::while_op(stateful), inputs, std::move(attrs), loc);
  return std::vector<Tensor>(out.begin(), out.end());
}

}  // namespace

std::vector<Tensor> cond_flat(const Tensor& pred, FlatFnRef then_fn, FlatFnRef else_fn,
                              std::vector<int64_t>& sizes, const SourceLocation& loc) {
  if (!pred.defined()) throw InvalidArgument("cond: pred is a null tensor");
  TracingContext* trace = current_trace();
  if (trace && pred.is_symbolic()) return cond_traced(trace, pred, then_fn, else_fn, sizes, loc);
  // A concrete pred: plain control flow (while tracing, the chosen branch's
  // ops join the enclosing graph).
  FlatFnRef chosen = predicate_value(pred, "cond") ? then_fn : else_fn;
  ResultFlattener out;
  if (trace) {
    chosen.call(chosen.object, {}, out);
  } else {
    {
      runtime::DispatchHandlerGuard eager(nullptr);
      chosen.call(chosen.object, {}, out);
    }
    out.leaves = replay_as_if(pred, out.leaves, loc);
  }
  sizes = std::move(out.sizes);
  return std::move(out.leaves);
}

void apply_while_options(const WhileOptions& options, const LoopVarsInfo& vars, const ResultFlattener& flat,
                         LoopSpec& spec) {
  const std::size_t n_vars = vars.is_tensor.size(), n_leaves = flat.leaves.size();
  const auto& shapes = options.shape_invariants;
  if (!shapes.empty() && shapes.size() != n_vars)
    throw InvalidArgument(fmt::format("while_loop: {} shape invariants for {} loop variables", shapes.size(), n_vars));
  for (std::size_t v = 0; v < shapes.size(); ++v) {
    if (!shapes[v]) continue;
    if (!vars.is_tensor[v])
      throw InvalidArgument(fmt::format(
          "while_loop: loop variable {} has a shape invariant but is not a Tensor (only Tensor variables take one)", v));
    spec.invariants.push_back({vars.first_leaf[v], v, *shapes[v]});
  }
  const Tensor& limit = options.maximum_iterations;
  if (limit.defined() && (limit.dtype() != DType::Int32 || limit.shape().rank() != 0))
    throw InvalidArgument(fmt::format("while_loop: maximum_iterations must be an int32 scalar, got {}",
                                      type_text(type_of(limit))));
  spec.maximum_iterations = limit;
  spec.any_rank = flat.any_rank;
  if (options.relax_shapes) {
    for (std::size_t i = 0; i < n_leaves; ++i) spec.relaxed.push_back(i);
  } else {
    spec.relaxed = flat.internal;
  }
  // Names: leaves before the first variable's are for_range's counter.
  spec.leaf_names.assign(n_leaves, "the loop counter");
  for (std::size_t v = 0; v < n_vars; ++v) {
    std::size_t begin = vars.first_leaf[v], end = v + 1 < n_vars ? vars.first_leaf[v + 1] : n_leaves;
    for (std::size_t i = begin; i < end && i < n_leaves; ++i)
      spec.leaf_names[i] = end - begin == 1 ? fmt::format("loop variable {}", v)
                                            : fmt::format("loop variable {} (tensor {} of it)", v, i - begin);
  }
}

namespace {

// The traced loop with maximum_iterations: an iteration counter joins the
// loop variables, and cond_fn's result is and-ed with counter < limit.
std::vector<Tensor> while_traced_limited(TracingContext* outer, FlatFnRef cond_fn, FlatFnRef body_fn,
                                         std::vector<Tensor> vars, const std::vector<int64_t>& sizes,
                                         const LoopSpec& spec, const SourceLocation& loc) {
  const Tensor& limit = spec.maximum_iterations;
  auto cond = [&](std::span<const Tensor> leaves, ResultFlattener& out) {
    ResultFlattener c;
    cond_fn.call(cond_fn.object, leaves.first(leaves.size() - 1), c);
    const Tensor& p = c.leaves.at(0);
    if (p.dtype() != DType::Bool)  // the plain loop's message
      throw InvalidArgument(fmt::format(
          "while_loop: cond_fn must return a bool tensor with one element, got {}", type_text(type_of(p))));
    out.leaf(logical_and(less(leaves.back(), limit, loc), p, loc));
  };
  auto body = [&](std::span<const Tensor> leaves, ResultFlattener& out) {
    body_fn.call(body_fn.object, leaves.first(leaves.size() - 1), out);
    out.leaf(add(leaves.back(), 1, loc));
  };
  vars.push_back(ops::scalar_to_tensor(Scalar(0), DType::Int32, "while_loop", loc));
  std::vector<Tensor> out = while_traced(outer, FlatFnRef(cond), FlatFnRef(body), vars, sizes, spec, loc);
  out.pop_back();
  return out;
}

}  // namespace

std::vector<Tensor> while_loop_flat(FlatFnRef cond_fn, FlatFnRef body_fn, std::vector<Tensor> vars,
                                    const std::vector<int64_t>& sizes, const LoopSpec& spec,
                                    const SourceLocation& loc) {
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (!vars[i].defined()) throw InvalidArgument(fmt::format("while_loop: loop variable {} is a null tensor", i));
  // While tracing, the loop is one op (the graph does not grow with the
  // trip count); otherwise it runs now.
  if (TracingContext* outer = current_trace()) {
    if (spec.maximum_iterations.defined())
      return while_traced_limited(outer, cond_fn, body_fn, std::move(vars), sizes, spec, loc);
    return while_traced(outer, cond_fn, body_fn, vars, sizes, spec, loc);
  }
  if (!control_flow_intercepted()) return while_eager(cond_fn, body_fn, std::move(vars), sizes, spec);
  std::vector<Tensor> final_vars;
  {
    runtime::DispatchHandlerGuard eager(nullptr);
    final_vars = while_eager(cond_fn, body_fn, std::move(vars), sizes, spec);
  }
  // The trace made the iteration counter's start here too.
  if (spec.maximum_iterations.defined()) ops::scalar_to_tensor(Scalar(0), DType::Int32, "while_loop", loc);
  return replay_as_while(final_vars, loc);
}

namespace {

Tensor range_bound(const Operand& v, const char* name, const SourceLocation& loc) {
  if (!v.is_tensor()) {
    const Scalar& s = v.scalar();
    if (s.kind() != Scalar::Kind::Int)
      throw InvalidArgument(fmt::format("for_range: {} must be an int or an int32 scalar tensor", name));
    return ops::scalar_to_tensor(s, DType::Int32, "for_range", loc);
  }
  const Tensor& t = v.tensor();
  if (t.dtype() != DType::Int32 || t.shape().rank() != 0)
    throw InvalidArgument(fmt::format("for_range: {} must be an int32 scalar, got {}", name,
                                      type_text(type_of(t))));
  return t;
}

}  // namespace

RangeBounds range_bounds(const Operand& start, const Operand& limit, const Operand& delta,
                         const SourceLocation& loc) {
  RangeBounds b{range_bound(start, "start", loc), range_bound(limit, "limit", loc),
                range_bound(delta, "delta", loc)};
  // A C++ delta's sign is known even while tracing (its tensor is symbolic
  // there): the loop condition then needs one comparison.
  if (!delta.is_tensor() || !b.delta.is_symbolic()) {
    int32_t d = delta.is_tensor() ? b.delta.item<int32_t>() : static_cast<int32_t>(delta.scalar().as_int());
    if (d == 0) throw InvalidArgument("for_range: delta must not be 0");
    b.sign = d > 0 ? 1 : -1;
  }
  return b;
}

Tensor range_continues(const Tensor& i, const RangeBounds& b, const SourceLocation& loc) {
  if (b.sign > 0) return less(i, b.limit, loc);
  if (b.sign < 0) return greater(i, b.limit, loc);
  return logical_or(logical_and(greater(b.delta, 0, loc), less(i, b.limit, loc), loc),
                    logical_and(less(b.delta, 0, loc), greater(i, b.limit, loc), loc), loc);
}

Tensor range_next(const Tensor& i, const RangeBounds& b, const SourceLocation& loc) {
  return add(i, b.delta, loc);
}

}  // namespace kiln::detail
