#include "onnx_samples.h"

#include "ops/creation.h"
#include "runtime/dispatch.h"
#include "trace/tracing_context.h"

namespace kiln::testing {

void for_each_op_sample(
    const std::function<void(const detail::OpDef&, int, const graph::Graph&, const schema::OpSample&)>& fn) {
  for (const detail::OpDef* op : schema::OpRegistry::global().all()) {
    if (!op->samples || op->is(schema::kGraphOnly)) continue;
    std::vector<schema::OpSample> samples = op->samples();
    for (std::size_t k = 0; k < samples.size(); ++k) {
      const schema::OpSample& sample = samples[k];
      auto g = std::make_shared<graph::Graph>(std::string(op->name));
      try {
        trace::TracingContext ctx(g);
        std::vector<Tensor> params;
        for (std::size_t i = 0; i < sample.inputs.size(); ++i)
          params.push_back(ctx.add_parameter({sample.inputs[i].dtype(), sample.inputs[i].shape()},
                                             "arg" + std::to_string(i)));
        runtime::DispatchHandlerGuard guard(&ctx);
        schema::Attrs attrs = sample.attrs;
        runtime::TensorList outs = runtime::dispatch(*op, params, std::move(attrs), SourceLocation::current());
        for (const Tensor& t : outs) g->results().push_back(ctx.value_of(t));
      } catch (const Error&) {
        continue;
      }
      fn(*op, static_cast<int>(k), *g, sample);
    }
  }
}

void for_each_op_sample(const std::function<void(const detail::OpDef&, int, const graph::Graph&)>& fn) {
  for_each_op_sample(
      [&](const detail::OpDef& op, int k, const graph::Graph& g, const schema::OpSample&) { fn(op, k, g); });
}

}  // namespace kiln::testing
