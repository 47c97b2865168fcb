// Ops on the parts of complex tensors: Complex, Real, Imag, Conj,
// ComplexAbs, Angle. Not differentiable yet (docs/design-notes.md, "Dtypes
// beyond float32": the tape records float dtypes only).
#include <cmath>
#include <complex>

#include "kiln/complex_math.h"
#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/broadcast.h"
#include "runtime/dispatch.h"
#include "schema/op_def.h"

namespace kiln {
namespace ops {

namespace {

DType complex_of(DType real) { return real == DType::Float64 ? DType::Complex128 : DType::Complex64; }

// Calls f with R, the real type of a complex64 or complex128 dtype.
template <class F> void visit_complex(DType d, F&& f) {
  if (d == DType::Complex64) f.template operator()<float>();
  else f.template operator()<double>();
}

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
constexpr detail::OpDef kComplex{.name = "Complex", .infer = complex_infer, .kernel = complex_kernel,
                                 .flags = schema::kNotDifferentiable, .samples = complex_samples};

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
  return {{{constant(std::vector<std::complex<float>>{{1.5f, -2.f}, {0.f, 3.f}, {-0.f, -0.f}})}, {}},
          {{constant(std::vector<std::complex<double>>{{3, 4}, {-inf, 1}, {-1, 0}})}, {}}};
}
#define KILN_PART_OP(NAME, FN, TO_COMPLEX)                                                              \
  constexpr detail::OpDef k##NAME{.name = #NAME, .infer = part_infer<TO_COMPLEX>, .kernel = part_kernel<FN>, \
                                  .flags = schema::kNotDifferentiable, .samples = part_samples};
KILN_PART_OP(Real, RealFn, false)
KILN_PART_OP(Imag, ImagFn, false)
KILN_PART_OP(Conj, ConjFn, true)
KILN_PART_OP(ComplexAbs, AbsFn, false)
KILN_PART_OP(Angle, AngleFn, false)
#undef KILN_PART_OP

Tensor unary_part(const detail::OpDef& op, Tensor x, const SourceLocation& loc) {
  return runtime::dispatch1(op, std::array{std::move(x)}, schema::Attrs{}, loc);
}

}  // namespace

void register_complex_ops(schema::OpRegistry& r) {
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
