// Gradient-support ops of Concat and Tile for sizes known only when the graph
// runs: each takes the forward inputs as "like" tensors and reads their
// shapes at run time (as SumToShapeOf / ReshapeLike do in grad_ops.cpp).
//   SplitLike(g, like_0..like_{n-1}; axis): g cut along axis into n parts,
//     part i shaped like like_i. Its gradient is the Concat of the parts'.
//   TileGrad(g, x; multiples): g (x tiled) summed over the copies, shaped like
//     x. Linear; its gradient is the Tile of the upstream.
#include <algorithm>
#include <vector>

#include "kiln/array.h"
#include "ops/array_util.h"
#include "ops/grad_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

// ---- SplitLike ------------------------------------------------------------------
void split_like_infer(schema::InferContext& c) {
  if (c.num_inputs() < 2) c.fail("needs the tensor to split and at least one tensor to shape a part");
  const Shape& g = c.shape(0);
  int r = g.has_known_rank() ? g.rank() : -1;
  for (int i = 1; i < c.num_inputs() && r < 0; ++i)
    if (c.shape(i).has_known_rank()) r = c.shape(i).rank();
  if (r < 0) {
    for (int i = 1; i < c.num_inputs(); ++i) c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  int64_t axis = c.attrs().get_int("axis");
  int a = wrap_axis(axis, r);
  if (a < 0)
    c.fail("axis {} is out of range for rank {} (expected a value in [{}, {}))", axis, r, -r, r);
  int64_t total = 0;
  for (int i = 1; i < c.num_inputs(); ++i) {
    Shape part = c.shape(i);
    if (!part.has_known_rank()) {
      part = g;
      part[a] = -1;
    } else if (part.rank() != r) {
      c.fail("part {} has shape {} but the tensor to split has rank {}", i - 1, part.to_string(), r);
    }
    for (int k = 0; k < r && g.has_known_rank(); ++k) {
      if (k == a) continue;
      if (part[k] >= 0 && g[k] >= 0 && part[k] != g[k])
        c.fail("part {} has shape {} but the tensor to split has shape {}: dims other than axis {} must match",
               i - 1, c.shape(i).to_string(), g.to_string(), axis);
      if (part[k] < 0) part[k] = g[k];
    }
    total = total < 0 || part[a] < 0 ? -1 : total + part[a];
    c.add_output(c.dtype(0), part);
  }
  if (g.has_known_rank() && g[a] >= 0 && total >= 0 && total != g[a])
    c.fail("the parts' sizes along axis {} add up to {} but the tensor to split has shape {}", axis, total,
           g.to_string());
}

void split_like_kernel(schema::KernelContext& c) {
  const Shape& g = c.in_shape(0);
  int a = wrap_axis(c.attrs.get_int("axis"), g.rank());
  copy_parts(c.inputs[0], c.outputs, dims_product(g, 0, a), false);
}

std::vector<schema::OpSample> split_like_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), constant({{0.f}, {0.f}}),
            constant({{0.f, 0.f}, {0.f, 0.f}})},
           schema::Attrs{{"axis", int64_t(-1)}}},
          {{constant({{1, 2}, {3, 4}, {5, 6}}), constant({{0, 0}, {0, 0}}), constant({{0, 0}})},
           schema::Attrs{{"axis", int64_t(0)}}}};
}

// The like tensors give shapes only: no gradient.
void split_like_gradient(schema::GradContext& c) {
  c.set(0, concat(c.all_grads_or_zeros(), c.attrs.get_int("axis")));
}

constexpr detail::OpDef kSplitLike{.name = "SplitLike", .infer = split_like_infer, .kernel = split_like_kernel,
                                   .samples = split_like_samples, .gradient = split_like_gradient};

// ---- TileGrad -------------------------------------------------------------------
void tile_grad_infer(schema::InferContext& c) {
  if (!is_floating(c.dtype(0))) c.fail("the gradient must be float32 or float64, got {}", dtype_name(c.dtype(0)));
  const Shape& g = c.shape(0);
  const std::vector<int64_t>& m = c.attrs().get_ints("multiples");
  int r = static_cast<int>(m.size());
  Shape x = c.shape(1).has_known_rank() ? c.shape(1) : Shape(std::vector<int64_t>(m.size(), -1));
  if (x.rank() != r || (g.has_known_rank() && g.rank() != r))
    c.fail("multiples {} must have one entry per dim of the input (shape {}) and of the gradient (shape {})",
           ints_to_string(m), c.shape(1).to_string(), g.to_string());
  for (int k = 0; k < r && g.has_known_rank(); ++k) {
    if (g[k] < 0) continue;
    if (x[k] >= 0 ? g[k] != x[k] * m[k] : m[k] == 0 && g[k] != 0)
      c.fail("a gradient of shape {} does not match the input of shape {} tiled by {}", g.to_string(),
             c.shape(1).to_string(), ints_to_string(m));
    if (x[k] < 0 && m[k] > 0) {
      if (g[k] % m[k] != 0)
        c.fail("dim {} of the gradient's shape {} is not a multiple of {}", k, g.to_string(), m[k]);
      x[k] = g[k] / m[k];
    }
  }
  c.add_output(c.dtype(0), x);
}

// Serial: the copies of one input row add into the same output elements.
template <class T> void sum_copies(const T* g, const Shape& gs, T* out, const Shape& xs) {
  std::fill_n(out, xs.num_elements(), T(0));
  int64_t n = gs.num_elements();
  if (n == 0) return;
  int r = xs.rank();
  if (r == 0) {
    out[0] = g[0];
    return;
  }
  int64_t in_cols = xs[r - 1], out_cols = gs[r - 1];
  for (int64_t row = 0; row < n / out_cols; ++row) {
    T* dst = out + tiled_row_source(row, xs, gs);
    for (const T* src = g + row * out_cols; src < g + (row + 1) * out_cols; src += in_cols)
      for (int64_t j = 0; j < in_cols; ++j) dst[j] += src[j];
  }
}

void tile_grad_kernel(schema::KernelContext& c) {
  if (c.inputs[0].dtype() == DType::Float32)
    sum_copies(c.in<float>(0), c.in_shape(0), c.out<float>(0), c.out_shape(0));
  else
    sum_copies(c.in<double>(0), c.in_shape(0), c.out<double>(0), c.out_shape(0));
}

std::vector<schema::OpSample> tile_grad_samples() {
  return {
      {{constant({{1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {7.f, 8.f, 9.f, 10.f, 11.f, 12.f}}), constant({{0.f, 0.f}})},
       schema::Attrs{{"multiples", std::vector<int64_t>{2, 3}}}},
      {{constant({1.0, 2.0, 3.0, 4.0}), constant({0.0, 0.0})}, schema::Attrs{{"multiples", std::vector<int64_t>{2}}}}};
}

// x gives a shape only: no gradient.
void tile_grad_gradient(schema::GradContext& c) {
  c.set(0, tile(c.grad_or_zeros(0), c.attrs.get_ints("multiples")));
}

constexpr detail::OpDef kTileGrad{.name = "TileGrad", .infer = tile_grad_infer, .kernel = tile_grad_kernel,
                                  .samples = tile_grad_samples, .gradient = tile_grad_gradient};

}  // namespace

std::vector<Tensor> split_like(const Tensor& g, std::span<const Tensor> likes, int64_t axis) {
  std::vector<Tensor> in{g};
  in.insert(in.end(), likes.begin(), likes.end());
  runtime::TensorList out = runtime::dispatch(kSplitLike, in, schema::Attrs{{"axis", axis}}, SourceLocation());
  return std::vector<Tensor>(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}

Tensor tile_grad_like(const Tensor& g, const Tensor& x, const std::vector<int64_t>& multiples) {
  const Tensor in[] = {g, x};
  return runtime::dispatch1(kTileGrad, in, schema::Attrs{{"multiples", multiples}}, SourceLocation());
}

void register_join_grad_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kSplitLike, &kTileGrad}) r.add(*op);
}

}  // namespace ops
}  // namespace kiln
