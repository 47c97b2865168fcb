// TopKV2 (tf.math.top_k) and, built on it as TF builds them, sort and argsort.
// Along the last axis; ties keep the lower index first (a stable order) and a
// NaN ranks above every number, so the order is total and the same eagerly and
// in graphs.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/dtype_switch.h"
#include "kiln/array.h"
#include "kiln/math.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

void top_k_infer(schema::InferContext& c) {
  DType d = c.dtype(0);
  if (!is_floating(d) && d != DType::Int32 && d != DType::Int64 && d != DType::UInt8)
    c.fail("input must be a float or integer tensor, got {}", dtype_name(d));
  const Shape& s = c.shape(0);
  int64_t k = c.attrs().get_int("k");
  if (k < 0) c.fail("k must be non-negative, got {}", k);
  if (!s.has_known_rank()) {
    c.add_output(d, Shape::unknown_rank());
    c.add_output(DType::Int32, Shape::unknown_rank());
    return;
  }
  if (s.rank() == 0) c.fail("input must have rank 1 or more, got a scalar");
  int64_t n = s[s.rank() - 1];
  if (n >= 0 && k > n) c.fail("input must have at least k={} columns, it has {}", k, n);
  Shape out = s;
  out[s.rank() - 1] = k;
  c.add_output(d, out);
  c.add_output(DType::Int32, out);
}

template <class T> bool ranks_above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

void top_k_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int64_t n = s[s.rank() - 1], rows = n == 0 ? 0 : c.inputs[0].size() / n, k = c.attrs.get_int("k");
  const bool ascending = c.attrs.get_bool("ascending");
  core::visit_numeric(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = c.in<T>(0);
      T* values = c.out<T>(0);
      int32_t* indices = c.out<int32_t>(1);
      std::vector<int32_t> order(static_cast<std::size_t>(n));
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = x + r * n;
        std::iota(order.begin(), order.end(), 0);
        auto before = [&](int32_t i, int32_t j) {
          return ascending ? ranks_above(row[j], row[i]) : ranks_above(row[i], row[j]);
        };
        if (k < n) std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t i, int32_t j) {
          return before(i, j) || (!before(j, i) && i < j);
        });
        else std::stable_sort(order.begin(), order.end(), before);
        for (int64_t i = 0; i < k; ++i) {
          values[r * k + i] = row[order[static_cast<std::size_t>(i)]];
          indices[r * k + i] = order[static_cast<std::size_t>(i)];
        }
      }
    }
  });
}

// The values' gradient goes back to the positions they came from.
void top_k_grad(schema::GradContext& c) {
  const Shape& s = c.inputs[0].shape();
  int64_t n = s.has_known_rank() ? s[s.rank() - 1] : -1;
  if (n < 0) throw Unimplemented("TopKV2's gradient needs the input's last dimension known");
  Tensor hot = one_hot(c.outputs[1], n, 1, 0, -1, c.inputs[0].dtype());  // [..., k, n]
  c.set(0, sum(hot * expand_dims(c.grad(0), -1), -2));
}

schema::Attrs top_k_attrs(int64_t k, bool ascending) { return schema::Attrs{{"k", k}, {"ascending", ascending}}; }

std::vector<schema::OpSample> top_k_samples() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Expected values written out: largest first, ties in index order, NaN above every number.
  return {{{constant({3.f, -1.f, 4.5f, 0.25f, 2.f})},
           top_k_attrs(3, false),
           false,
           {constant({4.5f, 3.f, 2.f}), constant({2, 0, 4})}},
          {{constant({{1.0, 3.5, -2.0}, {0.5, -0.25, 2.75}})}, top_k_attrs(3, true)},
          {{constant({{5, 1, 5, 2}, {0, 7, 7, 7}})},
           top_k_attrs(2, false),
           false,
           {constant({{5, 5}, {7, 7}}), constant({{0, 2}, {1, 2}})}},
          {{constant({2.f, nan, 2.f, -1.f})},
           top_k_attrs(4, false),
           true,
           {constant({nan, 2.f, 2.f, -1.f}), constant({1, 0, 2, 3})}}};
}

constexpr detail::OpDef kTopK{.name = "TopKV2", .infer = top_k_infer, .kernel = top_k_kernel, .samples = top_k_samples,
                              .gradient = top_k_grad};

std::pair<Tensor, Tensor> run_top_k(const Tensor& x, int64_t k, bool ascending, const SourceLocation& loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(kTopK, in, top_k_attrs(k, ascending), loc);
  return {std::move(out[0]), std::move(out[1])};
}

// sort/argsort along `axis`: the axis is moved last, sorted, moved back.
std::pair<Tensor, Tensor> sort_along(const Tensor& x, int64_t axis, bool descending, const SourceLocation& loc) {
  int rank = x.rank();
  if (rank < 1) throw InvalidArgument("sort: the input must have rank 1 or more, got a scalar");
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw InvalidArgument("sort: axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  int64_t n = x.shape()[static_cast<int>(a)];
  if (n < 0) throw InvalidArgument("sort: the sorted axis must have a known size");
  if (a == rank - 1) return run_top_k(x, n, !descending, loc);
  std::vector<int64_t> perm(static_cast<std::size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(a)], perm.back());
  auto [v, i] = run_top_k(transpose(x, perm, loc), n, !descending, loc);
  return {transpose(v, perm, loc), transpose(i, perm, loc)};
}

}  // namespace

void register_sort_ops(schema::OpRegistry& r) { r.add(kTopK); }

}  // namespace ops

std::pair<Tensor, Tensor> top_k(const Tensor& x, int64_t k, SourceLocation loc) {
  return ops::run_top_k(x, k, false, loc);
}
Tensor sort(const Tensor& x, int64_t axis, bool descending, SourceLocation loc) {
  return ops::sort_along(x, axis, descending, loc).first;
}
Tensor argsort(const Tensor& x, int64_t axis, bool descending, SourceLocation loc) {
  return ops::sort_along(x, axis, descending, loc).second;
}

}  // namespace kiln
