#pragma once
// Helpers of the pass tests (passes_*_test.cpp):
// tracing a small graph, running it, and comparing results bit for bit.
#include "graph_feeds.h"
#include "graph_test_util.h"
#include "test_util.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "exec/plan.h"
#include "trace/tracing_context.h"
#include "passes/passes.h"
#include "runtime/dispatch.h"

namespace kiln::passes_testing {

using GraphPtr = std::shared_ptr<graph::Graph>;
using kiln::testing::expect_bitwise;
using kiln::testing::f32;
using kiln::testing::trace_graph;

// "before:\n<graph>after:\n<graph>" for one pass run on a copy of `g`.
template <class Pass>
std::string before_after(const graph::Graph& g, Pass&& pass, bool expect_change = true) {
  GraphPtr copy = g.clone(g.name());
  EXPECT_EQ(pass(*copy), expect_change);
  copy->verify();
  return "before:\n" + g.to_string() + "after:\n" + copy->to_string();
}

inline std::vector<Tensor> run(const graph::Graph& g, std::vector<Tensor> inputs) {
  std::vector<Tensor> feeds = kiln::testing::feeds_with_captures(g, std::move(inputs));
  exec::Plan plan(std::shared_ptr<const graph::Graph>(std::shared_ptr<const void>(), &g));
  detail::ResultLeaves out = plan.run(feeds);
  return std::vector<Tensor>(out.begin(), out.end());
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

// Uniform in [-1, 1) from a fixed seed, rounded to quarters so that pooling
// windows hold ties, with -0, +0 and NaN sprinkled in.
inline Tensor values_with_ties(const Shape& shape, unsigned seed, DType dtype = DType::Float32) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> quarter(-4, 4);
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(quarter(rng)) * 0.25f;
    if (i % 37 == 5) v[i] = -0.0f;
    if (i % 53 == 7) v[i] = NAN;
  }
  return cast(constant(v, shape), dtype);
}

inline int count_ops(const graph::Graph& g, std::string_view op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op->name == op;
  return n;
}

}  // namespace kiln::passes_testing
