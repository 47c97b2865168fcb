// GraphEmitter: naming, nodes, initializers and value types of one ONNX graph.
#include "onnx/exporter.h"

#include <fmt/format.h>

#include "kiln/error.h"
#include "ops/creation.h"

namespace kiln::onnx {

std::string ModelNames::fresh(std::string_view hint) {
  std::string base(hint.empty() ? "t" : hint);
  if (used.insert(base).second) return base;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (used.insert(name).second) return name;
  }
}

const std::string& NodeExport::in(int i) const { return e.name_of(node.inputs[i]); }

const std::string& NodeExport::out(int i) const { return e.output_name(node, i); }

void NodeExport::refuse(const std::string& why) const {
  throw Unimplemented(fmt::format("kiln::onnx::export_: op {} (node '{}') cannot be exported: {}", node.op->name,
                                  node.name, why));
}

int NodeExport::known_rank(int i) const {
  const Shape& s = in_type(i).shape;
  if (!s.has_known_rank()) refuse(fmt::format("the rank of input {} is unknown", i));
  return s.rank();
}

pb::NodeProto& GraphEmitter::add_node(std::string_view op_type, std::vector<std::string> inputs,
                                      std::vector<std::string> outputs) {
  pb::NodeProto& n = *out_.add_node();
  n.set_op_type(std::string(op_type));
  n.set_name(names_.fresh(outputs.empty() ? std::string(op_type) : outputs[0] + "_" + std::string(op_type)));
  for (std::string& s : inputs) n.add_input(std::move(s));
  for (std::string& s : outputs) n.add_output(std::move(s));
  return n;
}

std::string GraphEmitter::add(std::string_view op_type, std::vector<std::string> inputs, std::string_view hint) {
  std::string name = names_.fresh(hint);
  add_node(op_type, std::move(inputs), {name});
  return name;
}

std::string GraphEmitter::constant(const Tensor& value, std::string_view hint) {
  std::string name = names_.fresh(hint);
  to_tensor_proto(value, name, *out_.add_initializer());
  return name;
}

std::string GraphEmitter::ints(const std::vector<int64_t>& values, std::string_view hint) {
  Tensor t = core::make_tensor(DType::Int64, Shape{static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), core::data_of<int64_t>(t));
  return constant(t, hint);
}

const std::string& GraphEmitter::name_of(const graph::Value& v) const {
  auto it = bound_.find(key(v));
  if (it == bound_.end())
    throw Internal(fmt::format("kiln::onnx::export_: value {}:{} is used before it is exported", v.node->name, v.index));
  return it->second;
}

const std::string& GraphEmitter::output_name(const graph::Node& n, int i) {
  graph::Value v{const_cast<graph::Node*>(&n), i};
  auto it = bound_.find(key(v));
  if (it != bound_.end()) return it->second;
  return bound_[key(v)] = names_.fresh(n.outputs.size() == 1 ? n.name : fmt::format("{}_{}", n.name, i));
}

void GraphEmitter::emit_nodes(const graph::Graph& g) {
  for (const auto& node : g.nodes()) {
    if (node->op == &ops::placeholder_op()) continue;
    ExportFn fn = export_fn(node->op->name);
    NodeExport x{*this, *node};
    if (!fn) x.refuse("ONNX has no form of it");
    fn(x);
  }
}

void set_attr(pb::NodeProto& n, const std::string& name, int64_t value) {
  pb::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(pb::AttributeProto::INT);
  a.set_i(value);
}

void set_attr(pb::NodeProto& n, const std::string& name, float value) {
  pb::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(pb::AttributeProto::FLOAT);
  a.set_f(value);
}

void set_attr(pb::NodeProto& n, const std::string& name, const std::string& value) {
  pb::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(pb::AttributeProto::STRING);
  a.set_s(value);
}

void set_attr(pb::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
  pb::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(pb::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

void set_attr(pb::NodeProto& n, const std::string& name, const pb::TensorProto& value) {
  pb::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(pb::AttributeProto::TENSOR);
  *a.mutable_t() = value;
}

pb::GraphProto& set_graph_attr(pb::NodeProto& n, const std::string& name) {
  pb::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(pb::AttributeProto::GRAPH);
  return *a.mutable_g();
}

void set_value_type(const schema::TensorType& type, const std::string& dim_prefix, pb::ValueInfoProto& out,
                    const std::string& what) {
  pb::TypeProto_Tensor& t = *out.mutable_type()->mutable_tensor_type();
  t.set_elem_type(to_onnx_dtype(type.dtype, what));
  if (!type.shape.has_known_rank()) return;  // no shape: any rank
  pb::TensorShapeProto& s = *t.mutable_shape();
  for (int i = 0; i < type.shape.rank(); ++i) {
    if (type.shape[i] >= 0) s.add_dim()->set_dim_value(type.shape[i]);
    else s.add_dim()->set_dim_param(fmt::format("{}{}", dim_prefix, i));
  }
}

}  // namespace kiln::onnx
