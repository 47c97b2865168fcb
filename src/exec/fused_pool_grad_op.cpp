#include "exec/fused_pool_grad.h"
#include "exec/fused_activation.h"

#include <string>
#include <vector>

#include "ops/creation.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"

namespace kiln::exec {

namespace {

using schema::Attrs;

// With `bias_gradient`, the gradient summed over all but its last dim.
bool sums_bias_gradient(const Attrs& attrs) { return attrs.get_or("bias_gradient", false); }

// MaxPoolGrad's inference: the fused op accepts exactly what MaxPoolGrad does
// (Relu's gradient then keeps its shape and dtype); the bias gradient is
// [channels].
void fused_max_pool_grad_infer(schema::InferContext& c) {
  check_activation(c);
  ops::max_pool_grad_op().infer(c);
  if (sums_bias_gradient(c.attrs())) {
    const Shape& x = c.shape(0);
    c.add_output(c.dtype(0), Shape{x.has_known_rank() ? x[x.rank() - 1] : -1});
  }
}

void fused_max_pool_grad_kernel(schema::KernelContext& c) {
  if (has_relu(c.attrs))
    ops::max_pool_grad_relu_kernel(c);
  else
    ops::max_pool_grad_op().kernel(c);
}

// Inputs on both sides of 0 with ties, -0, +0 and a NaN in x, so that the
// relu mask and the first-maximum rule both have work; windows that overlap
// (3x3/2, whole images per task) and that do not (2x2/2, bands of rows).
std::vector<schema::OpSample> fused_max_pool_grad_samples() {
  auto attrs = [](std::vector<int64_t> ksize, std::vector<int64_t> strides, const char* padding,
                  const char* activation) {
    return Attrs{{"ksize", std::move(ksize)},
                 {"strides", std::move(strides)},
                 {"padding", std::string(padding)},
                 {"activation", std::string(activation)}};
  };
  std::vector<float> x(1 * 4 * 6 * 3), dy(1 * 2 * 3 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5) * 0.5f;
  x[4] = -0.0f;
  x[9] = 0.0f;
  x[13] = NAN;
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<float>(static_cast<int>(i * 5 % 7) - 3) * 0.25f;
  std::vector<double> xd(x.begin(), x.end());
  std::vector<double> dyd(1 * 1 * 2 * 3);
  for (std::size_t i = 0; i < dyd.size(); ++i) dyd[i] = static_cast<double>(i % 5) - 1.5;
  auto with_bias_gradient = [](Attrs a) {
    a.set("bias_gradient", true);
    return a;
  };
  // 2x2/2 tiling windows on 16 channels: the AVX2 path and its sums.
  std::vector<float> x16(2 * 4 * 6 * 16), dy16(2 * 2 * 3 * 16);
  for (std::size_t i = 0; i < x16.size(); ++i)
    x16[i] = static_cast<float>(static_cast<int>(i * 13 % 17) - 8) * 0.375f;
  x16[20] = -0.0f;
  x16[37] = NAN;
  for (std::size_t i = 0; i < dy16.size(); ++i)
    dy16[i] = static_cast<float>(static_cast<int>(i * 5 % 9) - 4) * 0.3f;
  return {
      {{constant(x, Shape{1, 4, 6, 3}), constant(dy, Shape{1, 2, 3, 3})}, attrs({2, 2}, {2, 2}, "VALID", "relu")},
      {{constant(x, Shape{1, 4, 6, 3}), constant(dy, Shape{1, 2, 3, 3})},
       with_bias_gradient(attrs({2, 2}, {2, 2}, "VALID", "relu"))},
      {{constant(x16, Shape{2, 4, 6, 16}), constant(dy16, Shape{2, 2, 3, 16})},
       with_bias_gradient(attrs({2, 2}, {2, 2}, "VALID", "relu"))},
      {{constant(xd, Shape{1, 4, 6, 3}), constant(dyd, Shape{1, 1, 2, 3})},
       with_bias_gradient(attrs({3, 3}, {2, 2}, "VALID", "none"))},
      {{constant(xd, Shape{1, 4, 6, 3}), constant(dyd, Shape{1, 1, 2, 3})}, attrs({3, 3}, {2, 2}, "VALID", "relu")},
      {{constant(x, Shape{1, 4, 6, 3}), constant(dy, Shape{1, 2, 3, 3})}, attrs({2, 2}, {2, 2}, "SAME", "none")},
      // bfloat16 (mixed_bfloat16's step): the native kernel, and through float32.
      {{cast(constant(x16, Shape{2, 4, 6, 16}), DType::BFloat16),
        cast(constant(dy16, Shape{2, 2, 3, 16}), DType::BFloat16)},
       with_bias_gradient(attrs({2, 2}, {2, 2}, "VALID", "relu"))},
      {{cast(constant(x, Shape{1, 4, 6, 3}), DType::BFloat16),
        cast(constant(dy, Shape{1, 2, 3, 3}), DType::BFloat16)},
       with_bias_gradient(attrs({2, 2}, {2, 2}, "VALID", "relu"))},
  };
}

// Fusion runs on graphs after differentiation: nothing differentiates them.
constexpr detail::OpDef kFusedMaxPoolGrad{.name = "FusedMaxPoolGrad", .infer = fused_max_pool_grad_infer,
                                  .kernel = fused_max_pool_grad_kernel, .flags = schema::kNotDifferentiable,
                                  .samples = fused_max_pool_grad_samples};

}  // namespace

const detail::OpDef& fused_max_pool_grad_op() { return kFusedMaxPoolGrad; }

}  // namespace kiln::exec
