#pragma once
// The executor (DESIGN.md §10): a graph compiles into an immutable Plan, a
// flat list of steps over numbered slots. A call runs the steps on a frame of
// its own, so calls may run concurrently; the graph is not inspected again.
#include <memory>
#include <span>
#include <vector>

#include "core/small_vector.h"
#include "graph/graph.h"

namespace kiln::exec {

struct Step {
  const graph::Node* node;
  detail::SmallVector<int, 3> inputs;   // slots
  detail::SmallVector<int, 2> outputs;  // slots, -1 where unused
  // For each input: whether this is the slot's last use, so the frame can
  // hand the tensor over (letting an in-place kernel reuse its buffer).
  detail::SmallVector<bool, 3> last_use;
  // Whether every input and output type is fully known when the plan is
  // built (no relaxed dims, no host callback upstream): then the step skips
  // type inference and uses the node's output types.
  bool static_types = false;
};

class Plan {
 public:
  // Steps for every node a result or a stateful node depends on, in graph
  // order; nodes nothing needs are left out.
  explicit Plan(std::shared_ptr<const graph::Graph> graph);

  // `inputs`: the graph's parameters, then its captures, in order. With
  // `all_values`, every node output is kept and returned there, indexed by
  // node id then output (for debugging: the verify option).
  std::vector<Tensor> run(std::span<const Tensor> inputs,
                          std::vector<std::vector<Tensor>>* all_values = nullptr) const;

  const graph::Graph& graph() const { return *graph_; }
  // As run, but the first `consumed` inputs are moved into the frame, so a
  // kernel that writes in place may reuse their storage (a While loop hands
  // its loop variables to the body this way).
  std::vector<Tensor> run_consuming(std::span<Tensor> inputs, std::size_t consumed) const;

  int num_steps() const { return static_cast<int>(steps_.size()); }

 private:
  using Frame = detail::SmallVector<Tensor, 32>;
  Frame new_frame(std::size_t num_inputs) const;
  std::vector<Tensor> execute(Frame& frame, std::vector<std::vector<Tensor>>* all_values) const;

  std::shared_ptr<const graph::Graph> graph_;
  std::vector<Step> steps_;
  std::vector<int> input_slots_;
  std::vector<int> result_slots_;
  int num_slots_ = 0;
};

}  // namespace kiln::exec
