// ab_padded: b [k, n] row-major with each row kMatmulBPad floats longer (a
// [k, n + 16] tensor, the padding zeros): oneDNN's plain `ab` with leading
// dimension n + 16. Where MatMul's rule copies b into such rows for every
// product (oneDNN 2.6's AVX2 no-copy sgemm on rows a multiple of 4 KB apart,
// matmul_pads_b), a weight kept so spares the copy, and the same primitive
// gives the same bits; read transposed (a dense layer's input gradient) too,
// where oneDNN's gemm reads the longer rows with the bits of the dense ones
// (MatmulPadding and Layouts tests).
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/gemv.h"
#include "ops/matmul_layout.h"
#include "ops/onednn.h"

namespace kiln::ops {

namespace {

constexpr int64_t kPad = kMatmulBPad;

bool fits(int64_t k, int64_t n) { return k >= 1 && n >= 1; }

// Where MatMul would copy b into longer rows for this product.
bool wants(int64_t rows, int64_t k, int64_t n) { return matmul_b_row_stride(rows, k, n) == n + kPad; }

Shape packed_shape(int64_t k, int64_t n) { return Shape{k, n + kPad}; }

bool unpacked_shape(const Shape& packed, int64_t& k, int64_t& n) {
  if (!packed.is_fully_defined() || packed.rank() != 2 || packed[1] <= kPad) return false;
  k = packed[0];
  n = packed[1] - kPad;
  return true;
}

Tensor pack(const Tensor& b) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  Tensor longer = core::make_tensor(DType::Float32, packed_shape(k, n));
  float* to = core::data_of<float>(longer);
  for (int64_t r = 0; r < k; ++r) std::fill_n(to + r * (n + kPad) + n, kPad, 0.f);
  copy_rows(core::data_of<float>(b), n, to, n + kPad, k, n);
  return longer;
}

Tensor unpack(const Tensor& packed) {
  const int64_t k = packed.shape()[0], n = packed.shape()[1] - kPad;
  Tensor b = core::make_tensor(DType::Float32, Shape{k, n});
  copy_rows(core::data_of<float>(packed), n + kPad, core::data_of<float>(b), n, k, n);
  return b;
}

// A row is one run.
int64_t run(const Tensor& packed) { return packed.shape()[1] - kPad; }
int64_t offset(const Tensor& packed, int64_t row, int64_t col) { return row * packed.shape()[1] + col; }

// out [rows, n] = a [rows, k] op(b): b [k, n] in longer rows, or (transposed)
// b [n, k] in longer rows read transposed; MatMul's primitive with b
// described by its row stride.
bool product(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out, bool transposed) {
  onednn::PrimitiveKey key(/*kind=*/11);
  for (int64_t v : {rows, k, n, static_cast<int64_t>(transposed)}) key.add(v);
  auto desc = [](int64_t k, int64_t n, int64_t transposed) {
    using dims = dnnl::memory::dims;
    return onednn::plain_desc(dims{k, n}, transposed ? dims{1, k + kPad} : dims{n + kPad, 1});
  };
  return onednn::matmul_with_b(key, rows, k, n, desc, transposed, a, core::data_of<float>(b), out);
}

// A few rows run gemv_f32, as on the dense b (ops/gemv.h).
bool multiply(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out) {
  if (rows <= kGemvMaxRows) {
    gemv_f32({a, rows, k, 1}, core::data_of<float>(b), n + kPad, k, n, out);
    return true;
  }
  return product(a, rows, k, n, b, out, false);
}

// The input gradient reads the forward's longer rows wherever the forward
// took them (the pass asks this only of a weight its forward reads so).
bool multiplies_transposed(int64_t, int64_t k, int64_t n) { return fits(n, k); }

bool multiply_transposed(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out) {
  return product(a, rows, k, n, b, out, true);
}

}  // namespace

const MatmulLayout& ab_padded_layout() {
  // A product of the transpose packed would run another gemm than the
  // transposed product, with other bits.
  // The fields in MatmulLayout's order.
  static const MatmulLayout layout{"ab_padded", false, fits, wants, packed_shape, unpacked_shape, pack, multiply,
                                   unpack, run, offset, multiplies_transposed, multiply_transposed};
  return layout;
}

}  // namespace kiln::ops
