// The registry-wide test (DESIGN.md §3): every op, on every sample, gives the
// same dtypes, shapes and bits when traced into a graph as when run eagerly,
// with static shapes and with every dim unknown at trace time.
#include "test_util.h"

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "exec/plan.h"
#include "trace/tracing_context.h"
#include "ops/creation.h"
#include "schema/op_def.h"
#include "passes/passes.h"
#include "runtime/dispatch.h"

using namespace kiln;

namespace {

void expect_same(const Tensor& eager, const Tensor& traced, const std::string& what) {
  ASSERT_EQ(eager.dtype(), traced.dtype()) << what;
  ASSERT_EQ(eager.shape(), traced.shape()) << what;
  if (eager.dtype() != DType::Resource) {
    EXPECT_TRUE(detail::same_bits(eager, traced)) << what;
  }
}

enum class Inputs { Static, UnknownDims, Constants };

// A graph of the op on the sample: its inputs are parameters (with the
// sample's shapes, or every dim unknown) or constants baked into the graph.
std::shared_ptr<graph::Graph> trace_sample(const detail::OpDef& op, const detail::OpSample& sample, Inputs mode) {
  auto graph = std::make_shared<graph::Graph>(std::string(op.name));
  function_detail::TracingContext ctx(graph);
  std::vector<Tensor> params;
  for (std::size_t i = 0; i < sample.inputs.size() && mode != Inputs::Constants; ++i) {
    Shape shape = sample.inputs[i].shape();
    if (mode == Inputs::UnknownDims)
      for (int d = 0; d < shape.rank(); ++d) shape[d] = None;
    params.push_back(ctx.add_parameter({sample.inputs[i].dtype(), shape}, "arg" + std::to_string(i)));
  }
  {
    detail::DispatchHandlerGuard guard(&ctx);
    if (mode == Inputs::Constants)
      for (const Tensor& t : sample.inputs) params.push_back(detail::const_op(t, SourceLocation::current()));
    detail::Attrs attrs = sample.attrs;
    detail::TensorList outs = detail::dispatch(op, params, std::move(attrs), SourceLocation::current());
    for (const Tensor& t : outs) graph->results().push_back(ctx.value_of(t));
  }
  graph->verify();
  return graph;
}

std::vector<Tensor> run_graph(std::shared_ptr<const graph::Graph> graph, const detail::OpSample& sample,
                              Inputs mode) {
  exec::Plan plan(graph);
  std::vector<Tensor> inputs;
  if (mode != Inputs::Constants) inputs.assign(sample.inputs.begin(), sample.inputs.end());
  for (const graph::Capture& c : graph->captures()) inputs.push_back(c.outer);
  detail::ResultLeaves out = plan.run(inputs);
  return std::vector<Tensor>(out.begin(), out.end());
}

std::vector<Tensor> run_traced(const detail::OpDef& op, const detail::OpSample& sample, bool unknown_dims) {
  Inputs mode = unknown_dims ? Inputs::UnknownDims : Inputs::Static;
  return run_graph(trace_sample(op, sample, mode), sample, mode);
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

// Every op, on every sample, gives the same bits in the optimized graph as in
// the traced one: with parameters (every elementwise op then runs as a
// FusedElementwise node of its own) and with constant inputs (the op is then
// folded at compile time).
TEST(RegistryParity, EveryOpOptimizedMatchesUnoptimized) {
  passes::PassOptions options;
  options.fuse_min_nodes = 1;
  options.verify = true;
  int checked = 0, fused = 0, folded = 0;
  for (const detail::OpDef* op : detail::OpRegistry::global().all()) {
    if (op->is(detail::kGraphOnly)) continue;
    for (const detail::OpSample& sample : op->samples()) {
      for (Inputs mode : {Inputs::Static, Inputs::UnknownDims, Inputs::Constants}) {
        std::string what = fmt::format("{} ({})", op->name,
                                       mode == Inputs::Static        ? "static dims"
                                       : mode == Inputs::UnknownDims ? "unknown dims"
                                                                     : "constant inputs");
        std::vector<Tensor> plain, optimized;
        std::shared_ptr<const graph::Graph> opt;
        try {
          auto g = trace_sample(*op, sample, mode);
          plain = run_graph(g, sample, mode);
          opt = passes::optimize(*g, options);
          optimized = run_graph(opt, sample, mode);
        } catch (const InvalidArgument& e) {
          if (mode == Inputs::UnknownDims && std::string(e.what()).find("must be known") != std::string::npos) continue;
          ADD_FAILURE() << what << ": " << e.what();
          continue;
        } catch (const std::exception& e) {
          ADD_FAILURE() << what << ": " << e.what();
          continue;
        }
        ASSERT_EQ(plain.size(), optimized.size()) << what;
        for (std::size_t k = 0; k < plain.size(); ++k) expect_same(plain[k], optimized[k], what);
        // Folded: nothing but constants is left (the input constants alone
        // would not show that the op itself was evaluated at compile time).
        bool only_consts = true;
        for (const auto& n : opt->nodes()) {
          fused += n->op->name == "FusedElementwise" && op->name != "FusedElementwise";
          only_consts = only_consts && n->op->name == "Const";
        }
        folded += mode == Inputs::Constants && only_consts && op->name != "Const";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 150);
  EXPECT_GT(fused, 60);   // the elementwise ops' samples ran fused
  EXPECT_GT(folded, 60);  // and folded
}
