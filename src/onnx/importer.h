#pragma once
// ONNX GraphProto -> Kiln graph. The graph is traced: each ONNX node's
// mapping (import_ops.cpp) calls Kiln's public ops on the tensors of its
// inputs under a TracingContext, so inference, errors and the resulting
// nodes are exactly those of a kiln::function.
#include <string>
#include <vector>

#include "kiln/tensor.h"
#include "onnx/onnx_proto.h"

namespace kiln::onnx {

// What a mapping sees of one ONNX node.
class NodeImport {
 public:
  // `where` names the file and the node in errors ("model.onnx: node 'n' (Op)").
  NodeImport(const pb::NodeProto& node, std::vector<Tensor> inputs, int opset, const std::string& where)
      : node_(node), inputs_(std::move(inputs)), opset_(opset), where_(where) {}

  const pb::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].defined(); }
  // Input i; fails when the model leaves it out.
  const Tensor& in(int i) const;
  // Input i's value, which Kiln needs when it builds the graph (a shape, axes,
  // pads): an initializer or a Constant's output. Refuses otherwise.
  const Tensor& constant_in(int i) const;
  std::vector<int64_t> ints_in(int i) const;
  // Input i's one value (an integer, a bool); `what` names it when it holds
  // none or several (an empty `k` is InvalidArgument, not a crash).
  int64_t int_in(int i, const char* what) const;
  bool bool_in(int i, const char* what) const;

  const pb::AttributeProto* attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  float attr_float(const std::string& name, float fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  // Axes from the attr (older opsets) or input `input` (newer), empty if neither.
  std::vector<int64_t> axes(int input) const;

  // InvalidArgument: the model is wrong ("FILE: node 'n' (Op): ...").
  [[noreturn]] void fail(const std::string& message) const;
  // Unimplemented: the model is fine but Kiln lacks this form.
  [[noreturn]] void refuse(const std::string& what) const;

 private:
  const pb::NodeProto& node_;
  std::vector<Tensor> inputs_;
  int opset_;
  const std::string& where_;
};

using ImportFn = std::vector<Tensor> (*)(const NodeImport&);
// The mapping of an ONNX op (default domain), or nullptr.
ImportFn import_fn(const std::string& op_type);

}  // namespace kiln::onnx
