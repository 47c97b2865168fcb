#pragma once
// Every op sample of the registry as a graph (the sample's inputs as
// parameters), and a function of If and Loop, for the export tests.
#include <functional>

#include "graph/graph.h"
#include "kiln/control_flow.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "schema/op_def.h"

namespace kiln::testing {

// Calls `fn(op, sample index, graph)` for every sample that traces (some
// samples are eager-only errors; those are skipped).
void for_each_op_sample(const std::function<void(const detail::OpDef&, int, const graph::Graph&)>& fn);
// The same, with the sample's inputs.
void for_each_op_sample(
    const std::function<void(const detail::OpDef&, int, const graph::Graph&, const schema::OpSample&)>& fn);

// cond and while_loop: x doubled or negated by the sign of its sum, then
// multiplied by `factor` n times (the export tests' If and Loop).
inline Tensor control_flow_example(const Tensor& x, const Tensor& n, float factor) {
  Tensor y = cond(sum(x) > 0.f, [&] { return x * 2.f; }, [&] { return -x; });
  auto [i, acc] = while_loop([&](const Tensor& i, const Tensor&) { return i < n; },
                             [&](const Tensor& i, const Tensor& a) { return std::tuple{i + 1, a * factor}; },
                             std::tuple{constant(0), y});
  return acc;
}

}  // namespace kiln::testing
