// The ops gradients are made of beyond the public ones: StopGradient (the
// identity, not differentiated), SumToShapeOf / BroadcastLike (the two
// directions of broadcasting, taking the target shape from a tensor so
// unknown dims resolve at run time) and ReshapeLike.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "kiln/gradient.h"
#include "ops/broadcast.h"
#include "ops/grad_util.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

// ---- StopGradient ---------------------------------------------------------------
void identity_infer(schema::InferContext& c) { c.add_output(c.dtype(0), c.shape(0)); }
// A new tensor over the same buffer: tapes tell tensors apart by identity.
void forward_kernel(schema::KernelContext& c) {
  c.outputs[0] = core::make_tensor_view(c.inputs[0].dtype(), c.in_shape(0), c.inputs[0].impl()->buffer);
}
std::vector<schema::OpSample> stop_gradient_samples() { return {{{constant({1.f, -2.f})}, {}}}; }
constexpr detail::OpDef kStopGradient{.name = "StopGradient", .infer = identity_infer, .kernel = forward_kernel,
                                      .flags = schema::kSetsOwnOutputs | schema::kNotDifferentiable,
                                      .samples = stop_gradient_samples};

// ---- SumToShapeOf(g, x) ---------------------------------------------------------
void sum_to_infer(schema::InferContext& c) {
  if (!is_floating(c.dtype(0))) c.fail("the gradient must be float32 or float64, got {}", dtype_name(c.dtype(0)));
  Shape joined;
  if (!broadcast_shapes(c.shape(0), c.shape(1), &joined))
    c.fail("shape {} does not broadcast from {}", c.shape(0).to_string(), c.shape(1).to_string());
  c.add_output(c.dtype(0), c.shape(1));
}

// Columns [begin, begin + width) of the sum of `rows` rows of g (`inner`
// values each) into acc, each column from 0 in row order: the serial loop's
// bits.
template <class T>
void sum_columns(T* __restrict acc, const T* g, int64_t rows, int64_t inner, int64_t begin, int64_t width) {
  std::fill(acc, acc + width, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    const T* __restrict row = g + r * inner + begin;
    for (int64_t i = 0; i < width; ++i) acc[i] += row[i];
  }
}

template <class T> void sum_to(const T* g, const Shape& g_shape, T* out, const Shape& out_shape) {
  std::fill(out, out + out_shape.num_elements(), T(0));
  BroadcastPlan p = make_broadcast_plan(g_shape, {&out_shape});
  // Serial: several rows of g add into the same output elements.
  const int outer_rank = p.rank - 1;
  int64_t rows = 1;
  for (int d = 0; d < outer_rank; ++d) rows *= p.dims[d];
  const int64_t inner = p.inner(), step = p.inner_stride(0);
  if (step != 0 && out_shape.num_elements() == inner && inner >= 32 && rows * inner > core::kParallelGrain) {
    // Every row adds into the one output row (a bias gradient): the columns
    // are independent, so the threads take bands of at least 16 columns (a
    // cache line of float32 each). A narrow band sums on the stack and
    // stores once: storing into `out` on every row made the two threads'
    // neighbouring output lines bounce between the cores, so two threads ran
    // slower than one (figures in docs/perf-log.md, "From code comments"). A
    // wide one shares at most its edge lines and sums in place.
    core::parallel_for(
        inner,
        [&](int64_t begin, int64_t end) {
          constexpr int64_t kStackWidth = 64;
          const int64_t width = end - begin;
          T stack[kStackWidth];
          T* acc = width <= kStackWidth ? stack : out + begin;
          sum_columns(acc, g, rows, inner, begin, width);
          if (acc == stack) std::copy(acc, acc + width, out + begin);
        },
        16);
    return;
  }
  int64_t index[Shape::kMaxRank] = {};
  int64_t offset = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = g + r * inner;
    if (step == 0) {
      T acc = 0;
      for (int64_t i = 0; i < inner; ++i) acc += row[i];
      out[offset] += acc;
    } else {
      for (int64_t i = 0; i < inner; ++i) out[offset + i] += row[i];
    }
    for (int d = outer_rank - 1; d >= 0; --d) {
      if (++index[d] < p.dims[d]) {
        offset += p.strides[0][d];
        break;
      }
      index[d] = 0;
      offset -= (p.dims[d] - 1) * p.strides[0][d];
    }
  }
}

void sum_to_kernel(schema::KernelContext& c) {
  if (c.inputs[0].dtype() == DType::Float32)
    sum_to(c.in<float>(0), c.in_shape(0), c.out<float>(0), c.out_shape(0));
  else
    sum_to(c.in<double>(0), c.in_shape(0), c.out<double>(0), c.out_shape(0));
}

void sum_to_gradient(schema::GradContext& c) { c.set(0, broadcast_like(c.grad_or_zeros(0), c.inputs[0])); }

std::vector<schema::OpSample> sum_to_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), constant({0.f, 0.f, 0.f})}, {}},
          {{constant({{1.0, 2.0}, {3.0, 4.0}}), constant({{0.0}, {0.0}})}, {}}};
}

constexpr detail::OpDef kSumToShapeOf{.name = "SumToShapeOf", .infer = sum_to_infer, .kernel = widened<sum_to_kernel>,
                                      .samples = sum_to_samples, .gradient = sum_to_gradient};

// ---- BroadcastLike(t, x) --------------------------------------------------------
void broadcast_like_infer(schema::InferContext& c) {
  // The kernel copies raw element bytes.
  if (c.dtype(0) == DType::String || c.dtype(0) == DType::Resource)
    c.fail("t must be a numeric or bool tensor, got {}", dtype_name(c.dtype(0)));
  Shape joined;
  if (!broadcast_shapes(c.shape(0), c.shape(1), &joined))
    c.fail("shape {} does not broadcast to {}", c.shape(0).to_string(), c.shape(1).to_string());
  c.add_output(c.dtype(0), c.shape(1));
}

// n copies of one element of `size` bytes.
void fill_elements(char* out, const char* element, std::size_t size, int64_t n) {
  auto fill = [&]<class T>() {
    T v;
    std::memcpy(&v, element, sizeof(T));
    std::fill_n(reinterpret_cast<T*>(out), n, v);
  };
  switch (size) {
    case 1: std::memset(out, *element, static_cast<std::size_t>(n)); break;
    case 4: fill.template operator()<uint32_t>(); break;
    case 8: fill.template operator()<uint64_t>(); break;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * size, element, size);
  }
}

void broadcast_like_kernel(schema::KernelContext& c) {
  const Shape& in_shape = c.in_shape(0);
  BroadcastPlan p = make_broadcast_plan(c.out_shape(0), {&in_shape});
  std::size_t size = dtype_size(c.inputs[0].dtype());
  const char* in = static_cast<const char*>(core::raw_data(c.inputs[0]));
  char* out = static_cast<char*>(core::raw_data(c.outputs[0]));
  for_each_row(p, core::kParallelGrain, [&](const int64_t* offsets, int64_t out_offset, int64_t n) {
    if (p.inner_stride(0) == 0) {
      fill_elements(out + out_offset * size, in + offsets[0] * size, size, n);
    } else {
      std::memcpy(out + out_offset * size, in + offsets[0] * size, static_cast<std::size_t>(n) * size);
    }
  });
}

void broadcast_like_gradient(schema::GradContext& c) { c.set(0, sum_to_shape_of(c.grad_or_zeros(0), c.inputs[0])); }

std::vector<schema::OpSample> broadcast_like_samples() {
  return {{{constant({1.f, 2.f, 3.f}), constant({{0.f, 0.f, 0.f}, {0.f, 0.f, 0.f}})}, {}},
          {{constant({{1.0}, {2.0}}), constant({{0.0, 0.0}, {0.0, 0.0}})}, {}}};
}

constexpr detail::OpDef kBroadcastLike{.name = "BroadcastLike", .infer = broadcast_like_infer,
                                       .kernel = broadcast_like_kernel, .samples = broadcast_like_samples,
                                       .gradient = broadcast_like_gradient};

// ---- ReshapeLike(t, x) ----------------------------------------------------------
void reshape_like_infer(schema::InferContext& c) {
  int64_t n = c.shape(0).num_elements(), m = c.shape(1).num_elements();
  if (n >= 0 && m >= 0 && n != m)
    c.fail("cannot reshape {} elements (shape {}) to shape {}", n, c.shape(0).to_string(), c.shape(1).to_string());
  c.add_output(c.dtype(0), c.shape(1));
}

void reshape_like_kernel(schema::KernelContext& c) {
  if (c.inputs[0].size() != c.inputs[1].size())
    throw InvalidArgument(fmt::format("ReshapeLike: cannot reshape shape {} to shape {}",
                                      c.in_shape(0).to_string(), c.in_shape(1).to_string()));
  c.outputs[0] = core::make_tensor_view(c.inputs[0].dtype(), c.in_shape(1), c.inputs[0].impl()->buffer);
}

void reshape_like_gradient(schema::GradContext& c) { c.set(0, reshape_like(c.grad_or_zeros(0), c.inputs[0])); }

std::vector<schema::OpSample> reshape_like_samples() {
  return {{{constant({1.f, 2.f, 3.f, 4.f}), constant({{0.f, 0.f}, {0.f, 0.f}})}, {}}};
}

constexpr detail::OpDef kReshapeLike{.name = "ReshapeLike", .infer = reshape_like_infer, .kernel = reshape_like_kernel,
                                     .flags = schema::kSetsOwnOutputs, .samples = reshape_like_samples,
                                     .gradient = reshape_like_gradient};

Tensor apply2(const detail::OpDef& op, const Tensor& a, const Tensor& b) {
  const Tensor in[] = {a, b};
  return runtime::dispatch1(op, in, schema::Attrs{}, SourceLocation());
}

}  // namespace

Tensor sum_to_shape_of(const Tensor& g, const Tensor& x) {
  if (g.shape().is_fully_defined() && g.shape() == x.shape()) return g;
  return apply2(kSumToShapeOf, g, x);
}
Tensor broadcast_like(const Tensor& t, const Tensor& x) {
  if (t.shape().is_fully_defined() && t.shape() == x.shape()) return t;
  return apply2(kBroadcastLike, t, x);
}
Tensor reshape_like(const Tensor& t, const Tensor& x) {
  if (t.shape().is_fully_defined() && t.shape() == x.shape()) return t;
  return apply2(kReshapeLike, t, x);
}

}  // namespace ops

// GradContext (src/schema) needs zeros_like, an op: defined here, in kiln, which encloses
// kiln::schema.
Tensor schema::GradContext::grad_or_zeros(int i) const {
  const Tensor& g = grads[static_cast<size_t>(i)];
  return g.defined() ? g : zeros_like(outputs[static_cast<size_t>(i)]);
}

std::vector<Tensor> schema::GradContext::all_grads_or_zeros() const {
  std::vector<Tensor> all;
  all.reserve(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) all.push_back(grad_or_zeros(static_cast<int>(i)));
  return all;
}

namespace ops {

void register_grad_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kStopGradient, &kSumToShapeOf, &kBroadcastLike, &kReshapeLike}) r.add(*op);
}

const detail::OpDef& sum_to_shape_of_op() { return kSumToShapeOf; }

void sum_rows(DType dtype, const void* g, int64_t rows, int64_t cols, void* out) {
  const Shape from{rows, cols}, to{cols};
  if (dtype == DType::Float32)
    sum_to(static_cast<const float*>(g), from, static_cast<float*>(out), to);
  else
    sum_to(static_cast<const double*>(g), from, static_cast<double*>(out), to);
}

}  // namespace ops

Tensor stop_gradient(Tensor x, SourceLocation loc) {
  const Tensor in[] = {std::move(x)};
  return runtime::dispatch1(ops::kStopGradient, in, schema::Attrs{}, loc);
}

}  // namespace kiln
