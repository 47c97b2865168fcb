// Call / StatefulCall: a kiln::function called while another is traced is
// one node that runs the callee's own traced graph (held as attr "f").
#include "graph_ops/call_op.h"

#include "graph_ops/graph_gradients.h"
#include "graph_ops/control_flow_ops.h"
#include "trace/tracing_context.h"
#include "kiln/math.h"

namespace kiln::graph_ops {

namespace {

using GraphPtr = std::shared_ptr<const graph::Graph>;

void call_infer(schema::InferContext& c) {
  const GraphPtr& g = c.attrs().get<GraphPtr>("f");
  if (!g) c.fail("attr f is an empty graph");
  check_feeds(c, *g, 0, "f");
  for (const graph::Value& v : g->results()) {
    const schema::TensorType& t = g->type_of(v);
    c.add_output(t.dtype, t.shape);
  }
}

void call_kernel(schema::KernelContext& c) {
  detail::ResultLeaves out = plan_for(c.attrs.get<GraphPtr>("f"))->run(c.inputs);
  for (std::size_t k = 0; k < c.outputs.size(); ++k) c.outputs[k] = std::move(out[k]);
}

std::vector<schema::OpSample> call_samples() {
  auto g = std::make_shared<graph::Graph>("square_plus_one");
  trace::TracingContext ctx(g);
  Tensor x = ctx.add_parameter({DType::Float32, Shape{None}}, "x");
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    g->results().push_back(ctx.value_of(x * x + 1.f));
  }
  return {{{constant({1.f, 2.f, 3.f})}, schema::Attrs{{"f", GraphPtr(g)}}}};
}

constexpr detail::OpDef kCall{.name = "Call", .infer = call_infer, .kernel = call_kernel,
                              .flags = schema::kSetsOwnOutputs | schema::kCostlyToRecompute, .samples = call_samples,
                              .gradient = call_gradient};
constexpr detail::OpDef kStatefulCall{.name = "StatefulCall", .infer = call_infer, .kernel = call_kernel,
                                      .flags = schema::kStateful | schema::kSetsOwnOutputs | schema::kCostlyToRecompute,
                                      .samples = call_samples, .gradient = call_gradient};

}  // namespace

const detail::OpDef& call_op(bool stateful) { return stateful ? kStatefulCall : kCall; }

void register_call_ops(schema::OpRegistry& r) {
  r.add(call_op(false));
  r.add(call_op(true));
}

}  // namespace kiln::graph_ops
