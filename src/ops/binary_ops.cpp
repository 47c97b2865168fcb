// Binary arithmetic: Add (numbers and strings), Sub, Mul, RealDiv, FloorDiv,
// FloorMod, TruncateDiv, TruncateMod, Pow, Maximum, Minimum,
// SquaredDifference; all broadcast as NumPy does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/complex_math.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/grad_util.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"

namespace kiln {
namespace ops {

namespace {

// Same shapes, a broadcast row against a column, and integers.
std::vector<schema::OpSample> arith_samples() {
  return {{{constant({1.5f, -2.0f, 3.25f}), constant({0.5f, 4.0f, -1.5f})}, {}},
          {{constant({{1.0}, {-2.0}}), constant({0.5, 3.0, -1.25})}, {}},
          {{constant({{7, -7}, {9, 4}}), constant({2, -3})}, {}}};
}
std::vector<schema::OpSample> add_samples() {
  std::vector<schema::OpSample> s = arith_samples();
  s.push_back({{constant({"a", "b"}), constant("c")}, {}});
  return s;
}
// Divisors stay away from zero.
std::vector<schema::OpSample> div_samples() {
  return {{{constant({1.5f, -2.0f, 3.25f}), constant({0.5f, 4.0f, -1.5f})}, {}},
          {{constant({{1.0}, {-2.0}}), constant({0.5, 3.0, -1.25})}, {}}};
}
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Special values against every sign of divisor, zeros included.
schema::OpSample special_division_sample() {
  return {{constant({1.0f, kInf, -kInf, kNaN, -0.0f, 0.0f, 7.0f, -1.0f, 1.0f, 6.0f}),
           constant({0.1f, 8.0f, 8.0f, 1.0f, 1.0f, -1.0f, 0.0f, 0.0f, kInf, -3.0f})},
          {},
          true};
}
std::vector<schema::OpSample> floor_samples() {
  return {{{constant({7.5f, -7.5f, 3.25f}), constant({2.0f, 2.0f, -1.5f})}, {}},
          {{constant({{7, -7}, {9, 4}}), constant({2, -3})}, {}},
          special_division_sample()};
}
std::vector<schema::OpSample> truncate_div_samples() {
  return {{{constant({{7, -7}, {9, 4}}), constant({2, -3})}, {}},
          {{constant(std::vector<int64_t>{-9, 9, 0}), constant(int64_t(4))}, {}}};
}
std::vector<schema::OpSample> truncate_mod_samples() {
  std::vector<schema::OpSample> s = truncate_div_samples();
  s.push_back({{constant({7.5f, -7.5f, 3.25f}), constant({2.0f, 2.0f, -1.5f})}, {}});
  s.push_back(special_division_sample());
  return s;
}
std::vector<schema::OpSample> squared_difference_samples() {
  std::vector<schema::OpSample> s = arith_samples();
  s.push_back({{constant({kInf, -0.0f, kNaN, 0.0f}), constant({kInf, 0.0f, 1.0f, -0.0f})}, {}, true});
  return s;
}
// Positive bases: the gradient with respect to the exponent takes log(x).
std::vector<schema::OpSample> pow_samples() {
  return {{{constant({1.5f, 2.0f, 0.5f}), constant({2.0f, -1.0f, 3.0f})}, {}},
          {{constant({{2, 3}, {-2, 5}}), constant({3, 2})}, {}}};
}
// No ties, where max/min have no derivative.
std::vector<schema::OpSample> minmax_samples() {
  return {{{constant({1.5f, -2.0f, 3.25f}), constant({0.5f, 4.0f, -1.5f})}, {}},
          {{constant({{1.0}, {-2.0}}), constant({0.5, 3.0, -1.25})}, {}},
          {{constant({7, -7}), constant({2, -3})}, {}}};
}


// Gradients of z = f(x, y): each input's gradient is reduced back over the
// dims it was broadcast along. Complex inputs take TF's convention, the
// upstream gradient times the conjugate derivative (conj is free on reals).
void add_grad(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, unbroadcast(c.grad(0), c.inputs[0]));
  if (c.needs(1)) c.set(1, unbroadcast(c.grad(0), c.inputs[1]));
}
void sub_grad(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, unbroadcast(c.grad(0), c.inputs[0]));
  if (c.needs(1)) c.set(1, unbroadcast(-c.grad(0), c.inputs[1]));
}
void mul_grad(schema::GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1], &g = c.grad(0);
  if (c.needs(0)) c.set(0, unbroadcast(g * conj(y), x));
  if (c.needs(1)) c.set(1, unbroadcast(g * conj(x), y));
}
void div_grad(schema::GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1], &g = c.grad(0);
  if (c.needs(0)) c.set(0, unbroadcast(g / conj(y), x));
  if (c.needs(1)) c.set(1, unbroadcast(-(g * conj(c.outputs[0])) / conj(y), y));
}
// d(x^y)/dx = y x^(y-1); d(x^y)/dy = x^y log x, taken as 0 where x <= 0 (TF).
void pow_grad(schema::GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1], &g = c.grad(0);
  if (c.needs(0)) c.set(0, unbroadcast(g * y * pow(x, y - 1), x));
  if (c.needs(1)) {
    Tensor positive = x > 0;
    Tensor log_x = where(positive, log(where(positive, x, 1)), 0);
    c.set(1, unbroadcast(g * c.outputs[0] * log_x, y));
  }
}
// The gradient goes to x where x >= y (max) / x <= y (min), else to y.
// d(x - y)^2 = 2 (x - y) (dx - dy), as TF.
void squared_difference_grad(schema::GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1];
  Tensor g = c.grad(0) * 2 * (x - y);
  if (c.needs(0)) c.set(0, unbroadcast(g, x));
  if (c.needs(1)) c.set(1, unbroadcast(-g, y));
}
template <bool kMax> void minmax_grad(schema::GradContext& c) {
  const Tensor &x = c.inputs[0], &y = c.inputs[1], &g = c.grad(0);
  Tensor x_wins = kMax ? x >= y : x <= y;
  if (c.needs(0)) c.set(0, unbroadcast(where(x_wins, g, 0), x));
  if (c.needs(1)) c.set(1, unbroadcast(where(x_wins, 0, g), y));
}

constexpr detail::OpDef kAdd = with_reference(binary_op<AddFn>("Add", add_samples, add_grad, schema::LaneForm::kAdd),
                                              [](const schema::ReferenceArgs& a) { return a.x + a.y; });
constexpr detail::OpDef kSub = with_reference(binary_op<SubFn>("Sub", arith_samples, sub_grad, schema::LaneForm::kSub),
                                              [](const schema::ReferenceArgs& a) { return a.x - a.y; });
constexpr detail::OpDef kMul = with_reference(binary_op<MulFn>("Mul", arith_samples, mul_grad, schema::LaneForm::kMul),
                                              [](const schema::ReferenceArgs& a) { return a.x * a.y; });
constexpr detail::OpDef kRealDiv =
    with_reference(binary_op<RealDivFn>("RealDiv", div_samples, div_grad, schema::LaneForm::kDiv),
                   [](const schema::ReferenceArgs& a) { return a.x / a.y; });
constexpr detail::OpDef kFloorDiv =
    with_reference(int_division_op<FloorDivFn>("FloorDiv", floor_samples, nullptr),
                   [](const schema::ReferenceArgs& a) { return std::floor(a.rounded(a.x / a.y)); });
constexpr detail::OpDef kFloorMod =
    with_reference(int_division_op<FloorModFn>("FloorMod", floor_samples, nullptr),
                   [](const schema::ReferenceArgs& a) {  // the remainder takes the divisor's sign
                     double r = std::fmod(a.x, a.y);
                     return r != 0 && (r < 0) != (a.y < 0) ? r + a.y : r;
                   });
constexpr detail::OpDef kTruncateDiv =
    with_reference(int_division_op<TruncateDivFn>("TruncateDiv", truncate_div_samples, nullptr),
                   [](const schema::ReferenceArgs& a) { return std::trunc(a.x / a.y); });
constexpr detail::OpDef kTruncateMod =
    with_reference(int_division_op<TruncateModFn>("TruncateMod", truncate_mod_samples, nullptr),
                   [](const schema::ReferenceArgs& a) { return std::fmod(a.x, a.y); });
constexpr detail::OpDef kSquaredDifference = with_reference(
    binary_op<SquaredDifferenceFn>("SquaredDifference", squared_difference_samples, squared_difference_grad),
    [](const schema::ReferenceArgs& a) { return (a.x - a.y) * (a.x - a.y); });
constexpr detail::OpDef kPow = with_reference(int_power_op<PowFn>("Pow", pow_samples, pow_grad),
                                              [](const schema::ReferenceArgs& a) { return std::pow(a.x, a.y); });
constexpr detail::OpDef kMaximum = with_reference(
    binary_op<MaximumFn>("Maximum", minmax_samples, minmax_grad<true>, schema::LaneForm::kMaximum),
    [](const schema::ReferenceArgs& a) { return std::isnan(a.x) || std::isnan(a.y) ? a.x + a.y : std::max(a.x, a.y); });
constexpr detail::OpDef kMinimum = with_reference(
    binary_op<MinimumFn>("Minimum", minmax_samples, minmax_grad<false>, schema::LaneForm::kMinimum),
    [](const schema::ReferenceArgs& a) { return std::isnan(a.x) || std::isnan(a.y) ? a.x + a.y : std::min(a.x, a.y); });

}  // namespace

Tensor dispatch_binary(const detail::OpDef& op, const Operand& x, const Operand& y, std::string_view name,
                       const SourceLocation& loc) {
  BinaryInputs in = binary_inputs(x, y, name);
  return runtime::dispatch1(op, in.inputs, schema::Attrs{}, loc);
}

void register_binary_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kAdd, &kSub, &kMul, &kRealDiv, &kFloorDiv, &kFloorMod, &kTruncateDiv,
                                  &kTruncateMod, &kPow, &kMaximum, &kMinimum, &kSquaredDifference})
    r.add(*op);
}

}  // namespace ops

using ops::dispatch_binary;

Tensor add(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kAdd, x, y, "add", loc);
}
Tensor subtract(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kSub, x, y, "subtract", loc);
}
Tensor multiply(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kMul, x, y, "multiply", loc);
}

// As tf.math.truediv: integers become floats (Cast nodes when traced), then
// RealDiv. Mismatched dtypes are left for RealDiv's inference to report.
Tensor divide(const Operand& x, const Operand& y, SourceLocation loc) {
  ops::BinaryInputs in = ops::binary_inputs(x, y, "divide");
  DType d = in.inputs[0].dtype();
  if (d == in.inputs[1].dtype() && is_integer(d)) {
    DType f = dtype_size(d) <= 2 ? DType::Float32 : DType::Float64;  // TF's _TRUEDIV_TABLE
    in.inputs[0] = cast(in.inputs[0], f, loc);
    in.inputs[1] = cast(in.inputs[1], f, loc);
  }
  return runtime::dispatch1(ops::kRealDiv, in.inputs, schema::Attrs{}, loc);
}

Tensor floordiv(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kFloorDiv, x, y, "floordiv", loc);
}
Tensor mod(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kFloorMod, x, y, "mod", loc);
}
Tensor truncatediv(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kTruncateDiv, x, y, "truncatediv", loc);
}
Tensor truncatemod(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kTruncateMod, x, y, "truncatemod", loc);
}
Tensor squared_difference(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kSquaredDifference, x, y, "squared_difference", loc);
}
Tensor pow(const Operand& x, const Operand& y, SourceLocation loc) {
  ops::BinaryInputs in = ops::binary_inputs(x, y, "pow");
  if (is_complex(in.inputs[0].dtype())) [[unlikely]] {
    // std::pow of complex numbers (TF's kernel): 0 for a zero base, else exp(y log x); a
    // composite, so its gradient is exp's and log's (the zero base kept out of log).
    const Tensor &a = in.inputs[0], &b = in.inputs[1];
    Tensor at_zero = kiln::equal(a, zeros_like(a, std::nullopt, loc), loc);
    Tensor safe = kiln::where(at_zero, ones_like(a, std::nullopt, loc), a, loc);
    Tensor value = kiln::exp(kiln::multiply(b, kiln::log(safe, loc), loc), loc);
    return kiln::where(at_zero, zeros_like(value, std::nullopt, loc), value, loc);
  }
  return runtime::dispatch1(ops::kPow, in.inputs, schema::Attrs{}, loc);
}
Tensor maximum(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kMaximum, x, y, "maximum", loc);
}
Tensor minimum(const Operand& x, const Operand& y, SourceLocation loc) {
  return dispatch_binary(ops::kMinimum, x, y, "minimum", loc);
}

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& add_op() { return ops::kAdd; }
const detail::OpDef& sub_op() { return ops::kSub; }
const detail::OpDef& mul_op() { return ops::kMul; }
const detail::OpDef& real_div_op() { return ops::kRealDiv; }
}  // namespace kiln::ops
