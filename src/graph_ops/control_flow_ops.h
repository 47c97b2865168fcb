#pragma once
// The functional control-flow ops (docs/design-notes.md, "Control flow and TensorArray"): If and While hold their
// branches / condition and body as nested graphs in attrs.
//
//   If(pred, captures...) {then_branch, else_branch}: the branches have no
//     parameters; their captures are the op's inputs after pred, in order
//     (both branches capture the same list).
//   While(vars..., captures...) {cond, body}: cond and body take the loop
//     variables as parameters and the same captures; cond returns one bool,
//     body the next variables. Outputs: the final variables.
// The Stateful* twins run branches/bodies containing stateful ops (print,
// variable updates), so the node keeps program order and is never pruned.
#include <memory>
#include <mutex>
#include <unordered_map>

#include "exec/plan.h"
#include "graph/graph.h"

namespace kiln::graph_ops {

const detail::OpDef& if_op(bool stateful);
const detail::OpDef& while_op(bool stateful);

// The most iterations one While run may take before it fails with
// ResourceExhausted; 0 (the default) for no limit. The fuzz targets set one,
// so that a hostile model's loop of 2^31 legal iterations ends as an error
// rather than a timeout.
void set_max_while_iterations(int64_t iterations);

// Compiled plans of graphs, each built on first use by `compile` and kept
// while its graph lives (entries of graphs that died are swept as the cache
// grows). Thread-safe.
class PlanCache {
 public:
  using GraphPtr = std::shared_ptr<const graph::Graph>;
  using Compile = std::shared_ptr<const exec::Plan> (*)(const GraphPtr& graph);
  explicit PlanCache(Compile compile) : compile_(compile) {}
  std::shared_ptr<const exec::Plan> get(const GraphPtr& graph);

 private:
  struct Entry {
    std::weak_ptr<const graph::Graph> graph;
    std::shared_ptr<const exec::Plan> plan;
  };
  Compile compile_;
  std::mutex mutex_;
  std::unordered_map<const graph::Graph*, Entry> entries_;
  std::size_t sweep_at_ = 64;
};

// The compiled plan of a nested graph as it is (an optimized caller has
// optimized its nested graphs already), from one process-wide PlanCache.
std::shared_ptr<const exec::Plan> plan_for(const std::shared_ptr<const graph::Graph>& graph);

// Checks that the op's inputs from `first` on fit `g`'s parameters, then
// its captures (count, dtypes, shapes); fails naming `what`.
void check_feeds(const schema::InferContext& c, const graph::Graph& g, int first, std::string_view what);

// "int32 (2,)"
std::string type_text(const schema::TensorType& t);

// A shape both a and b may have: dims that differ become unknown.
Shape merge_shapes(const Shape& a, const Shape& b);

// If, StatefulIf, While, StatefulWhile.
void register_control_flow_ops(schema::OpRegistry& registry);

}  // namespace kiln::graph_ops
