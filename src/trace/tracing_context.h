#pragma once
// The dispatch handler of kiln::function: while a callable is traced, every
// op it runs appends a node to the graph instead of computing.
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "runtime/dispatch.h"

namespace kiln::trace {

class TracingContext : public detail::DispatchHandler {
 public:
  explicit TracingContext(std::shared_ptr<graph::Graph> graph);

  // A new graph parameter, as the symbolic tensor that stands for it.
  Tensor add_parameter(const schema::TensorType& type, std::string_view name);
  // The graph value of `t`: its own node's output when `t` belongs to this
  // graph, else a capture (created once per outer tensor).
  graph::Value value_of(const Tensor& t);
  // The graph value of `t` when it has one already (its own node's output,
  // or a capture made before), without capturing anything.
  std::optional<graph::Value> find_value(const Tensor& t) const;
  // A symbolic tensor for a value of this graph.
  Tensor symbolic(const graph::Value& v);

  runtime::TensorList dispatch(const detail::OpDef& op, std::span<const Tensor> inputs,
                               schema::Attrs&& attrs, const SourceLocation& loc) override;

  void variable_created() override { ++variables_created_; }
  // The node each dispatch produced (or reused), in call order: how the
  // verify option lines up eager ops with graph nodes.
  const std::vector<graph::Node*>& dispatch_nodes() const { return dispatch_nodes_; }
  int variables_created() const { return variables_created_; }

  graph::Graph& graph() { return *graph_; }
  const std::shared_ptr<graph::Graph>& graph_ptr() const { return graph_; }

 private:
  struct ConsKey {
    const detail::OpDef* op;
    detail::SmallVector<graph::Value, 3> inputs;
    const schema::Attrs* attrs;
  };
  struct ConsHash {
    std::size_t operator()(const ConsKey& k) const;
  };
  struct ConsEq {
    bool operator()(const ConsKey& a, const ConsKey& b) const;
  };

  std::shared_ptr<graph::Graph> graph_;
  std::unordered_map<const detail::TensorImpl*, graph::Value> captured_;
  // Hash-consing: a pure op on the same inputs with the same attrs is one node.
  std::unordered_map<ConsKey, graph::Node*, ConsHash, ConsEq> conses_;
  // The last stateful node, so the next one runs after it (automatic control
  // dependencies: side effects keep program order).
  graph::Node* last_stateful_ = nullptr;
  int variables_created_ = 0;
  std::vector<graph::Node*> dispatch_nodes_;
};

}  // namespace kiln::trace
