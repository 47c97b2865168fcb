// StridedSlice (TF's design: begin/end/strides plus bit masks) and the
// Python-style indexing built on it: x[i], x[Slice(1, 3)], x.index({...}).
#include <algorithm>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "kiln/array.h"
#include "kiln/math.h"
#include "ops/array_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

// What a StridedSlice takes from one input dim.
struct SliceDim {
  int64_t begin = 0;   // first index taken
  int64_t stride = 1;  // step between taken indices (may be negative)
  int64_t len = 0;     // how many are taken (-1: unknown)
  bool shrink = false;  // an integer index: the dim is dropped
};

struct SliceSpec {
  SliceDim dims[Shape::kMaxRank];
  Shape out;
};

// Python's slice arithmetic on a dim of known size d.
SliceDim python_slice(int64_t begin, int64_t end, int64_t step, bool begin_full, bool end_full,
                      int64_t d) {
  auto wrap = [d](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += d;
    return std::clamp(v, lo, hi);
  };
  // ceil(span / |step|) as 1 + (span - 1) / |step| in unsigned arithmetic:
  // a step near +-2^63 (x[::2**63 - 1]) takes one element, not overflow.
  auto count = [](int64_t span, int64_t step) {
    uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
    return static_cast<int64_t>(1 + static_cast<uint64_t>(span - 1) / magnitude);
  };
  SliceDim s;
  s.stride = step;
  if (step > 0) {
    int64_t b = begin_full ? 0 : wrap(begin, 0, d);
    int64_t e = end_full ? d : wrap(end, 0, d);
    s.begin = b;
    s.len = e > b ? count(e - b, step) : 0;
  } else {
    int64_t b = begin_full ? d - 1 : wrap(begin, -1, d - 1);
    int64_t e = end_full ? -1 : wrap(end, -1, d - 1);
    s.begin = b;
    s.len = b > e ? count(b - e, step) : 0;
  }
  if (s.len == 0) s.begin = 0;
  return s;
}

// Resolves the attrs against the input shape. With an InferContext, bad
// attrs fail; without one (the kernel, after inference passed) they clamp.
void build_spec(const schema::Attrs& a, const Shape& in, SliceSpec& spec, const schema::InferContext* c) {
  const std::vector<int64_t>& begin = a.get_ints("begin");
  const std::vector<int64_t>& end = a.get_ints("end");
  const std::vector<int64_t>& strides = a.get_ints("strides");
  int64_t begin_mask = a.get_int("begin_mask"), end_mask = a.get_int("end_mask");
  int64_t ellipsis_mask = a.get_int("ellipsis_mask"), new_axis_mask = a.get_int("new_axis_mask");
  int64_t shrink_mask = a.get_int("shrink_axis_mask");
  int n = static_cast<int>(begin.size());
  if (c && (end.size() != begin.size() || strides.size() != begin.size()))
    c->fail("begin, end and strides must have one length, got {}, {} and {}", begin.size(),
            end.size(), strides.size());
  n = std::min<int>(n, static_cast<int>(std::min(end.size(), strides.size())));
  int r = in.rank(), ellipses = 0, real = 0;
  for (int i = 0; i < n; ++i) {
    int64_t bit = int64_t(1) << i;
    if (ellipsis_mask & bit) ++ellipses;
    else if (!(new_axis_mask & bit)) ++real;
  }
  if (c && ellipses > 1) c->fail("at most one ellipsis is allowed in an index, got {}", ellipses);
  if (c && real > r)
    c->fail("too many indices: {} for a tensor of shape {} (rank {})", real, in.to_string(), r);
  spec.out = Shape{};
  int d = 0;
  auto take_all = [&] {
    spec.dims[d] = {0, 1, in[d], false};
    spec.out.push_back(in[d]);
    ++d;
  };
  for (int i = 0; i < n && d <= r; ++i) {
    int64_t bit = int64_t(1) << i;
    if (ellipsis_mask & bit) {
      for (int k = r - real; k > 0 && d < r; --k) take_all();
      continue;
    }
    if (new_axis_mask & bit) {
      spec.out.push_back(1);
      continue;
    }
    if (d >= r) break;
    int64_t size = in[d];
    if (shrink_mask & bit) {
      int64_t index = begin[i];
      if (size >= 0) {
        int64_t w = index < 0 ? index + size : index;
        if (w < 0 || w >= size) {
          if (c)
            c->fail("index {} is out of bounds for axis {} with size {} (input shape {})", index,
                    d, size, in.to_string());
          w = std::clamp<int64_t>(w, 0, std::max<int64_t>(size - 1, 0));
        }
        index = w;
      }
      spec.dims[d++] = {index, 1, 1, true};
      continue;
    }
    int64_t step = strides[i];
    if (step == 0) {
      if (c) c->fail("the step of index entry {} must not be 0", i);
      step = 1;
    }
    SliceDim s = size < 0 ? SliceDim{0, step, -1, false}
                          : python_slice(begin[i], end[i], step, begin_mask & bit, end_mask & bit, size);
    spec.dims[d++] = s;
    spec.out.push_back(s.len);
  }
  while (d < r) take_all();  // entries left out take whole dims
}

// kiln::slice (attr slice_bounds): as TF's Slice, begin and begin + size
// must lie within each known dim rather than clamp (entry i is axis i; an
// end_mask bit is size -1, to the end). Unknown dims are checked when the
// graph runs (the executor infers again on concrete shapes).
void check_slice_bounds(const schema::InferContext& c, const Shape& in) {
  const std::vector<int64_t>& begin = c.attrs().get_ints("begin");
  const std::vector<int64_t>& end = c.attrs().get_ints("end");
  int64_t end_mask = c.attrs().get_int("end_mask");
  for (std::size_t i = 0; i < begin.size() && static_cast<int>(i) < in.rank(); ++i) {
    int64_t dim = in[static_cast<int>(i)];
    if (dim < 0) continue;
    if (begin[i] > dim)
      c.fail("slice: begin[{}] = {} is past the end of axis {} (size {}) of input shape {}; it must be in [0, {}]", i,
             begin[i], i, dim, in.to_string(), dim);
    if (!(end_mask >> i & 1) && end[i] > dim)
      c.fail("slice: begin[{0}] + size[{0}] = {1} + {2} runs past the end of axis {0} (size {3}) of input shape {4}; "
             "size[{0}] must be in [0, {5}] (or -1: to the end)",
             i, begin[i], end[i] - begin[i], dim, in.to_string(), dim - begin[i]);
  }
}

void strided_slice_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  if (!in.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  SliceSpec spec;
  int new_axes = 0;
  int64_t mask = c.attrs().get_int("new_axis_mask");
  for (int i = 0; i < 63; ++i) new_axes += (mask >> i) & 1;
  if (in.rank() + new_axes > Shape::kMaxRank)
    c.fail("the result would have rank {}, more than Kiln supports ({})", in.rank() + new_axes,
           Shape::kMaxRank);
  build_spec(c.attrs(), in, spec, &c);
  if (c.attrs().get_or<bool>("slice_bounds", false)) check_slice_bounds(c, in);
  c.add_output(c.dtype(0), spec.out);
}

// The elements a slice takes, as runs: fn(src, col_step, cols, dst) for each
// run of `cols` input elements `col_step` apart starting at offset `src`,
// which are output elements dst..dst+cols. Runs are visited in parallel.
template <class Fn> void for_each_taken_run(const Shape& in, const SliceSpec& spec, int64_t n_out, Fn&& fn) {
  // The taken elements as (len, step in elements) per dim, dims of one
  // element folded into the base offset and contiguous neighbours merged.
  int64_t base = 0, len[Shape::kMaxRank], step[Shape::kMaxRank], in_stride = 1;
  int m = 0;
  for (int k = in.rank() - 1; k >= 0; --k) {
    const SliceDim& s = spec.dims[k];
    base += s.begin * in_stride;
    if (s.len != 1) {
      len[m] = s.len;
      step[m] = s.stride * in_stride;
      ++m;
    }
    in_stride *= in[k];
  }
  // len/step are innermost first; merge dim j+1 into j when it continues it.
  int merged = 0;
  for (int j = 0; j < m; ++j) {
    if (merged > 0 && step[j] == step[merged - 1] * len[merged - 1]) {
      len[merged - 1] *= len[j];
    } else {
      len[merged] = len[j];
      step[merged] = step[j];
      ++merged;
    }
  }
  if (merged == 0) {
    fn(base, int64_t(1), int64_t(1), int64_t(0));
    return;
  }
  int64_t cols = len[0], col_step = step[0], rows = n_out / cols;
  core::parallel_for(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t offset = 0, rest = row;
          for (int k = 1; k < merged; ++k) {
            offset += (rest % len[k]) * step[k];
            rest /= len[k];
          }
          fn(base + offset, col_step, cols, row * cols);
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / cols));
}

template <class E> void strided_slice_typed(const E* x, const Shape& in, const SliceSpec& spec, E* out,
                                            int64_t n_out) {
  if (n_out == 0) return;
  if (in.num_elements() == 0) {  // only after inference with unknown dims: nothing to read
    std::fill(out, out + n_out, E{});
    return;
  }
  for_each_taken_run(in, spec, n_out, [&](int64_t src, int64_t col_step, int64_t cols, int64_t dst) {
    copy_strided(x + src, col_step, cols, out + dst);
  });
}

// dy written back where the slice took its elements, zeros elsewhere. Each
// input element is taken at most once, so runs never overlap.
template <class E> void strided_slice_grad_typed(const E* dy, const Shape& in, const SliceSpec& spec, E* dx,
                                                 int64_t n_dy) {
  std::fill(dx, dx + in.num_elements(), E{});
  if (n_dy == 0 || in.num_elements() == 0) return;
  for_each_taken_run(in, spec, n_dy, [&](int64_t src, int64_t col_step, int64_t cols, int64_t dst) {
    for (int64_t i = 0; i < cols; ++i) dx[src + i * col_step] = dy[dst + i];
  });
}

void strided_slice_kernel(schema::KernelContext& c) {
  SliceSpec spec;
  build_spec(c.attrs, c.in_shape(0), spec, nullptr);
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    strided_slice_typed(c.in<E>(0), c.in_shape(0), spec, c.out<E>(0), c.outputs[0].size());
  });
}

schema::Attrs slice_attrs(std::vector<int64_t> begin, std::vector<int64_t> end, std::vector<int64_t> strides,
                          const SliceMasks& m) {
  schema::Attrs a{{"begin", std::move(begin)}, {"end", std::move(end)}, {"strides", std::move(strides)}};
  a.set("begin_mask", m.begin);
  a.set("end_mask", m.end);
  a.set("ellipsis_mask", m.ellipsis);
  a.set("new_axis_mask", m.new_axis);
  a.set("shrink_axis_mask", m.shrink_axis);
  return a;
}

std::vector<schema::OpSample> strided_slice_samples() {
  Tensor x = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  // x[1, ::-2]
  SliceMasks m1;
  m1.begin = 2;
  m1.end = 2;
  m1.shrink_axis = 1;
  // x[None, :, 1:]
  SliceMasks m2;
  m2.new_axis = 1;
  m2.begin = 2;
  m2.end = 6;
  // slice(x, {0, 1}, {2, -1})
  SliceMasks m3;
  m3.end = 2;
  schema::Attrs bounded = slice_attrs({0, 1}, {2, 0}, {1, 1}, m3);
  bounded.set("slice_bounds", true);
  return {{{x}, slice_attrs({1, 0}, {2, 0}, {1, -2}, m1)},
          {{x}, slice_attrs({0, 0, 1}, {0, 0, 0}, {1, 1, 1}, m2)},
          {{x}, std::move(bounded)}};
}

void strided_slice_grad(schema::GradContext& c);

constexpr detail::OpDef kStridedSlice{.name = "StridedSlice", .infer = strided_slice_infer,
                                      .kernel = strided_slice_kernel, .flags = schema::kShapeFromShapes,
                                      .samples = strided_slice_samples, .gradient = strided_slice_grad};

// ---- StridedSliceGrad(dy, x): the gradient of StridedSlice (same attrs) ----------
void strided_slice_grad_infer(schema::InferContext& c) {
  if (c.dtype(0) != c.dtype(1))
    c.fail("dy has dtype {} but x has dtype {}", dtype_name(c.dtype(0)), dtype_name(c.dtype(1)));
  c.add_output(c.dtype(1), c.shape(1));
}

void strided_slice_grad_kernel(schema::KernelContext& c) {
  SliceSpec spec;
  build_spec(c.attrs, c.in_shape(1), spec, nullptr);
  if (c.inputs[0].size() != spec.out.num_elements())
    throw InvalidArgument(fmt::format("StridedSliceGrad: dy has shape {} but the slice of {} has shape {}",
                                      c.in_shape(0).to_string(), c.in_shape(1).to_string(), spec.out.to_string()));
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    if constexpr (!std::is_same_v<E, std::string>)
      strided_slice_grad_typed(c.in<E>(0), c.in_shape(1), spec, c.out<E>(0), c.inputs[0].size());
  });
}

void strided_slice_grad_grad(schema::GradContext& c) {
  const Tensor in[] = {c.grad_or_zeros(0)};
  c.set(0, runtime::dispatch1(kStridedSlice, in, schema::Attrs(c.attrs), SourceLocation()));
}

std::vector<schema::OpSample> strided_slice_grad_samples() {
  std::vector<schema::OpSample> samples;
  for (schema::OpSample& s : strided_slice_samples()) {
    const Tensor in[] = {s.inputs[0]};
    Tensor y = runtime::run_eager(kStridedSlice, in, s.attrs)[0];
    samples.push_back({{y + 1.f, s.inputs[0]}, s.attrs});
  }
  return samples;
}

constexpr detail::OpDef kStridedSliceGrad{.name = "StridedSliceGrad", .infer = strided_slice_grad_infer,
                                          .kernel = strided_slice_grad_kernel, .samples = strided_slice_grad_samples,
                                          .gradient = strided_slice_grad_grad};

void strided_slice_grad(schema::GradContext& c) {
  const Tensor in[] = {c.grad(0), c.inputs[0]};
  c.set(0, runtime::dispatch1(kStridedSliceGrad, in, schema::Attrs(c.attrs), SourceLocation()));
}

}  // namespace

void register_slice_ops(schema::OpRegistry& r) {
  r.add(kStridedSlice);
  r.add(kStridedSliceGrad);
}

}  // namespace ops

Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                     const SliceMasks& masks, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kStridedSlice, in, ops::slice_attrs(begin, end, strides, masks), loc);
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size,
             SourceLocation loc) {
  if (begin.size() != size.size())
    throw InvalidArgument(fmt::format("slice: begin {} and size {} must have one length",
                                      ops::ints_to_string(begin), ops::ints_to_string(size)));
  SliceMasks m;
  std::vector<int64_t> end(begin.size()), strides(begin.size(), 1);
  for (std::size_t i = 0; i < begin.size(); ++i) {
    if (begin[i] < 0 || size[i] < -1)
      throw InvalidArgument(fmt::format(
          "slice: begin {} must not be negative and size {} must be >= -1 (-1: to the end)",
          ops::ints_to_string(begin), ops::ints_to_string(size)));
    if (size[i] == -1) m.end |= int64_t(1) << i;
    else if (size[i] > std::numeric_limits<int64_t>::max() - begin[i])
      throw InvalidArgument(fmt::format("slice: begin {} + size {} overflows int64", ops::ints_to_string(begin),
                                        ops::ints_to_string(size)));
    else end[i] = begin[i] + size[i];
  }
  const Tensor in[] = {x};
  schema::Attrs attrs = ops::slice_attrs(begin, end, strides, m);
  attrs.set("slice_bounds", true);
  return runtime::dispatch1(ops::kStridedSlice, in, std::move(attrs), loc);
}

Tensor Tensor::index(std::initializer_list<TensorIndex> indices, SourceLocation loc) const {
  std::vector<int64_t> begin, end, strides;
  SliceMasks m;
  int64_t bit = 1;
  for (const TensorIndex& ix : indices) {
    int64_t b = 0, e = 0, s = 1;
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer:
        b = ix.integer();
        e = b + 1;
        m.shrink_axis |= bit;
        break;
      case TensorIndex::Kind::Slice: {
        const Slice& sl = ix.slice();
        if (sl.start) b = *sl.start;
        else m.begin |= bit;
        if (sl.stop) e = *sl.stop;
        else m.end |= bit;
        s = sl.step;
        break;
      }
      case TensorIndex::Kind::NewAxis: m.new_axis |= bit; break;
      case TensorIndex::Kind::Ellipsis: m.ellipsis |= bit; break;
    }
    begin.push_back(b);
    end.push_back(e);
    strides.push_back(s);
    bit <<= 1;
  }
  return strided_slice(*this, begin, end, strides, m, loc);
}

Tensor Tensor::operator[](int64_t i) const { return index({i}); }

Tensor Tensor::operator[](const Slice& s) const { return index({s}); }

}  // namespace kiln
