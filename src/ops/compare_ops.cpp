// Comparisons (Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual),
// logic (LogicalAnd, LogicalOr, LogicalNot), Select (where) and ClipByValue.
#include <algorithm>

#include "kiln/math.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/grad_util.h"
#include "ops/known_ops.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

std::vector<schema::OpSample> compare_samples() {
  return {{{constant({1.5f, -2.0f, 3.0f}), constant({1.5f, 4.0f, -1.0f})}, {}},
          {{constant({{1}, {5}}), constant({0, 1, 7})}, {}}};
}
std::vector<schema::OpSample> equality_samples() {
  std::vector<schema::OpSample> s = compare_samples();
  s.push_back({{constant({"a", "b"}), constant("a")}, {}});
  return s;
}
std::vector<schema::OpSample> logic_samples() {
  return {{{constant({true, true, false, false}), constant({true, false, true, false})}, {}},
          {{constant({{true}, {false}}), constant({true, false})}, {}}};
}
std::vector<schema::OpSample> not_samples() { return {{{constant({true, false})}, {}}}; }

constexpr detail::OpDef kEqual = with_reference(binary_op<EqualFn>("Equal", equality_samples, nullptr),
                                                [](const schema::ReferenceArgs& a) { return double(a.x == a.y); });
constexpr detail::OpDef kNotEqual = with_reference(binary_op<NotEqualFn>("NotEqual", equality_samples, nullptr),
                                                   [](const schema::ReferenceArgs& a) { return double(a.x != a.y); });
constexpr detail::OpDef kLess = with_reference(binary_op<LessFn>("Less", compare_samples, nullptr),
                                               [](const schema::ReferenceArgs& a) { return double(a.x < a.y); });
constexpr detail::OpDef kLessEqual = with_reference(binary_op<LessEqualFn>("LessEqual", compare_samples, nullptr),
                                                    [](const schema::ReferenceArgs& a) { return double(a.x <= a.y); });
constexpr detail::OpDef kGreater = with_reference(binary_op<GreaterFn>("Greater", compare_samples, nullptr),
                                                  [](const schema::ReferenceArgs& a) { return double(a.x > a.y); });
constexpr detail::OpDef kGreaterEqual =
    with_reference(binary_op<GreaterEqualFn>("GreaterEqual", compare_samples, nullptr),
                   [](const schema::ReferenceArgs& a) { return double(a.x >= a.y); });
constexpr detail::OpDef kLogicalAnd =
    with_reference(binary_op<LogicalAndFn>("LogicalAnd", logic_samples, nullptr),
                   [](const schema::ReferenceArgs& a) { return double(a.x != 0 && a.y != 0); });
constexpr detail::OpDef kLogicalOr =
    with_reference(binary_op<LogicalOrFn>("LogicalOr", logic_samples, nullptr),
                   [](const schema::ReferenceArgs& a) { return double(a.x != 0 || a.y != 0); });
constexpr detail::OpDef kLogicalNot = with_reference(unary_op<LogicalNotFn>("LogicalNot", not_samples, nullptr),
                                                     [](const schema::ReferenceArgs& a) { return double(a.x == 0); });

// ---- Select: condition ? x : y, all three broadcast ---------------------
void select_infer(schema::InferContext& c) {
  if (c.dtype(0) != DType::Bool) c.fail("condition must be a bool tensor, but it has dtype {}", dtype_name(c.dtype(0)));
  check_same_dtype(c, 1, 2, "x", "y");
  Shape xy = infer_broadcast(c, c.shape(1), c.shape(2), "x", "y");
  c.add_output(c.dtype(1), infer_broadcast(c, c.shape(0), xy, "condition", "x and y (broadcast)"));
}
void select_kernel(schema::KernelContext& c) {
  core::visit_all_dtypes(c.inputs[1].dtype(), [&]<class T>() {
    ternary_apply<SelectFn, uint8_t, T>(c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0]);
  });
}
std::vector<schema::OpSample> select_samples() {
  return {{{constant({true, false, true}), constant({1.5f, 2.0f, -3.0f}), constant({-1.0f, 0.5f, 4.0f})}, {}},
          {{constant({{true}, {false}}), constant({1.0, 2.0, 3.0}), constant(-1.0)}, {}},
          {{constant({false, true}), constant({"a", "b"}), constant({"c", "d"})}, {}}};
}
// The gradient goes to x where the condition holds, to y elsewhere.
void select_grad(schema::GradContext& c) {
  const Tensor &cond = c.inputs[0], &g = c.grad(0);
  if (c.needs(1)) c.set(1, unbroadcast(where(cond, g, 0), c.inputs[1]));
  if (c.needs(2)) c.set(2, unbroadcast(where(cond, 0, g), c.inputs[2]));
}
constexpr detail::OpDef make_select() {
  detail::OpDef op{.name = "Select", .infer = select_infer, .kernel = select_kernel,
                   .flags = kElementwiseFlags, .samples = select_samples, .gradient = select_grad};
  set_loops<SelectFn>(op, []<class T>() -> schema::ElementwiseLoop { return ternary_loop<SelectFn, uint8_t, T>; });
  return op;
}
constexpr detail::OpDef kSelect =
    with_reference(make_select(), [](const schema::ReferenceArgs& a) { return a.x != 0 ? a.y : a.z; });

// ---- ClipByValue: min(max(x, lo), hi), all three broadcast --------------
void clip_infer(schema::InferContext& c) {
  check_same_dtype(c, 0, 1, "x", "min");
  check_same_dtype(c, 0, 2, "x", "max");
  check_dtype(c, c.dtype(0), ClipFn::kDTypes, "x");
  Shape s = infer_broadcast(c, c.shape(0), c.shape(1), "x", "min");
  c.add_output(c.dtype(0), infer_broadcast(c, s, c.shape(2), "x and min (broadcast)", "max"));
}
void clip_kernel(schema::KernelContext& c) {
  core::visit_all_dtypes(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (supports<ClipFn, T>)
      ternary_apply<ClipFn, T, T>(c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0]);
  });
}
// Values away from the bounds, where the gradient is not defined.
std::vector<schema::OpSample> clip_samples() {
  return {{{constant({-2.5f, 0.5f, 3.0f, 1.25f}), constant(-1.0f), constant(2.0f)}, {}},
          {{constant({{-2.0, 0.5}, {3.0, 1.0}}), constant({-1.0, 0.0}), constant(1.5)}, {}},
          {{constant({-5, 0, 9}), constant(-1), constant(4)}, {}}};
}
// Inside [min, max] the gradient goes to x; below to min, above to max.
void clip_grad(schema::GradContext& c) {
  const Tensor &x = c.inputs[0], &lo = c.inputs[1], &hi = c.inputs[2], &g = c.grad(0);
  Tensor below = x < lo, above = x > hi;
  if (c.needs(0)) c.set(0, unbroadcast(where(below | above, 0, g), x));
  if (c.needs(1)) c.set(1, unbroadcast(where(below, g, 0), lo));
  if (c.needs(2)) c.set(2, unbroadcast(where(above & !below, g, 0), hi));
}
constexpr detail::OpDef make_clip() {
  detail::OpDef op{.name = "ClipByValue", .infer = clip_infer, .kernel = clip_kernel,
                   .flags = kElementwiseFlags, .samples = clip_samples, .gradient = clip_grad};
  set_loops<ClipFn>(op, []<class T>() -> schema::ElementwiseLoop { return ternary_loop<ClipFn, T, T>; });
  return op;
}
constexpr detail::OpDef kClip =
    with_reference(make_clip(), [](const schema::ReferenceArgs& a) { return std::min(std::max(a.x, a.y), a.z); });

Tensor operand_as(const Operand& v, DType dtype, const char* name) {
  return v.is_tensor() ? v.take() : scalar_to_tensor(v.scalar(), dtype, name, v.location());
}

}  // namespace

void register_compare_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kEqual, &kNotEqual, &kLess, &kLessEqual, &kGreater, &kGreaterEqual,
                                  &kLogicalAnd, &kLogicalOr, &kLogicalNot, &kSelect, &kClip})
    r.add(*op);
}

}  // namespace ops

using ops::dispatch_binary;

Tensor equal(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kEqual, x, y, "equal", loc);
}
Tensor not_equal(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kNotEqual, x, y, "not_equal", loc);
}
Tensor less(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kLess, x, y, "less", loc);
}
Tensor less_equal(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kLessEqual, x, y, "less_equal", loc);
}
Tensor greater(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kGreater, x, y, "greater", loc);
}
Tensor greater_equal(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kGreaterEqual, x, y, "greater_equal", loc);
}
Tensor logical_and(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kLogicalAnd, x, y, "logical_and", loc);
}
Tensor logical_or(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kLogicalOr, x, y, "logical_or", loc);
}
Tensor logical_not(Tensor x, SourceLocation loc) {
  const Tensor in[] = {std::move(x)};
  return runtime::dispatch1(ops::kLogicalNot, in, schema::Attrs{}, loc);
}

Tensor where(const Tensor& condition, const Operand& x, const Operand& y, SourceLocation loc) {
  ops::BinaryInputs xy = ops::binary_inputs(x, y, "where");
  const Tensor in[] = {condition, std::move(xy.inputs[0]), std::move(xy.inputs[1])};
  return runtime::dispatch1(ops::kSelect, in, schema::Attrs{}, loc);
}

Tensor clip(Tensor x, const Operand& min, const Operand& max, SourceLocation loc) {
  DType d = x.dtype();
  Tensor lo = ops::operand_as(min, d, "clip");
  Tensor hi = ops::operand_as(max, d, "clip");
  const Tensor in[] = {std::move(x), std::move(lo), std::move(hi)};
  return runtime::dispatch1(ops::kClip, in, schema::Attrs{}, loc);
}

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& greater_op() { return ops::kGreater; }
const detail::OpDef& less_op() { return ops::kLess; }
const detail::OpDef& select_op() { return ops::kSelect; }
}  // namespace kiln::ops
