// Replaying a graph's nodes (see replay.h).
#include "graph_ops/replay.h"

#include <unordered_set>

#include "runtime/dispatch.h"

namespace kiln::graph_ops {

std::vector<Tensor> replay(const graph::Graph& f, std::span<const Tensor> feeds, std::span<const Tensor> given,
                           ReplayedValues* out) {
  ReplayedValues local;
  ReplayedValues& values = out ? *out : local;
  std::size_t k = 0;
  for (const graph::Node* p : f.parameters()) values[p] = runtime::TensorList{feeds[k++]};
  for (const graph::Capture& c : f.captures()) values[c.placeholder] = runtime::TensorList{feeds[k++]};
  for (std::size_t j = 0; j < given.size(); ++j) {
    if (!given[j].defined()) continue;
    const graph::Value& v = f.results()[j];
    runtime::TensorList& given_outputs = values[v.node];
    given_outputs.resize(v.node->outputs.size());
    given_outputs[static_cast<size_t>(v.index)] = given[j];
  }
  std::unordered_set<const graph::Node*> read;
  for (const auto& n : f.nodes())
    for (const graph::Value& v : n->inputs) read.insert(v.node);
  for (const graph::Value& v : f.results()) read.insert(v.node);
  for (const auto& n : f.nodes()) {
    if (values.count(n.get())) continue;
    if (n->is_stateful() && !read.count(n.get())) continue;
    detail::SmallVector<Tensor, 3> inputs;
    for (const graph::Value& v : n->inputs) inputs.push_back(values.at(v.node)[static_cast<size_t>(v.index)]);
    values[n.get()] = runtime::dispatch(*n->op, std::span<const Tensor>(inputs.data(), inputs.size()), schema::Attrs(n->attrs),
                               n->location);
  }
  std::vector<Tensor> results;
  for (const graph::Value& v : f.results()) results.push_back(values.at(v.node)[static_cast<size_t>(v.index)]);
  return results;
}

}  // namespace kiln::graph_ops
