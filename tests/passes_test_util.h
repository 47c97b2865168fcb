#pragma once
// Helpers of the pass tests (passes_test.cpp, passes_contraction_test.cpp):
// tracing a small graph, running it, and comparing results bit for bit.
#include "test_util.h"

#include <cstring>
#include <string>
#include <vector>

#include "exec/plan.h"
#include "function/tracing_context.h"
#include "passes/passes.h"
#include "runtime/dispatch.h"

namespace kiln::passes_testing {

using GraphPtr = std::shared_ptr<graph::Graph>;

// Traces `body` over parameters of `types` into a graph.
template <class F>
GraphPtr trace(const std::vector<detail::TensorType>& types, F&& body, const std::string& name = "g") {
  auto g = std::make_shared<graph::Graph>(name);
  function_detail::TracingContext ctx(g);
  std::vector<Tensor> params;
  for (std::size_t i = 0; i < types.size(); ++i) params.push_back(ctx.add_parameter(types[i], "x" + std::to_string(i)));
  {
    detail::DispatchHandlerGuard guard(&ctx);
    for (const Tensor& t : body(params)) g->results().push_back(ctx.value_of(t));
  }
  g->verify();
  return g;
}

inline detail::TensorType f32(Shape s) { return {DType::Float32, std::move(s)}; }

// "before:\n<graph>after:\n<graph>" for one pass run on a copy of `g`.
template <class Pass>
std::string before_after(const graph::Graph& g, Pass&& pass, bool expect_change = true) {
  GraphPtr copy = g.clone(g.name());
  EXPECT_EQ(pass(*copy), expect_change);
  copy->verify();
  return "before:\n" + g.to_string() + "after:\n" + copy->to_string();
}

inline std::vector<Tensor> run(const graph::Graph& g, std::vector<Tensor> inputs) {
  for (const graph::Capture& c : g.captures()) inputs.push_back(c.outer);
  exec::Plan plan(std::shared_ptr<const graph::Graph>(std::shared_ptr<const void>(), &g));
  return plan.run(inputs);
}

inline void expect_bitwise(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(detail::raw_data(a), detail::raw_data(b), static_cast<std::size_t>(a.size()) * dtype_size(a.dtype())), 0);
}

// The pipeline's result computes the same bits as the traced graph.
inline void expect_same_results(const graph::Graph& g, const std::vector<Tensor>& inputs,
                                passes::PassOptions options = {}) {
  auto opt = passes::optimize(g, options);
  opt->verify();
  std::vector<Tensor> want = run(g, inputs), got = run(*opt, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) expect_bitwise(want[i], got[i]);
}

inline int count_ops(const graph::Graph& g, std::string_view op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op->name == op;
  return n;
}

}  // namespace kiln::passes_testing
