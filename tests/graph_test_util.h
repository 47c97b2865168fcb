#pragma once
// Building graphs in tests: trace a lambda into a graph directly, without
// kiln::function (no cache, no passes).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/tensor_impl.h"
#include "trace/tracing_context.h"
#include "graph/graph.h"
#include "runtime/dispatch.h"

namespace kiln::testing {

// Traces `body` over parameters of `types` into a graph.
template <class F>
std::shared_ptr<graph::Graph> trace_graph(const std::vector<schema::TensorType>& types, F&& body,
                                          const std::string& name = "g") {
  auto g = std::make_shared<graph::Graph>(name);
  trace::TracingContext ctx(g);
  std::vector<Tensor> params;
  for (std::size_t i = 0; i < types.size(); ++i) params.push_back(ctx.add_parameter(types[i], "x" + std::to_string(i)));
  {
    runtime::DispatchHandlerGuard guard(&ctx);
    for (const Tensor& t : body(params)) g->results().push_back(ctx.value_of(t));
  }
  g->verify();
  return g;
}

inline schema::TensorType f32(Shape s) { return {DType::Float32, std::move(s)}; }

// Same dtype, shape and bytes; `what` names the pair in a failure.
inline void expect_bitwise(const Tensor& a, const Tensor& b, const std::string& what = {}) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  EXPECT_TRUE(core::same_bits(a, b)) << what << " differ";
}

}  // namespace kiln::testing
