// Reductions: Sum, Mean, Prod, Max, Min, Any, All (over a list of axes) and
// ArgMax, ArgMin (over one axis).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/complex_math.h"
#include "core/parallel.h"
#include "kiln/array.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "ops/grad_util.h"
#include "ops/array_util.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

enum class ReduceKind { Sum, Mean, Prod, Max, Min, Any, All };

// ---- Reducers: how values combine, per kind and element type --------------
// Integer sums and products accumulate in the unsigned type of the same
// width: they wrap exactly as TF's do, without signed-overflow UB.
template <class T>
using WrapInt = std::conditional_t<sizeof(T) == 1, uint8_t,
                                   std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
template <class T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, T, WrapInt<T>>;

template <ReduceKind K, class T> struct Reducer;

template <class T> struct Reducer<ReduceKind::Sum, T> {
  using Acc = SumAcc<T>;
  static Acc identity() { return Acc(0); }
  static Acc load(T v) { return static_cast<Acc>(v); }
  static Acc combine(Acc a, Acc b) { return static_cast<Acc>(a + b); }
  static T finish(Acc a, int64_t) { return static_cast<T>(a); }
};

template <class T> struct Reducer<ReduceKind::Prod, T> {
  using Acc = SumAcc<T>;
  static Acc identity() { return Acc(1); }
  static Acc load(T v) { return static_cast<Acc>(v); }
  static Acc combine(Acc a, Acc b) { return static_cast<Acc>(a * b); }
  static T finish(Acc a, int64_t) { return static_cast<T>(a); }
};

// Integer means sum in 64 bits (two's complement through uint64), then divide.
template <class T> struct Reducer<ReduceKind::Mean, T> {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
  static Acc identity() { return Acc(0); }
  static Acc load(T v) {
    if constexpr (std::is_floating_point_v<T>) return v;
    else return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static T finish(Acc a, int64_t count) {
    if constexpr (std::is_floating_point_v<T>) return a / static_cast<T>(count);
    else return count == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(a) / count);
  }
};

// Written so that a NaN in either operand wins (and the loop still vectorizes).
template <class T> struct Reducer<ReduceKind::Max, T> {
  using Acc = T;
  static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static Acc load(T v) { return v; }
  static Acc combine(Acc a, Acc b) { return ((a > b) | (a != a)) ? a : b; }
  static T finish(Acc a, int64_t) { return a; }
};

template <class T> struct Reducer<ReduceKind::Min, T> {
  using Acc = T;
  static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static Acc load(T v) { return v; }
  static Acc combine(Acc a, Acc b) { return ((a < b) | (a != a)) ? a : b; }
  static T finish(Acc a, int64_t) { return a; }
};

template <class T> struct Reducer<ReduceKind::Any, T> {
  using Acc = uint8_t;
  static Acc identity() { return 0; }
  static Acc load(T v) { return static_cast<Acc>(v); }
  static Acc combine(Acc a, Acc b) { return a | b; }
  static T finish(Acc a, int64_t) { return a != 0; }
};

template <class T> struct Reducer<ReduceKind::All, T> {
  using Acc = uint8_t;
  static Acc identity() { return 1; }
  static Acc load(T v) { return static_cast<Acc>(v); }
  static Acc combine(Acc a, Acc b) { return a & b; }
  static T finish(Acc a, int64_t) { return a != 0; }
};

// ---- Contiguous reduction ---------------------------------------------------
// Values are reduced in blocks of kBlock with kLanes independent
// accumulators (so the loop vectorizes without reassociating a single sum);
// block results combine left to right. The result depends only on the
// data, never on how many threads ran.
constexpr int64_t kBlock = 4096;
constexpr int kLanes = 16;

template <class R, class T> typename R::Acc reduce_block(const T* x, int64_t n) {
  using Acc = typename R::Acc;
  Acc lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = R::identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] = R::combine(lanes[l], R::load(x[i + l]));
  for (int l = 0; i < n; ++i, ++l) lanes[l] = R::combine(lanes[l], R::load(x[i]));
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] = R::combine(lanes[l], lanes[l + w]);
  return lanes[0];
}

template <class R, class T> typename R::Acc reduce_contiguous(const T* x, int64_t n) {
  typename R::Acc acc = R::identity();
  for (int64_t b = 0; b < n; b += kBlock)
    acc = R::combine(acc, reduce_block<R>(x + b, std::min(kBlock, n - b)));
  return acc;
}

// The same result as reduce_contiguous, with blocks spread over threads.
template <class R, class T> typename R::Acc reduce_contiguous_parallel(const T* x, int64_t n) {
  if (n <= core::kParallelGrain) return reduce_contiguous<R>(x, n);
  int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<typename R::Acc> partial(static_cast<std::size_t>(blocks));
  core::parallel_for(
      blocks,
      [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k)
          partial[k] = reduce_block<R>(x + k * kBlock, std::min(kBlock, n - k * kBlock));
      },
      core::kParallelGrain / kBlock);
  typename R::Acc acc = R::identity();
  for (int64_t k = 0; k < blocks; ++k) acc = R::combine(acc, partial[k]);
  return acc;
}

// ---- Strided reduction --------------------------------------------------------
// After dropping size-1 dims and merging neighbours that are both reduced or
// both kept, the input is a few groups. Output rows are walked with a counter
// over all groups but the last.
struct Group {
  int64_t size;
  bool reduced;
};

struct RowCounter {
  int n = 0;
  int64_t size[Shape::kMaxRank];
  int64_t out_stride[Shape::kMaxRank];  // 0 for a reduced group
  int64_t coord[Shape::kMaxRank] = {};
  int64_t out = 0;

  RowCounter(const Group* g, int count) : n(count) {
    int64_t stride = 1;
    for (int k = count - 1; k >= 0; --k) {
      size[k] = g[k].size;
      out_stride[k] = g[k].reduced ? 0 : stride;
      if (!g[k].reduced) stride *= g[k].size;
    }
  }
  void advance() {
    for (int k = n - 1; k >= 0; --k) {
      out += out_stride[k];
      if (++coord[k] < size[k]) return;
      out -= out_stride[k] * size[k];
      coord[k] = 0;
    }
  }
};

template <class R, class T>
void reduce_typed(const T* x, const Shape& in, const bool* mask, T* out, int64_t n_out) {
  using Acc = typename R::Acc;
  int64_t n = in.num_elements(), count = 1;
  for (int i = 0; i < in.rank(); ++i)
    if (mask[i]) count *= in[i];
  if (n == 0) {
    T v = R::finish(R::identity(), count);
    for (int64_t i = 0; i < n_out; ++i) out[i] = v;
    return;
  }
  Group g[Shape::kMaxRank];
  int m = 0;
  for (int i = 0; i < in.rank(); ++i) {
    if (in[i] == 1) continue;
    if (m > 0 && g[m - 1].reduced == mask[i]) g[m - 1].size *= in[i];
    else g[m++] = {in[i], mask[i]};
  }
  bool any_reduced = false;
  for (int k = 0; k < m; ++k) any_reduced |= g[k].reduced;
  if (!any_reduced) {
    core::parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = R::finish(R::load(x[i]), 1);
    });
    return;
  }
  int64_t last = g[m - 1].size, rows = n / last;
  if (g[m - 1].reduced) {
    if (m == 1) {  // everything
      out[0] = R::finish(reduce_contiguous_parallel<R>(x, n), count);
    } else if (m == 2) {  // [kept, reduced]: one output per contiguous row
      core::parallel_for(
          rows,
          [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r)
              out[r] = R::finish(reduce_contiguous<R>(x + r * last, last), count);
          },
          std::max<int64_t>(1, core::kParallelGrain / last));
    } else {
      std::vector<Acc> acc(static_cast<std::size_t>(n_out), R::identity());
      RowCounter rc(g, m - 1);
      for (int64_t r = 0; r < rows; ++r, rc.advance())
        acc[rc.out] = R::combine(acc[rc.out], reduce_contiguous<R>(x + r * last, last));
      for (int64_t i = 0; i < n_out; ++i) out[i] = R::finish(acc[i], count);
    }
    return;
  }
  // The last group is kept: output rows of `last` values accumulate whole
  // input rows, a loop the compiler vectorizes.
  std::vector<Acc> acc(static_cast<std::size_t>(n_out), R::identity());
  Acc* a = acc.data();
  if (m == 2) {  // [reduced, kept]: columns are independent
    core::parallel_for(
        last,
        [&](int64_t b, int64_t e) {
          for (int64_t r = 0; r < rows; ++r) {
            const T* row = x + r * last;
            for (int64_t j = b; j < e; ++j) a[j] = R::combine(a[j], R::load(row[j]));
          }
        },
        std::max<int64_t>(1024, core::kParallelGrain / rows));
  } else {
    RowCounter rc(g, m - 1);
    for (int64_t r = 0; r < rows; ++r, rc.advance()) {
      const T* row = x + r * last;
      Acc* o = a + rc.out * last;
      for (int64_t j = 0; j < last; ++j) o[j] = R::combine(o[j], R::load(row[j]));
    }
  }
  for (int64_t i = 0; i < n_out; ++i) out[i] = R::finish(a[i], count);
}

// ---- Inference ----------------------------------------------------------------
const char* kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::Any: case ReduceKind::All: return "bool";
    default: return "a number type";
  }
}

bool accepts(ReduceKind k, DType d) {
  if (k == ReduceKind::Any || k == ReduceKind::All) return d == DType::Bool;
  return is_numeric(d) && d != DType::Bool;
}

// Marks the reduced dims of a known-rank input; fails on a bad axis.
void reduced_dims(const schema::InferContext& c, int rank, bool* mask) {
  std::fill(mask, mask + rank, false);
  if (c.attrs().get_or<bool>("reduce_all", false)) {
    std::fill(mask, mask + rank, true);
    return;
  }
  const std::vector<int64_t>& axes = c.attrs().get_ints("axes");
  for (int64_t axis : axes) {
    int a = wrap_axis(axis, rank);
    if (a < 0)
      c.fail("axis {} is out of range for input of rank {} (axes {}; expected values in [{}, {}))",
             axis, rank, ints_to_string(axes), -rank, rank);
    if (mask[a]) c.fail("axis {} is repeated in axes {} (input of rank {})", axis,
                        ints_to_string(axes), rank);
    mask[a] = true;
  }
}

template <ReduceKind K> void reduce_infer(schema::InferContext& c) {
  DType d = c.dtype(0);
  if (!accepts(K, d))
    c.fail("input must be {}, got {}", kind_name(K), dtype_name(d));
  const Shape& in = c.shape(0);
  bool keep = c.attrs().get_bool("keepdims");
  if (!in.has_known_rank()) {
    bool all = c.attrs().get_or<bool>("reduce_all", false);
    c.add_output(d, all && !keep ? Shape{} : Shape::unknown_rank());
    return;
  }
  bool mask[Shape::kMaxRank];
  reduced_dims(c, in.rank(), mask);
  Shape out;
  for (int i = 0; i < in.rank(); ++i) {
    if (!mask[i]) out.push_back(in[i]);
    else if (keep) out.push_back(1);
  }
  c.add_output(d, out);
}

template <ReduceKind K> void reduce_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  bool mask[Shape::kMaxRank] = {};
  if (c.attrs.get_or<bool>("reduce_all", false)) {
    std::fill(mask, mask + in.rank(), true);
  } else {
    for (int64_t axis : c.attrs.get_ints("axes")) mask[wrap_axis(axis, in.rank())] = true;
  }
  core::visit_numeric(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (K == ReduceKind::Any || K == ReduceKind::All) {
      if constexpr (std::is_same_v<T, bool>)
        reduce_typed<Reducer<K, T>>(c.in<T>(0), in, mask, c.out<T>(0), c.outputs[0].size());
    } else if constexpr (!std::is_same_v<T, bool>) {
      reduce_typed<Reducer<K, T>>(c.in<T>(0), in, mask, c.out<T>(0), c.outputs[0].size());
    }
  });
}

std::vector<schema::OpSample> numeric_reduce_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})},
           schema::Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", false}}},
          {{constant({{{1.5f, -2.f}, {0.25f, 4.f}}, {{3.f, 1.f}, {-1.f, 2.f}}})},
           schema::Attrs{{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", true}}},
          {{constant({1.0, 2.0, 4.0})}, schema::Attrs{{"axes", std::vector<int64_t>{}},
                                                      {"keepdims", false}, {"reduce_all", true}}}};
}

std::vector<schema::OpSample> bool_reduce_samples() {
  return {{{constant({{true, false}, {true, true}})},
           schema::Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", false}}},
          {{constant({{true, false}, {false, false}})},
           schema::Attrs{{"axes", std::vector<int64_t>{0}}, {"keepdims", true}}}};
}

// ---- Gradients ------------------------------------------------------------------
// A reduction's output (or its gradient) with the reduced axes kept as 1s,
// so it broadcasts against the input. A full reduction of an input of
// unknown rank gives a scalar, which broadcasts as it is.
Tensor with_reduced_axes_kept(const schema::GradContext& c, Tensor t) {
  const schema::Attrs& a = c.attrs;
  if (a.get_or<bool>("keepdims", false) || a.get_or<bool>("reduce_all", false)) return t;
  int rank = c.inputs[0].rank();
  std::vector<int> axes;
  for (int64_t axis : a.get_ints("axes")) axes.push_back(wrap_axis(axis, rank));
  std::sort(axes.begin(), axes.end());
  for (int axis : axes) t = expand_dims(t, axis);
  return t;
}

// How many input elements fed each output element, broadcast like the input.
Tensor reduced_count(const schema::GradContext& c) {
  const Tensor& x = c.inputs[0];
  int64_t n_in = x.shape().num_elements(), n_out = c.outputs[0].shape().num_elements();
  if (n_in >= 0 && n_out > 0) return constant(static_cast<double>(n_in / n_out), x.dtype());
  Tensor ones = ones_like(x);
  const schema::Attrs& a = c.attrs;
  if (a.get_or<bool>("reduce_all", false)) return sum(ones);
  return sum(ones, Axes(a.get_ints("axes")), true);
}

void sum_grad(schema::GradContext& c) { c.set(0, broadcast_like(with_reduced_axes_kept(c, c.grad(0)), c.inputs[0])); }
void mean_grad(schema::GradContext& c) {
  c.set(0, broadcast_like(with_reduced_axes_kept(c, c.grad(0)) / reduced_count(c), c.inputs[0]));
}
// The product of every other element of x's reduction group, from exclusive cumulative products
// at both ends (TF's way), so a zero in x gives the others' product, not 0/0. One reduced axis
// runs along it at any shape; several are moved to the front and flattened, which needs the
// shape. A shape known only at run time with several reduced axes, or a complex x, takes
// dy * prod / x (docs/design-notes.md, "Autodiff").
Tensor others_along(const Tensor& x, int64_t axis) {
  return cumprod(x, axis, true, false) * cumprod(x, axis, true, true);
}
std::vector<int> reduced_axes(const schema::GradContext& c) {
  const int rank = c.inputs[0].rank();
  std::vector<int> axes;
  if (c.attrs.get_or<bool>("reduce_all", false)) {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  } else {
    for (int64_t axis : c.attrs.get_ints("axes")) axes.push_back(wrap_axis(axis, rank));
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  }
  return axes;
}
Tensor others_over_flattened_axes(const Tensor& x, const std::vector<int>& axes) {
  const int rank = x.rank();
  std::vector<int64_t> perm, moved_dims;
  int64_t group = 1, kept = 1;
  for (int pass = 0; pass < 2; ++pass)
    for (int a = 0; a < rank; ++a) {
      const bool reduced = std::binary_search(axes.begin(), axes.end(), a);
      if (reduced != (pass == 0)) continue;
      perm.push_back(a);
      moved_dims.push_back(x.shape()[a]);
      (pass == 0 ? group : kept) *= x.shape()[a];
    }
  Tensor others = others_along(reshape(transpose(x, perm), Shape{group, kept}), 0);
  std::vector<int64_t> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<int64_t>(i);
  return transpose(reshape(others, Shape(moved_dims)), inverse);
}
void prod_grad(schema::GradContext& c) {
  const Tensor& x = c.inputs[0];
  const std::vector<int> axes = x.rank() < 0 ? std::vector<int>{} : reduced_axes(c);
  const bool one_axis = axes.size() == 1, flattenable = !axes.empty() && x.shape().is_fully_defined();
  if (is_complex(x.dtype()) || !(one_axis || flattenable)) {
    Tensor gy = with_reduced_axes_kept(c, c.grad(0) * c.outputs[0]);
    c.set(0, broadcast_like(gy, x) / x);
    return;
  }
  Tensor others = one_axis ? others_along(x, axes[0]) : others_over_flattened_axes(x, axes);
  c.set(0, others * broadcast_like(with_reduced_axes_kept(c, c.grad(0)), x));
}
void extreme_grad(schema::GradContext& c) {
  const Tensor& x = c.inputs[0];
  Tensor is_extreme = cast(equal(x, broadcast_like(with_reduced_axes_kept(c, c.outputs[0]), x)), x.dtype());
  Tensor count = c.attrs.get_or<bool>("reduce_all", false) ? sum(is_extreme)
                                                             : sum(is_extreme, Axes(c.attrs.get_ints("axes")), true);
  Tensor share = with_reduced_axes_kept(c, c.grad(0)) / count;
  c.set(0, is_extreme * broadcast_like(share, x));
}

#define KILN_REDUCE_OP(NAME, KIND, SAMPLES, GRAD, FLAGS)                                       \
  constexpr detail::OpDef k##NAME{.name = #NAME, .infer = reduce_infer<ReduceKind::KIND>,    \
                          .kernel = widened<reduce_kernel<ReduceKind::KIND>>, .flags = FLAGS,         \
                          .samples = SAMPLES, .gradient = GRAD};
KILN_REDUCE_OP(Sum, Sum, numeric_reduce_samples, sum_grad, schema::kShapeFromShapes)
KILN_REDUCE_OP(Mean, Mean, numeric_reduce_samples, mean_grad, schema::kShapeFromShapes)
KILN_REDUCE_OP(Prod, Prod, numeric_reduce_samples, prod_grad, schema::kNoFlags)
KILN_REDUCE_OP(Max, Max, numeric_reduce_samples, extreme_grad, schema::kShapeFromShapes)
KILN_REDUCE_OP(Min, Min, numeric_reduce_samples, extreme_grad, schema::kShapeFromShapes)
KILN_REDUCE_OP(Any, Any, bool_reduce_samples, nullptr, schema::kNotDifferentiable)
KILN_REDUCE_OP(All, All, bool_reduce_samples, nullptr, schema::kNotDifferentiable)
#undef KILN_REDUCE_OP

// ---- ArgMax, ArgMin -------------------------------------------------------------
void arg_infer(schema::InferContext& c) {
  DType d = c.dtype(0), out = c.attrs().get_dtype("output_type");
  if (!is_numeric(d) || d == DType::Bool) c.fail("input must be a number type, got {}", dtype_name(d));
  if (out != DType::Int32 && out != DType::Int64)
    c.fail("output_type must be int32 or int64, got {}", dtype_name(out));
  const Shape& in = c.shape(0);
  if (!in.has_known_rank()) {
    c.add_output(out, Shape::unknown_rank());
    return;
  }
  int64_t axis = c.attrs().get_int("axis");
  int a = wrap_axis(axis, in.rank());
  if (a < 0)
    c.fail("axis {} is out of range for input of rank {} (expected a value in [{}, {}))", axis,
           in.rank(), -in.rank(), in.rank());
  if (in[a] == 0)
    c.fail("the reduction axis {} of input shape {} is empty", axis, in.to_string());
  Shape s = in;
  s.erase(a);
  c.add_output(out, s);
}

// A NaN counts as more extreme than any number; the first one wins.
template <bool kMax, class T> bool beats(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) return best == best;
  }
  return kMax ? v > best : v < best;
}

template <bool kMax, class T, class I>
void arg_typed(const T* x, const Shape& in, int axis, I* out) {
  int64_t outer = dims_product(in, 0, axis), len = in[axis];
  int64_t inner = dims_product(in, axis + 1, in.rank());
  int64_t n_out = outer * inner;
  if (len == 0) {
    std::fill(out, out + n_out, I(0));
    return;
  }
  if (n_out == 0) return;
  if (inner == 1) {
    core::parallel_for(
        outer,
        [&](int64_t b, int64_t e) {
          for (int64_t o = b; o < e; ++o) {
            const T* row = x + o * len;
            int64_t best = 0;
            for (int64_t i = 1; i < len; ++i)
              if (beats<kMax>(row[i], row[best])) best = i;
            out[o] = static_cast<I>(best);
          }
        },
        std::max<int64_t>(1, core::kParallelGrain / len));
    return;
  }
  std::vector<T> best(static_cast<std::size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* block = x + o * len * inner;
    I* res = out + o * inner;
    std::copy(block, block + inner, best.begin());
    std::fill(res, res + inner, I(0));
    for (int64_t r = 1; r < len; ++r) {
      const T* row = block + r * inner;
      for (int64_t j = 0; j < inner; ++j) {
        if (beats<kMax>(row[j], best[j])) {
          best[j] = row[j];
          res[j] = static_cast<I>(r);
        }
      }
    }
  }
}

template <bool kMax> void arg_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  int axis = wrap_axis(c.attrs.get_int("axis"), in.rank());
  core::visit_numeric(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      if (c.outputs[0].dtype() == DType::Int32)
        arg_typed<kMax>(c.in<T>(0), in, axis, c.out<int32_t>(0));
      else
        arg_typed<kMax>(c.in<T>(0), in, axis, c.out<int64_t>(0));
    }
  });
}

std::vector<schema::OpSample> arg_samples() {
  return {{{constant({{1.f, 5.f, 3.f}, {4.f, 2.f, 6.f}})},
           schema::Attrs{{"axis", int64_t(1)}, {"output_type", DType::Int64}}},
          {{constant({{1, 5, 3}, {4, 2, 6}})},
           schema::Attrs{{"axis", int64_t(0)}, {"output_type", DType::Int32}}}};
}

constexpr detail::OpDef kArgMax{.name = "ArgMax", .infer = arg_infer, .kernel = widened<arg_kernel<true>>,
                                .flags = schema::kNotDifferentiable, .samples = arg_samples};
constexpr detail::OpDef kArgMin{.name = "ArgMin", .infer = arg_infer, .kernel = widened<arg_kernel<false>>,
                                .flags = schema::kNotDifferentiable, .samples = arg_samples};

Tensor reduce(const detail::OpDef& op, const Tensor& x, const Axes& axes, bool keepdims,
              const SourceLocation& loc) {
  const Tensor in[] = {x};
  if (!axes.all())
    return runtime::dispatch1(op, in, schema::Attrs{{"axes", axes.axes()}, {"keepdims", keepdims}}, loc);
  // Every axis: spelled out when the rank is known, so graphs read plainly.
  if (x.defined() && x.shape().has_known_rank()) {
    std::vector<int64_t> every(static_cast<std::size_t>(x.rank()));
    for (int i = 0; i < x.rank(); ++i) every[i] = i;
    return runtime::dispatch1(op, in, schema::Attrs{{"axes", std::move(every)}, {"keepdims", keepdims}}, loc);
  }
  return runtime::dispatch1(op, in,
                            schema::Attrs{{"axes", std::vector<int64_t>{}}, {"keepdims", keepdims},
                                          {"reduce_all", true}},
                            loc);
}

}  // namespace

void register_reduce_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kSum, &kMean, &kProd, &kMax, &kMin, &kAny, &kAll, &kArgMax, &kArgMin})
    r.add(*op);
}

}  // namespace ops

// Complex sums and means are those of the parts (complex addition is the
// parts' addition, so the values are the same).
Tensor sum(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  if (is_complex(x.dtype())) [[unlikely]]
    return complex(sum(real(x, loc), axes, keepdims, loc), sum(imag(x, loc), axes, keepdims, loc), loc);
  return ops::reduce(ops::kSum, x, axes, keepdims, loc);
}
Tensor mean(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  if (is_complex(x.dtype())) [[unlikely]]
    return complex(mean(real(x, loc), axes, keepdims, loc), mean(imag(x, loc), axes, keepdims, loc), loc);
  return ops::reduce(ops::kMean, x, axes, keepdims, loc);
}
Tensor prod(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  return ops::reduce(ops::kProd, x, axes, keepdims, loc);
}
Tensor max(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  return ops::reduce(ops::kMax, x, axes, keepdims, loc);
}
Tensor min(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  return ops::reduce(ops::kMin, x, axes, keepdims, loc);
}
Tensor any(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  return ops::reduce(ops::kAny, x, axes, keepdims, loc);
}
Tensor all(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  return ops::reduce(ops::kAll, x, axes, keepdims, loc);
}

Tensor argmax(const Tensor& x, int64_t axis, DType dtype, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kArgMax, in, schema::Attrs{{"axis", axis}, {"output_type", dtype}}, loc);
}
Tensor argmin(const Tensor& x, int64_t axis, DType dtype, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kArgMin, in, schema::Attrs{{"axis", axis}, {"output_type", dtype}}, loc);
}

}  // namespace kiln
