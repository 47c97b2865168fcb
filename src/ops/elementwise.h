#pragma once
// Building blocks of the elementwise math ops: the contiguous loops (the
// OpDef::elementwise entries that fusion calls), the eager kernels built on
// the same loops (same-shape, scalar-with-tensor and strided broadcasting
// paths), the shared type inference, and constexpr OpDef makers.
//
// In-place safety: dispatch may hand a kernel an output that shares its
// buffer with an input of the same shape (never with a broadcast input), so
// every loop reads element i of its inputs before writing element i.
#include <complex>
#include <string>
#include <type_traits>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/broadcast.h"
#include "ops/math_functors.h"
#include "schema/op_def.h"

namespace kiln::ops {

template <class F, class T>
inline constexpr bool supports = (F::kDTypes & dtype_bit(dtype_of<T>)) != 0;

template <class F, class T>
using OutOf = std::conditional_t<F::kToBool, bool, T>;

// One element of F. float16 and bfloat16 compute in float32 and round the
// result to their type once per op, as TF's Eigen::half and Eigen::bfloat16
// do; every loop below (eager, and the fused graph kernels that call the same
// loops) goes through these, so traced and eager results stay equal.
template <class F, class T>
inline OutOf<F, T> apply1(const T& x) {
  if constexpr (is_half_type<T>) {
    const auto r = F::template apply<float>(static_cast<float>(x));
    if constexpr (F::kToBool) return r;
    else return T(r);
  } else {
    return F::template apply<T>(x);
  }
}
template <class F, class T>
inline OutOf<F, T> apply2(const T& a, const T& b) {
  if constexpr (is_half_type<T>) {
    const auto r = F::template apply<float>(static_cast<float>(a), static_cast<float>(b));
    if constexpr (F::kToBool) return r;
    else return T(r);
  } else {
    return F::template apply<T>(a, b);
  }
}
// (Select, whose condition C is not T, picks values: no arithmetic to bridge.)
template <class F, class C, class T>
inline T apply3(const C& a, const T& b, const T& c) {
  if constexpr (is_half_type<T> && std::is_same_v<C, T>) {
    return T(F::template apply<float>(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
  } else {
    return F::template apply<T>(a, b, c);
  }
}

// ---- Loops over contiguous ranges ------------------------------------------
template <class F, class T>
inline void unary_range(const T* x, OutOf<F, T>* o, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    // GCC 12 vectorizes this over bytes (0 or 1) but not over bool loads.
    const auto* xb = reinterpret_cast<const uint8_t*>(x);
    for (int64_t i = 0; i < n; ++i) o[i] = apply1<F, T>(xb[i] != 0);
  } else if constexpr (std::is_same_v<T, float> && requires { F::apply_f32(x, o, n); }) {
    F::apply_f32(x, o, n);  // vectorized transcendentals (ops/vector_math.h)
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = apply1<F, T>(x[i]);
  }
}
template <class F, class T>
inline void binary_range(const T* a, const T* b, OutOf<F, T>* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply2<F, T>(a[i], b[i]);
}
// One side is a single value (broadcast scalar, or a broadcast row element).
template <class F, class T>
inline void binary_range_scalar_a(const T& a, const T* b, OutOf<F, T>* o, int64_t n) {
  const T av = a;
  for (int64_t i = 0; i < n; ++i) o[i] = apply2<F, T>(av, b[i]);
}
template <class F, class T>
inline void binary_range_scalar_b(const T* a, const T& b, OutOf<F, T>* o, int64_t n) {
  const T bv = b;
  for (int64_t i = 0; i < n; ++i) o[i] = apply2<F, T>(a[i], bv);
}
// Ternary ops: C is the first input's element type (Select reads its bool
// condition as bytes, 0 or 1: GCC vectorizes a select on uint8 but not on
// bool).
template <class F, class C, class T>
inline void ternary_range(const C* a, const T* b, const T* c, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply3<F, C, T>(a[i], b[i], c[i]);
}
// Each input either walks the row (S* true) or holds one value for all of it;
// the strides are compile-time so the loop vectorizes.
template <class F, class C, class T, bool SA, bool SB, bool SC>
inline void ternary_range_bcast(const C* a, const T* b, const T* c, T* o, int64_t n) {
  const C av = a[0];
  const T bv = b[0], cv = c[0];
  for (int64_t i = 0; i < n; ++i)
    o[i] = apply3<F, C, T>(SA ? a[i] : av, SB ? b[i] : bv, SC ? c[i] : cv);
}
template <class F, class C, class T>
inline void ternary_range_strided(const C* a, bool sa, const T* b, bool sb, const T* c, bool sc, T* o,
                                  int64_t n) {
  if (n <= 0) return;
  switch ((sa ? 4 : 0) | (sb ? 2 : 0) | (sc ? 1 : 0)) {
    case 0: return ternary_range_bcast<F, C, T, false, false, false>(a, b, c, o, n);
    case 1: return ternary_range_bcast<F, C, T, false, false, true>(a, b, c, o, n);
    case 2: return ternary_range_bcast<F, C, T, false, true, false>(a, b, c, o, n);
    case 3: return ternary_range_bcast<F, C, T, false, true, true>(a, b, c, o, n);
    case 4: return ternary_range_bcast<F, C, T, true, false, false>(a, b, c, o, n);
    case 5: return ternary_range_bcast<F, C, T, true, false, true>(a, b, c, o, n);
    case 6: return ternary_range_bcast<F, C, T, true, true, false>(a, b, c, o, n);
    default: return ternary_range<F, C, T>(a, b, c, o, n);
  }
}

// The OpDef::elementwise entries: same-shape inputs, n elements.
template <class F, class T>
void unary_loop(const void* const* in, void* out, int64_t n) {
  unary_range<F, T>(static_cast<const T*>(in[0]), static_cast<OutOf<F, T>*>(out), n);
}
template <class F, class T>
void binary_loop(const void* const* in, void* out, int64_t n) {
  binary_range<F, T>(static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                     static_cast<OutOf<F, T>*>(out), n);
}
template <class F, class C, class T>
void ternary_loop(const void* const* in, void* out, int64_t n) {
  ternary_range<F, C, T>(static_cast<const C*>(in[0]), static_cast<const T*>(in[1]),
                         static_cast<const T*>(in[2]), static_cast<T*>(out), n);
}

// ---- Eager kernels ----------------------------------------------------------
template <class F, class T>
void unary_apply(const Tensor& x, Tensor& out) {
  const T* px = core::data_of<T>(x);
  OutOf<F, T>* po = core::data_of<OutOf<F, T>>(out);
  core::parallel_for(
      out.size(), [&](int64_t b, int64_t e) { unary_range<F, T>(px + b, po + b, e - b); },
      grain_of<F>());
}

template <class F, class T>
void binary_apply(const Tensor& a, const Tensor& b, Tensor& out) {
  using O = OutOf<F, T>;
  const int64_t n = out.size();
  if (n == 0) return;
  const T* pa = core::data_of<T>(a);
  const T* pb = core::data_of<T>(b);
  O* po = core::data_of<O>(out);
  const int64_t na = a.size(), nb = b.size();
  // An input with as many elements as the output is laid out like it.
  if (na == n && nb == n) {
    core::parallel_for(n, [&](int64_t s, int64_t e) { binary_range<F, T>(pa + s, pb + s, po + s, e - s); },
                       grain_of<F>());
  } else if (na == n && nb == 1) {
    core::parallel_for(n, [&](int64_t s, int64_t e) { binary_range_scalar_b<F, T>(pa + s, *pb, po + s, e - s); },
                       grain_of<F>());
  } else if (na == 1 && nb == n) {
    core::parallel_for(n, [&](int64_t s, int64_t e) { binary_range_scalar_a<F, T>(*pa, pb + s, po + s, e - s); },
                       grain_of<F>());
  } else {
    const BroadcastPlan plan = make_broadcast_plan(out.shape(), {&a.shape(), &b.shape()});
    const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
    for_each_row(plan, grain_of<F>(), [&](const int64_t* off, int64_t o, int64_t len) {
      if (sa && sb) binary_range<F, T>(pa + off[0], pb + off[1], po + o, len);
      else if (sb) binary_range_scalar_a<F, T>(pa[off[0]], pb + off[1], po + o, len);
      else if (sa) binary_range_scalar_b<F, T>(pa + off[0], pb[off[1]], po + o, len);
      else {
        const O v = apply2<F, T>(pa[off[0]], pb[off[1]]);
        for (int64_t i = 0; i < len; ++i) po[o + i] = v;
      }
    });
  }
}

template <class F, class C, class T>
void ternary_apply(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& out) {
  const int64_t n = out.size();
  if (n == 0) return;
  const C* pa = core::data_of<C>(a);
  const T* pb = core::data_of<T>(b);
  const T* pc = core::data_of<T>(c);
  T* po = core::data_of<T>(out);
  const int64_t na = a.size(), nb = b.size(), nc = c.size();
  if (na == n && nb == n && nc == n) {
    core::parallel_for(n, [&](int64_t s, int64_t e) { ternary_range<F, C, T>(pa + s, pb + s, pc + s, po + s, e - s); },
                       grain_of<F>());
    return;
  }
  // Each input is either full (stride 1) or a single value (stride 0):
  // covers clip(x, lo, hi) with scalar bounds and where() with a scalar.
  if ((na == n || na == 1) && (nb == n || nb == 1) && (nc == n || nc == 1)) {
    const bool sa = na == n, sb = nb == n, sc = nc == n;
    core::parallel_for(n, [&](int64_t s, int64_t e) {
      ternary_range_strided<F, C, T>(pa + (sa ? s : 0), sa, pb + (sb ? s : 0), sb, pc + (sc ? s : 0), sc,
                                     po + s, e - s);
    }, grain_of<F>());
    return;
  }
  const BroadcastPlan plan = make_broadcast_plan(out.shape(), {&a.shape(), &b.shape(), &c.shape()});
  const bool sa = plan.inner_stride(0), sb = plan.inner_stride(1), sc = plan.inner_stride(2);
  for_each_row(plan, grain_of<F>(), [&](const int64_t* off, int64_t o, int64_t len) {
    ternary_range_strided<F, C, T>(pa + off[0], sa, pb + off[1], sb, pc + off[2], sc, po + o, len);
  });
}

// Kernels visit the dtype once; unsupported dtypes never reach a kernel
// (inference rejects them).
template <class F>
void unary_kernel(schema::KernelContext& c) {
  core::visit_all_dtypes(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (supports<F, T>) unary_apply<F, T>(c.inputs[0], c.outputs[0]);
  });
}
template <class F>
void binary_kernel(schema::KernelContext& c) {
  core::visit_all_dtypes(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (supports<F, T>) binary_apply<F, T>(c.inputs[0], c.inputs[1], c.outputs[0]);
  });
}

// ---- Inference ---------------------------------------------------------------
// "float32, float64, int32" for a dtype mask.
std::string dtype_list(uint32_t mask);
// Fails unless `dtype` (of argument `arg`) is in `mask`, with a message that
// says what the op accepts and, for float-only ops, how to convert.
void check_dtype(const schema::InferContext& c, DType dtype, uint32_t mask, const char* arg);
// Fails unless the two arguments have the same dtype, naming both.
void check_same_dtype(const schema::InferContext& c, int i, int j, const char* i_name, const char* j_name);

template <class F>
void unary_infer(schema::InferContext& c) {
  check_dtype(c, c.dtype(0), F::kDTypes, "x");
  c.add_output(F::kToBool ? DType::Bool : c.dtype(0), c.shape(0));
}
template <class F>
void binary_infer(schema::InferContext& c) {
  check_same_dtype(c, 0, 1, "x", "y");
  check_dtype(c, c.dtype(0), F::kDTypes, "x");
  c.add_output(F::kToBool ? DType::Bool : c.dtype(0), infer_broadcast(c, c.shape(0), c.shape(1), "x", "y"));
}

// ---- constexpr OpDef makers ----------------------------------------------------
inline constexpr uint32_t kElementwiseFlags = schema::kElementwise | schema::kMayRunInPlace;

template <class F, class MakeLoop>
constexpr void set_loops(detail::OpDef& op, MakeLoop make) {
  auto one = [&]<class T>(DType d) {
    if constexpr (supports<F, T>) op.elementwise[static_cast<int>(d)] = make.template operator()<T>();
  };
  // Strings are left out: fusion works on plain memory.
  one.template operator()<float>(DType::Float32);
  one.template operator()<double>(DType::Float64);
  one.template operator()<int32_t>(DType::Int32);
  one.template operator()<int64_t>(DType::Int64);
  one.template operator()<uint8_t>(DType::UInt8);
  one.template operator()<bool>(DType::Bool);
  one.template operator()<float16_t>(DType::Float16);
  one.template operator()<bfloat16_t>(DType::BFloat16);
  one.template operator()<int8_t>(DType::Int8);
  one.template operator()<int16_t>(DType::Int16);
  one.template operator()<uint16_t>(DType::UInt16);
  one.template operator()<uint32_t>(DType::UInt32);
  one.template operator()<uint64_t>(DType::UInt64);
  one.template operator()<std::complex<float>>(DType::Complex64);
  one.template operator()<std::complex<double>>(DType::Complex128);
}

// `nullptr` for the gradient marks the op kNotDifferentiable. It is told
// apart by overload, not by comparing the pointer with null: g++ 12 with
// -fsanitize=undefined does not treat `fn != nullptr` as a constant expression
// when fn is a function template's instance (minmax_grad<true>).
template <class F>
constexpr detail::OpDef unary_op(std::string_view name, schema::SamplesFn samples, schema::GradFn gradient,
                                 schema::LaneForm lane_form = schema::LaneForm::kNone) {
  detail::OpDef op{.name = name, .infer = unary_infer<F>, .kernel = unary_kernel<F>, .flags = kElementwiseFlags,
                   .samples = samples, .gradient = gradient, .lane_form = lane_form};
  set_loops<F>(op, []<class T>() -> schema::ElementwiseLoop { return unary_loop<F, T>; });
  return op;
}
template <class F>
constexpr detail::OpDef unary_op(std::string_view name, schema::SamplesFn samples, std::nullptr_t) {
  detail::OpDef op = unary_op<F>(name, samples, schema::GradFn{});
  op.flags |= schema::kNotDifferentiable;
  return op;
}
template <class F>
constexpr detail::OpDef binary_op(std::string_view name, schema::SamplesFn samples, schema::GradFn gradient,
                                  schema::LaneForm lane_form = schema::LaneForm::kNone) {
  detail::OpDef op{.name = name, .infer = binary_infer<F>, .kernel = binary_kernel<F>, .flags = kElementwiseFlags,
                   .samples = samples, .gradient = gradient, .lane_form = lane_form};
  set_loops<F>(op, []<class T>() -> schema::ElementwiseLoop { return binary_loop<F, T>; });
  return op;
}
template <class F>
constexpr detail::OpDef binary_op(std::string_view name, schema::SamplesFn samples, std::nullptr_t) {
  detail::OpDef op = binary_op<F>(name, samples, schema::GradFn{});
  op.flags |= schema::kNotDifferentiable;
  return op;
}

// The op with its reference formula (OpDef::reference).
constexpr detail::OpDef with_reference(detail::OpDef op, schema::ReferenceFn reference) {
  op.reference = reference;
  return op;
}

// Integer division ops (FloorDiv, FloorMod, TruncateDiv, TruncateMod): an
// integer divisor holding 0 is InvalidArgument, as TF's "Integer division by
// zero". The kernel checks the divisor before computing; the integer loops
// are left out of the OpDef, so fusion (which could not raise) never runs
// them and such a node runs its own kernel. Float loops stay.
void check_integer_divisor(const schema::KernelContext& c, const Tensor& divisor);
template <class F>
void int_division_kernel(schema::KernelContext& c) {
  check_integer_divisor(c, c.inputs[1]);
  binary_kernel<F>(c);
}
constexpr void clear_integer_loops(detail::OpDef& op) {
  for (int d = 0; d < kNumDTypes; ++d)
    if (is_integer(static_cast<DType>(d))) op.elementwise[d] = nullptr;
}
// Gradient is GradFn or std::nullptr_t, so binary_op's overloads see which.
template <class F, class Gradient>
constexpr detail::OpDef int_division_op(std::string_view name, schema::SamplesFn samples, Gradient gradient) {
  detail::OpDef op = binary_op<F>(name, samples, gradient);
  op.kernel = int_division_kernel<F>;
  clear_integer_loops(op);
  return op;
}

// Pow: an integer exponent below 0 is InvalidArgument, as TF's "Integers to
// negative integer powers are not allowed", checked the same way (its
// integer loops are left out of the OpDef too).
void check_integer_exponent(const schema::KernelContext& c, const Tensor& exponent);
template <class F>
void int_power_kernel(schema::KernelContext& c) {
  check_integer_exponent(c, c.inputs[1]);
  binary_kernel<F>(c);
}
template <class F>
constexpr detail::OpDef int_power_op(std::string_view name, schema::SamplesFn samples, schema::GradFn gradient) {
  detail::OpDef op = binary_op<F>(name, samples, gradient);
  op.kernel = int_power_kernel<F>;
  clear_integer_loops(op);
  return op;
}

// Converts C++ numbers with binary_inputs (naming the public function
// `name` in errors) and dispatches `op`.
Tensor dispatch_binary(const detail::OpDef& op, const Operand& x, const Operand& y, std::string_view name,
                       const SourceLocation& loc);

// The parts of register_math_ops, one per source file.
void register_unary_ops(schema::OpRegistry& registry);
void register_binary_ops(schema::OpRegistry& registry);
void register_compare_ops(schema::OpRegistry& registry);

}  // namespace kiln::ops
