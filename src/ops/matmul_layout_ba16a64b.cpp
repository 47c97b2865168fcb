// BA16a64b: b [k, n] as n / 64 column panels one after another, each a
// row-major [k, 64] block (a [n / 64, k, 64] tensor). oneDNN's AVX-512 matmul
// (brgemm) picks this layout for its b itself and reads a dense b markedly
// slower at few rows; given b so, it runs the same kernel with the same bits
// (Panels.* tests). Asked of oneDNN per shape, so nothing here assumes a CPU.
#include <algorithm>
#include <cstring>

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "ops/gemv.h"
#include "ops/matmul_layout.h"
#include "ops/onednn.h"

namespace kiln::ops {

namespace {

constexpr int64_t kWidth = 64;

dnnl::memory::desc panels_desc(int64_t k, int64_t n) {
  return dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::BA16a64b);
}

// Whole blocks of 16 rows and 64 columns (oneDNN would pad others).
bool fits(int64_t k, int64_t n) { return k >= 16 && k % 16 == 0 && n >= kWidth && n % kWidth == 0; }

// Where oneDNN's matmul, free to choose b's layout for these shapes, picks
// exactly this one: brgemm on AVX-512 (ONEDNN_MAX_CPU_ISA included), and
// more rows than gemv_f32 takes.
bool wants(int64_t rows, int64_t k, int64_t n) {
  if (rows <= kGemvMaxRows || !fits(k, n)) return false;
  struct Answer {
    bool yes = false;
  };
  onednn::PrimitiveKey key(/*kind=*/8);
  for (int64_t v : {rows, k, n}) key.add(v);
  return onednn::cached<Answer>(key, [&] {
    auto answer = std::make_shared<Answer>();
    try {
      using dims = dnnl::memory::dims;
      const dnnl::memory::desc a = onednn::plain_desc(dims{rows, k}, dims{k, 1});
      const dnnl::memory::desc c = onednn::plain_desc(dims{rows, n}, dims{n, 1});
      const dnnl::memory::desc any({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, any, c), attr, onednn::engine());
      answer->yes = pd.weights_desc() == panels_desc(k, n);
    } catch (const dnnl::error&) {
    }
    return answer;
  })->yes;
}

Shape packed_shape(int64_t k, int64_t n) { return Shape{n / kWidth, k, kWidth}; }

bool unpacked_shape(const Shape& packed, int64_t& k, int64_t& n) {
  if (!packed.is_fully_defined() || packed.rank() != 3 || packed[2] != kWidth) return false;
  k = packed[1];
  n = packed[0] * kWidth;
  return true;
}

// Row r's 64-column chunks to their panels; the threads share the rows.
Tensor pack(const Tensor& b) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  Tensor panels = core::make_tensor(DType::Float32, packed_shape(k, n));
  const float* from = core::data_of<float>(b);
  float* to = core::data_of<float>(panels);
  core::parallel_for(
      k,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t p = 0; p < n / kWidth; ++p)
            std::memcpy(to + (p * k + r) * kWidth, from + r * n + p * kWidth, kWidth * sizeof(float));
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(n, 1)));
  return panels;
}

// The primitive MatMul makes for a dense [rows, k] x [k, n] (plain a and c,
// user scratchpad), its b described as panels: the same kernel, so the same
// bits.
struct Primitive {
  onednn::Executable exec;  // (a, b, c)
};

bool multiply(const float* a, int64_t rows, int64_t k, int64_t n, const Tensor& b, float* out) {
  try {
    onednn::PrimitiveKey key(/*kind=*/10);
    for (int64_t v : {rows, k, n}) key.add(v);
    auto p = onednn::cached<Primitive>(key, [&] {
      using dims = dnnl::memory::dims;
      const dnnl::memory::desc ad = onednn::plain_desc(dims{rows, k}, dims{k, 1});
      const dnnl::memory::desc cd = onednn::plain_desc(dims{rows, n}, dims{n, 1});
      const dnnl::memory::desc bd = panels_desc(k, n);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), attr, onednn::engine());
      auto made = std::make_shared<Primitive>();
      made->exec.init(dnnl::matmul(pd), {{DNNL_ARG_SRC, ad}, {DNNL_ARG_WEIGHTS, bd}, {DNNL_ARG_DST, cd}},
                      pd.scratchpad_desc().get_size());
      return made;
    });
    p->exec.run({a, core::data_of<float>(b), out});
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

const MatmulLayout& ba16a64b_layout() {
  static const MatmulLayout layout{.name = "BA16a64b",
                                   .fits = fits,
                                   .wants = wants,
                                   .packed_shape = packed_shape,
                                   .unpacked_shape = unpacked_shape,
                                   .pack = pack,
                                   .multiply = multiply};
  return layout;
}

}  // namespace kiln::ops
