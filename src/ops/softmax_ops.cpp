// Softmax and LogSoftmax along one axis, as tf.nn.softmax / log_softmax.
// Stable: the axis' maximum is subtracted before exponentiating.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/nn_internal.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

void softmax_infer(schema::InferContext& c) {
  DType dt = c.dtype(0);
  const Shape& s = c.shape(0);
  if (!is_floating(dt)) c.fail("logits must be float32 or float64, got {}", dtype_name(dt));
  if (s.has_known_rank()) {
    int64_t axis = c.attrs().get_int("axis");
    if (s.rank() == 0) c.fail("logits must have rank >= 1, got shape {}", s.to_string());
    if (axis < -s.rank() || axis >= s.rank())
      c.fail("axis {} is out of range for logits of shape {} (rank {})", axis, s.to_string(),
             s.rank());
  }
  c.add_output(dt, s);
}

// The rows along the last axis: contiguous, the common case.
template <class T, bool kLog>
void softmax_rows(const T* x, T* y, int64_t rows, int64_t len) {
  core::parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = x + r * len;
          T* yr = y + r * len;
          T m = -std::numeric_limits<T>::infinity();
          for (int64_t j = 0; j < len; ++j) m = std::max(m, xr[j]);
          T sum = 0;
          if constexpr (kLog) {
            // (x - max) - log(sum(exp(x - max))), as TF: x - (max + log(sum))
            // would round max + log(sum) to x's magnitude first.
            for (int64_t j = 0; j < len; ++j) sum += std::exp(xr[j] - m);
            T log_sum = std::log(sum);
            for (int64_t j = 0; j < len; ++j) yr[j] = (xr[j] - m) - log_sum;
          } else {
            for (int64_t j = 0; j < len; ++j) {
              yr[j] = std::exp(xr[j] - m);
              sum += yr[j];
            }
            for (int64_t j = 0; j < len; ++j) yr[j] /= sum;
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, len)));
}

// Another axis: [outer, len, inner]; loops run along `inner` (contiguous) so
// that they vectorize.
template <class T, bool kLog>
void softmax_strided(const T* x, T* y, int64_t outer, int64_t len, int64_t inner) {
  core::parallel_for(
      outer,
      [&](int64_t begin, int64_t end) {
        std::vector<T> m(inner), sum(inner);
        for (int64_t o = begin; o < end; ++o) {
          const T* xo = x + o * len * inner;
          T* yo = y + o * len * inner;
          std::fill(m.begin(), m.end(), -std::numeric_limits<T>::infinity());
          std::fill(sum.begin(), sum.end(), T(0));
          for (int64_t j = 0; j < len; ++j)
            for (int64_t i = 0; i < inner; ++i) m[i] = std::max(m[i], xo[j * inner + i]);
          for (int64_t j = 0; j < len; ++j) {
            for (int64_t i = 0; i < inner; ++i) {
              T e = std::exp(xo[j * inner + i] - m[i]);
              if constexpr (!kLog) yo[j * inner + i] = e;
              sum[i] += e;
            }
          }
          if constexpr (kLog) {
            for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
            for (int64_t j = 0; j < len; ++j)
              for (int64_t i = 0; i < inner; ++i) yo[j * inner + i] = (xo[j * inner + i] - m[i]) - sum[i];
          } else {
            for (int64_t j = 0; j < len; ++j)
              for (int64_t i = 0; i < inner; ++i) yo[j * inner + i] /= sum[i];
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, len * inner)));
}

template <bool kLog>
void softmax_kernel(schema::KernelContext& c) {
  const Tensor& x = c.inputs[0];
  if (x.size() == 0) return;
  const Shape& s = x.shape();
  int64_t axis = c.attrs.get_int("axis");
  if (axis < 0) axis += s.rank();
  int64_t outer = 1, inner = 1, len = s[static_cast<int>(axis)];
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = static_cast<int>(axis) + 1; i < s.rank(); ++i) inner *= s[i];
  core::visit_numeric(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      if (inner == 1) softmax_rows<T, kLog>(c.in<T>(0), c.out<T>(0), outer, len);
      else softmax_strided<T, kLog>(c.in<T>(0), c.out<T>(0), outer, len, inner);
    }
  });
}

std::vector<schema::OpSample> softmax_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {-1.f, 0.f, 4.f}})}, schema::Attrs{{"axis", int64_t(-1)}}},
          {{constant({{0.5, -2.0}, {1.0, 3.0}, {0.0, 0.0}})}, schema::Attrs{{"axis", int64_t(0)}}}};
}

// Each output element depends on its whole row, so these are not elementwise,
// but a softmax may overwrite its own input (rows are read before written).
// y = softmax(x): dx = (dy - sum(dy * y)) * y, sums along the axis.
void softmax_gradient(schema::GradContext& c) {
  if (!c.needs(0)) return;
  const Tensor& y = c.outputs[0];
  const Tensor& g = c.grad(0);
  int64_t axis = c.attrs.get_int("axis");
  c.set(0, (g - sum(g * y, axis, /*keepdims=*/true)) * y);
}

// y = log_softmax(x): dx = dy - exp(y) * sum(dy), sums along the axis.
void log_softmax_gradient(schema::GradContext& c) {
  if (!c.needs(0)) return;
  const Tensor& y = c.outputs[0];
  const Tensor& g = c.grad(0);
  int64_t axis = c.attrs.get_int("axis");
  c.set(0, g - exp(y) * sum(g, axis, /*keepdims=*/true));
}

constexpr detail::OpDef kSoftmax{.name = "Softmax", .infer = softmax_infer, .kernel = widened<softmax_kernel<false>>,
                                 .flags = schema::kMayRunInPlace | schema::kShapeFromShapes, .samples = softmax_samples,
                                 .gradient = softmax_gradient};
constexpr detail::OpDef kLogSoftmax{.name = "LogSoftmax", .infer = softmax_infer, .kernel = widened<softmax_kernel<true>>,
                                    .flags = schema::kMayRunInPlace | schema::kShapeFromShapes,
                                    .samples = softmax_samples, .gradient = log_softmax_gradient};

}  // namespace

void register_softmax_ops(schema::OpRegistry& r) {
  r.add(kSoftmax);
  r.add(kLogSoftmax);
}

}  // namespace ops

namespace nn {

Tensor softmax(const Tensor& logits, int64_t axis, SourceLocation loc) {
  const Tensor in[] = {logits};
  return runtime::dispatch1(ops::kSoftmax, in, schema::Attrs{{"axis", axis}}, loc);
}

Tensor log_softmax(const Tensor& logits, int64_t axis, SourceLocation loc) {
  const Tensor in[] = {logits};
  return runtime::dispatch1(ops::kLogSoftmax, in, schema::Attrs{{"axis", axis}}, loc);
}

}  // namespace nn
}  // namespace kiln
