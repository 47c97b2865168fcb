#include "ops/known_ops.h"

namespace kiln::passes {

namespace {
// OpRegistry::global() registers every op on first use, so this never fails.
const detail::OpDef& registered(std::string_view name) { return detail::OpRegistry::global().get(name); }
}  // namespace

const detail::OpDef& const_op_def() {
  static const detail::OpDef& op = registered("Const");
  return op;
}
const detail::OpDef& add_op() {
  static const detail::OpDef& op = registered("Add");
  return op;
}
const detail::OpDef& sub_op() {
  static const detail::OpDef& op = registered("Sub");
  return op;
}
const detail::OpDef& mul_op() {
  static const detail::OpDef& op = registered("Mul");
  return op;
}
const detail::OpDef& real_div_op() {
  static const detail::OpDef& op = registered("RealDiv");
  return op;
}
const detail::OpDef& cast_op() {
  static const detail::OpDef& op = registered("Cast");
  return op;
}
const detail::OpDef& reshape_op() {
  static const detail::OpDef& op = registered("Reshape");
  return op;
}
const detail::OpDef& transpose_op() {
  static const detail::OpDef& op = registered("Transpose");
  return op;
}
const detail::OpDef& relu_op() {
  static const detail::OpDef& op = registered("Relu");
  return op;
}
const detail::OpDef& bias_add_op() {
  static const detail::OpDef& op = registered("BiasAdd");
  return op;
}
const detail::OpDef& matmul_op() {
  static const detail::OpDef& op = registered("MatMul");
  return op;
}
const detail::OpDef& conv2d_op() {
  static const detail::OpDef& op = registered("Conv2D");
  return op;
}

}  // namespace kiln::passes
