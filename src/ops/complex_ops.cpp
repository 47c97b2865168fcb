// Ops on the parts of complex tensors: Complex, Real, Imag, Conj,
// ComplexAbs, Angle. Their gradients follow TF's convention for a real loss
// L of complex z: dL/dRe(z) + i dL/dIm(z) (docs/design-notes.md, "Complex
// gradients"), as TF's math_grad.py.
#include <cmath>
#include <complex>

#include "kiln/complex_math.h"
#include "kiln/math.h"
#include "ops/grad_util.h"
#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/broadcast.h"
#include "ops/complex_util.h"
#include "runtime/dispatch.h"
#include "schema/op_def.h"

namespace kiln {
namespace ops {

namespace {

// ---- Complex(real, imag) ----------------------------------------------------
void complex_infer(schema::InferContext& c) {
  if (c.dtype(0) != c.dtype(1))
    c.fail("real has dtype {} but imag has dtype {}; both must be float32 or both float64",
           dtype_name(c.dtype(0)), dtype_name(c.dtype(1)));
  if (c.dtype(0) != DType::Float32 && c.dtype(0) != DType::Float64)
    c.fail("real and imag must be float32 or float64, got {}", dtype_name(c.dtype(0)));
  c.add_output(complex_of(c.dtype(0)), infer_broadcast(c, c.shape(0), c.shape(1), "real", "imag"));
}
void complex_kernel(schema::KernelContext& c) {
  visit_complex(c.outputs[0].dtype(), [&]<class R>() {
    const R* re = c.in<R>(0);
    const R* im = c.in<R>(1);
    auto* o = c.out<std::complex<R>>(0);
    const BroadcastPlan plan = make_broadcast_plan(c.out_shape(0), {&c.in_shape(0), &c.in_shape(1)});
    const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
    for_each_row(plan, core::kParallelGrain, [&](const int64_t* off, int64_t out, int64_t len) {
      for (int64_t i = 0; i < len; ++i) o[out + i] = std::complex<R>(re[off[0] + i * sa], im[off[1] + i * sb]);
    });
  });
}
std::vector<schema::OpSample> complex_samples() {
  return {{{constant({1.5f, -2.f}), constant({0.5f, 3.f})}, {}},
          {{constant({{1.0}, {2.0}}), constant({-1.0, 0.0, 4.0})}, {}}};
}
// z = x + i y: dL/dx = Re(g), dL/dy = Im(g), each summed to its input's shape.
void complex_grad(schema::GradContext& c) {
  const Tensor& g = c.grad(0);
  if (c.needs(0)) c.set(0, unbroadcast(real(g), c.inputs[0]));
  if (c.needs(1)) c.set(1, unbroadcast(imag(g), c.inputs[1]));
}
constexpr detail::OpDef kComplex{.name = "Complex", .infer = complex_infer, .kernel = complex_kernel,
                                 .samples = complex_samples, .gradient = complex_grad};

// ---- unary ops on a complex input -------------------------------------------
template <class Fn> void part_kernel(schema::KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), [&]<class R>() {
    const auto* z = c.in<std::complex<R>>(0);
    using Out = decltype(Fn::template apply<R>(std::complex<R>()));
    Out* o = c.out<Out>(0);
    core::parallel_for(c.outputs[0].size(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = Fn::template apply<R>(z[i]);
    });
  });
}
template <bool kToComplex> void part_infer(schema::InferContext& c) {
  if (!is_complex(c.dtype(0))) c.fail("x must be complex64 or complex128, got {}", dtype_name(c.dtype(0)));
  c.add_output(kToComplex ? c.dtype(0) : real_dtype(c.dtype(0)), c.shape(0));
}
struct RealFn {
  template <class R> static R apply(std::complex<R> z) { return z.real(); }
};
struct ImagFn {
  template <class R> static R apply(std::complex<R> z) { return z.imag(); }
};
struct ConjFn {
  template <class R> static std::complex<R> apply(std::complex<R> z) { return std::conj(z); }
};
struct AbsFn {
  template <class R> static R apply(std::complex<R> z) { return std::hypot(z.real(), z.imag()); }
};
struct AngleFn {
  template <class R> static R apply(std::complex<R> z) { return std::atan2(z.imag(), z.real()); }
};
std::vector<schema::OpSample> part_samples() {
  const double inf = std::numeric_limits<double>::infinity();
  return {{{constant(std::vector<std::complex<float>>{{1.5f, -2.f}, {0.f, 3.f}, {-0.7f, -0.2f}})}, {}},
          {{constant(std::vector<std::complex<double>>{{3, 4}, {-inf, 1}, {-1, 0}, {-0.0, -0.0}})}, {}, true},
          {{constant(std::vector<std::complex<double>>{{0.3, -1.2}, {-2, 0.5}, {1, 1}, {-0.4, -0.9}}, Shape{2, 2})},
           {}}};
}

// The gradients, with g the upstream gradient and z the input.
// Re(z): the real g as a complex gradient; Im(z): g times i.
void real_grad(schema::GradContext& c) {
  c.set(0, complex(c.grad(0), zeros_like(c.grad(0))));
}
void imag_grad(schema::GradContext& c) {
  c.set(0, complex(zeros_like(c.grad(0)), c.grad(0)));
}
void conj_grad(schema::GradContext& c) { c.set(0, conj(c.grad(0))); }
// |z|: g z / |z|, zero at z = 0 (TF's sign of a complex number).
void abs_grad(schema::GradContext& c) {
  const Tensor& z = c.inputs[0];
  const Tensor& r = c.outputs[0];
  Tensor safe = where(equal(r, 0), ones_like(r), r);
  Tensor unit = z / cast(safe, z.dtype());
  c.set(0, cast(c.grad(0), z.dtype()) * unit);
}
// arg(z) = atan2(y, x): g (-y + i x) / |z|^2 = g i / conj(z).
void angle_grad(schema::GradContext& c) {
  const Tensor& z = c.inputs[0];
  Tensor x = real(z), y = imag(z);
  Tensor r2 = x * x + y * y;
  c.set(0, complex(-c.grad(0) * y / r2, c.grad(0) * x / r2));
}

#define KILN_PART_OP(NAME, FN, TO_COMPLEX, GRAD)                                                        \
  constexpr detail::OpDef k##NAME{.name = #NAME, .infer = part_infer<TO_COMPLEX>, .kernel = part_kernel<FN>, \
                                  .samples = part_samples, .gradient = GRAD};
KILN_PART_OP(Real, RealFn, false, real_grad)
KILN_PART_OP(Imag, ImagFn, false, imag_grad)
KILN_PART_OP(Conj, ConjFn, true, conj_grad)
KILN_PART_OP(ComplexAbs, AbsFn, false, abs_grad)
KILN_PART_OP(Angle, AngleFn, false, angle_grad)
#undef KILN_PART_OP

Tensor unary_part(const detail::OpDef& op, Tensor x, const SourceLocation& loc) {
  return runtime::dispatch1(op, std::array{std::move(x)}, schema::Attrs{}, loc);
}

}  // namespace

void register_fft_ops(schema::OpRegistry& r);  // fft_ops.cpp

void register_complex_ops(schema::OpRegistry& r) {
  register_fft_ops(r);
  for (const detail::OpDef* op : {&kComplex, &kReal, &kImag, &kConj, &kComplexAbs, &kAngle}) r.add(*op);
}

}  // namespace ops

Tensor complex(Tensor real, Tensor imag, SourceLocation loc) {
  return runtime::dispatch1(ops::kComplex, std::array{std::move(real), std::move(imag)}, schema::Attrs{}, loc);
}
Tensor real(Tensor x, SourceLocation loc) {
  return is_complex(x.dtype()) ? ops::unary_part(ops::kReal, std::move(x), loc) : x;
}
Tensor imag(Tensor x, SourceLocation loc) {
  return is_complex(x.dtype()) ? ops::unary_part(ops::kImag, std::move(x), loc) : zeros_like(x, std::nullopt, loc);
}
Tensor conj(Tensor x, SourceLocation loc) {
  return is_complex(x.dtype()) ? ops::unary_part(ops::kConj, std::move(x), loc) : x;
}
Tensor complex_abs(Tensor x, SourceLocation loc) { return ops::unary_part(ops::kComplexAbs, std::move(x), loc); }
Tensor angle(Tensor x, SourceLocation loc) { return ops::unary_part(ops::kAngle, std::move(x), loc); }

}  // namespace kiln
