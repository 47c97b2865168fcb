// The registry-wide test (DESIGN.md §3): every op, on every sample, gives the
// same dtypes, shapes and bits when traced into a graph as when run eagerly,
// with static shapes and with every dim unknown at trace time.
#include "test_util.h"

#include <cstring>

#include <fmt/format.h>

#include "exec/plan.h"
#include "function/tracing_context.h"
#include "ops/op_def.h"
#include "runtime/dispatch.h"

using namespace kiln;

namespace {

void expect_same(const Tensor& eager, const Tensor& traced, const std::string& what) {
  ASSERT_EQ(eager.dtype(), traced.dtype()) << what;
  ASSERT_EQ(eager.shape(), traced.shape()) << what;
  if (eager.dtype() == DType::String) {
    EXPECT_EQ(eager.to_vector<std::string>(), traced.to_vector<std::string>()) << what;
  } else if (eager.dtype() != DType::Resource) {
    std::size_t bytes = static_cast<std::size_t>(eager.size()) * dtype_size(eager.dtype());
    EXPECT_EQ(std::memcmp(detail::raw_data(eager), detail::raw_data(traced), bytes), 0) << what;
  }
}

std::vector<Tensor> run_traced(const detail::OpDef& op, const detail::OpSample& sample, bool unknown_dims) {
  auto graph = std::make_shared<graph::Graph>(std::string(op.name));
  function_detail::TracingContext ctx(graph);
  std::vector<Tensor> params;
  for (std::size_t i = 0; i < sample.inputs.size(); ++i) {
    Shape shape = sample.inputs[i].shape();
    if (unknown_dims)
      for (int d = 0; d < shape.rank(); ++d) shape[d] = None;
    params.push_back(ctx.add_parameter({sample.inputs[i].dtype(), shape}, "arg" + std::to_string(i)));
  }
  {
    detail::DispatchHandlerGuard guard(&ctx);
    detail::Attrs attrs = sample.attrs;
    detail::TensorList outs = detail::dispatch(op, params, std::move(attrs), SourceLocation::current());
    for (const Tensor& t : outs) graph->results().push_back(ctx.value_of(t));
  }
  graph->verify();
  exec::Plan plan(graph);
  std::vector<Tensor> inputs(sample.inputs.begin(), sample.inputs.end());
  for (const graph::Capture& c : graph->captures()) inputs.push_back(c.outer);
  return plan.run(inputs);
}

}  // namespace

TEST(RegistryParity, EveryOpTracedMatchesEager) {
  int checked = 0;
  for (const detail::OpDef* op : detail::OpRegistry::global().all()) {
    if (op->is(detail::kGraphOnly)) continue;
    ASSERT_NE(op->samples, nullptr) << op->name;
    for (const detail::OpSample& sample : op->samples()) {
      // Copies: run_eager may write over inputs that only its array holds.
      std::vector<Tensor> args = sample.inputs;
      detail::TensorList eager = detail::run_eager(*op, args, sample.attrs);
      for (bool unknown : {false, true}) {
        std::string what = fmt::format("{} (dims {})", op->name, unknown ? "unknown" : "static");
        std::vector<Tensor> traced;
        try {
          traced = run_traced(*op, sample, unknown);
        } catch (const InvalidArgument& e) {
          // An op may need a dim at trace time (unstack: the number of
          // outputs); it must say so.
          if (unknown && std::string(e.what()).find("must be known") != std::string::npos) continue;
          ADD_FAILURE() << what << " failed to trace or run: " << e.what();
        } catch (const std::exception& e) {
          ADD_FAILURE() << what << " failed to trace or run: " << e.what();
          continue;
        }
        ASSERT_EQ(traced.size(), eager.size()) << what;
        for (std::size_t k = 0; k < eager.size(); ++k) expect_same(eager[k], traced[k], what);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}
