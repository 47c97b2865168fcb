#pragma once
// Gradients of the ops that hold graphs: Call, If, While (docs/design-notes.md, "Autodiff").
// Call's and If's are in graph_gradients.cpp, While's in while_gradient.cpp:
// differentiating a graph traces its backward graph under a GradientTape.
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "schema/op_def.h"

namespace kiln::graph_ops {
void call_gradient(schema::GradContext& c);
void if_gradient(schema::GradContext& c);
void while_gradient(schema::GradContext& c);

// The outputs of g's nodes that a backward pass must take from the forward
// run rather than run again (random draws, host functions: stateful nodes
// with no gradient whose outputs are read) and that g does not return yet.
// Call and If return them as hidden results after the visible ones, so that
// their gradients find them among the op's outputs. Empty for most graphs.
std::vector<graph::Value> values_for_backward(const graph::Graph& g);

// f, or (when values_for_backward(f) is not empty) a copy of f that returns
// those values after its own results; cached per f. Free for a graph without
// stateful nodes.
std::shared_ptr<const graph::Graph> with_values_for_backward(const std::shared_ptr<const graph::Graph>& f);
}  // namespace kiln::graph_ops
