#pragma once
// Kiln graph -> ONNX GraphProto. A GraphEmitter writes one ONNX graph (the
// model's, or an If branch / Loop body nested in it); each Kiln op's mapping
// (export_ops.cpp) turns one node into ONNX nodes through it.
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"
#include "onnx/onnx_proto.h"

namespace kiln::onnx {

class GraphEmitter;

// What a mapping sees of the node it exports: its inputs' ONNX names and
// types, the names its outputs must get, and the emitter to add nodes with.
struct NodeExport {
  GraphEmitter& e;
  const graph::Node& node;

  const std::string& in(int i) const;
  const schema::TensorType& in_type(int i) const { return node.inputs[i].node->outputs[node.inputs[i].index]; }
  int num_inputs() const { return static_cast<int>(node.inputs.size()); }
  const schema::TensorType& out_type(int i = 0) const { return node.outputs[i]; }
  // The ONNX name output i gets (made on first use).
  const std::string& out(int i = 0) const;
  const schema::Attrs& attrs() const { return node.attrs; }
  // Throws Unimplemented: the node cannot be exported, because `why`.
  [[noreturn]] void refuse(const std::string& why) const;
  // The rank of input i; refuses when it is unknown (the mapping needs it).
  int known_rank(int i) const;
};

using ExportFn = void (*)(const NodeExport&);
// The mapping of a Kiln op, or nullptr when it has no ONNX form.
ExportFn export_fn(std::string_view op_name);

// Names shared by a model and every graph nested in it (ONNX names are
// unique across the whole model).
struct ModelNames {
  std::unordered_set<std::string> used;
  std::string fresh(std::string_view hint);
};

class GraphEmitter {
 public:
  GraphEmitter(ModelNames& names, pb::GraphProto& out) : names_(names), out_(out) {}

  pb::GraphProto& proto() { return out_; }
  ModelNames& names() { return names_; }

  // A new ONNX node; `outputs` must be fresh names.
  pb::NodeProto& add_node(std::string_view op_type, std::vector<std::string> inputs,
                          std::vector<std::string> outputs);
  // A new node with one fresh output (named after `hint`); returns its name.
  std::string add(std::string_view op_type, std::vector<std::string> inputs, std::string_view hint = "t");
  // An initializer holding `value`; returns its name.
  std::string constant(const Tensor& value, std::string_view hint = "const");
  // A 1-D int64 initializer (shapes, axes, pads).
  std::string ints(const std::vector<int64_t>& values, std::string_view hint = "ints");

  // The ONNX name of a Kiln value; binding it once.
  const std::string& name_of(const graph::Value& v) const;
  void bind(const graph::Value& v, std::string name) { bound_[key(v)] = std::move(name); }
  const std::string& output_name(const graph::Node& n, int i);

  // Exports every node of `g` after its placeholders, which must be bound.
  void emit_nodes(const graph::Graph& g);

 private:
  static std::pair<const graph::Node*, int> key(const graph::Value& v) { return {v.node, v.index}; }
  struct KeyHash {
    std::size_t operator()(const std::pair<const graph::Node*, int>& k) const {
      return std::hash<const void*>()(k.first) * 31 + static_cast<std::size_t>(k.second);
    }
  };
  ModelNames& names_;
  pb::GraphProto& out_;
  std::unordered_map<std::pair<const graph::Node*, int>, std::string, KeyHash> bound_;
};

// Attribute helpers.
void set_attr(pb::NodeProto& n, const std::string& name, int64_t value);
void set_attr(pb::NodeProto& n, const std::string& name, float value);
void set_attr(pb::NodeProto& n, const std::string& name, const std::string& value);
void set_attr(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& values);
void set_attr(pb::NodeProto& n, const std::string& name, const pb::TensorProto& value);
pb::GraphProto& set_graph_attr(pb::NodeProto& n, const std::string& name);

// The ONNX value type of a Kiln tensor type; unknown dims become dim_param
// `<dim_prefix><i>`.
void set_value_type(const schema::TensorType& type, const std::string& dim_prefix, pb::ValueInfoProto& out,
                    const std::string& what);

}  // namespace kiln::onnx
