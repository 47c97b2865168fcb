// Cumsum and Cumprod (tf.math.cumsum / cumprod): running sums and products
// along one axis, with TF's `exclusive` (each element leaves itself out) and
// `reverse` (from the end) attrs.
#include "core/dtype_switch.h"
#include "kiln/math.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "ops/math_functors.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

void scan_infer(schema::InferContext& c) {
  DType d = c.dtype(0);
  if (!is_floating(d) && d != DType::Int32 && d != DType::Int64)
    c.fail("x must be float32, float64, int32 or int64, got {}", dtype_name(d));
  const Shape& s = c.shape(0);
  int64_t axis = c.attrs().get_int("axis");
  if (s.has_known_rank() && (axis < -std::max(s.rank(), 1) || axis >= std::max(s.rank(), 1)))
    c.fail("axis {} is out of range for a tensor of rank {}", axis, s.rank());
  if (s.has_known_rank() && s.rank() == 0) c.fail("x must have rank 1 or more, got a scalar");
  c.add_output(d, s);
}

template <bool kProduct> void scan_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  int a = static_cast<int>(c.attrs.get_int("axis"));
  if (a < 0) a += s.rank();
  const bool exclusive = c.attrs.get_bool("exclusive"), reverse = c.attrs.get_bool("reverse");
  const int64_t outer = dims_product(s, 0, a), n = s[a], inner = dims_product(s, a + 1, s.rank());
  core::visit_numeric(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, uint8_t>) {
      const T* x = c.in<T>(0);
      T* y = c.out<T>(0);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          T acc = kProduct ? T(1) : T(0);
          for (int64_t k = 0; k < n; ++k) {
            int64_t at = (o * n + (reverse ? n - 1 - k : k)) * inner + i;
            T v = x[at];
            if (exclusive) y[at] = acc;
            acc = kProduct ? wrap_mul(acc, v) : wrap_add(acc, v);
            if (!exclusive) y[at] = acc;
          }
        }
    }
  });
}

schema::Attrs scan_attrs(int64_t axis, bool exclusive, bool reverse) {
  return schema::Attrs{{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}};
}

std::vector<schema::OpSample> scan_samples() {
  return {{{constant({1.5f, -2.f, 3.f, 0.5f})}, scan_attrs(0, false, false)},
          {{constant({{1.0, 2.0, -0.5}, {3.0, -1.5, 2.0}})}, scan_attrs(1, true, false)},
          {{constant({{1.0, 2.0, -0.5}, {3.0, -1.5, 2.0}})}, scan_attrs(0, false, true)},
          {{constant({{2.f, -1.f}, {0.5f, 4.f}})}, scan_attrs(-1, true, true)},
          {{constant({{1, 2, 3}, {4, 5, 6}})}, scan_attrs(1, false, false)}};
}

Tensor scan(const detail::OpDef& op, const Tensor& x, int64_t axis, bool exclusive, bool reverse,
            const SourceLocation& loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(op, in, scan_attrs(axis, exclusive, reverse), loc);
}

// The sum's gradient runs the other way: d y_j / d x_i is 1 for every j the
// sum of which x_i is part.
void cumsum_grad(schema::GradContext& c);
// TF's: for nonzero x, d/dx of a running product is the reversed running sum
// of g * y, divided by x (the samples have no zeros; TF has the same limit).
void cumprod_grad(schema::GradContext& c);

constexpr detail::OpDef kCumsum{.name = "Cumsum", .infer = scan_infer, .kernel = widened<scan_kernel<false>>,
                                .samples = scan_samples, .gradient = cumsum_grad};
constexpr detail::OpDef kCumprod{.name = "Cumprod", .infer = scan_infer, .kernel = widened<scan_kernel<true>>,
                                 .samples = scan_samples, .gradient = cumprod_grad};

void cumsum_grad(schema::GradContext& c) {
  c.set(0, scan(kCumsum, c.grad(0), c.attrs.get_int("axis"), c.attrs.get_bool("exclusive"),
                !c.attrs.get_bool("reverse"), SourceLocation()));
}
void cumprod_grad(schema::GradContext& c) {
  Tensor gy = c.grad(0) * c.outputs[0];
  c.set(0, scan(kCumsum, gy, c.attrs.get_int("axis"), c.attrs.get_bool("exclusive"), !c.attrs.get_bool("reverse"),
                SourceLocation()) /
               c.inputs[0]);
}

}  // namespace

void register_scan_ops(schema::OpRegistry& r) {
  r.add(kCumsum);
  r.add(kCumprod);
}

}  // namespace ops

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse, SourceLocation loc) {
  return ops::scan(ops::kCumsum, x, axis, exclusive, reverse, loc);
}
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse, SourceLocation loc) {
  return ops::scan(ops::kCumprod, x, axis, exclusive, reverse, loc);
}

}  // namespace kiln
