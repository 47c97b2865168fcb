// ApplyAdam: Adam's update of a variable and its two slots in one pass, as
// TensorFlow's ResourceApplyAdam. The composite form (about ten elementwise
// ops) passes over the variable's size many times per step; this reads var,
// m, v and the gradient once and writes var, m and v once.
#include "kiln/training_ops.h"

#include <cmath>
#include <mutex>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/variable_ops.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace detail {

namespace {

constexpr int kVar = 0, kM = 1, kV = 2, kGrad = 3, kAlpha = 4;
constexpr const char* kRole[] = {"var", "m", "v"};

void apply_adam_infer(InferContext& c) {
  DType dtype = c.attrs().get_dtype("dtype");
  const Shape& shape = c.attrs().get_shape("shape");
  if (!is_floating(dtype)) c.fail("the variables must be float32 or float64, got {}", dtype_name(dtype));
  for (int i : {kVar, kM, kV})
    if (c.dtype(i) != DType::Resource)
      c.fail("input {} ({}) must be a variable's resource handle, got a {} tensor", i, kRole[i],
             dtype_name(c.dtype(i)));
  if (c.dtype(kGrad) != dtype)
    c.fail("the variables are {} but the gradient is {}", dtype_name(dtype), dtype_name(c.dtype(kGrad)));
  if (!shape.is_compatible_with(c.shape(kGrad)))
    c.fail("the variables have shape {} but the gradient has shape {} (it must be the same)", shape.to_string(),
           c.shape(kGrad).to_string());
  if (c.dtype(kAlpha) != dtype)
    c.fail("the variables are {} but alpha is {}", dtype_name(dtype), dtype_name(c.dtype(kAlpha)));
  if (c.shape(kAlpha).has_known_rank() && c.shape(kAlpha).rank() != 0)
    c.fail("alpha must be a scalar, got shape {}", c.shape(kAlpha).to_string());
}

// Per element exactly the float operations of the composite formula in
// Adam::apply_dense, in its order (the build has contraction off), so the
// two give the same bits. `out` may equal `in` (an update in place).
template <class T>
void adam_update(const T* const in[3], T* const out[3], const T* g, T alpha, const Attrs& attrs, int64_t n) {
  // C++ doubles become the dtype as `tensor * 0.9` makes its scalar.
  const double b1 = attrs.get_float("beta_1"), b2 = attrs.get_float("beta_2");
  const T beta_1 = static_cast<T>(b1), one_minus_beta_1 = static_cast<T>(1 - b1);
  const T beta_2 = static_cast<T>(b2), one_minus_beta_2 = static_cast<T>(1 - b2);
  const T epsilon = static_cast<T>(attrs.get_float("epsilon"));
  // The update reads each element then writes that same element, so in and
  // out may alias; several memory streams per element: a smaller grain.
  parallel_for(
      n,
      [&](int64_t begin, int64_t end) {
        const T *var = in[kVar], *m = in[kM], *v = in[kV];
        T *var_out = out[kVar], *m_out = out[kM], *v_out = out[kV];
        // Iteration i touches only element i, so lanes are independent even
        // when out aliases in; without this the compiler's overlap checks
        // over seven pointers keep the loop scalar.
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) {
          const T gi = g[i];
          const T m1 = m[i] * beta_1 + gi * one_minus_beta_1;
          const T v1 = v[i] * beta_2 + (gi * gi) * one_minus_beta_2;
          const T delta = (alpha * m1) / (std::sqrt(v1) + epsilon);
          m_out[i] = m1;
          v_out[i] = v1;
          var_out[i] = var[i] - delta;
        }
      },
      kParallelGrain / 4);
}

void apply_adam_kernel(KernelContext& c) {
  VariableState* s[3];
  for (int i : {kVar, kM, kV}) s[i] = &resource_state(c.inputs[i]);
  if (s[kVar] == s[kM] || s[kVar] == s[kV] || s[kM] == s[kV])
    throw InvalidArgument(fmt::format("ApplyAdam: var, m and v must be three different variables (got '{}', '{}', '{}')",
                                      s[kVar]->name, s[kM]->name, s[kV]->name));
  std::scoped_lock lock(s[kVar]->mutex, s[kM]->mutex, s[kV]->mutex);
  const Tensor& grad = c.inputs[kGrad];
  DType dtype = c.attrs.get_dtype("dtype");
  for (int i : {kVar, kM, kV}) {
    if (!s[i]->value.defined()) uninitialized(*s[i]);
    // A graph read from a file may pair handles with the wrong attrs.
    const Tensor& value = s[i]->value;
    if (value.dtype() != dtype || value.shape() != grad.shape())
      throw InvalidArgument(fmt::format("ApplyAdam: {} ('{}') is {} {} but the gradient is {} {}", kRole[i],
                                        s[i]->name, dtype_name(value.dtype()), value.shape().to_string(),
                                        dtype_name(grad.dtype()), grad.shape().to_string()));
  }
  // AssignSubVariable's rule: a value no one else holds is updated in place;
  // one a reader still holds is left as it is and replaced by a new buffer,
  // so a tensor read before the update never changes.
  Tensor fresh[3];
  for (int i : {kVar, kM, kV})
    if (!is_exclusively_owned(s[i]->value)) fresh[i] = make_tensor(dtype, grad.shape());
  visit_numeric(dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in[3];
      T* out[3];
      for (int i : {kVar, kM, kV}) {
        in[i] = data_of<T>(s[i]->value);
        out[i] = data_of<T>(fresh[i].defined() ? fresh[i] : s[i]->value);
      }
      adam_update<T>(in, out, data_of<T>(grad), data_of<T>(c.inputs[kAlpha])[0], c.attrs, grad.size());
    }
  });
  for (int i : {kVar, kM, kV})
    if (fresh[i].defined()) s[i]->value = std::move(fresh[i]);
}

Tensor sample_variable(const Tensor& value, const char* name) {
  auto s = std::make_shared<VariableState>();
  s->dtype = value.dtype();
  s->shape = value.shape();
  s->name = name;
  s->value = value;
  return make_resource(s);
}

Attrs adam_attrs(DType dtype, const Shape& shape, double beta_1, double beta_2, double epsilon) {
  return Attrs{{"dtype", dtype}, {"shape", shape}, {"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}};
}

std::vector<OpSample> apply_adam_samples() {
  return {{{sample_variable(constant({1.f, -2.f, 0.5f}), "var"), sample_variable(constant({0.1f, 0.f, -0.2f}), "m"),
            sample_variable(constant({0.01f, 0.f, 0.04f}), "v"), constant({3.f, -0.5f, 0.f}), constant(0.01f)},
           adam_attrs(DType::Float32, Shape{3}, 0.9, 0.999, 1e-7)},
          {{sample_variable(constant({{1.0, 2.0}}), "var"), sample_variable(constant({{0.0, 0.5}}), "m"),
            sample_variable(constant({{0.0, 0.25}}), "v"), constant({{-1.0, 4.0}}), constant(0.001)},
           adam_attrs(DType::Float64, Shape{1, 2}, 0.8, 0.99, 1e-8)}};
}

constexpr OpDef kApplyAdam{.name = "ApplyAdam", .infer = apply_adam_infer, .kernel = apply_adam_kernel,
                           .flags = kStateful | kNotDifferentiable, .samples = apply_adam_samples};

[[noreturn]] void slot_mismatch(const Variable& slot, const char* role, const Variable& var) {
  throw InvalidArgument(fmt::format("ApplyAdam: {} ('{}') is {} {} but var ('{}') is {} {}", role, slot.name(),
                                    dtype_name(slot.dtype()), slot.shape().to_string(), var.name(),
                                    dtype_name(var.dtype()), var.shape().to_string()));
}

}  // namespace

void register_training_ops(OpRegistry& r) { r.add(kApplyAdam); }

}  // namespace detail

void apply_adam(const Variable& var, const Variable& m, const Variable& v, const Tensor& grad, const Tensor& alpha,
                double beta_1, double beta_2, double epsilon, SourceLocation loc) {
  if (!var || !m || !v) throw InvalidArgument("ApplyAdam: var, m and v must not be null Variables");
  // The handles carry no type while traced: the slots must match var here.
  if (m.dtype() != var.dtype() || m.shape() != var.shape()) detail::slot_mismatch(m, "m", var);
  if (v.dtype() != var.dtype() || v.shape() != var.shape()) detail::slot_mismatch(v, "v", var);
  const Tensor in[] = {var.handle(), m.handle(), v.handle(), grad, alpha};
  detail::dispatch(detail::kApplyAdam, in, detail::adam_attrs(var.dtype(), var.shape(), beta_1, beta_2, epsilon), loc);
}

}  // namespace kiln
