#pragma once
// Weight layouts: the packed forms in which MatMul's CPU kernel reads a
// float32 b [k, n] faster than dense, each named by its oneDNN format tag.
// The one home of layouts (docs/design-notes.md, "Weight layouts"): the
// layout-assignment pass (the pipeline's CPU phase) asks preferred_layout;
// ReadVariable's kReadLayout attr reads a variable packed (VariableState's
// cache); MatMul's kMatmulBLayout attr multiplies by a packed b. Everything
// else sees dense tensors.
//
// A weight that never changes while a graph runs (a captured tensor, a
// variable a graph only reads: a served model) is packed once per value, as
// XLA and Inductor pack weights. A trained weight is held packed alone where
// every read of it in the step can take the packed form (its forward, and its
// input gradient through multiply_transposed): Adam then updates it through
// the layout's rows, and a dense read makes the dense value once per update.
//
// A layout is one file that defines a MatmulLayout and one line in
// matmul_layout.cpp's list; deleting both deletes it.
//
// Apart from packed weights, MatMul's kernel may copy a dense b into longer
// rows for one product (the padding rule at the end of this file).
#include <cstdint>
#include <string_view>

#include "kiln/tensor.h"

namespace kiln::ops {

struct MatmulLayout {
  std::string_view name;  // oneDNN's format tag for b [k, n]
  // Whether a product reading a matrix transposed may read its transpose
  // packed instead (the transposed product's bits).
  bool packs_transpose;
  // Whether the layout can hold a [k, n] matrix.
  bool (*fits)(int64_t k, int64_t n);
  // Whether MatMul reads b [k, n] fastest in this layout for a [rows, k],
  // with the dense product's bits (asked of oneDNN once per shape).
  bool (*wants)(int64_t rows, int64_t k, int64_t n);
  Shape (*packed_shape)(int64_t k, int64_t n);
  // The [k, n] that `packed` stands for; false where no [k, n] packs to it.
  bool (*unpacked_shape)(const Shape& packed, int64_t& k, int64_t& n);
  // A float32 [k, n] matrix packed (k and n fit).
  Tensor (*pack)(const Tensor& b);
  // out [rows, n] = a [rows, k] b, b packed; false where it cannot run.
  bool (*multiply)(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out);
  // For a trained weight held packed alone (all null where the layout does
  // not serve one): the dense matrix; where element (row, col) of the
  // [k, n] matrix lies in the packed tensor, in runs of `run` elements along
  // a row (the sink Adam's update writes through, in place); and the input
  // gradient's product, out [rows, n] = a [rows, k] b^T with b [n, k]
  // packed, where multiplies_transposed says it runs with the dense
  // product's bits and faster (multiply_transposed returns false where it
  // cannot run).
  Tensor (*unpack)(const Tensor& packed) = nullptr;
  int64_t (*run)(const Tensor& packed) = nullptr;
  int64_t (*offset)(const Tensor& packed, int64_t row, int64_t col) = nullptr;
  bool (*multiplies_transposed)(int64_t rows, int64_t k, int64_t n) = nullptr;
  bool (*multiply_transposed)(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b,
                              float* out) = nullptr;
};

// The layout named `name`, or null.
const MatmulLayout* find_layout(std::string_view name);
// The layout MatMul reads b [k, n] fastest in for a [rows, k] (float32, a not
// transposed), or null: dense. `transposed`: b is a matrix [n, k] read
// transposed, whose transpose would be packed.
const MatmulLayout* preferred_layout(int64_t rows, int64_t k, int64_t n, bool transposed = false);
// A float32 matrix, or (`transposed`) its transpose, packed.
Tensor pack(const MatmulLayout& layout, const Tensor& matrix, bool transposed);

// MatMul's graph-internal attr: b comes packed in the layout of this name (a
// a matrix not transposed; b transposed only where the layout multiplies so).
inline constexpr const char* kMatmulBLayout = "b_layout";
// ReadVariable's graph-internal attrs: the value comes packed in the layout
// of this name, of the value or, with kReadTransposed, of its transpose.
inline constexpr const char* kReadLayout = "layout";
inline constexpr const char* kReadTransposed = "layout_of_transpose";

// ---- MatMul's copy of b into longer rows, per product ------------------------
// MatMul's float32 oneDNN path copies b (one [k, n] matrix, not transposed)
// into rows kMatmulBPad elements longer first where matmul_pads_b says so: on
// CPUs without AVX-512, oneDNN 2.6's sgemm reads b in place for these shapes,
// and rows a multiple of 4 KB apart share a few cache sets, while the same
// kernel on the copy gives the same bits (docs/design-notes.md, "Foundation";
// the figures are in docs/perf-log.md).
inline constexpr int64_t kMatmulBPad = 16;
// The largest b copied (16M elements: the copy stays with the thread).
inline constexpr int64_t kMatmulMaxPaddedB = int64_t(1) << 24;
bool matmul_pads_b(int64_t rows, int64_t k, int64_t n);
// kByRule: matmul_pads_b decides; kAlways and kNever are for tests that
// compare the two paths' bits and benchmarks that time them. Primitives
// already made keep their choice (the mode is part of their cache key).
enum class MatmulBPadding { kByRule, kAlways, kNever };
void set_matmul_b_padding(MatmulBPadding mode);
MatmulBPadding matmul_b_padding();
// The row stride b gets for a product of `rows` rows under the current mode:
// n, or n + kMatmulBPad (also the banded weight gradients' of the fused Adam,
// exec/fused_adam_op.cpp, whose bands are such products).
int64_t matmul_b_row_stride(int64_t rows, int64_t k, int64_t n);
// `rows` rows of `cols` floats from `from` (rows `from_stride` apart) to `to`
// (rows `to_stride` apart): b into its longer rows (the threads share the rows).
void copy_rows(const float* from, int64_t from_stride, float* to, int64_t to_stride, int64_t rows, int64_t cols);

}  // namespace kiln::ops
