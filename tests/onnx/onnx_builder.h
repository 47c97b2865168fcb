#pragma once
// ONNX models written by hand for the hostile-input tests: a graph's inputs,
// initializers, nodes and outputs, with nothing checked (the point is to
// write what an exporter never would).
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tensor.h"
#include "onnx/exporter.h"
#include "onnx/onnx_proto.h"

namespace kiln::testing {

namespace pb = kiln::onnx::pb;

// A dim of `Dims`: a size, or kSymbolic for a named (unknown) one.
inline constexpr int64_t kSymbolic = INT64_MIN;
struct Dims {
  std::vector<int64_t> dims;
  bool unknown_rank = false;
};

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 17) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(opset);
    model_.mutable_graph()->set_name("hostile");
  }
  pb::GraphProto& graph() { return *model_.mutable_graph(); }
  pb::ModelProto& model() { return model_; }

  // A graph input (of `g`, default the main graph) of ONNX element type `elem_type`.
  void input(const std::string& name, int elem_type, const Dims& shape, pb::GraphProto* g = nullptr) {
    pb::ValueInfoProto& vi = *(g ? g : &graph())->add_input();
    vi.set_name(name);
    pb::TypeProto_Tensor& t = *vi.mutable_type()->mutable_tensor_type();
    t.set_elem_type(elem_type);
    if (shape.unknown_rank) return;
    pb::TensorShapeProto& s = *t.mutable_shape();
    for (int64_t d : shape.dims) {
      if (d == kSymbolic) s.add_dim()->set_dim_param("N");
      else s.add_dim()->set_dim_value(d);
    }
  }
  void output(const std::string& name, pb::GraphProto* g = nullptr) { (g ? g : &graph())->add_output()->set_name(name); }
  void initializer(const std::string& name, const Tensor& value, pb::GraphProto* g = nullptr) {
    kiln::onnx::to_tensor_proto(value, name, *(g ? g : &graph())->add_initializer());
  }
  pb::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs, const std::string& name = "", pb::GraphProto* g = nullptr) {
    pb::NodeProto& n = *(g ? g : &graph())->add_node();
    n.set_op_type(op);
    n.set_name(name);
    for (const std::string& i : inputs) n.add_input(i);
    for (const std::string& o : outputs) n.add_output(o);
    return n;
  }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  pb::ModelProto model_;
};

// A Loop that adds 1 to a float `v` while its condition stays true: with
// `trip_count` empty the model names no trip count (ONNX's "while(true)"),
// else it is an int64 initializer of that value. Input "v0" (float scalar),
// output "v". With `empty_body`, the body only passes its values through
// (Kiln's own loop counter is then all that runs).
inline OnnxBuilder endless_loop(const std::vector<int64_t>& trip_count, bool empty_body = false) {
  OnnxBuilder b;
  b.input("v0", pb::TensorProto::FLOAT, {{}});
  b.initializer("keep_going", constant(true));
  std::string m;
  if (!trip_count.empty()) {
    b.initializer("M", constant(trip_count[0], DType::Int64));
    m = "M";
  }
  pb::NodeProto& loop = b.node("Loop", {m, "keep_going", "v0"}, {"v"}, "forever");
  pb::GraphProto& body = kiln::onnx::set_graph_attr(loop, "body");
  body.set_name("body");
  b.input("i", pb::TensorProto::INT64, {{}}, &body);
  b.input("cond_in", pb::TensorProto::BOOL, {{}}, &body);
  b.input("v_in", pb::TensorProto::FLOAT, {{}}, &body);
  if (empty_body) {
    b.output("cond_in", &body);
    b.output("v_in", &body);
  } else {
    b.initializer("one", constant(1.f), &body);
    b.node("Identity", {"cond_in"}, {"cond_out"}, "", &body);
    b.node("Add", {"v_in", "one"}, {"v_out"}, "step", &body);
    b.output("cond_out", &body);
    b.output("v_out", &body);
  }
  b.output("v");
  return b;
}

}  // namespace kiln::testing
