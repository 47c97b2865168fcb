#pragma once
// Graphs <-> JSON. A document holds a table of graphs; a nested graph (a cond
// branch, a loop body, a called function) is written before the graphs that
// use it and referenced by its index, so shared graphs are written once and
// the table has no cycles.
//
// One graph: {"name", "nodes": [{"name", "op", "inputs": ["add:0", ...],
//   "control_inputs": ["print"], "attrs": {"axis": {"int": 1}, ...},
//   "outputs": [{"dtype", "shape"}]}], "parameters": [...], "captures": [...],
//   "results": ["add:0"]}.
// Attrs are typed: int, float, bool, string, dtype, shape, ints, tensor, graph.
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"
#include "io/json_util.h"

namespace kiln::io {

class GraphTableWriter {
 public:
  // The index of `g` in the table, writing it (and its nested graphs) first
  // when new. Throws Unimplemented for what cannot be saved (host callbacks).
  int add(const graph::Graph& g);
  json take() { return std::move(table_); }

 private:
  std::unordered_map<const graph::Graph*, int> index_;
  json table_ = json::array();
};

// "add:0"
std::string value_name(const graph::Value& v);

// JSON of a concrete tensor: {"dtype", "shape", "data": base64 of the raw
// little-endian values} (strings: "data" is an array of strings).
json tensor_to_json(const Tensor& t, std::string_view where);
Tensor tensor_from_json(const json& j, const Where& where);

// Limits on what a file may ask the loader to build.
struct GraphLimits {
  int max_depth = 32;                    // graphs nested in graphs
  int64_t max_expanded_nodes = 1 << 22;  // nodes counting each use of a nested graph
};

class GraphTableReader {
 public:
  // Builds every graph of `table` (validating each node with its op's type
  // inference); `what` starts error messages.
  GraphTableReader(const json& table, std::string what, GraphLimits limits = {});
  std::size_t size() const { return graphs_.size(); }
  // Throws InvalidArgument naming `where` for an index out of range.
  const std::shared_ptr<graph::Graph>& at(const json& index, const Where& where) const;

 private:
  std::shared_ptr<graph::Graph> read_graph(const json& j, std::size_t index);
  std::string what_;
  GraphLimits limits_;
  std::vector<std::shared_ptr<graph::Graph>> graphs_;
  std::vector<int64_t> expanded_;
  std::vector<int> depth_;
  int64_t total_expanded_ = 0;
  // Graphs verified so far (each nested graph is checked once).
  std::unordered_set<const graph::Graph*> verified_;
};

}  // namespace kiln::io
