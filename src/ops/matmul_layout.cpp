// The registry of weight layouts (ops/matmul_layout.h).
#include "ops/matmul_layout.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/parallel.h"
#include "core/tensor_impl.h"

namespace kiln::ops {

// Each layout's definition, in its own file.
const MatmulLayout& ba16a64b_layout();   // matmul_layout_ba16a64b.cpp
const MatmulLayout& ab_padded_layout();  // matmul_layout_ab_padded.cpp

namespace {

// In order of preference.
const MatmulLayout* const kLayouts[] = {&ba16a64b_layout(), &ab_padded_layout()};

}  // namespace

const MatmulLayout* find_layout(std::string_view name) {
  for (const MatmulLayout* l : kLayouts)
    if (l->name == name) return l;
  return nullptr;
}

const MatmulLayout* preferred_layout(int64_t rows, int64_t k, int64_t n, bool transposed) {
  for (const MatmulLayout* l : kLayouts)
    if ((!transposed || l->packs_transpose) && l->wants(rows, k, n)) return l;
  return nullptr;
}

Tensor pack(const MatmulLayout& layout, const Tensor& matrix, bool transposed) {
  if (!transposed) return layout.pack(matrix);
  // Once per value: a plain transpose, rows of the result shared by the threads.
  const int64_t rows = matrix.shape()[0], cols = matrix.shape()[1];
  Tensor t = core::make_tensor(DType::Float32, Shape{cols, rows});
  const float* from = core::data_of<float>(matrix);
  float* to = core::data_of<float>(t);
  core::parallel_for(
      cols,
      [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c)
          for (int64_t r = 0; r < rows; ++r) to[c * rows + r] = from[r * cols + c];
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(rows, 1)));
  return layout.pack(t);
}

namespace {

std::atomic<int> b_padding_mode{static_cast<int>(MatmulBPadding::kByRule)};

// oneDNN's own view of the CPU (ONEDNN_MAX_CPU_ISA included), not Kiln's
// AVX-512 check for its own kernels: the padding rule is about which sgemm
// oneDNN runs.
bool cpu_has_avx512_core() {
  static const bool has = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;
  }();
  return has;
}

}  // namespace

bool matmul_pads_b(int64_t rows, int64_t k, int64_t n) {
  // oneDNN 2.6's AVX2 sgemm takes its no-copy kernel when 1/M + 1/N >= 0.0038
  // (its FORCE_NOCOPY_THRESH; M and N of the product), which reads b's rows in
  // place; rows a multiple of 4 KB apart then fall into few cache sets. Its
  // AVX-512 sgemm avoids no-copy for such strides itself. With fewer than 32
  // rows, or rows 2 KB apart, the copy cost as much as it saved or more in
  // Kiln's own loop of warm calls (docs/design-notes.md, "Foundation"); past
  // kMatmulMaxPaddedB elements the thread would keep too large a copy.
  return !cpu_has_avx512_core() && n % 1024 == 0 && k >= 16 && rows >= 32 && k * n <= kMatmulMaxPaddedB &&
         1.0 / static_cast<double>(rows) + 1.0 / static_cast<double>(n) >= 0.0038;
}

void set_matmul_b_padding(MatmulBPadding mode) {
  b_padding_mode.store(static_cast<int>(mode), std::memory_order_relaxed);
}

MatmulBPadding matmul_b_padding() {
  return static_cast<MatmulBPadding>(b_padding_mode.load(std::memory_order_relaxed));
}

int64_t matmul_b_row_stride(int64_t rows, int64_t k, int64_t n) {
  const MatmulBPadding mode = matmul_b_padding();
  const bool pad = mode == MatmulBPadding::kAlways || (mode == MatmulBPadding::kByRule && matmul_pads_b(rows, k, n));
  return pad ? n + kMatmulBPad : n;
}

void copy_rows(const float* from, int64_t from_stride, float* to, int64_t to_stride, int64_t rows, int64_t cols) {
  core::parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          std::memcpy(to + r * to_stride, from + r * from_stride, static_cast<std::size_t>(cols) * sizeof(float));
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(cols, 1)));
}

}  // namespace kiln::ops
