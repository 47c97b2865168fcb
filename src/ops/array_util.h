#pragma once
// Helpers shared by the reduction and array ops files, and per-thread scratch.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype_switch.h"
#include "schema/op_def.h"

namespace kiln::ops {

// `n` values of this thread's scratch, kept between calls (a call allocates
// nothing once warm). One user at a time per thread: the kernels that take it
// (the pooling gradients, the banded Adam update) never nest.
template <class T>
T* thread_scratch(int64_t n) {
  thread_local std::vector<T> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}

// Indices (gather, TensorArray rows) are int32 or int64.
inline bool is_index_dtype(DType d) { return d == DType::Int32 || d == DType::Int64; }

// Calls f.template operator()<I>() with I the index type of `d` (int32, else
// int64).
template <class F> decltype(auto) visit_index(DType d, F&& f) {
  if (d == DType::Int32) return f.template operator()<int32_t>();
  return f.template operator()<int64_t>();
}

// Calls f.template operator()<E>() with a type of the dtype's element size:
// shape ops only move elements, so one instantiation per size is enough.
// (complex128's 16 bytes move as a pair of uint64.)
struct Bytes16 {
  uint64_t lo, hi;
  friend bool operator==(const Bytes16&, const Bytes16&) = default;
};
template <class F> decltype(auto) visit_element(DType dtype, F&& f) {
  if (dtype == DType::String) return f.template operator()<std::string>();
  if (dtype == DType::Complex128) return f.template operator()<Bytes16>();
  switch (dtype_size(dtype)) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    default: return f.template operator()<uint64_t>();
  }
}

// `axis` in [-rank, rank) as an index in [0, rank); -1 when out of range.
inline int wrap_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return -1;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// "[1, -1]"
std::string ints_to_string(const std::vector<int64_t>& v);

// The product of dims [begin, end) of a concrete shape.
inline int64_t dims_product(const Shape& s, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= s[i];
  return n;
}

// Copies n elements laid out with a stride into contiguous `out`.
template <class E> void copy_strided(const E* in, int64_t stride, int64_t n, E* out) {
  if (stride == 1) {
    std::copy_n(in, n, out);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = in[i * stride];
}

// `whole` seen as `outer` rows, each made of the parts' rows one after another
// (part i's row is size_i / outer elements). Concat and Pack copy the parts
// into whole (to_whole); SplitLike cuts whole into the parts.
void copy_parts(const Tensor& whole, std::span<const Tensor> parts, int64_t outer, bool to_whole);

// Tile's output row `row` (a row: all dims but the last) repeats this input
// row; both shapes concrete, rank >= 1.
inline int64_t tiled_row_source(int64_t row, const Shape& in, const Shape& tiled) {
  int r = in.rank();
  int64_t src = 0, stride = in[r - 1];
  for (int k = r - 2; k >= 0; --k) {
    src += (row % tiled[k]) % in[k] * stride;
    row /= tiled[k];
    stride *= in[k];
  }
  return src;
}

// The array ops live in several files; register_array_ops calls these.
void register_shape_ops(schema::OpRegistry& registry);
void register_join_ops(schema::OpRegistry& registry);
void register_join_grad_ops(schema::OpRegistry& registry);
void register_slice_ops(schema::OpRegistry& registry);
void register_gather_ops(schema::OpRegistry& registry);
void register_tensor_array_ops(schema::OpRegistry& registry);

}  // namespace kiln::ops
