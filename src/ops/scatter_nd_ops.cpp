// Ops addressed by index tuples (TF's "nd" family): GatherNd,
// TensorScatterUpdate and TensorScatterAdd. The last dim of `indices` holds a
// tuple of K indices into the first K dims of the tensor; each tuple names a
// slice of the remaining dims. scatter_nd is TensorScatterAdd into zeros.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kiln/array.h"
#include "kiln/tensor.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

// The geometry of one call: `count` tuples of `depth` indices (depth <= the
// tensor's rank, checked at inference), each naming a slice of `slice`
// elements; `strides[k]` elements per step of dim k. No heap: a kernel call
// makes one.
struct NdGeometry {
  int64_t count = 0, depth = 0, slice = 1;
  int64_t strides[Shape::kMaxRank] = {};
};

NdGeometry nd_geometry(const Shape& tensor, const Shape& indices) {
  NdGeometry g;
  g.depth = indices[indices.rank() - 1];
  g.count = dims_product(indices, 0, indices.rank() - 1);
  g.slice = dims_product(tensor, static_cast<int>(g.depth), tensor.rank());
  int64_t stride = g.slice;
  for (int k = static_cast<int>(g.depth) - 1; k >= 0; --k) {
    g.strides[k] = stride;
    stride *= tensor[k];
  }
  return g;
}

// The element offset of each tuple's slice; a tuple outside the tensor is
// InvalidArgument naming it, as TF's "indices[1] = [5, 0] does not index into
// param shape [3, 2]".
std::vector<int64_t> slice_offsets(const Tensor& indices, const NdGeometry& g, const Shape& tensor,
                                   std::string_view op_name) {
  std::vector<int64_t> offsets(static_cast<std::size_t>(g.count));
  visit_index(indices.dtype(), [&]<class I>() {
    const I* idx = core::data_of<I>(indices);
    for (int64_t i = 0; i < g.count; ++i) {
      int64_t offset = 0;
      for (int64_t k = 0; k < g.depth; ++k) {
        int64_t v = idx[i * g.depth + k];
        if (v < 0 || v >= tensor[static_cast<int>(k)]) {
          std::vector<int64_t> tuple(idx + i * g.depth, idx + (i + 1) * g.depth);
          Shape rows(std::vector<int64_t>(indices.shape().begin(), indices.shape().end() - 1));
          std::vector<int64_t> at(static_cast<std::size_t>(std::max(rows.rank(), 0)));
          for (int64_t r = i, d = rows.rank() - 1; d >= 0; --d) {
            at[d] = r % rows[static_cast<int>(d)];
            r /= rows[static_cast<int>(d)];
          }
          std::string where = ints_to_string(at);
          throw InvalidArgument(fmt::format("{}: indices[{}] = {} does not index into shape {}", op_name,
                                            where.substr(1, where.size() - 2), ints_to_string(tuple),
                                            tensor.to_string()));
        }
        offset += v * g.strides[k];
      }
      offsets[i] = offset;
    }
  });
  return offsets;
}

// Indices of int type whose last dim (the tuple) fits the tensor's rank.
// Returns false when the shapes are not known enough to check more.
bool check_indices(schema::InferContext& c, int tensor_input, int indices_input, const char* tensor_name) {
  if (!is_index_dtype(c.dtype(indices_input)))
    c.fail("indices must be int32 or int64, got {}", dtype_name(c.dtype(indices_input)));
  const Shape& t = c.shape(tensor_input);
  const Shape& idx = c.shape(indices_input);
  if (!t.has_known_rank() || !idx.has_known_rank()) return false;
  if (idx.rank() < 1) c.fail("indices must have rank >= 1, got a scalar");
  int64_t depth = idx[idx.rank() - 1];
  if (depth < 0) return false;
  if (depth > t.rank())
    c.fail("indices.shape[-1] must be <= {}.rank, got indices.shape[-1] = {} and {}.shape = {}", tensor_name,
           depth, tensor_name, t.to_string());
  return true;
}

// indices.shape[:-1] + tensor.shape[K:], the shape of the gathered slices
// (and of a scatter's updates).
Shape slices_shape(const Shape& tensor, const Shape& indices) {
  Shape out(std::vector<int64_t>(indices.begin(), indices.end() - 1));
  for (int k = static_cast<int>(indices[indices.rank() - 1]); k < tensor.rank(); ++k) out.push_back(tensor[k]);
  return out;
}

// ---- GatherNd(params, indices) ----------------------------------------------
void gather_nd_infer(schema::InferContext& c) {
  if (!check_indices(c, 0, 1, "params")) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  Shape out = slices_shape(c.shape(0), c.shape(1));
  if (out.rank() > Shape::kMaxRank)
    c.fail("the result would have rank {}, more than Kiln supports", out.rank());
  c.add_output(c.dtype(0), out);
}

void gather_nd_kernel(schema::KernelContext& c) {
  NdGeometry g = nd_geometry(c.in_shape(0), c.in_shape(1));
  std::vector<int64_t> offsets = slice_offsets(c.inputs[1], g, c.in_shape(0), "GatherNd");
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    const E* params = c.in<E>(0);
    E* out = c.out<E>(0);
    core::parallel_for(
        g.count,
        [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) std::copy_n(params + offsets[i], g.slice, out + i * g.slice);
        },
        std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, g.slice)));
  });
}

std::vector<schema::OpSample> gather_nd_samples() {
  return {
      {{constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), constant({{2, 1}, {0, 0}, {2, 1}})}, schema::Attrs{}},
      {{constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}), constant({{{int64_t(1)}}, {{int64_t(0)}}})}, schema::Attrs{}},
      {{constant({{{1.0, 2.0}, {3.0, 4.0}}, {{5.0, 6.0}, {7.0, 8.0}}}), constant({{1, 0}, {0, 1}})}, schema::Attrs{}},
      {{constant({{1, 2}, {3, 4}}), constant({{1, 1}})}, schema::Attrs{}}};
}

void gather_nd_grad(schema::GradContext& c);

constexpr detail::OpDef kGatherNd{.name = "GatherNd", .infer = gather_nd_infer, .kernel = gather_nd_kernel,
                                  .samples = gather_nd_samples, .gradient = gather_nd_grad};

// ---- TensorScatterUpdate / TensorScatterAdd(tensor, indices, updates) -------
void tensor_scatter_infer(schema::InferContext& c) {
  if (c.dtype(0) != c.dtype(2))
    c.fail("tensor and updates must have the same dtype, got tensor: {} and updates: {}", dtype_name(c.dtype(0)),
           dtype_name(c.dtype(2)));
  if (check_indices(c, 0, 1, "tensor") && c.shape(2).has_known_rank()) {
    Shape expected = slices_shape(c.shape(0), c.shape(1));
    const Shape& updates = c.shape(2);
    bool match = updates.rank() == expected.rank();
    for (int k = 0; match && k < updates.rank(); ++k)
      match = updates[k] < 0 || expected[k] < 0 || updates[k] == expected[k];
    if (!match)
      c.fail("updates must have shape indices.shape[:-1] + tensor.shape[indices.shape[-1]:] = {}, got {} "
             "(tensor {}, indices {})",
             expected.to_string(), updates.to_string(), c.shape(0).to_string(), c.shape(1).to_string());
  }
  c.add_output(c.dtype(0), c.shape(0));
}

template <bool kAdd> void tensor_scatter_kernel(schema::KernelContext& c) {
  NdGeometry g = nd_geometry(c.in_shape(0), c.in_shape(1));
  std::vector<int64_t> offsets =
      slice_offsets(c.inputs[1], g, c.in_shape(0), kAdd ? "TensorScatterAdd" : "TensorScatterUpdate");
  // In tuple order, serially: two tuples may name one slice (the later
  // update wins, additions all count).
  auto scatter = [&]<class E>() {
    const E* updates = c.in<E>(2);
    E* out = c.out<E>(0);
    std::copy_n(c.in<E>(0), c.inputs[0].size(), out);
    for (int64_t i = 0; i < g.count; ++i) {
      const E* src = updates + i * g.slice;
      E* dst = out + offsets[i];
      if constexpr (kAdd) {
        for (int64_t j = 0; j < g.slice; ++j) dst[j] = static_cast<E>(dst[j] + src[j]);
      } else {
        std::copy_n(src, g.slice, dst);
      }
    }
  };
  if constexpr (kAdd) {
    core::visit_numeric(c.inputs[0].dtype(), scatter);
  } else {
    visit_element(c.inputs[0].dtype(), scatter);
  }
}

std::vector<schema::OpSample> tensor_scatter_samples() {
  return {{{constant({1.f, 2.f, 3.f, 4.f}), constant({{3}, {1}}), constant({10.f, -5.f})}, schema::Attrs{}},
          {{constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}), constant({{2}, {0}}), constant({{0.5, 1.5}, {-1.0, 2.0}})},
           schema::Attrs{}},
          {{constant({{1.0, 2.0}, {3.0, 4.0}}), constant({{0, 1}, {1, 0}}), constant({7.0, 8.0})}, schema::Attrs{}},
          {{constant({1, 2, 3}), constant({{0}, {2}}), constant({5, 6})}, schema::Attrs{}}};
}

void tensor_scatter_add_grad(schema::GradContext& c);
void tensor_scatter_update_grad(schema::GradContext& c);

constexpr detail::OpDef kTensorScatterAdd{.name = "TensorScatterAdd", .infer = tensor_scatter_infer,
                                          .kernel = tensor_scatter_kernel<true>, .samples = tensor_scatter_samples,
                                          .gradient = tensor_scatter_add_grad};
constexpr detail::OpDef kTensorScatterUpdate{.name = "TensorScatterUpdate", .infer = tensor_scatter_infer,
                                             .kernel = tensor_scatter_kernel<false>, .samples = tensor_scatter_samples,
                                             .gradient = tensor_scatter_update_grad};

Tensor call(const detail::OpDef& op, std::initializer_list<Tensor> inputs, const SourceLocation& loc) {
  return runtime::dispatch1(op, std::span<const Tensor>(inputs.begin(), inputs.size()), schema::Attrs{}, loc);
}

// The gathered slices' gradient lands back where they came from (a slice
// gathered twice gets both).
void gather_nd_grad(schema::GradContext& c) {
  if (c.needs(0))
    c.set(0, call(kTensorScatterAdd, {zeros_like(c.inputs[0]), c.inputs[1], c.grad(0)}, SourceLocation()));
}
void tensor_scatter_add_grad(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, c.grad(0));
  if (c.needs(2)) c.set(2, call(kGatherNd, {c.grad(0), c.inputs[1]}, SourceLocation()));
}
// As TF's: the overwritten slices pass no gradient to `tensor`.
void tensor_scatter_update_grad(schema::GradContext& c) {
  if (c.needs(0))
    c.set(0, call(kTensorScatterUpdate, {c.grad(0), c.inputs[1], zeros_like(c.inputs[2])}, SourceLocation()));
  if (c.needs(2)) c.set(2, call(kGatherNd, {c.grad(0), c.inputs[1]}, SourceLocation()));
}

}  // namespace

void register_scatter_nd_ops(schema::OpRegistry& r) {
  r.add(kGatherNd);
  r.add(kTensorScatterAdd);
  r.add(kTensorScatterUpdate);
}

}  // namespace ops

Tensor gather_nd(const Tensor& params, const Tensor& indices, SourceLocation loc) {
  return ops::call(ops::kGatherNd, {params, indices}, loc);
}
Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                SourceLocation loc) {
  return ops::call(ops::kTensorScatterUpdate, {tensor, indices, updates}, loc);
}
Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             SourceLocation loc) {
  return ops::call(ops::kTensorScatterAdd, {tensor, indices, updates}, loc);
}
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Shape& shape, SourceLocation loc) {
  return tensor_scatter_nd_add(zeros(shape, updates.dtype(), loc), indices, updates, loc);
}

}  // namespace kiln
