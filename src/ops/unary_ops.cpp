// Unary elementwise ops: Neg, Abs, Sign, Square, Relu, Round (numbers) and
// Floor, Ceil, Rint, Sqrt, Rsqrt, Exp, Log, Log1p, Tanh, Sigmoid, Sin, Cos,
// Erf and the activations Softplus, Softsign, Elu, Selu (floats).
#include <cmath>
#include <limits>

#include "kiln/complex_math.h"
#include "kiln/math.h"
#include "ops/elementwise.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"

namespace kiln {
namespace ops {

namespace {

// Away from 0, where abs/sign/relu have no derivative.
std::vector<schema::OpSample> signed_samples() {
  return {{{constant({-1.5f, 0.5f, 2.0f})}, {}},
          {{constant({{-0.75, 1.25}, {3.0, -2.0}})}, {}},
          {{constant({{-3, 0}, {4, -7}})}, {}}};
}
// Signed zeros, infinities, nan and rounding ties (finite differences skip it).
schema::OpSample special_sample() {
  const float inf = std::numeric_limits<float>::infinity();
  return {{constant({0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 0.5f, -0.5f, 1.5f,
                     -2.5f, 1e30f})},
          {},
          true};
}
std::vector<schema::OpSample> signed_special_samples() {
  std::vector<schema::OpSample> s = signed_samples();
  s.push_back(special_sample());
  return s;
}
// Rounding: ties (half to even), fractions either side of them, and whole numbers.
std::vector<schema::OpSample> rounding_samples() {
  return {{{constant({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.7f, -0.7f, 3.0f})}, {}},
          {{constant({{0.49999999999999994, -1.25}, {4503599627370497.0, -7.5}})}, {}},
          special_sample()};
}
std::vector<schema::OpSample> round_samples() {
  std::vector<schema::OpSample> s = rounding_samples();
  s.push_back({{constant({{-3, 0}, {4, -7}})}, {}});
  return s;
}
std::vector<schema::OpSample> float_samples() {
  return {{{constant({-1.5f, 0.5f, 2.0f})}, {}}, {{constant({{0.25, -0.75}, {1.5, 0.1}})}, {}}};
}
// Activations: both signs away from their kink at 0, large values where a
// naive formula overflows, and the special values.
std::vector<schema::OpSample> activation_samples() {
  return {{{constant({-2.5f, -0.5f, 0.25f, 1.5f})}, {}},
          {{constant({{-30.0, -1.0}, {0.75, 40.0}})}, {}},
          {{constant({-100.f, 100.f, 1e-8f, -1e-8f})}, {}, true},
          special_sample()};
}
// Inside the domain of sqrt, rsqrt, log and log1p.
std::vector<schema::OpSample> positive_samples() {
  return {{{constant({0.5f, 1.0f, 4.0f})}, {}}, {{constant({{0.25, 2.0}, {3.5, 9.0}})}, {}}};
}


// Gradients: y = f(x), dy upstream; each returns dx (docs/design-notes.md, "Autodiff"). For complex
// x, TF's convention: dy times the conjugate derivative (conj is free on reals).
void neg_grad(schema::GradContext& c) { c.set(0, -c.grad(0)); }
// Zero, as TF's (sign is flat wherever it has a derivative).
void sign_grad(schema::GradContext& c) { c.set(0, zeros_like(c.inputs[0], c.grad(0).dtype())); }
void abs_grad(schema::GradContext& c) { c.set(0, c.grad(0) * sign(c.inputs[0])); }
void square_grad(schema::GradContext& c) { c.set(0, c.grad(0) * conj(c.inputs[0] * 2)); }
// Reads the output (y > 0 exactly where x > 0, NaN and -0 included), as TF
// does: the pre-activation then has no other reader, so a traced training
// step can fuse it into the matmul or conv that produced it.
void relu_grad(schema::GradContext& c) { c.set(0, where(c.outputs[0] > 0, c.grad(0), 0)); }
void sqrt_grad(schema::GradContext& c) { c.set(0, c.grad(0) * 0.5 / conj(c.outputs[0])); }
void rsqrt_grad(schema::GradContext& c) {
  const Tensor& y = c.outputs[0];
  c.set(0, c.grad(0) * (y * y * y) * -0.5);
}
void exp_grad(schema::GradContext& c) { c.set(0, c.grad(0) * conj(c.outputs[0])); }
void log_grad(schema::GradContext& c) { c.set(0, c.grad(0) / conj(c.inputs[0])); }
void log1p_grad(schema::GradContext& c) { c.set(0, c.grad(0) / (c.inputs[0] + 1)); }
void tanh_grad(schema::GradContext& c) {
  const Tensor& y = c.outputs[0];
  c.set(0, c.grad(0) * conj(1 - y * y));
}
void sigmoid_grad(schema::GradContext& c) {
  const Tensor& y = c.outputs[0];
  c.set(0, c.grad(0) * (y * (1 - y)));
}
void sin_grad(schema::GradContext& c) { c.set(0, c.grad(0) * conj(cos(c.inputs[0]))); }
void cos_grad(schema::GradContext& c) { c.set(0, -(c.grad(0) * conj(sin(c.inputs[0])))); }
// d erf(x) = 2/sqrt(pi) e^(-x^2).
void erf_grad(schema::GradContext& c) {
  const Tensor& x = c.inputs[0];
  c.set(0, c.grad(0) * (exp(-(x * x)) * 1.1283791670955126));
}
void softplus_grad(schema::GradContext& c) { c.set(0, c.grad(0) * sigmoid(c.inputs[0])); }
void softsign_grad(schema::GradContext& c) {
  Tensor d = 1 + abs(c.inputs[0]);
  c.set(0, c.grad(0) / (d * d));
}
// From the output, as TF's EluGrad: y + 1 where y < 0, else 1 (so 1 at
// y = 0 and for NaN, the side TF's kernel takes).
void elu_grad(schema::GradContext& c) {
  const Tensor& y = c.outputs[0];
  c.set(0, where(y < 0, c.grad(0) * (y + 1), c.grad(0)));
}
// SeluGrad: y + scale * alpha where y < 0, else scale (at y = 0 too).
void selu_grad(schema::GradContext& c) {
  const Tensor& y = c.outputs[0];
  c.set(0, where(y < 0, c.grad(0) * (y + 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717),
                 c.grad(0) * 1.0507009873554804934193349852946));
}

constexpr detail::OpDef kNeg =
    with_reference(unary_op<NegFn>("Neg", signed_special_samples, neg_grad, schema::LaneForm::kNeg),
                   [](const schema::ReferenceArgs& a) { return -a.x; });
constexpr detail::OpDef kAbs =
    with_reference(unary_op<AbsFn>("Abs", signed_special_samples, abs_grad, schema::LaneForm::kAbs),
                   [](const schema::ReferenceArgs& a) { return std::fabs(a.x); });
constexpr detail::OpDef kSign =
    with_reference(unary_op<SignFn>("Sign", signed_special_samples, sign_grad), [](const schema::ReferenceArgs& a) {
      return std::isnan(a.x) ? a.x : a.x > 0 ? 1.0 : a.x < 0 ? -1.0 : 0.0;
    });
// No gradient, as TF's (None).
constexpr detail::OpDef kFloor = with_reference(unary_op<FloorFn>("Floor", rounding_samples, nullptr),
                                                [](const schema::ReferenceArgs& a) { return std::floor(a.x); });
constexpr detail::OpDef kCeil = with_reference(unary_op<CeilFn>("Ceil", rounding_samples, nullptr),
                                               [](const schema::ReferenceArgs& a) { return std::ceil(a.x); });
constexpr detail::OpDef kRound = with_reference(unary_op<RoundFn>("Round", round_samples, nullptr),
                                                [](const schema::ReferenceArgs& a) { return std::nearbyint(a.x); });
constexpr detail::OpDef kRint = with_reference(unary_op<RintFn>("Rint", rounding_samples, nullptr),
                                               [](const schema::ReferenceArgs& a) { return std::nearbyint(a.x); });
constexpr detail::OpDef kSquare =
    with_reference(unary_op<SquareFn>("Square", signed_samples, square_grad, schema::LaneForm::kSquare),
                   [](const schema::ReferenceArgs& a) { return a.x * a.x; });
constexpr detail::OpDef kRelu = with_reference(
    unary_op<ReluFn>("Relu", signed_samples, relu_grad, schema::LaneForm::kRelu), [](const schema::ReferenceArgs& a) {
      return std::isnan(a.x) ? a.x : a.x > 0 ? a.x : 0.0;
    });
constexpr detail::OpDef kSqrt =
    with_reference(unary_op<SqrtFn>("Sqrt", positive_samples, sqrt_grad, schema::LaneForm::kSqrt),
                   [](const schema::ReferenceArgs& a) { return std::sqrt(a.x); });
constexpr detail::OpDef kRsqrt =
    with_reference(unary_op<RsqrtFn>("Rsqrt", positive_samples, rsqrt_grad, schema::LaneForm::kRsqrt),
                   [](const schema::ReferenceArgs& a) { return 1 / std::sqrt(a.x); });
constexpr detail::OpDef kExp = with_reference(unary_op<ExpFn>("Exp", float_samples, exp_grad, schema::LaneForm::kExp),
                                              [](const schema::ReferenceArgs& a) { return std::exp(a.x); });
constexpr detail::OpDef kLog =
    with_reference(unary_op<LogFn>("Log", positive_samples, log_grad, schema::LaneForm::kLog),
                   [](const schema::ReferenceArgs& a) { return std::log(a.x); });
constexpr detail::OpDef kLog1p =
    with_reference(unary_op<Log1pFn>("Log1p", positive_samples, log1p_grad, schema::LaneForm::kLog1p),
                   [](const schema::ReferenceArgs& a) { return std::log1p(a.x); });
constexpr detail::OpDef kTanh =
    with_reference(unary_op<TanhFn>("Tanh", float_samples, tanh_grad, schema::LaneForm::kTanh),
                   [](const schema::ReferenceArgs& a) { return std::tanh(a.x); });
constexpr detail::OpDef kSigmoid =
    with_reference(unary_op<SigmoidFn>("Sigmoid", float_samples, sigmoid_grad, schema::LaneForm::kSigmoid),
                   [](const schema::ReferenceArgs& a) { return 1 / (1 + std::exp(-a.x)); });
constexpr detail::OpDef kSin = with_reference(unary_op<SinFn>("Sin", float_samples, sin_grad),
                                              [](const schema::ReferenceArgs& a) { return std::sin(a.x); });
constexpr detail::OpDef kCos = with_reference(unary_op<CosFn>("Cos", float_samples, cos_grad),
                                              [](const schema::ReferenceArgs& a) { return std::cos(a.x); });
constexpr detail::OpDef kErf = with_reference(unary_op<ErfFn>("Erf", activation_samples, erf_grad),
                                              [](const schema::ReferenceArgs& a) { return std::erf(a.x); });
constexpr detail::OpDef kSoftplus = with_reference(
    unary_op<SoftplusFn>("Softplus", activation_samples, softplus_grad), [](const schema::ReferenceArgs& a) {
      return a.x > 0 ? a.x + std::log1p(std::exp(-a.x)) : std::log1p(std::exp(a.x));
    });
constexpr detail::OpDef kSoftsign =
    with_reference(unary_op<SoftsignFn>("Softsign", activation_samples, softsign_grad),
                   [](const schema::ReferenceArgs& a) { return a.x / (1 + std::fabs(a.x)); });
constexpr detail::OpDef kElu =
    with_reference(unary_op<EluFn>("Elu", activation_samples, elu_grad),
                   [](const schema::ReferenceArgs& a) { return a.x > 0 ? a.x : std::expm1(a.x); });
constexpr detail::OpDef kSelu =
    with_reference(unary_op<SeluFn>("Selu", activation_samples, selu_grad), [](const schema::ReferenceArgs& a) {
      return 1.0507009873554804934193349852946 * (a.x > 0 ? a.x : 1.6732632423543772848170429916717 * std::expm1(a.x));
    });

// A temporary argument is moved in, so dispatch may write over it.
Tensor unary(const detail::OpDef& op, Tensor&& x, const SourceLocation& loc) {
  const Tensor in[] = {std::move(x)};
  return runtime::dispatch1(op, in, schema::Attrs{}, loc);
}

}  // namespace

void register_unary_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kNeg, &kAbs, &kSign, &kFloor, &kCeil, &kRound, &kRint, &kSquare, &kRelu,
                                  &kSqrt, &kRsqrt, &kExp, &kLog, &kLog1p, &kTanh, &kSigmoid, &kSin, &kCos, &kErf,
                                  &kSoftplus, &kSoftsign, &kElu, &kSelu})
    r.add(*op);
}

}  // namespace ops

Tensor negative(Tensor x, SourceLocation loc) { return ops::unary(ops::kNeg, std::move(x), loc); }
// TF's tf.abs of a complex tensor is its real modulus (ComplexAbs).
Tensor abs(Tensor x, SourceLocation loc) {
  if (is_complex(x.dtype())) [[unlikely]] return complex_abs(std::move(x), loc);
  return ops::unary(ops::kAbs, std::move(x), loc);
}
Tensor sign(Tensor x, SourceLocation loc) { return ops::unary(ops::kSign, std::move(x), loc); }
Tensor floor(Tensor x, SourceLocation loc) { return ops::unary(ops::kFloor, std::move(x), loc); }
Tensor ceil(Tensor x, SourceLocation loc) { return ops::unary(ops::kCeil, std::move(x), loc); }
Tensor round(Tensor x, SourceLocation loc) { return ops::unary(ops::kRound, std::move(x), loc); }
Tensor rint(Tensor x, SourceLocation loc) { return ops::unary(ops::kRint, std::move(x), loc); }
Tensor square(Tensor x, SourceLocation loc) { return ops::unary(ops::kSquare, std::move(x), loc); }
Tensor relu(Tensor x, SourceLocation loc) { return ops::unary(ops::kRelu, std::move(x), loc); }
Tensor sqrt(Tensor x, SourceLocation loc) { return ops::unary(ops::kSqrt, std::move(x), loc); }
Tensor rsqrt(Tensor x, SourceLocation loc) { return ops::unary(ops::kRsqrt, std::move(x), loc); }
Tensor exp(Tensor x, SourceLocation loc) { return ops::unary(ops::kExp, std::move(x), loc); }
Tensor log(Tensor x, SourceLocation loc) { return ops::unary(ops::kLog, std::move(x), loc); }
Tensor log1p(Tensor x, SourceLocation loc) { return ops::unary(ops::kLog1p, std::move(x), loc); }
Tensor tanh(Tensor x, SourceLocation loc) { return ops::unary(ops::kTanh, std::move(x), loc); }
Tensor sigmoid(Tensor x, SourceLocation loc) { return ops::unary(ops::kSigmoid, std::move(x), loc); }
Tensor sin(Tensor x, SourceLocation loc) { return ops::unary(ops::kSin, std::move(x), loc); }
Tensor cos(Tensor x, SourceLocation loc) { return ops::unary(ops::kCos, std::move(x), loc); }
Tensor erf(Tensor x, SourceLocation loc) { return ops::unary(ops::kErf, std::move(x), loc); }
Tensor softplus(Tensor x, SourceLocation loc) { return ops::unary(ops::kSoftplus, std::move(x), loc); }
Tensor softsign(Tensor x, SourceLocation loc) { return ops::unary(ops::kSoftsign, std::move(x), loc); }
Tensor elu(Tensor x, SourceLocation loc) { return ops::unary(ops::kElu, std::move(x), loc); }
Tensor selu(Tensor x, SourceLocation loc) { return ops::unary(ops::kSelu, std::move(x), loc); }

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& relu_op() { return ops::kRelu; }
}  // namespace kiln::ops
