// Ops that join, split or repeat tensors: Concat, Pack (stack), Unpack
// (unstack), Split, Tile, Pad. Their gradient-support ops are in join_grad_ops.cpp.
#include <algorithm>
#include <vector>

#include "kiln/reduce.h"
#include "core/parallel.h"
#include "kiln/array.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "ops/grad_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

void copy_parts(const Tensor& whole, std::span<const Tensor> parts, int64_t outer, bool to_whole) {
  if (outer == 0 || whole.size() == 0) return;
  visit_element(whole.dtype(), [&]<class E>() {
    int64_t whole_row = whole.size() / outer;
    E* base = core::data_of<E>(whole);
    core::parallel_for(
        outer,
        [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            E* row = base + o * whole_row;
            for (const Tensor& part : parts) {
              int64_t len = part.size() / outer;
              E* p = core::data_of<E>(part) + o * len;
              if (to_whole)
                std::copy_n(p, len, row);
              else
                std::copy_n(row, len, p);
              row += len;
            }
          }
        },
        std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, whole_row)));
  });
}

namespace {

void check_same_dtypes(const schema::InferContext& c) {
  if (c.num_inputs() == 0) c.fail("needs at least one tensor");
  for (int i = 1; i < c.num_inputs(); ++i)
    if (c.dtype(i) != c.dtype(0))
      c.fail("all inputs must have one dtype: input {} is {} but input 0 is {}", i,
             dtype_name(c.dtype(i)), dtype_name(c.dtype(0)));
}

// The first input whose rank is known, or -1.
int first_known_rank(const schema::InferContext& c) {
  for (int i = 0; i < c.num_inputs(); ++i)
    if (c.shape(i).has_known_rank()) return i;
  return -1;
}

void join_kernel(schema::KernelContext& c, int64_t outer) { copy_parts(c.outputs[0], c.inputs, outer, true); }

// ---- Concat -----------------------------------------------------------------
void concat_infer(schema::InferContext& c) {
  check_same_dtypes(c);
  int ref = first_known_rank(c);
  if (ref < 0) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  const Shape& s0 = c.shape(ref);
  int r = s0.rank();
  int64_t axis = c.attrs().get_int("axis");
  if (r == 0) c.fail("cannot concatenate scalars (input {} has shape ()); use stack", ref);
  int a = wrap_axis(axis, r);
  if (a < 0)
    c.fail("axis {} is out of range for inputs of rank {} (expected a value in [{}, {}))", axis, r,
           -r, r);
  Shape out = s0;
  out[a] = 0;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const Shape& s = c.shape(i);
    if (!s.has_known_rank()) {
      out[a] = -1;
      continue;
    }
    if (s.rank() != r)
      c.fail("all inputs must have one rank: input {} has shape {} but input {} has shape {}", i,
             s.to_string(), ref, s0.to_string());
    for (int k = 0; k < r; ++k) {
      if (k == a) continue;
      if (s[k] >= 0 && out[k] >= 0 && s[k] != out[k])
        c.fail("input {} has shape {} but input {} has shape {}: dims other than axis {} must match",
               i, s.to_string(), ref, s0.to_string(), axis);
      if (out[k] < 0) out[k] = s[k];
    }
    out[a] = out[a] < 0 || s[a] < 0 ? -1 : out[a] + s[a];
  }
  c.add_output(c.dtype(0), out);
}

void concat_kernel(schema::KernelContext& c) {
  const Shape& s = c.out_shape(0);
  int a = wrap_axis(c.attrs.get_int("axis"), s.rank());
  join_kernel(c, dims_product(s, 0, a));
}

std::vector<schema::OpSample> concat_samples() {
  return {{{constant({{1.f, 2.f}}), constant({{3.f, 4.f}, {5.f, 6.f}})}, schema::Attrs{{"axis", int64_t(0)}}},
          {{constant({{1, 2}, {3, 4}}), constant({{5}, {6}})}, schema::Attrs{{"axis", int64_t(-1)}}}};
}

// Each input gets its part of dy along the axis: slices when every part's
// size is known now, else SplitLike, which reads the sizes from the inputs
// when the graph runs.
void concat_grad(schema::GradContext& c) {
  int64_t axis = c.attrs.get_int("axis");
  const Shape& out = c.outputs[0].shape();
  int a = out.has_known_rank() ? wrap_axis(axis, out.rank()) : -1;
  bool sizes_known = a >= 0;
  for (const Tensor& x : c.inputs)
    sizes_known = sizes_known && x.shape().has_known_rank() && x.shape()[a] >= 0;
  if (!sizes_known) {
    std::vector<Tensor> parts = split_like(c.grad(0), c.inputs, axis);
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (c.needs(static_cast<int>(i))) c.set(static_cast<int>(i), std::move(parts[i]));
    return;
  }
  int64_t offset = 0;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    int64_t size_a = c.inputs[i].shape()[a];
    if (c.needs(static_cast<int>(i))) {
      std::vector<int64_t> begin(static_cast<std::size_t>(out.rank()), 0), size(begin.size(), -1);
      begin[a] = offset;
      size[a] = size_a;
      c.set(static_cast<int>(i), slice(c.grad(0), begin, size));
    }
    offset += size_a;
  }
}

constexpr detail::OpDef kConcat{.name = "Concat", .infer = concat_infer, .kernel = concat_kernel,
                                .flags = schema::kShapeFromShapes, .samples = concat_samples, .gradient = concat_grad};

// ---- Pack (stack) ---------------------------------------------------------------
void pack_infer(schema::InferContext& c) {
  check_same_dtypes(c);
  int ref = first_known_rank(c);
  if (ref < 0) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  Shape s0 = c.shape(ref);
  for (int i = 0; i < c.num_inputs(); ++i) {
    const Shape& s = c.shape(i);
    if (!s.is_compatible_with(s0))
      c.fail("all inputs must have one shape: input {} has shape {} but input {} has shape {}", i,
             s.to_string(), ref, c.shape(ref).to_string());
    if (s.has_known_rank())
      for (int k = 0; k < s.rank(); ++k)
        if (s0[k] < 0) s0[k] = s[k];
  }
  int r = s0.rank();
  int64_t axis = c.attrs().get_int("axis");
  if (axis < -r - 1 || axis > r)
    c.fail("axis {} is out of range for inputs of rank {} (expected a value in [{}, {}])", axis, r,
           -r - 1, r);
  if (r >= Shape::kMaxRank)
    c.fail("inputs of shape {} already have the largest rank Kiln supports ({})", s0.to_string(),
           Shape::kMaxRank);
  s0.insert(static_cast<int>(axis < 0 ? axis + r + 1 : axis), c.num_inputs());
  c.add_output(c.dtype(0), s0);
}

void pack_kernel(schema::KernelContext& c) {
  const Shape& s = c.out_shape(0);
  int64_t axis = c.attrs.get_int("axis");
  int a = static_cast<int>(axis < 0 ? axis + s.rank() : axis);
  join_kernel(c, dims_product(s, 0, a));
}

std::vector<schema::OpSample> pack_samples() {
  return {{{constant({1.f, 2.f}), constant({3.f, 4.f})}, schema::Attrs{{"axis", int64_t(0)}}},
          {{constant({1.f, 2.f}), constant({3.f, 4.f}), constant({5.f, 6.f})},
           schema::Attrs{{"axis", int64_t(1)}}}};
}

void pack_grad(schema::GradContext& c) {
  std::vector<Tensor> parts = unstack(c.grad(0), c.attrs.get_int("axis"));
  for (std::size_t i = 0; i < parts.size(); ++i) c.set(static_cast<int>(i), std::move(parts[i]));
}

constexpr detail::OpDef kPack{.name = "Pack", .infer = pack_infer, .kernel = pack_kernel,
                              .flags = schema::kShapeFromShapes, .samples = pack_samples, .gradient = pack_grad};

// ---- Unpack (unstack) -------------------------------------------------------------
void unpack_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  if (!in.has_known_rank())
    c.fail("the input's rank must be known to unstack it (got shape {})", in.to_string());
  int r = in.rank();
  int64_t axis = c.attrs().get_int("axis");
  int a = wrap_axis(axis, r);
  if (a < 0)
    c.fail("axis {} is out of range for input of rank {} (expected a value in [{}, {}))", axis, r,
           -r, r);
  if (in[a] < 0)
    c.fail("the size of axis {} of input shape {} must be known: it is the number of outputs",
           axis, in.to_string());
  Shape s = in;
  s.erase(a);
  for (int64_t i = 0; i < in[a]; ++i) c.add_output(c.dtype(0), s);
}

void unpack_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  int a = wrap_axis(c.attrs.get_int("axis"), in.rank());
  int64_t outer = dims_product(in, 0, a), num = in[a], inner = dims_product(in, a + 1, in.rank());
  if (inner == 0) return;
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    const E* x = c.in<E>(0);
    for (int64_t i = 0; i < num; ++i) {
      E* out = c.out<E>(static_cast<int>(i));
      for (int64_t o = 0; o < outer; ++o) std::copy_n(x + (o * num + i) * inner, inner, out + o * inner);
    }
  });
}

std::vector<schema::OpSample> unpack_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, schema::Attrs{{"axis", int64_t(0)}}},
          {{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, schema::Attrs{{"axis", int64_t(1)}}}};
}

void unpack_grad(schema::GradContext& c) {
  c.set(0, stack(c.all_grads_or_zeros(), c.attrs.get_int("axis")));
}

constexpr detail::OpDef kUnpack{.name = "Unpack", .infer = unpack_infer, .kernel = unpack_kernel,
                                .flags = schema::kShapeFromShapes, .samples = unpack_samples, .gradient = unpack_grad};

// ---- Split (tf.split) ---------------------------------------------------------------
// Split(x){axis, sizes}: x cut along axis into parts of those sizes; one size
// may be -1, the rest of the dim. One op and one copy where slices would be
// one op each, and a gradient that is one Concat where the slices' would be
// a zero-filled tensor each, added up (an LSTM's four gates).
void split_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  if (!in.has_known_rank()) c.fail("the input's rank must be known to split it (got shape {})", in.to_string());
  const int r = in.rank();
  const int64_t axis = c.attrs().get_int("axis");
  const int a = wrap_axis(axis, r);
  if (a < 0)
    c.fail("axis {} is out of range for input of rank {} (expected a value in [{}, {}))", axis, r, -r, r);
  const std::vector<int64_t>& sizes = c.attrs().get_ints("sizes");
  if (sizes.empty()) c.fail("needs at least one part (sizes is empty)");
  int64_t known = 0;
  int rest = -1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && rest < 0) {
      rest = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      c.fail("sizes {} may hold one -1 (the rest of the dim), and no other negative size", ints_to_string(sizes));
    } else {
      known += sizes[i];
    }
  }
  const int64_t dim = in[a];
  if (dim >= 0 && (rest < 0 ? known != dim : known > dim))
    c.fail("sizes {} {} but the input's axis {} has size {} (shape {})", ints_to_string(sizes),
           rest < 0 ? fmt::format("add up to {}", known) : fmt::format("leave {} for the -1", dim - known), axis, dim,
           in.to_string());
  for (int64_t size : sizes) {
    Shape part = in;
    part[a] = size >= 0 ? size : dim >= 0 ? dim - known : -1;
    c.add_output(c.dtype(0), part);
  }
}

void split_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  const int a = wrap_axis(c.attrs.get_int("axis"), in.rank());
  // The parts as allocated must tile the input's axis (copy_parts reads them
  // back to back): a -1 may have met a dim inference did not know.
  int64_t total = 0;
  for (const Tensor& part : c.outputs) total += part.shape()[a];
  if (total != in[a])
    throw InvalidArgument(fmt::format("Split: sizes {} do not fit the input's axis {} of size {} (shape {})",
                                      ints_to_string(c.attrs.get_ints("sizes")), c.attrs.get_int("axis"), in[a],
                                      in.to_string()));
  copy_parts(c.inputs[0], c.outputs, dims_product(in, 0, a), false);
}

std::vector<schema::OpSample> split_samples() {
  return {{{constant({{1.f, 2.f, 3.f, 4.f}, {5.f, 6.f, 7.f, 8.f}})},
           schema::Attrs{{"axis", int64_t(1)}, {"sizes", std::vector<int64_t>{1, -1, 2}}}},
          {{constant({{1, 2}, {3, 4}, {5, 6}})}, schema::Attrs{{"axis", int64_t(0)}, {"sizes", std::vector<int64_t>{2, 1}}}}};
}

void split_grad(schema::GradContext& c) { c.set(0, concat(c.all_grads_or_zeros(), c.attrs.get_int("axis"))); }

constexpr detail::OpDef kSplit{.name = "Split", .infer = split_infer, .kernel = split_kernel,
                               .flags = schema::kShapeFromShapes, .samples = split_samples, .gradient = split_grad};

// ---- Tile -----------------------------------------------------------------------
void tile_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  const std::vector<int64_t>& m = c.attrs().get_ints("multiples");
  for (int64_t v : m)
    if (v < 0) c.fail("multiples {} must not be negative", ints_to_string(m));
  if (!in.has_known_rank()) {
    if (m.size() > static_cast<std::size_t>(Shape::kMaxRank))
      c.fail("multiples {} has more entries than Kiln's largest rank", ints_to_string(m));
    Shape s(std::vector<int64_t>(m.size(), -1));
    for (std::size_t i = 0; i < m.size(); ++i)
      if (m[i] == 0) s[static_cast<int>(i)] = 0;
    c.add_output(c.dtype(0), s);
    return;
  }
  if (static_cast<int>(m.size()) != in.rank())
    c.fail("multiples {} has {} entries but the input of shape {} has rank {}", ints_to_string(m),
           m.size(), in.to_string(), in.rank());
  Shape s = in;
  for (int i = 0; i < in.rank(); ++i) {
    if (m[i] == 0 || in[i] < 0) {
      s[i] = m[i] == 0 ? 0 : -1;
    } else if (__builtin_mul_overflow(in[i], m[i], &s[i]) || s[i] > Shape::kMaxElements) {
      c.fail("multiples {} of an input of shape {} give more elements than a tensor may have (2^48 = {})",
             ints_to_string(m), in.to_string(), Shape::kMaxElements);
    }
  }
  c.add_output(c.dtype(0), s);
}

void tile_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& os = c.out_shape(0);
  int64_t n_out = c.outputs[0].size();
  if (n_out == 0) return;
  int r = in.rank();
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    const E* x = c.in<E>(0);
    E* out = c.out<E>(0);
    if (r == 0) {
      out[0] = x[0];
      return;
    }
    // Each output row (all dims but the last) repeats one input row.
    int64_t in_cols = in[r - 1], out_cols = os[r - 1], rows = n_out / out_cols;
    core::parallel_for(
        rows,
        [&](int64_t b, int64_t e) {
          for (int64_t row = b; row < e; ++row) {
            const E* src = x + tiled_row_source(row, in, os);
            E* dst = out + row * out_cols;
            for (int64_t j = 0; j < out_cols; j += in_cols) std::copy_n(src, in_cols, dst + j);
          }
        },
        std::max<int64_t>(1, core::kParallelGrain / out_cols));
  });
}

std::vector<schema::OpSample> tile_samples() {
  return {{{constant({{1.f, 2.f}, {3.f, 4.f}})}, schema::Attrs{{"multiples", std::vector<int64_t>{2, 3}}}},
          {{constant({1, 2, 3})}, schema::Attrs{{"multiples", std::vector<int64_t>{2}}}}};
}

// dy seen as [m0, d0, m1, d1, ...], summed over the copies (the m axes);
// TileGrad does the same when the input's shape is known only at run time.
void tile_grad(schema::GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  const std::vector<int64_t>& m = c.attrs.get_ints("multiples");
  if (!in.is_fully_defined()) {
    c.set(0, tile_grad_like(c.grad(0), c.inputs[0], m));
    return;
  }
  std::vector<int64_t> split, copies;
  for (int k = 0; k < in.rank(); ++k) {
    split.push_back(m[static_cast<std::size_t>(k)]);
    split.push_back(in[k]);
    copies.push_back(2 * k);
  }
  c.set(0, reshape(sum(reshape(c.grad(0), Shape(split)), Axes(copies)), in));
}

constexpr detail::OpDef kTile{.name = "Tile", .infer = tile_infer, .kernel = tile_kernel,
                              .flags = schema::kShapeFromShapes, .samples = tile_samples, .gradient = tile_grad};

// ---- Pad --------------------------------------------------------------------------
void pad_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  const std::vector<int64_t>& p = c.attrs().get_ints("paddings");
  const Tensor& value = c.attrs().get<Tensor>("value");
  if (value.dtype() != c.dtype(0))
    c.fail("the pad value is {} but the input is {}", dtype_name(value.dtype()),
           dtype_name(c.dtype(0)));
  for (int64_t v : p)
    if (v < 0) c.fail("paddings {} must not be negative", ints_to_string(p));
  if (p.size() % 2 != 0) c.fail("paddings {} must hold a (before, after) pair per dim", ints_to_string(p));
  int r = static_cast<int>(p.size() / 2);
  if (!in.has_known_rank()) {
    c.add_output(c.dtype(0), Shape(std::vector<int64_t>(static_cast<std::size_t>(r), -1)));
    return;
  }
  if (r != in.rank())
    c.fail("paddings has {} pairs but the input of shape {} has rank {}", r, in.to_string(), in.rank());
  Shape s = in;
  for (int i = 0; i < r; ++i) {
    if (in[i] < 0) {
      s[i] = -1;
    } else if (__builtin_add_overflow(in[i], p[2 * i], &s[i]) || __builtin_add_overflow(s[i], p[2 * i + 1], &s[i]) ||
               s[i] > Shape::kMaxElements) {
      c.fail("paddings {} of an input of shape {} give more elements than a tensor may have (2^48 = {})",
             ints_to_string(p), in.to_string(), Shape::kMaxElements);
    }
  }
  c.add_output(c.dtype(0), s);
}

void pad_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& os = c.out_shape(0);
  const std::vector<int64_t>& p = c.attrs.get_ints("paddings");
  int64_t n_out = c.outputs[0].size(), n_in = c.inputs[0].size();
  int r = in.rank();
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    const E* x = c.in<E>(0);
    E* out = c.out<E>(0);
    E v = *core::data_of<E>(c.attrs.get<Tensor>("value"));
    core::parallel_for(n_out, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
    if (n_in == 0) return;
    if (r == 0) {
      out[0] = x[0];
      return;
    }
    // Copy each input row (all dims but the last) to its place.
    int64_t cols = in[r - 1], rows = n_in / cols;
    core::parallel_for(
        rows,
        [&](int64_t b, int64_t e) {
          for (int64_t row = b; row < e; ++row) {
            int64_t dst = p[2 * (r - 1)], rest = row, out_stride = os[r - 1];
            for (int k = r - 2; k >= 0; --k) {
              dst += (rest % in[k] + p[2 * k]) * out_stride;
              rest /= in[k];
              out_stride *= os[k];
            }
            std::copy_n(x + row * cols, cols, out + dst);
          }
        },
        std::max<int64_t>(1, core::kParallelGrain / cols));
  });
}

std::vector<schema::OpSample> pad_samples() {
  return {{{constant({{1.f, 2.f}, {3.f, 4.f}})},
           schema::Attrs{{"paddings", std::vector<int64_t>{1, 0, 0, 2}}, {"value", make_scalar(0, DType::Float32)}}},
          {{constant({1, 2})},
           schema::Attrs{{"paddings", std::vector<int64_t>{2, 1}}, {"value", make_scalar(-1, DType::Int32)}}}};
}

// The input's part of dy: each dim from `before` to `-after`.
void pad_grad(schema::GradContext& c) {
  const std::vector<int64_t>& p = c.attrs.get_ints("paddings");
  std::vector<int64_t> begin, end, strides;
  SliceMasks masks;
  for (std::size_t k = 0; k < p.size() / 2; ++k) {
    begin.push_back(p[2 * k]);
    end.push_back(-p[2 * k + 1]);
    strides.push_back(1);
    if (p[2 * k + 1] == 0) masks.end |= int64_t(1) << k;
  }
  c.set(0, strided_slice(c.grad(0), begin, end, strides, masks));
}

constexpr detail::OpDef kPad{.name = "Pad", .infer = pad_infer, .kernel = pad_kernel, .flags = schema::kShapeFromShapes,
                             .samples = pad_samples, .gradient = pad_grad};

}  // namespace

void register_join_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kConcat, &kPack, &kUnpack, &kSplit, &kTile, &kPad}) r.add(*op);
}

}  // namespace ops

Tensor concat(const std::vector<Tensor>& values, int64_t axis, SourceLocation loc) {
  return runtime::dispatch1(ops::kConcat, values, schema::Attrs{{"axis", axis}}, loc);
}

Tensor stack(const std::vector<Tensor>& values, int64_t axis, SourceLocation loc) {
  return runtime::dispatch1(ops::kPack, values, schema::Attrs{{"axis", axis}}, loc);
}

std::vector<Tensor> unstack(const Tensor& x, int64_t axis, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(ops::kUnpack, in, schema::Attrs{{"axis", axis}}, loc);
  return std::vector<Tensor>(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}

std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis,
                                     SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(ops::kSplit, in, schema::Attrs{{"axis", axis}, {"sizes", sizes}}, loc);
  return std::vector<Tensor>(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}

std::vector<Tensor> split(const Tensor& x, int64_t num_splits, int64_t axis, SourceLocation loc) {
  if (num_splits < 1) throw InvalidArgument(fmt::format("Split: num_splits must be at least 1, got {}", num_splits));
  const Shape& s = x.defined() ? x.shape() : Shape::unknown_rank();
  if (!s.has_known_rank()) return split_with_sizes(x, {-1}, axis, loc);  // Split's own error
  const int a = ops::wrap_axis(axis, s.rank());
  if (a < 0)
    throw InvalidArgument(fmt::format("Split: axis {} is out of range for input of rank {} (expected a value in [{}, {}))",
                                      axis, s.rank(), -s.rank(), s.rank()));
  if (s[a] < 0)
    throw InvalidArgument(fmt::format("Split: an even split needs the size of axis {} (shape {})", axis, s.to_string()));
  if (s[a] % num_splits != 0)
    throw InvalidArgument(fmt::format("Split: axis {} of size {} (shape {}) does not split evenly into {} parts", axis,
                                      s[a], s.to_string(), num_splits));
  return split_with_sizes(x, std::vector<int64_t>(static_cast<std::size_t>(num_splits), s[a] / num_splits), axis, loc);
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kTile, in, schema::Attrs{{"multiples", multiples}}, loc);
}

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           const Scalar& value, SourceLocation loc) {
  const Tensor in[] = {x};
  std::vector<int64_t> flat;
  flat.reserve(paddings.size() * 2);
  for (const auto& [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  DType d = x.defined() ? x.dtype() : DType::Float32;
  runtime::check_representable(value, d, "Pad");
  return runtime::dispatch1(ops::kPad, in,
                            schema::Attrs{{"paddings", std::move(flat)}, {"value", ops::make_scalar(value, d)}}, loc);
}

}  // namespace kiln
