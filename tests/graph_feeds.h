#pragma once
// A graph's feeds for one run of its plan: a tensor per parameter, then each
// capture's outer tensor. A traced function gets them from
// detail::TracedGraph::inputs; tests that build graphs without kiln::function
// take them here, so the order lives in one test helper. No gtest: the
// onnxruntime sample exporter, a plain program, uses it too.
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace kiln::testing {

inline std::vector<Tensor> feeds_with_captures(const graph::Graph& g, std::vector<Tensor> parameters) {
  parameters.reserve(parameters.size() + g.captures().size());
  for (const graph::Capture& c : g.captures()) parameters.push_back(c.outer);
  return parameters;
}

}  // namespace kiln::testing
