#pragma once
// The IR (docs/architecture.md, src/graph): an SSA dataflow graph. Nodes are kept in
// topological order (tracing appends a node only after its inputs exist).
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/small_vector.h"
#include "schema/op_def.h"

namespace kiln::graph {

using schema::Attrs;
using detail::OpDef;
using schema::TensorType;

struct Node;

// One output of a node.
struct Value {
  Node* node = nullptr;
  int index = 0;
  friend bool operator==(const Value& a, const Value& b) {
    return a.node == b.node && a.index == b.index;
  }
};

struct Node {
  const OpDef* op = nullptr;
  std::string name;  // unique in its graph: add, add_1, ...
  detail::SmallVector<Value, 2> inputs;
  Attrs attrs;
  detail::SmallVector<TensorType, 1> outputs;
  // Nodes that must run before this one although no value flows (program
  // order of stateful ops).
  std::vector<Node*> control_inputs;
  SourceLocation location;  // where the user's code created it
  int id = 0;               // position in Graph::nodes()

  const TensorType& output_type(int i) const { return outputs[i]; }
  bool is_stateful() const { return op->is(schema::kStateful); }
};

// The Const node's value, or nullptr when `n` is not a Const.
const Tensor* const_value(const Node& n);

// Where an implicit input of a graph comes from: a tensor of the code around
// the traced function (or of an enclosing graph being traced).
struct Capture {
  Tensor outer;       // the captured tensor
  Node* placeholder;  // the graph parameter that stands for it
};

class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }

  // Appends a node after running the op's type inference on its inputs'
  // types. Throws what inference throws.
  Node* add_node(const OpDef& op, std::span<const Value> inputs, Attrs attrs,
                 const SourceLocation& loc, std::string_view name_hint = {});
  // Appends a node whose output types are already known (passes, loaders).
  Node* add_node_typed(const OpDef& op, std::span<const Value> inputs, Attrs attrs,
                       std::span<const TensorType> outputs, const SourceLocation& loc,
                       std::string_view name_hint = {});

  // A graph parameter (an explicit argument).
  Node* add_parameter(const TensorType& type, std::string_view name);
  // An implicit parameter standing for `outer`.
  Node* add_capture(const Tensor& outer, std::string_view name);
  // An implicit parameter whose outer tensor is not known yet (a graph read
  // from a file: nested graphs are fed by their op's inputs, a function's
  // own graph gets its variables with set_capture_source).
  Node* add_capture(const TensorType& type, std::string_view name);
  void set_capture_source(std::size_t i, Tensor outer) { captures_.at(i).outer = std::move(outer); }
  // Forgets the outer tensors of the captures, keeping the placeholders. A
  // nested graph (a cond branch, a loop body) is fed by its op's inputs; its
  // captures' symbolic outer tensors would keep the enclosing graph alive in
  // a cycle (that graph's node holds this one as an attr).
  void drop_capture_sources() {
    for (Capture& c : captures_) c.outer = Tensor();
  }

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const std::vector<Node*>& parameters() const { return parameters_; }
  const std::vector<Capture>& captures() const { return captures_; }
  std::vector<Value>& results() { return results_; }
  const std::vector<Value>& results() const { return results_; }
  // Stateful nodes, in program order: they run on every call even when no
  // result depends on them.
  const std::vector<Node*>& stateful_nodes() const { return stateful_; }
  // Indexed by node id: whether the node is needed, i.e. the results or a
  // stateful node reach it through inputs and control inputs, or it is a
  // placeholder (the call signature). The executor runs only these; DCE
  // keeps only these.
  std::vector<char> live_nodes() const;

  const TensorType& type_of(const Value& v) const { return v.node->outputs[v.index]; }

  // The IR as readable text (golden-tested; Kiln's `to_code`).
  std::string to_string() const;
  // Graphviz DOT.
  std::string to_dot() const;
  // Throws Internal when an invariant is broken (inputs defined before use,
  // types consistent with inference, unique names, results valid).
  void verify() const;
  // As verify, skipping nested graphs in `verified` and adding each graph it
  // checks: a loader that verifies graph after graph checks each nested graph
  // once, however many nodes use it.
  void verify(std::unordered_set<const Graph*>& verified) const;

  // ---- Editing, for graph passes (src/passes) ----
  // A deep copy (new nodes with the same names; parameters, captures and
  // results in the same order). Nested graphs are shared: they are immutable.
  std::shared_ptr<Graph> clone(std::string name) const;
  // A node that is not yet in the graph, with a fresh unique name; a pass
  // places it in the list it gives back to set_nodes.
  std::unique_ptr<Node> new_node(const OpDef& op, std::span<const Value> inputs, Attrs attrs,
                                 std::span<const TensorType> outputs, const SourceLocation& loc,
                                 std::string_view name_hint = {});
  // Hands the node list to a pass, which gives a new one back with set_nodes:
  // in topological order, keeping every parameter and capture placeholder.
  // Ids are renumbered and the stateful list is rebuilt in the new order.
  std::vector<std::unique_ptr<Node>> take_nodes() { return std::move(nodes_); }
  void set_nodes(std::vector<std::unique_ptr<Node>> nodes);

  // A compiled form of this graph (the fused elementwise kernel's program),
  // built by `build` on first use and kept while the graph lives; calls
  // after the first cost one atomic load. One builder per graph.
  using CompileFn = std::shared_ptr<const void> (*)(const Graph&);
  const void* compiled(CompileFn build) const;

 private:
  std::string unique_name(std::string_view base);
  Node* append(std::unique_ptr<Node> node);

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Node*> parameters_;
  std::vector<Capture> captures_;
  std::vector<Value> results_;
  std::vector<Node*> stateful_;
  std::unordered_map<std::string, int> name_counts_;
  mutable std::once_flag compiled_once_;
  mutable std::shared_ptr<const void> compiled_;
  mutable CompileFn compiled_by_ = nullptr;
};

// snake_case of an op name, the base of its node names: MatMul -> mat_mul.
std::string default_node_name(std::string_view op_name);

}  // namespace kiln::graph
