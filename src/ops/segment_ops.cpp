// Segment reductions (tf.math.segment_* / unsorted_segment_*): the rows of
// `data` are summed (or maxed) into the segment their id names.
// UnsortedSegmentSum/Max take any ids and the number of segments (a negative
// id drops its row, as TF's CPU kernels); SegmentSum takes sorted ids and
// makes ids[-1] + 1 segments, known only when the ids are, so it allocates its
// own output. The means are composed of sums, as TF's Python does for
// unsorted_segment_mean.
#include <algorithm>
#include <limits>
#include <vector>

#include "kiln/array.h"
#include "kiln/math.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

void check_data_and_ids(schema::InferContext& c) {
  DType d = c.dtype(0);
  if (d == DType::Bool || d == DType::String)
    c.fail("data must be a number type, got {}", dtype_name(d));
  if (!is_index_dtype(c.dtype(1)))
    c.fail("segment_ids must be int32 or int64, got {}", dtype_name(c.dtype(1)));
}

// data.shape[ids.rank:] after `rows` segments; unknown rank when data's is.
Shape segments_shape(const Shape& data, int ids_rank, int64_t rows) {
  if (!data.has_known_rank()) return Shape::unknown_rank();
  Shape out{rows};
  for (int k = ids_rank; k < data.rank(); ++k) out.push_back(data[k]);
  return out;
}

// Sums (or maxes) row i of data, `inner` elements, into row ids[i] of out.
// Negative ids are dropped; ids past `rows` are the caller's to reject.
template <bool kMax, class T, class I>
void reduce_rows(const T* data, const I* ids, int64_t count, int64_t inner, int64_t rows, T* out) {
  std::fill(out, out + rows * inner, kMax ? std::numeric_limits<T>::lowest() : T(0));
  for (int64_t i = 0; i < count; ++i) {
    if (ids[i] < 0) continue;
    const T* src = data + i * inner;
    T* dst = out + static_cast<int64_t>(ids[i]) * inner;
    for (int64_t j = 0; j < inner; ++j) {
      if constexpr (kMax) dst[j] = std::max(dst[j], src[j]);
      else dst[j] = static_cast<T>(dst[j] + src[j]);
    }
  }
}

template <bool kMax> void reduce_kernel(schema::KernelContext& c, int64_t rows) {
  int64_t count = c.inputs[1].size();
  int64_t inner = count ? c.inputs[0].size() / count : 0;
  core::visit_numeric(c.inputs[0].dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      visit_index(c.inputs[1].dtype(),
                  [&]<class I>() { reduce_rows<kMax>(c.in<T>(0), c.in<I>(1), count, inner, rows, c.out<T>(0)); });
    }
  });
}

// ---- UnsortedSegmentSum / UnsortedSegmentMax(data, segment_ids) -------------
void unsorted_infer(schema::InferContext& c) {
  check_data_and_ids(c);
  int64_t rows = c.attrs().get_int("num_segments");
  if (rows < 0) c.fail("num_segments must be >= 0, got {}", rows);
  const Shape& data = c.shape(0);
  const Shape& ids = c.shape(1);
  if (data.has_known_rank() && ids.has_known_rank()) {
    bool prefix = ids.rank() <= data.rank();
    for (int k = 0; prefix && k < ids.rank(); ++k) prefix = ids[k] < 0 || data[k] < 0 || ids[k] == data[k];
    if (!prefix)
      c.fail("data.shape = {} does not start with segment_ids.shape = {}", data.to_string(), ids.to_string());
  }
  c.add_output(c.dtype(0), ids.has_known_rank() ? segments_shape(data, ids.rank(), rows) : Shape::unknown_rank());
}

template <bool kMax> void unsorted_kernel(schema::KernelContext& c) {
  int64_t rows = c.attrs.get_int("num_segments");
  visit_index(c.inputs[1].dtype(), [&]<class I>() {
    const I* ids = c.in<I>(1);
    for (int64_t i = 0, n = c.inputs[1].size(); i < n; ++i)
      if (ids[i] >= rows)
        throw InvalidArgument(fmt::format("{}: segment_ids[{}] = {} is out of range [0, {})", c.op.name, i,
                                          static_cast<int64_t>(ids[i]), rows));
  });
  reduce_kernel<kMax>(c, rows);
}

std::vector<schema::OpSample> unsorted_samples() {
  schema::Attrs three{{"num_segments", int64_t(3)}};
  return {{{constant({1.5f, -2.f, 3.f, 0.5f}), constant({0, 2, 0, -1})}, three},
          {{constant({{1.0, 2.0}, {3.0, -4.0}, {5.0, 6.5}}), constant({int64_t(2), int64_t(2), int64_t(0)})}, three},
          {{constant({{1.0, 2.5, -1.0}, {3.0, -4.0, 0.25}}), constant({{1, 0, 1}, {2, 2, 1}})}, three},
          {{constant({4, 1, 7}), constant({1, 1, 0})}, three}};
}

// Max: every segment holds an element, since an empty one is the dtype's
// lowest value, which drowns finite differences (kept, in a special sample).
std::vector<schema::OpSample> unsorted_max_samples() {
  schema::Attrs two{{"num_segments", int64_t(2)}}, three{{"num_segments", int64_t(3)}};
  return {{{constant({1.5f, -2.f, 3.f, 0.5f}), constant({0, 1, 0, -1})}, two},
          {{constant({{1.0, 2.0}, {3.0, -4.0}, {5.0, 6.5}}), constant({int64_t(1), int64_t(1), int64_t(0)})}, two},
          {{constant({{1.0, 2.5, -1.0}, {3.0, -4.0, 0.25}}), constant({{1, 0, 1}, {2, 2, 1}})}, three},
          {{constant({4, 1, 7}), constant({1, 1, 0})}, three},
          {{constant({1.5f, -2.f}), constant({0, 2})}, three, true}};
}

void unsorted_segment_sum_grad(schema::GradContext& c);
void unsorted_segment_max_grad(schema::GradContext& c);

constexpr detail::OpDef kUnsortedSegmentSum{.name = "UnsortedSegmentSum", .infer = unsorted_infer,
                                            .kernel = widened<unsorted_kernel<false>>, .samples = unsorted_samples,
                                            .gradient = unsorted_segment_sum_grad};
constexpr detail::OpDef kUnsortedSegmentMax{.name = "UnsortedSegmentMax", .infer = unsorted_infer,
                                            .kernel = widened<unsorted_kernel<true>>, .samples = unsorted_max_samples,
                                            .gradient = unsorted_segment_max_grad};

Tensor unsorted(const detail::OpDef& op, const Tensor& data, const Tensor& ids, int64_t num_segments,
                const SourceLocation& loc) {
  const Tensor in[] = {data, ids};
  return runtime::dispatch1(op, in, schema::Attrs{{"num_segments", num_segments}}, loc);
}

// Row ids[i] of t for each i, zeros where ids[i] is negative (TF's
// _GatherDropNegatives): shaped as data.
std::pair<Tensor, Tensor> gather_drop_negatives(const Tensor& t, const Tensor& ids) {
  Tensor gathered = gather(t, maximum(ids, 0));
  Tensor kept = greater_equal(ids, 0);
  while (kept.shape().rank() < gathered.shape().rank()) kept = expand_dims(kept, -1);
  return {where(kept, gathered, zeros_like(gathered)), kept};
}

void unsorted_segment_sum_grad(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, gather_drop_negatives(c.grad(0), c.inputs[1]).first);
}

// TF's _UnsortedSegmentMinOrMaxGrad: the gradient is shared equally by the
// elements that equal their segment's max.
void unsorted_segment_max_grad(schema::GradContext& c) {
  if (!c.needs(0)) return;
  const Tensor& data = c.inputs[0];
  const Tensor& ids = c.inputs[1];
  auto [maxes, kept] = gather_drop_negatives(c.outputs[0], ids);
  Tensor selected = logical_and(equal(data, maxes), kept);
  Tensor how_many = unsorted(kUnsortedSegmentSum, cast(selected, data.dtype()), ids,
                             c.attrs.get_int("num_segments"), SourceLocation());
  Tensor shared = gather_drop_negatives(divide(c.grad(0), how_many), ids).first;
  c.set(0, where(selected, shared, zeros_like(shared)));
}

// ---- SegmentSum(data, segment_ids), ids sorted -------------------------------
// The number of segments when the ids are known: ids[-1] + 1.
template <class I> int64_t sorted_segments(const I* ids, int64_t n, const char* op) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0)
      throw InvalidArgument(fmt::format("{}: segment ids must be >= 0, got segment_ids[{}] = {}", op, i,
                                        static_cast<int64_t>(ids[i])));
    if (i > 0 && ids[i] < ids[i - 1])
      throw InvalidArgument(fmt::format("{}: segment ids are not increasing: segment_ids[{}] = {} after {}", op, i,
                                        static_cast<int64_t>(ids[i]), static_cast<int64_t>(ids[i - 1])));
  }
  return n ? static_cast<int64_t>(ids[n - 1]) + 1 : 0;
}

void segment_sum_infer(schema::InferContext& c) {
  check_data_and_ids(c);
  const Shape& data = c.shape(0);
  const Shape& ids = c.shape(1);
  if (ids.has_known_rank() && ids.rank() != 1) c.fail("segment_ids should be a vector, got shape {}", ids.to_string());
  if (data.has_known_rank() && data.rank() < 1) c.fail("data must have rank >= 1, got a scalar");
  if (data.has_known_rank() && ids.has_known_rank() && data[0] >= 0 && ids[0] >= 0 && data[0] != ids[0])
    c.fail("segment_ids should be the same size as dimension 0 of data: segment_ids.shape = {}, data.shape = {}",
           ids.to_string(), data.to_string());
  int64_t rows = -1;
  if (const Tensor* v = c.value(1))
    visit_index(v->dtype(), [&]<class I>() { rows = sorted_segments(core::data_of<I>(*v), v->size(), "SegmentSum"); });
  c.add_output(c.dtype(0), segments_shape(data, 1, rows));
}

void segment_sum_kernel(schema::KernelContext& c) {
  int64_t rows = visit_index(c.inputs[1].dtype(), [&]<class I>() {
    return sorted_segments(c.in<I>(1), c.inputs[1].size(), "SegmentSum");
  });
  c.outputs[0] = core::make_tensor(c.inputs[0].dtype(), segments_shape(c.in_shape(0), 1, rows));
  reduce_kernel<false>(c, rows);
}

std::vector<schema::OpSample> segment_sum_samples() {
  return {{{constant({1.5f, -2.f, 3.f, 0.5f}), constant({0, 0, 1, 3})}, schema::Attrs{}},
          {{constant({{1.0, 2.0}, {3.0, -4.0}, {5.0, 6.5}}), constant({int64_t(0), int64_t(1), int64_t(1)})},
           schema::Attrs{}},
          {{constant({4, 1, 7}), constant({0, 0, 0})}, schema::Attrs{}}};
}

void segment_sum_grad(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, gather(c.grad(0), c.inputs[1]));
}

constexpr detail::OpDef kSegmentSum{.name = "SegmentSum", .infer = segment_sum_infer, .kernel = widened<segment_sum_kernel>,
                                    .flags = schema::kSetsOwnOutputs, .samples = segment_sum_samples,
                                    .gradient = segment_sum_grad};

// sums / max(counts, 1), the counts shaped to broadcast over sums' rows.
Tensor divide_by_counts(const Tensor& sums, Tensor counts) {
  counts = maximum(counts, 1);
  while (counts.shape().rank() < sums.shape().rank()) counts = expand_dims(counts, -1);
  return divide(sums, counts);
}

}  // namespace

void register_segment_ops(schema::OpRegistry& r) {
  r.add(kUnsortedSegmentSum);
  r.add(kUnsortedSegmentMax);
  r.add(kSegmentSum);
}

}  // namespace ops

Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            SourceLocation loc) {
  return ops::unsorted(ops::kUnsortedSegmentSum, data, segment_ids, num_segments, loc);
}
Tensor unsorted_segment_max(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            SourceLocation loc) {
  return ops::unsorted(ops::kUnsortedSegmentMax, data, segment_ids, num_segments, loc);
}
Tensor unsorted_segment_mean(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             SourceLocation loc) {
  Tensor counts = unsorted_segment_sum(ones_like(segment_ids, data.dtype(), loc), segment_ids, num_segments, loc);
  return ops::divide_by_counts(unsorted_segment_sum(data, segment_ids, num_segments, loc), counts);
}
Tensor segment_sum(const Tensor& data, const Tensor& segment_ids, SourceLocation loc) {
  const Tensor in[] = {data, segment_ids};
  return runtime::dispatch1(ops::kSegmentSum, in, schema::Attrs{}, loc);
}
Tensor segment_mean(const Tensor& data, const Tensor& segment_ids, SourceLocation loc) {
  Tensor counts = segment_sum(ones_like(segment_ids, data.dtype(), loc), segment_ids, loc);
  return ops::divide_by_counts(segment_sum(data, segment_ids, loc), counts);
}

}  // namespace kiln
