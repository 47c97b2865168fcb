// Ops indexed by integer tensors: Gather, OneHot.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kiln/array.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "ops/known_ops.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {


// "[1, 2]": the position of flat element `i` of a tensor of `shape`.
std::string position(const Shape& shape, int64_t i) {
  std::vector<int64_t> coord(static_cast<std::size_t>(std::max(shape.rank(), 0)));
  for (int k = shape.rank() - 1; k >= 0; --k) {
    coord[k] = shape[k] > 0 ? i % shape[k] : 0;
    i = shape[k] > 0 ? i / shape[k] : 0;
  }
  std::string s = ints_to_string(coord);
  return s.substr(1, s.size() - 2);
}

// ---- Gather -----------------------------------------------------------------
void gather_infer(schema::InferContext& c) {
  const Shape& params = c.shape(0);
  const Shape& indices = c.shape(1);
  if (!is_index_dtype(c.dtype(1)))
    c.fail("indices must be int32 or int64, got {}", dtype_name(c.dtype(1)));
  int64_t axis = c.attrs().get_int("axis");
  if (!params.has_known_rank() || !indices.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  int r = params.rank();
  if (r == 0) c.fail("params must have rank >= 1, got a scalar");
  int a = wrap_axis(axis, r);
  if (a < 0)
    c.fail("axis {} is out of range for params of rank {} (expected a value in [{}, {}))", axis, r,
           -r, r);
  if (r - 1 + indices.rank() > Shape::kMaxRank)
    c.fail("the result of params {} and indices {} would have rank {}, more than Kiln supports",
           params.to_string(), indices.to_string(), r - 1 + indices.rank());
  // Indices known now (always in eager code) are checked here; in a graph,
  // where they come at run time, the kernel checks them before its parallel
  // loop (and the executor adds the user's source line).
  int64_t limit = params[a];
  if (const Tensor* v = c.value(1); v && limit >= 0) {
    visit_index(v->dtype(), [&]<class I>() {
      const I* idx = core::data_of<I>(*v);
      for (int64_t i = 0, n = v->size(); i < n; ++i)
        if (idx[i] < 0 || idx[i] >= limit)
          c.fail("indices[{}] = {} is not in [0, {}) (axis {} of params shape {})",
                 position(indices, i), static_cast<int64_t>(idx[i]), limit, axis,
                 params.to_string());
    });
  }
  Shape out;
  for (int k = 0; k < a; ++k) out.push_back(params[k]);
  for (int64_t d : indices) out.push_back(d);
  for (int k = a + 1; k < r; ++k) out.push_back(params[k]);
  c.add_output(c.dtype(0), out);
}

void gather_kernel(schema::KernelContext& c) {
  const Shape& ps = c.in_shape(0);
  int a = wrap_axis(c.attrs.get_int("axis"), ps.rank());
  int64_t outer = dims_product(ps, 0, a), limit = ps[a], inner = dims_product(ps, a + 1, ps.rank());
  int64_t count = c.inputs[1].size();
  if (c.outputs[0].size() == 0) return;
  visit_index(c.inputs[1].dtype(), [&]<class I>() {
    const I* idx = c.in<I>(1);
    for (int64_t k = 0; k < count; ++k)
      if (idx[k] < 0 || idx[k] >= limit)
        throw InvalidArgument(fmt::format("Gather: indices[{}] = {} is not in [0, {}) (axis {} of params shape {})",
                                          position(c.in_shape(1), k), static_cast<int64_t>(idx[k]), limit, a,
                                          ps.to_string()));
  });
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    visit_index(c.inputs[1].dtype(), [&]<class I>() {
      const E* params = c.in<E>(0);
      const I* idx = c.in<I>(1);
      E* out = c.out<E>(0);
      core::parallel_for(
          outer * count,
          [&](int64_t b, int64_t e) {
            for (int64_t row = b; row < e; ++row) {
              int64_t o = row / count, i = idx[row % count];
              E* dst = out + row * inner;
              std::copy_n(params + (o * limit + i) * inner, inner, dst);
            }
          },
          std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, inner)));
    });
  });
}

std::vector<schema::OpSample> gather_samples() {
  return {{{constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), constant({2, 0, 2})},
           schema::Attrs{{"axis", int64_t(0)}}},
          {{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), constant({{int64_t(1)}, {int64_t(0)}})},
           schema::Attrs{{"axis", int64_t(1)}}}};
}

void gather_grad(schema::GradContext& c);

constexpr detail::OpDef kGather{.name = "Gather", .infer = gather_infer, .kernel = gather_kernel,
                                .flags = schema::kShapeFromShapes, .samples = gather_samples, .gradient = gather_grad};

// ---- GatherGrad(dy, indices, params): the gradient of Gather (same attrs) --------
// Zeros shaped like params, with each row of dy added where Gather took it
// (an index taken twice gets both rows).
void gather_grad_infer(schema::InferContext& c) {
  if (c.dtype(0) != c.dtype(2))
    c.fail("dy has dtype {} but params has dtype {}", dtype_name(c.dtype(0)), dtype_name(c.dtype(2)));
  if (!is_floating(c.dtype(0))) c.fail("dy must be float32 or float64, got {}", dtype_name(c.dtype(0)));
  if (!is_index_dtype(c.dtype(1))) c.fail("indices must be int32 or int64, got {}", dtype_name(c.dtype(1)));
  c.add_output(c.dtype(2), c.shape(2));
}

template <class E, class I>
void scatter_add_rows(const E* dy, const I* idx, int64_t count, int64_t outer, int64_t limit, int64_t inner,
                      E* dx) {
  std::fill(dx, dx + outer * limit * inner, E(0));
  // Parallel over `outer` only: rows of one outer block may collide.
  core::parallel_for(
      outer,
      [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          for (int64_t k = 0; k < count; ++k) {
            const E* src = dy + (o * count + k) * inner;
            E* dst = dx + (o * limit + static_cast<int64_t>(idx[k])) * inner;
            for (int64_t j = 0; j < inner; ++j) dst[j] += src[j];
          }
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, count * inner)));
}

void gather_grad_kernel(schema::KernelContext& c) {
  const Shape& ps = c.in_shape(2);
  int a = wrap_axis(c.attrs.get_int("axis"), ps.rank());
  int64_t outer = dims_product(ps, 0, a), limit = ps[a], inner = dims_product(ps, a + 1, ps.rank());
  int64_t count = c.inputs[1].size();
  if (c.inputs[0].size() != outer * count * inner)
    throw InvalidArgument(fmt::format("GatherGrad: dy has shape {}, not the shape Gather gives for params {} and "
                                      "indices {}", c.in_shape(0).to_string(), ps.to_string(),
                                      c.in_shape(1).to_string()));
  visit_index(c.inputs[1].dtype(), [&]<class I>() {
    const I* idx = c.in<I>(1);
    for (int64_t k = 0; k < count; ++k)
      if (idx[k] < 0 || idx[k] >= limit)
        throw InvalidArgument(fmt::format("GatherGrad: indices[{}] = {} is not in [0, {})",
                                          position(c.in_shape(1), k), static_cast<int64_t>(idx[k]), limit));
    if (c.inputs[0].dtype() == DType::Float32)
      scatter_add_rows(c.in<float>(0), idx, count, outer, limit, inner, c.out<float>(0));
    else
      scatter_add_rows(c.in<double>(0), idx, count, outer, limit, inner, c.out<double>(0));
  });
}

void gather_grad_grad(schema::GradContext& c) {
  if (!c.needs(0)) return;
  const Tensor in[] = {c.grad_or_zeros(0), c.inputs[1]};
  c.set(0, runtime::dispatch1(kGather, in, schema::Attrs(c.attrs), SourceLocation()));
}

std::vector<schema::OpSample> gather_grad_samples() {
  return {{{constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), constant({2, 0, 2}),
            constant({{0.f, 0.f}, {0.f, 0.f}, {0.f, 0.f}})},
           schema::Attrs{{"axis", int64_t(0)}}},
          {{constant({{1.0, 2.0}, {3.0, 4.0}}), constant({1, 1}), constant({{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}})},
           schema::Attrs{{"axis", int64_t(1)}}}};
}

constexpr detail::OpDef kGatherGrad{.name = "GatherGrad", .infer = gather_grad_infer, .kernel = widened<gather_grad_kernel>,
                                    .samples = gather_grad_samples, .gradient = gather_grad_grad};

void gather_grad(schema::GradContext& c) {
  if (!c.needs(0)) return;
  const Tensor in[] = {c.grad(0), c.inputs[1], c.inputs[0]};
  c.set(0, runtime::dispatch1(kGatherGrad, in, schema::Attrs(c.attrs), SourceLocation()));
}

// ---- OneHot -----------------------------------------------------------------
void one_hot_infer(schema::InferContext& c) {
  DType id = c.dtype(0);
  if (!is_index_dtype(id) && id != DType::UInt8)
    c.fail("indices must be int32, int64 or uint8, got {}", dtype_name(id));
  int64_t depth = c.attrs().get_int("depth"), axis = c.attrs().get_int("axis");
  const Tensor& on = c.attrs().get<Tensor>("on_value");
  const Tensor& off = c.attrs().get<Tensor>("off_value");
  if (on.dtype() != off.dtype())
    c.fail("on_value is {} but off_value is {}", dtype_name(on.dtype()), dtype_name(off.dtype()));
  if (depth < 0) c.fail("depth must not be negative, got {}", depth);
  const Shape& in = c.shape(0);
  if (!in.has_known_rank()) {
    c.add_output(on.dtype(), Shape::unknown_rank());
    return;
  }
  int r = in.rank();
  if (axis < -1 || axis > r)
    c.fail("axis {} is out of range for indices of rank {} (expected -1 or a value in [0, {}])",
           axis, r, r);
  if (r >= Shape::kMaxRank)
    c.fail("indices of shape {} already have the largest rank Kiln supports ({})", in.to_string(),
           Shape::kMaxRank);
  Shape s = in;
  s.insert(axis < 0 ? r : static_cast<int>(axis), depth);
  c.add_output(on.dtype(), s);
}

void one_hot_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  int64_t depth = c.attrs.get_int("depth"), axis = c.attrs.get_int("axis");
  int a = axis < 0 ? in.rank() : static_cast<int>(axis);
  int64_t outer = dims_product(in, 0, a), inner = dims_product(in, a, in.rank());
  int64_t n_out = c.outputs[0].size();
  visit_element(c.outputs[0].dtype(), [&]<class E>() {
    E on = *core::data_of<E>(c.attrs.get<Tensor>("on_value"));
    E off = *core::data_of<E>(c.attrs.get<Tensor>("off_value"));
    E* out = c.out<E>(0);
    core::parallel_for(n_out, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, off); });
    core::visit_numeric(c.inputs[0].dtype(), [&]<class I>() {
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        const I* idx = c.in<I>(0);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t v = static_cast<int64_t>(idx[o * inner + i]);
            if (v >= 0 && v < depth) out[(o * depth + v) * inner + i] = on;
          }
      }
    });
  });
}

std::vector<schema::OpSample> one_hot_samples() {
  return {{{constant({0, 2, 1})},
           schema::Attrs{{"depth", int64_t(3)}, {"axis", int64_t(-1)},
                         {"on_value", make_scalar(1, DType::Float32)},
                         {"off_value", make_scalar(0, DType::Float32)}}},
          {{constant({{1, 0}, {3, 1}})},
           schema::Attrs{{"depth", int64_t(2)}, {"axis", int64_t(0)},
                         {"on_value", make_scalar(5, DType::Int32)},
                         {"off_value", make_scalar(-1, DType::Int32)}}}};
}

constexpr detail::OpDef kOneHot{.name = "OneHot", .infer = one_hot_infer, .kernel = one_hot_kernel,
                                .flags = schema::kNotDifferentiable, .samples = one_hot_samples};

}  // namespace

void register_gather_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kGather, &kGatherGrad, &kOneHot}) r.add(*op);
}

const detail::OpDef& gather_grad_op() { return kGatherGrad; }

}  // namespace ops

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, SourceLocation loc) {
  const Tensor in[] = {params, indices};
  return runtime::dispatch1(ops::kGather, in, schema::Attrs{{"axis", axis}}, loc);
}

Tensor one_hot(const Tensor& indices, int64_t depth, const Scalar& on, const Scalar& off,
               int64_t axis, DType dtype, SourceLocation loc) {
  runtime::check_representable(on, dtype, "OneHot");
  runtime::check_representable(off, dtype, "OneHot");
  const Tensor in[] = {indices};
  schema::Attrs attrs{{"depth", depth}, {"axis", axis}};
  attrs.set("on_value", ops::make_scalar(on, dtype));
  attrs.set("off_value", ops::make_scalar(off, dtype));
  return runtime::dispatch1(ops::kOneHot, in, std::move(attrs), loc);
}

}  // namespace kiln
