#pragma once
// The executor (docs/design-notes.md, "Graph passes"): a graph compiles into an immutable Plan, a
// flat list of steps over numbered slots. A call runs the steps on a frame of
// its own, so calls may run concurrently; the graph is not inspected again.
#include <memory>
#include <span>
#include <vector>

#include "exec/memory_plan.h"
#include "kiln/detail/trace.h"
#include "exec/step.h"

namespace kiln::exec {

class Plan {
 public:
  // Steps for every node a result or a stateful node depends on, in graph
  // order; nodes nothing needs are left out. A background op (a collective,
  // OpDef::start) is moved up to just after the steps it depends on and
  // finished just before the first step that reads its outputs, so the steps
  // between overlap its work.
  explicit Plan(std::shared_ptr<const graph::Graph> graph);

  // `inputs`: the graph's parameters, then its captures, in order. With
  // `all_values`, every node output is kept and returned there, indexed by
  // node id then output (for debugging: the verify option).
  detail::ResultLeaves run(std::span<const Tensor> inputs,
                           std::vector<std::vector<Tensor>>* all_values = nullptr) const;

  const graph::Graph& graph() const { return *graph_; }
  // As run, but the first `consumed` inputs are moved into the frame, so a
  // kernel that writes in place may reuse their storage (a While loop hands
  // its loop variables to the body this way).
  detail::ResultLeaves run_consuming(std::span<Tensor> inputs, std::size_t consumed) const;

  const MemoryPlan& memory_plan() const { return memory_; }
  // The steps in the order they run (tests check where collectives go).
  const std::vector<Step>& steps() const { return steps_; }

  class Frame;

 private:
  void hoist_background_steps();
  void place_finishes();
  void check_inputs(std::size_t num_inputs) const;
  detail::ResultLeaves execute(Frame& frame, std::vector<std::vector<Tensor>>* all_values) const;

  std::shared_ptr<const graph::Graph> graph_;
  std::vector<Step> steps_;
  std::vector<int> input_slots_;
  std::vector<int> result_slots_;
  int num_slots_ = 0;
  MemoryPlan memory_;
  // The node of each background step, by its number (Step::background).
  std::vector<const graph::Node*> background_nodes_;
};

}  // namespace kiln::exec
