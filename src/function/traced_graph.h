#pragma once
// A traced graph with its compiled plan: what one cache entry holds.
#include <memory>
#include <string>
#include <vector>

#include "exec/plan.h"
#include "graph/graph.h"
#include "kiln/function.h"
#include "runtime/dispatch.h"

namespace kiln::detail {

struct TracedGraph {
  std::string name;
  std::shared_ptr<graph::Graph> graph;
  std::unique_ptr<exec::Plan> plan;
  // The key the graph was traced for; tensor atoms give the parameter specs
  // (None where shapes were relaxed).
  TraceKey key;
  bool relaxed = false;
  std::vector<int64_t> result_sizes;
  // The node of each op the callable dispatched while tracing, in order.
  std::vector<graph::Node*> dispatch_nodes;
  // ResultFlattener::front_end_data of the trace that made this graph.
  std::shared_ptr<const void> front_end_data;

  // The graph's inputs for a call: its leaves, then the captured tensors
  // (a training step's variables: up to 32 inputs need no heap allocation).
  using Inputs = SmallVector<Tensor, 32>;
  Inputs inputs(std::span<const Tensor> leaves) const;
  // Runs the plan on inputs(leaves).
  ResultLeaves run(std::span<const Tensor> leaves) const;
  // run(), recorded on the thread's tapes when a GradientTape is active: how
  // every eager call of a traced graph runs (a Function, a ConcreteFunction,
  // a loaded function), so that each is differentiable.
  ResultLeaves call(std::span<const Tensor> leaves) const;
};


}  // namespace kiln::detail

namespace kiln::function_impl {

// A traced graph called eagerly under a GradientTape is recorded as the Call
// op it would be in a graph: inputs are the arguments, then the captures.
// When its gradient needs values the run draws (random ops), the call runs
// the graph that also returns them (hidden outputs the tape keeps) instead of
// its own plan. `ran`: the results of a call that already ran (the verify
// option), recorded as they are.
detail::ResultLeaves record_call(runtime::TapeHook& tapes, const detail::TracedGraph& impl,
                                 std::span<const Tensor> leaves,
                                 detail::ResultLeaves* ran);

// "arg 0", "arg 1[2]": the path of every atom of a key.
std::vector<std::string> atom_paths(const detail::TraceKey& key);

// "float32 (None, 3)" for tensor atoms, the value for others.
std::string atom_text(const detail::KeyAtom& atom);

}  // namespace kiln::function_impl
