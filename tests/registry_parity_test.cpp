// The registry-wide test (docs/design-notes.md, "Foundation"): every op, on every sample, gives the
// same dtypes, shapes and bits when traced into a graph as when run eagerly,
// with static shapes and with every dim unknown at trace time.
#include "test_util.h"

#include <cmath>

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "exec/plan.h"
#include "graph_feeds.h"
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
    EXPECT_TRUE(core::same_bits(eager, traced)) << what;
  }
}

enum class Inputs { Static, UnknownDims, Constants };

// A graph of the op on the sample: its inputs are parameters (with the
// sample's shapes, or every dim unknown) or constants baked into the graph.
std::shared_ptr<graph::Graph> trace_sample(const detail::OpDef& op, const schema::OpSample& sample, Inputs mode) {
  auto graph = std::make_shared<graph::Graph>(std::string(op.name));
  trace::TracingContext ctx(graph);
  std::vector<Tensor> params;
  for (std::size_t i = 0; i < sample.inputs.size() && mode != Inputs::Constants; ++i) {
    Shape shape = sample.inputs[i].shape();
    if (mode == Inputs::UnknownDims)
      for (int d = 0; d < shape.rank(); ++d) shape[d] = None;
    params.push_back(ctx.add_parameter({sample.inputs[i].dtype(), shape}, "arg" + std::to_string(i)));
  }
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    if (mode == Inputs::Constants)
      for (const Tensor& t : sample.inputs) params.push_back(ops::const_op(t, SourceLocation::current()));
    schema::Attrs attrs = sample.attrs;
    runtime::TensorList outs = runtime::dispatch(op, params, std::move(attrs), SourceLocation::current());
    for (const Tensor& t : outs) graph->results().push_back(ctx.value_of(t));
  }
  graph->verify();
  return graph;
}

std::vector<Tensor> run_graph(std::shared_ptr<const graph::Graph> graph, const schema::OpSample& sample,
                              Inputs mode) {
  exec::Plan plan(graph);
  std::vector<Tensor> parameters;
  if (mode != Inputs::Constants) parameters.assign(sample.inputs.begin(), sample.inputs.end());
  std::vector<Tensor> inputs = kiln::testing::feeds_with_captures(*graph, std::move(parameters));
  detail::ResultLeaves out = plan.run(inputs);
  return std::vector<Tensor>(out.begin(), out.end());
}

std::vector<Tensor> run_traced(const detail::OpDef& op, const schema::OpSample& sample, bool unknown_dims) {
  Inputs mode = unknown_dims ? Inputs::UnknownDims : Inputs::Static;
  return run_graph(trace_sample(op, sample, mode), sample, mode);
}

bool numeric(DType d) { return d != DType::String && d != DType::Resource; }

std::vector<double> as_doubles(const Tensor& t) {
  Tensor d = cast(t, DType::Float64);
  const double* p = core::data_of<double>(d);
  return std::vector<double>(p, p + d.size());
}

// The flat index into `in` of each element of `out`, by broadcasting.
std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  std::vector<int64_t> index(static_cast<std::size_t>(out.num_elements()));
  const int offset = out.rank() - in.rank();
  for (int64_t flat = 0; flat < out.num_elements(); ++flat) {
    int64_t rest = flat, from = 0, stride = 1;
    for (int d = out.rank() - 1; d >= 0; --d) {
      int64_t i = rest % out[d];
      rest /= out[d];
      if (d < offset) continue;
      int64_t n = in[d - offset];
      from += (n == 1 ? 0 : i) * stride;
      stride *= n;
    }
    index[static_cast<std::size_t>(flat)] = from;
  }
  return index;
}

// Whether `got` is the reference `want` rounded to `dtype`: exactly for
// integers, bools, zeros (signed), infinities and nan; within 4 units in the
// last place otherwise (the float kernels' own approximations).
bool matches(double got, double want, DType dtype) {
  if (dtype == DType::Float32) want = static_cast<float>(want);
  if (dtype == DType::Bool) want = want != 0;
  if (std::isnan(want)) return std::isnan(got);
  if (dtype != DType::Float32 && dtype != DType::Float64) return got == want;
  if (want == 0 || std::isinf(want)) return got == want && std::signbit(got) == std::signbit(want);
  const double ulp = dtype == DType::Float32 ? 0x1p-23 : 0x1p-52;
  return std::fabs(got - want) <= 4 * ulp * std::fabs(want);
}

}  // namespace

// Every op's eager results against an independent reference (PyTorch
// OpInfo's `ref`): an elementwise op's formula in double precision
// (OpDef::reference) or a sample's written-out values (OpSample::expected).
TEST(RegistryReference, EagerResultsMatchTheReferences) {
  int formulas = 0, written = 0;
  std::vector<std::string> elementwise_without;
  for (const detail::OpDef* op : schema::OpRegistry::global().all()) {
    if (op->is(schema::kGraphOnly)) continue;
    if (op->is(schema::kElementwise) && !op->reference) elementwise_without.push_back(std::string(op->name));
    for (const schema::OpSample& sample : op->samples()) {
      bool all_numeric = true;
      for (const Tensor& t : sample.inputs) all_numeric = all_numeric && numeric(t.dtype());
      if (!all_numeric || (!op->reference && sample.expected.empty())) continue;
      std::vector<Tensor> args = sample.inputs;
      runtime::TensorList eager = runtime::run_eager(*op, args, sample.attrs);
      if (!sample.expected.empty()) {
        ASSERT_EQ(eager.size(), sample.expected.size()) << op->name;
        for (std::size_t k = 0; k < eager.size(); ++k) {
          const Tensor& want = sample.expected[k];
          ASSERT_EQ(eager[k].dtype(), want.dtype()) << op->name << " output " << k;
          ASSERT_EQ(eager[k].shape(), want.shape()) << op->name << " output " << k;
          std::vector<double> got = as_doubles(eager[k]), values = as_doubles(want);
          for (std::size_t i = 0; i < got.size(); ++i)
            EXPECT_TRUE(matches(got[i], values[i], want.dtype()))
                << op->name << " output " << k << " element " << i << ": " << got[i] << ", expected " << values[i];
        }
        ++written;
        continue;
      }
      ASSERT_EQ(eager.size(), 1u) << op->name;
      const Tensor& out = eager[0];
      std::vector<double> got = as_doubles(out);
      std::vector<std::vector<double>> in;
      std::vector<std::vector<int64_t>> at;
      for (const Tensor& t : sample.inputs) {
        in.push_back(as_doubles(t));
        at.push_back(broadcast_index(t.shape(), out.shape()));
      }
      for (std::size_t i = 0; i < got.size(); ++i) {
        double args[3] = {0, 0, 0};
        for (std::size_t k = 0; k < in.size() && k < 3; ++k) args[k] = in[k][static_cast<std::size_t>(at[k][i])];
        double want = op->reference({.x = args[0], .y = args[1], .z = args[2], .dtype = out.dtype()});
        EXPECT_TRUE(matches(got[i], want, out.dtype()))
            << fmt::format("{}({}) on {} gave {}, the reference {}", op->name,
                           fmt::join(std::span<const double>(args, in.size()), ", "), dtype_name(out.dtype()),
                           got[i], want);
      }
      ++formulas;
    }
  }
  EXPECT_GT(formulas, 100);
  EXPECT_GT(written, 2);  // TopKV2's samples, at least
  // Every elementwise op has a formula.
  EXPECT_EQ(fmt::format("{}", fmt::join(elementwise_without, ", ")), "") << "elementwise ops without a reference";
}

TEST(RegistryParity, EveryOpTracedMatchesEager) {
  int checked = 0;
  for (const detail::OpDef* op : schema::OpRegistry::global().all()) {
    if (op->is(schema::kGraphOnly)) continue;
    ASSERT_NE(op->samples, nullptr) << op->name;
    for (const schema::OpSample& sample : op->samples()) {
      // Copies: run_eager may write over inputs that only its array holds.
      std::vector<Tensor> args = sample.inputs;
      runtime::TensorList eager = runtime::run_eager(*op, args, sample.attrs);
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
  for (const detail::OpDef* op : schema::OpRegistry::global().all()) {
    if (op->is(schema::kGraphOnly)) continue;
    for (const schema::OpSample& sample : op->samples()) {
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
