#include "exec/fused_adam.h"

#include <vector>

#include "ops/adam_update.h"
#include "ops/creation.h"
#include "ops/variable_ops.h"

namespace kiln::passes {

namespace {

using detail::Attrs;

constexpr const char* kRole[] = {"var", "m", "v"};

// ApplyAdam's checks, for each variable's group of four inputs. The handles
// carry no shape: the kernel checks each variable's value against its gradient.
void fused_apply_adam_infer(detail::InferContext& c) {
  const int n = c.num_inputs();
  if (n < 5 || n % 4 != 1)
    c.fail("takes 4 inputs per variable (var, m, v, gradient) and alpha, got {} inputs", n);
  const DType dtype = c.attrs().get_dtype("dtype");
  if (!is_floating(dtype)) c.fail("the variables must be float32 or float64, got {}", dtype_name(dtype));
  for (int base = 0; base + 1 < n; base += 4) {
    for (int i = 0; i < 3; ++i)
      if (c.dtype(base + i) != DType::Resource)
        c.fail("input {} ({} of variable {}) must be a variable's resource handle, got a {} tensor", base + i,
               kRole[i], base / 4, dtype_name(c.dtype(base + i)));
    if (c.dtype(base + 3) != dtype)
      c.fail("the variables are {} but gradient {} is {}", dtype_name(dtype), base / 4, dtype_name(c.dtype(base + 3)));
  }
  if (c.dtype(n - 1) != dtype) c.fail("the variables are {} but alpha is {}", dtype_name(dtype), dtype_name(c.dtype(n - 1)));
  if (c.shape(n - 1).has_known_rank() && c.shape(n - 1).rank() != 0)
    c.fail("alpha must be a scalar, got shape {}", c.shape(n - 1).to_string());
}

void fused_apply_adam_kernel(detail::KernelContext& c) { detail::run_adam(c.inputs, c.attrs, "FusedApplyAdam"); }

Attrs adam_attrs(DType dtype, double beta_1, double beta_2, double epsilon) {
  return Attrs{{"dtype", dtype}, {"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}};
}

// Variables of different shapes and sizes, so that the pass over them laid
// end to end crosses from one to the next.
std::vector<detail::OpSample> fused_apply_adam_samples() {
  return {{{detail::sample_resource(constant({1.f, -2.f, 0.5f}), "var"), detail::sample_resource(constant({0.1f, 0.f, -0.2f}), "m"),
            detail::sample_resource(constant({0.01f, 0.f, 0.04f}), "v"), constant({3.f, -0.5f, 0.f}),
            detail::sample_resource(constant({{4.f}, {-1.f}}), "var_1"), detail::sample_resource(constant({{0.5f}, {0.25f}}), "m_1"),
            detail::sample_resource(constant({{0.f}, {1.f}}), "v_1"), constant({{-2.f}, {0.125f}}), constant(0.01f)},
           adam_attrs(DType::Float32, 0.9, 0.999, 1e-7)},
          {{detail::sample_resource(constant({{1.0, 2.0}}), "var"), detail::sample_resource(constant({{0.0, 0.5}}), "m"),
            detail::sample_resource(constant({{0.0, 0.25}}), "v"), constant({{-1.0, 4.0}}), constant(0.001)},
           adam_attrs(DType::Float64, 0.8, 0.99, 1e-8)}};
}

// Made by a pass after differentiation: nothing differentiates it.
constexpr detail::OpDef kFusedApplyAdam{.name = "FusedApplyAdam", .infer = fused_apply_adam_infer,
                                        .kernel = fused_apply_adam_kernel,
                                        .flags = detail::kStateful | detail::kNotDifferentiable,
                                        .samples = fused_apply_adam_samples};

}  // namespace

const detail::OpDef& fused_apply_adam_op() { return kFusedApplyAdam; }

}  // namespace kiln::passes
