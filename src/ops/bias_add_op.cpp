// BiasAdd: value + bias along value's last dim, as tf.nn.bias_add.
#include "ops/grad_util.h"
#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/nn_internal.h"
#include "kiln/reduce.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

void bias_add_infer(schema::InferContext& c) {
  DType dv = c.dtype(0), db = c.dtype(1);
  const Shape& v = c.shape(0);
  const Shape& b = c.shape(1);
  if (dv != db)
    c.fail("value and bias must have the same dtype, got value: {} and bias: {}", dtype_name(dv),
           dtype_name(db));
  if (!is_numeric(dv) || dv == DType::Bool)
    c.fail("dtype must be a number type, got {}", dtype_name(dv));
  if (v.has_known_rank() && v.rank() < 1)
    c.fail("value must have rank >= 1, got shape {} (bias has shape {})", v.to_string(),
           b.to_string());
  if (b.has_known_rank() && b.rank() != 1)
    c.fail("bias must have rank 1, got shape {} (value has shape {})", b.to_string(),
           v.to_string());
  if (v.has_known_rank() && b.has_known_rank()) {
    int64_t channels = v[v.rank() - 1], n = b[0];
    if (channels >= 0 && n >= 0 && channels != n)
      c.fail("bias has {} elements but value's last dim is {}: value shape {}, bias shape {}", n,
             channels, v.to_string(), b.to_string());
    if (channels < 0 && n >= 0) {
      Shape out = v;
      out[v.rank() - 1] = n;
      c.add_output(dv, out);
      return;
    }
  }
  c.add_output(dv, v);
}

void bias_add_kernel(schema::KernelContext& c) {
  Tensor& out = c.outputs[0];
  int64_t size = out.size();
  int64_t channels = c.in_shape(1)[0];
  if (size == 0) return;
  int64_t rows = size / channels;
  core::visit_numeric(out.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = c.in<T>(0);
      const T* b = c.in<T>(1);
      T* y = c.out<T>(0);
      core::parallel_for(
          rows,
          [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const T* xr = x + r * channels;
              T* yr = y + r * channels;
              for (int64_t j = 0; j < channels; ++j) yr[j] = static_cast<T>(xr[j] + b[j]);
            }
          },
          std::max<int64_t>(1, core::kParallelGrain / channels));
    }
  });
}

std::vector<schema::OpSample> bias_add_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), constant({0.5f, -1.f, 2.f})}, schema::Attrs{}},
          {{constant({{{1.0, 2.0}}, {{3.0, 4.0}}}), constant({10.0, -20.0})}, schema::Attrs{}}};
}

// d value = dy; d bias = dy summed over every dim but the last.
void bias_add_gradient(schema::GradContext& c) {
  const Tensor& g = c.grad(0);
  if (c.needs(0)) c.set(0, g);
  if (c.needs(1)) c.set(1, sum_to_shape_of(g, c.inputs[1]));
}

constexpr detail::OpDef kBiasAdd{.name = "BiasAdd", .infer = bias_add_infer, .kernel = widened<bias_add_kernel>,
                                 .flags = schema::kMayRunInPlace | schema::kShapeFromShapes,
                                 .samples = bias_add_samples, .gradient = bias_add_gradient};

}  // namespace

void register_bias_add_op(schema::OpRegistry& r) { r.add(kBiasAdd); }

}  // namespace ops

namespace nn {

Tensor bias_add(const Tensor& value, const Tensor& bias, SourceLocation loc) {
  const Tensor in[] = {value, bias};
  return runtime::dispatch1(ops::kBiasAdd, in, schema::Attrs{}, loc);
}

}  // namespace nn
}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& bias_add_op() { return ops::kBiasAdd; }
}  // namespace kiln::ops
