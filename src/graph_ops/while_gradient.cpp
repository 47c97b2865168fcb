// The gradient of While(vars..., captures...) {cond, body}:
//  1. the loop runs again (the re-run), stacking each iteration's loop
//     variables in growing TensorArrays, and counting iterations; it also
//     stacks the body's values that the gradient reads and that would cost a
//     contraction to recompute (TF's accumulators, while_accumulators.h);
//  2. a second loop walks the iterations backwards: it replays the body on
//     the stacked variables of iteration i under a tape (the stacked values
//     standing in for their recomputation), turns the gradients of that
//     iteration's outputs into those of its inputs, and sums the captures'
//     gradients.
// The re-run keeps the forward op as it is; merge_while_replays then takes
// the forward loop's results from it. Both loops carry every value they need
// as loop variables, so their graphs capture nothing.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/tensor_impl.h"
#include "graph_ops/control_flow_ops.h"
#include "graph_ops/graph_gradients.h"
#include "graph_ops/replay.h"
#include "graph_ops/while_accumulators.h"
#include "graph_ops/while_replays.h"
#include "graph_ops/while_trip_count.h"
#include "kiln/array.h"
#include "kiln/gradient.h"
#include "kiln/math.h"
#include "kiln/tensor_array.h"
#include "ops/creation.h"
#include "ops/known_ops.h"
#include "ops/variable_ops.h"
#include "trace/tracing_context.h"

namespace kiln::graph_ops {

using graph::Graph;
using graph::Node;
using GraphPtr = std::shared_ptr<const Graph>;

namespace {

struct LoopGraph {
  std::shared_ptr<Graph> graph = std::make_shared<Graph>("loop");
  trace::TracingContext ctx{graph};
  std::vector<Tensor> params;
  explicit LoopGraph(const std::vector<schema::TensorType>& types) {
    for (std::size_t i = 0; i < types.size(); ++i) params.push_back(ctx.add_parameter(types[i], fmt::format("v{}", i)));
  }
  GraphPtr finish(const std::vector<Tensor>& results) {
    for (const Tensor& r : results) graph->results().push_back(ctx.value_of(r));
    if (!graph->captures().empty()) throw Internal("a while_loop gradient graph captured an outer tensor");
    return graph;
  }
};

// The shape of a variable a graph reads through capture `placeholder`, when
// the graph reads it.
std::optional<schema::TensorType> variable_type(const Graph& g, const Node* placeholder) {
  for (const auto& n : g.nodes()) {
    if (n->op != &ops::read_variable_op() || n->inputs.empty() || n->inputs[0].node != placeholder) continue;
    return n->outputs[0];
  }
  return std::nullopt;
}

// Every iteration's value of one loop variable: a TensorArray written at the
// iteration's index, which grows by doubling, in place (the While kernel
// hands its loop variables over), so stacking costs amortized O(1) copies per
// iteration where a concat would copy the whole stack each time. A loop
// carries it as its three leaves (buffer, mask, size).
class IterationStack {
 public:
  explicit IterationStack(const schema::TensorType& t)
      : empty_(t.dtype, 0, {.dynamic_size = true, .element_shape = t.shape}) {
    detail::ResultFlattener f;
    detail::Traits<TensorArray>::flatten_result(empty_, f);
    sizes_ = f.sizes;
    const Shape& e = empty_.options().element_shape;
    Shape buffer = Shape::unknown_rank();
    if (e.is_fully_defined()) {
      buffer = e;
      buffer.insert(0, None);
    }
    types_ = {{t.dtype, buffer}, {f.leaves[1].dtype(), Shape{None}}, {f.leaves[2].dtype(), Shape{}}};
  }
  static constexpr std::size_t kLeaves = 3;
  const std::vector<schema::TensorType>& types() const { return types_; }
  // An empty stack; of `size` unwritten rows when the trip count is known
  // (while_trip_count.h), so that the re-run allocates it once.
  std::vector<Tensor> empty_leaves(const std::optional<Tensor>& size) const {
    return size ? leaves(TensorArray(empty_.dtype(), *size, empty_.options())) : leaves(empty_);
  }
  // The stack whose leaves start at `leaves[0]`.
  TensorArray array(const Tensor* leaves) const {
    std::vector<Tensor> copies(leaves, leaves + kLeaves);
    detail::ResultReader reader(copies, sizes_);
    return detail::Traits<TensorArray>::unflatten(reader);
  }
  static std::vector<Tensor> leaves(const TensorArray& a) {
    detail::ResultFlattener f;
    detail::Traits<TensorArray>::flatten_result(a, f);
    return std::move(f.leaves);
  }

 private:
  TensorArray empty_;
  std::vector<int64_t> sizes_;
  std::vector<schema::TensorType> types_;
};

// The value of g that a symbolic tensor traced into g stands for.
std::optional<graph::Value> value_in(const Graph& g, const Tensor& t) {
  const detail::TensorImpl* impl = t.impl();
  if (!impl || !impl->symbolic || impl->graph_owner.get() != static_cast<const void*>(&g)) return std::nullopt;
  return graph::Value{impl->node, impl->output_index};
}

// Marks the loop variables that are the three leaves of a fixed-size
// TensorArray which `body` only writes (a recurrent layer's outputs): one
// TensorArrayWrite reads them, and its outputs are the next values. Its
// gradient reads no value of the array, so the backward loop may replay the
// write on the final array instead of on iteration i's, with the same
// results.
void mark_written_only_arrays(const Graph& body, std::vector<bool>& final_value) {
  const auto& params = body.parameters();
  std::unordered_map<const Node*, int> uses;
  for (const auto& n : body.nodes())
    for (const graph::Value& v : n->inputs) ++uses[v.node];
  for (const graph::Value& v : body.results()) ++uses[v.node];
  for (const auto& n : body.nodes()) {
    if (n->op != &ops::tensor_array_write_op() || n->attrs.get_bool("dynamic")) continue;
    std::size_t leaf[3];
    bool written_only = true;
    for (int k = 0; k < 3 && written_only; ++k) {
      auto it = std::find(params.begin(), params.end(), n->inputs[k].node);
      leaf[k] = static_cast<std::size_t>(it - params.begin());
      written_only = it != params.end() && uses[*it] == 1 && body.results()[leaf[k]] == graph::Value{n.get(), k};
    }
    if (written_only)
      for (std::size_t k : leaf) final_value[k] = true;
  }
}

}  // namespace

void while_gradient(schema::GradContext& c) {
  const GraphPtr& cond_f = c.attrs.get<GraphPtr>("cond");
  const GraphPtr& body_f = c.attrs.get<GraphPtr>("body");
  const std::size_t nv = c.outputs.size(), nc = c.inputs.size() - nv;
  std::vector<schema::TensorType> var_types, cap_types;
  for (const Node* p : body_f->parameters()) var_types.push_back(p->outputs[0]);
  for (const graph::Capture& cap : body_f->captures()) cap_types.push_back(cap.placeholder->outputs[0]);
  for (std::size_t k = 0; k < nv; ++k)
    if (var_types[k].dtype == DType::Resource || var_types[k].dtype == DType::String)
      throw Unimplemented(fmt::format("the gradient of a while_loop with a {} loop variable ({})",
                                      dtype_name(var_types[k].dtype), k));
  auto feeds_of = [&](std::span<const Tensor> params) {
    return std::vector<Tensor>(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(nv + nc));
  };
  // The loop variables stacked per iteration, and those the backward loop
  // takes at their final values: when this loop is a gradient's re-run (a
  // second derivative), its own stacks, which grow a row per iteration
  // (replaying a row's write on the final stack gives the same gradients,
  // all of the final stack's shape); with accumulators, the TensorArrays the
  // body only writes (copying a whole array per iteration is quadratic).
  std::vector<bool> final_value(nv), empty_at_start(nv);
  if (std::optional<WhileReplay> rerun = while_replay_of(body_f.get()))
    for (std::size_t k = rerun->stacks_from; k < nv; ++k) final_value[k] = empty_at_start[k] = true;
  if (while_accumulators()) mark_written_only_arrays(*body_f, final_value);
  std::vector<std::size_t> stacked_of, final_of;
  for (std::size_t k = 0; k < nv; ++k) (final_value[k] ? final_of : stacked_of).push_back(k);
  std::vector<IterationStack> stacks;
  for (std::size_t k : stacked_of) stacks.emplace_back(var_types[k]);
  const std::size_t ns = stacks.size();
  constexpr std::size_t kS = IterationStack::kLeaves;

  // What the backward loop differentiates: the float loop variables and the
  // wanted captures (a variable's handle by the shape it is read with).
  std::vector<std::size_t> dv_of, dcap_of;
  for (std::size_t k = 0; k < nv; ++k)
    if (is_floating(var_types[k].dtype)) dv_of.push_back(k);
  std::vector<schema::TensorType> dcap_types;
  std::vector<Tensor> dcap_init;
  for (std::size_t j = 0; j < nc; ++j) {
    if (!c.needs(static_cast<int>(nv + j))) continue;
    if (cap_types[j].dtype == DType::Resource) {
      std::optional<schema::TensorType> t = variable_type(*body_f, body_f->captures()[j].placeholder);
      if (!t || !t->shape.is_fully_defined()) continue;
      dcap_types.push_back(*t);
      dcap_init.push_back(zeros(t->shape, t->dtype));
    } else if (is_floating(cap_types[j].dtype)) {
      dcap_types.push_back(cap_types[j]);
      dcap_init.push_back(zeros_like(c.inputs[nv + j]));
    } else {
      continue;
    }
    dcap_of.push_back(j);
  }

  // 2. The backward body: (i, dvars for float vars, dcaps for wanted caps,
  // stacks of the variables, stacks of the accumulated values, captures,
  // final values of the variables not stacked).
  // `accumulated` are values of body_f read from their stacks; `replayed`
  // (when given) receives which values of the body replay body_f's.
  std::vector<graph::Value> accumulated;
  std::vector<IterationStack> accumulated_stacks;
  std::vector<schema::TensorType> bwd_types;
  std::size_t first_dcap = 0, first_stack = 0, first_cap = 0;
  auto backward_body = [&](ReplayMap* replayed) {
    bwd_types = {{DType::Int32, Shape{}}};
    for (std::size_t k : dv_of) bwd_types.push_back(var_types[k]);
    bwd_types.insert(bwd_types.end(), dcap_types.begin(), dcap_types.end());
    for (const IterationStack& st : stacks) bwd_types.insert(bwd_types.end(), st.types().begin(), st.types().end());
    for (const IterationStack& st : accumulated_stacks)
      bwd_types.insert(bwd_types.end(), st.types().begin(), st.types().end());
    bwd_types.insert(bwd_types.end(), cap_types.begin(), cap_types.end());
    for (std::size_t k : final_of) bwd_types.push_back(var_types[k]);
    first_dcap = 1 + dv_of.size();
    first_stack = first_dcap + dcap_of.size();
    const std::size_t first_accumulated = first_stack + kS * ns;
    first_cap = first_accumulated + kS * accumulated.size();

    LoopGraph body2(bwd_types);
    std::vector<std::pair<graph::Value, graph::Value>> read_stacked;
    {
      runtime::DispatchHandlerGuard guard(&body2.ctx);
      const std::vector<Tensor>& p = body2.params;
      std::vector<Tensor> feeds(nv);
      for (std::size_t m = 0; m < ns; ++m) {
        // A stack of a partly known shape reads back of unknown rank: the
        // variable's shape, restored, lets shape-reading ops (Split) replay.
        Tensor row = stacks[m].array(&p[first_stack + kS * m]).read(p[0]);
        const Shape& declared = var_types[stacked_of[m]].shape;
        if (declared.has_known_rank() && !row.shape().has_known_rank()) row = ensure_shape(row, declared);
        feeds[stacked_of[m]] = row;
      }
      for (std::size_t m = 0; m < final_of.size(); ++m) feeds[final_of[m]] = p[first_cap + nc + m];
      for (std::size_t j = 0; j < nc; ++j) feeds.push_back(p[first_cap + j]);
      std::vector<Tensor> stacked;
      for (std::size_t k = 0; k < accumulated.size(); ++k)
        stacked.push_back(accumulated_stacks[k].array(&p[first_accumulated + kS * k]).read(p[0]));
      GradientTape tape({.watch_accessed_variables = false});
      std::vector<GradientSource> sources;
      for (std::size_t k : dv_of) {
        tape.watch(feeds[k]);
        sources.emplace_back(feeds[k]);
      }
      for (std::size_t j : dcap_of) {
        tape.watch(feeds[nv + j]);
        sources.emplace_back(feeds[nv + j]);
      }
      ReplayedValues values;
      std::vector<Tensor> ys = replay(*body_f, feeds, {}, &values);
      std::vector<Tensor> targets, dys;
      for (std::size_t m = 0; m < dv_of.size(); ++m) {
        targets.push_back(ys[dv_of[m]]);
        dys.push_back(p[1 + m]);
      }
      std::vector<Tensor> g = tape.gradient(targets, sources, dys);
      std::vector<Tensor> next{p[0] - 1};
      for (std::size_t m = 0; m < dv_of.size(); ++m) next.push_back(g[m].defined() ? g[m] : zeros_like(feeds[dv_of[m]]));
      for (std::size_t m = 0; m < dcap_of.size(); ++m) {
        const Tensor& acc = p[first_dcap + m];
        const Tensor& gm = g[dv_of.size() + m];
        next.push_back(gm.defined() ? acc + gm : acc);
      }
      for (std::size_t k = first_stack; k < bwd_types.size(); ++k) next.push_back(p[k]);
      body2.finish(next);
      // The body was traced recomputing every value, so that the tape
      // recorded the forward ops its gradients need; the stacked values
      // now take the recomputed ones' place.
      for (std::size_t k = 0; k < accumulated.size(); ++k) {
        const Tensor& recomputed = values.at(accumulated[k].node)[static_cast<std::size_t>(accumulated[k].index)];
        std::optional<graph::Value> from = value_in(*body2.graph, recomputed), to = value_in(*body2.graph, stacked[k]);
        if (!from || !to) throw Internal("a while_loop gradient's stacked value is not in its backward graph");
        read_stacked.emplace_back(*from, *to);
      }
      if (replayed) {
        for (const auto& [n, outputs] : values) {
          if (n->op == &ops::placeholder_op()) continue;
          for (std::size_t k = 0; k < outputs.size(); ++k)
            if (std::optional<graph::Value> v = value_in(*body2.graph, outputs[k]))
              replayed->emplace(*v, graph::Value{const_cast<Node*>(n), static_cast<int>(k)});
        }
      }
    }
    if (!read_stacked.empty()) read_instead(*body2.graph, read_stacked);
    return GraphPtr(body2.graph);
  };
  GraphPtr body2_g;
  if (while_accumulators()) {
    ReplayMap replayed;
    body2_g = backward_body(&replayed);
    accumulated = values_to_accumulate(*body2_g, replayed);
    for (const graph::Value& v : accumulated) accumulated_stacks.emplace_back(body_f->type_of(v));
    if (!accumulated.empty()) body2_g = backward_body(nullptr);
  } else {
    body2_g = backward_body(nullptr);
  }

  // 1. The re-run: (vars, captures, n, stacks of the variables, stacks of
  // the accumulated values).
  std::vector<schema::TensorType> fwd_types = var_types;
  fwd_types.insert(fwd_types.end(), cap_types.begin(), cap_types.end());
  fwd_types.push_back({DType::Int32, Shape{}});
  for (const IterationStack& st : stacks) fwd_types.insert(fwd_types.end(), st.types().begin(), st.types().end());
  for (const IterationStack& st : accumulated_stacks)
    fwd_types.insert(fwd_types.end(), st.types().begin(), st.types().end());
  LoopGraph cond1(fwd_types), body1(fwd_types);
  GraphPtr cond1_g, body1_g;
  {
    runtime::DispatchHandlerGuard guard(&cond1.ctx);
    cond1_g = cond1.finish({replay(*cond_f, feeds_of(cond1.params))[0]});
  }
  {
    runtime::DispatchHandlerGuard guard(&body1.ctx);
    const std::vector<Tensor>& p = body1.params;
    ReplayedValues values;
    std::vector<Tensor> next = replay(*body_f, feeds_of(p), {}, &values);
    for (std::size_t j = 0; j < nc; ++j) next.push_back(p[nv + j]);
    const Tensor& n = p[nv + nc];
    next.push_back(n + 1);
    auto push_written = [&](const IterationStack& stack, const Tensor* leaves, const Tensor& value) {
      for (Tensor& leaf : IterationStack::leaves(stack.array(leaves).write(n, value))) next.push_back(std::move(leaf));
    };
    for (std::size_t m = 0; m < ns; ++m) push_written(stacks[m], &p[nv + nc + 1 + kS * m], p[stacked_of[m]]);
    for (std::size_t k = 0; k < accumulated.size(); ++k)
      push_written(accumulated_stacks[k], &p[nv + nc + 1 + kS * (ns + k)],
                   values.at(accumulated[k].node)[static_cast<std::size_t>(accumulated[k].index)]);
    body1_g = body1.finish(next);
  }
  std::vector<Tensor> fwd_in(c.inputs.begin(), c.inputs.end());
  fwd_in.push_back(constant(0));
  const std::optional<Tensor> rows =
      ns + accumulated.size() > 0 ? trip_count(*cond_f, *body_f, c.inputs, nv) : std::nullopt;
  for (const IterationStack& st : stacks)
    for (Tensor& leaf : st.empty_leaves(rows)) fwd_in.push_back(std::move(leaf));
  for (const IterationStack& st : accumulated_stacks)
    for (Tensor& leaf : st.empty_leaves(rows)) fwd_in.push_back(std::move(leaf));
  bool stateful = is_stateful_graph(*body1_g) || is_stateful_graph(*cond1_g);
  // Stateless: its first nv outputs are the forward loop's, bit for bit.
  if (!stateful) note_while_replay(body1_g, {cond_f, body_f, nv + nc, nv, nv + nc + 1});
  runtime::TensorList fwd = runtime::dispatch(while_op(stateful), fwd_in,
                            schema::Attrs{{"cond", cond1_g}, {"body", body1_g}}, SourceLocation());

  LoopGraph cond2(bwd_types);
  GraphPtr cond2_g;
  {
    runtime::DispatchHandlerGuard guard(&cond2.ctx);
    cond2_g = cond2.finish({cond2.params[0] >= 0});
  }
  std::vector<Tensor> bwd_in{fwd[nv + nc] - 1};
  for (std::size_t k : dv_of) bwd_in.push_back(c.grad_or_zeros(static_cast<int>(k)));
  bwd_in.insert(bwd_in.end(), dcap_init.begin(), dcap_init.end());
  for (std::size_t k = 0; k < kS * (ns + accumulated.size()); ++k) bwd_in.push_back(fwd[nv + nc + 1 + k]);
  for (std::size_t j = 0; j < nc; ++j) bwd_in.push_back(c.inputs[nv + j]);
  for (std::size_t k : final_of) bwd_in.push_back(fwd[k]);
  bool bwd_stateful = is_stateful_graph(*body2_g) || is_stateful_graph(*cond2_g);
  runtime::TensorList bwd = runtime::dispatch(while_op(bwd_stateful), bwd_in,
                            schema::Attrs{{"cond", cond2_g}, {"body", body2_g}}, SourceLocation());
  for (std::size_t m = 0; m < dv_of.size(); ++m)
    // A re-run's stacks start empty, and take no gradient.
    if (!empty_at_start[dv_of[m]] && c.needs(static_cast<int>(dv_of[m]))) c.set(static_cast<int>(dv_of[m]), bwd[1 + m]);
  for (std::size_t m = 0; m < dcap_of.size(); ++m) c.set(static_cast<int>(nv + dcap_of[m]), bwd[first_dcap + m]);
}

}  // namespace kiln::graph_ops
