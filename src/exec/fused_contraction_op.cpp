#include "exec/fused_contraction.h"
#include "exec/fused_activation.h"
#include "ops/known_ops.h"

#include <array>
#include <limits>
#include <string>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/creation.h"

namespace kiln::exec {

namespace {

using schema::Attrs;
using schema::InferContext;
using schema::KernelContext;
using detail::OpDef;
using schema::TensorType;

// One component op's inference on `inputs`, its failure reported as the fused op's.
TensorType infer_part(const InferContext& c, const OpDef& op, std::span<const TensorType> inputs,
                      const Attrs& attrs) {
  InferContext part(op, inputs, attrs);
  try {
    op.infer(part);
  } catch (const InvalidArgument& e) {
    c.fail("{}", e.what());
  }
  return part.outputs()[0];
}

// The contraction's inference, then BiasAdd's and Relu's on its result: the
// fused op accepts exactly what the chain of ops accepts.
void infer_fused(InferContext& c, const OpDef& contraction) {
  if (c.num_inputs() != 3)
    c.fail("takes 3 inputs ({}'s two and a bias), got {}", contraction.name, c.num_inputs());
  const bool relu = check_activation(c);
  const std::array<TensorType, 2> operands{TensorType{c.dtype(0), c.shape(0)}, TensorType{c.dtype(1), c.shape(1)}};
  TensorType out = infer_part(c, contraction, operands, c.attrs());
  const std::array<TensorType, 2> biased{out, TensorType{c.dtype(2), c.shape(2)}};
  out = infer_part(c, ops::bias_add_op(), biased, Attrs{});
  if (relu) out = infer_part(c, ops::relu_op(), std::span<const TensorType>(&out, 1), Attrs{});
  c.add_output(out.dtype, out.shape);
}

// Runs `op`'s own kernel on `inputs` into `out`, which may be one of them
// (BiasAdd and Relu may run in place).
void run_part(const OpDef& op, std::span<const Tensor> inputs, Tensor& out, const Attrs& attrs) {
  KernelContext k{op, inputs, std::span<Tensor>(&out, 1), attrs};
  op.kernel(k);
}

// BiasAdd's sum, then Relu's formula, on `rows` rows of the output.
template <class T>
void add_bias_and_activate_rows(T* y, int64_t rows, const T* bias, int64_t channels, bool relu) {
  for (int64_t r = 0; r < rows; ++r) {
    T* row = y + r * channels;
    for (int64_t j = 0; j < channels; ++j) {
      const T sum = static_cast<T>(row[j] + bias[j]);
      row[j] = relu && sum < T(0) ? T(0) : sum;
    }
  }
}

#ifdef __AVX2__
// Eight lanes of add_bias_and_activate_bf16's formula: widen (exact), add,
// round half to even with float_to_bfloat16_bits' NaNs (0x7fc0, 0xffc0 by
// sign), then with kRelu zero the bits in (0x8000, 0xff80] (negative,
// non-zero, not NaN). GCC left the scalar loop scalar: 0.5 ns an element, two
// thirds of the time of MNIST's first convolution itself.
template <bool kRelu>
__m128i add_bias_and_activate_8(__m128i y16, __m128i bias16) {
  auto widen = [](__m128i v) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16)); };
  const __m256i x = _mm256_castps_si256(_mm256_add_ps(widen(y16), widen(bias16)));
  const __m256i top = _mm256_srli_epi32(x, 16);
  const __m256i lsb = _mm256_and_si256(top, _mm256_set1_epi32(1));
  __m256i bits = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(_mm256_and_si256(top, _mm256_set1_epi32(0x8000)), _mm256_set1_epi32(0x7fc0));
  bits = _mm256_blendv_epi8(bits, quiet, nan);
  if constexpr (kRelu) {
    const __m256i negative = _mm256_and_si256(_mm256_cmpgt_epi32(bits, _mm256_set1_epi32(0x8000)),
                                              _mm256_cmpgt_epi32(_mm256_set1_epi32(0xff81), bits));
    bits = _mm256_andnot_si256(negative, bits);
  }
  return _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
}
#endif

// bfloat16: BiasAdd's float sum rounded once, then Relu on the rounded value,
// in bits and without branches (a select on data mispredicts half the time).
// Relu zeroes negative non-zero numbers (-inf included) and keeps NaNs and
// -0, as `sum < 0 ? 0 : sum` does. Eight channels at a time with AVX2.
template <bool kRelu>
void add_bias_and_activate_bf16(bfloat16_t* y, int64_t rows, const bfloat16_t* bias, int64_t channels) {
  for (int64_t r = 0; r < rows; ++r) {
    bfloat16_t* row = y + r * channels;
    int64_t j = 0;
#ifdef __AVX2__
    for (; j + 8 <= channels; j += 8) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + j));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bias + j));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row + j), add_bias_and_activate_8<kRelu>(v, b));
    }
#endif
    for (; j < channels; ++j) {
      uint16_t bits = kiln::detail::float_to_bfloat16_bits(static_cast<float>(row[j]) + static_cast<float>(bias[j]));
      if constexpr (kRelu) {
        const uint16_t magnitude = bits & 0x7fffu;
        const bool negative = (bits & 0x8000u) && magnitude != 0 && magnitude <= 0x7f80u;
        bits = negative ? uint16_t{0} : bits;
      }
      row[j].bits = bits;
    }
  }
}

void add_bias_and_activate_rows(bfloat16_t* y, int64_t rows, const bfloat16_t* bias, int64_t channels, bool relu) {
  if (relu) add_bias_and_activate_bf16<true>(y, rows, bias, channels);
  else add_bias_and_activate_bf16<false>(y, rows, bias, channels);
}

// The bias and the relu in one pass over the contraction's output, where the
// chain makes two, so the bits are the chain's. Not oneDNN's binary post-op:
// with AVX-512 it made brgconv's convolutions and oneDNN's depthwise kernel
// slower, where the relu pass that runs anyway takes the bias for nothing
// (docs/design-notes.md, "Graph passes"; figures in docs/perf-log.md).
void add_bias_and_activate(KernelContext& c) {
  Tensor& out = c.outputs[0];
  const int64_t channels = out.shape()[out.rank() - 1], rows = out.size() / channels;
  const bool relu = has_relu(c.attrs);
  // bfloat16 sums in float and rounds once, as BiasAdd through the widen bridge.
  core::visit_all_dtypes(out.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, bfloat16_t>) {  // what the pass fuses
      const T* bias = c.in<T>(2);
      T* y = c.out<T>(0);
      core::parallel_for(
          rows,
          [&](int64_t begin, int64_t end) {
            add_bias_and_activate_rows(y + begin * channels, end - begin, bias, channels, relu);
          },
          std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(channels, 1)));
    }
  });
}

// FusedConv2D{max_pool=true}: the same pass over each pair of image rows,
// then that pair pooled by 2x2 windows of stride 2 into output 1 while it is
// in cache, instead of MaxPool reading the whole output again. The window's
// maximum is float32 MaxPool's (oneDNN's pooling): from the lowest float, in
// window order, `acc = v > acc ? v : acc`, so a NaN never wins a window (one
// of NaNs alone gives the lowest float), and of equal values (+0 and -0) the
// first does (tests/passes_conv_pool_test.cpp pins these against MaxPool).
void add_bias_activate_and_pool(KernelContext& c) {
  const Shape& s = c.out_shape(0);
  const int64_t width = s[2], channels = s[3], pairs = s[0] * (s[1] / 2), pooled_width = width / 2;
  const int64_t row = width * channels;
  const bool relu = has_relu(c.attrs);
  const float* bias = c.in<float>(2);
  float* y = c.out<float>(0);
  float* pooled = c.out<float>(1);
  core::parallel_for(
      pairs,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          // Rows 2i and 2i + 1 of the batch's rows: heights are even, so
          // both are of one image.
          float* top = y + 2 * i * row;
          const float* bottom = top + row;
          add_bias_and_activate_rows(top, 2 * width, bias, channels, relu);
          float* out = pooled + i * pooled_width * channels;
          for (int64_t x = 0; x < pooled_width; ++x) {
            const float* a = top + 2 * x * channels;
            const float* b = bottom + 2 * x * channels;
            float* o = out + x * channels;
            for (int64_t k = 0; k < channels; ++k) {
              float acc = std::numeric_limits<float>::lowest();
              for (float v : {a[k], a[channels + k], b[k], b[channels + k]}) acc = v > acc ? v : acc;
              o[k] = acc;
            }
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(2 * row, 1)));
}

// The contraction's own kernel (oneDNN for float32), then the bias pass
// (`finish`, which pools too where the node has a pooled output).
void run_fused(KernelContext& c, const OpDef& contraction, void (*finish)(KernelContext&) = add_bias_and_activate) {
  if (c.outputs[0].size() == 0) return;
  run_part(contraction, c.inputs.first(2), c.outputs[0], c.attrs);
  finish(c);
}

void fused_matmul_infer(InferContext& c) { infer_fused(c, ops::matmul_op()); }
void fused_depthwise_infer(InferContext& c) { infer_fused(c, ops::depthwise_conv2d_op()); }
void fused_matmul_kernel(KernelContext& c) { run_fused(c, ops::matmul_op()); }

// With max_pool: the pooled output too, of float32 convolutions whose output
// tiles into 2x2 windows (even height and width, where known).
void fused_conv2d_infer(InferContext& c) {
  infer_fused(c, ops::conv2d_op());
  if (!has_max_pool(c.attrs())) return;
  const Shape& y = c.outputs()[0].shape;
  if (c.dtype(0) != DType::Float32) c.fail("max_pool needs float32, got {}", dtype_name(c.dtype(0)));
  auto tiles = [](int64_t d) { return d < 0 || (d >= 2 && d % 2 == 0); };
  if (y.has_known_rank() && !(y.rank() == 4 && tiles(y[1]) && tiles(y[2])))
    c.fail("max_pool needs an output of even height and width, got {}", y.to_string());
  auto half = [](int64_t d) { return d < 0 ? d : d / 2; };
  c.add_output(DType::Float32, y.has_known_rank() ? Shape{y[0], half(y[1]), half(y[2]), y[3]} : Shape::unknown_rank());
}

void fused_conv2d_kernel(KernelContext& c) {
  run_fused(c, ops::conv2d_op(), has_max_pool(c.attrs) ? add_bias_activate_and_pool : add_bias_and_activate);
}
void fused_depthwise_kernel(KernelContext& c) { run_fused(c, ops::depthwise_conv2d_op()); }

// Values on both sides of 0, so that relu has work to do.
std::vector<float> ramp(std::size_t n, int period, float step, float from) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i) % period) * step + from;
  return v;
}

// float32 on oneDNN (relu; transposed, no activation) and float64 on the
// component kernels.
std::vector<schema::OpSample> fused_matmul_samples() {
  auto attrs = [](bool ta, bool tb, const char* activation) {
    return Attrs{{"transpose_a", ta}, {"transpose_b", tb}, {"activation", std::string(activation)}};
  };
  return {
      {{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), constant({{1.f, 0.f}, {0.5f, -1.f}, {2.f, -4.f}}),
        constant({-7.f, 0.5f})},
       attrs(false, false, "relu")},
      {{constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), constant({{0.25f, -1.f, 2.f}, {0.5f, -3.f, 1.f}}),
        constant({1.f, -2.f})},
       attrs(true, true, "none")},
      {{constant({{1.0, -2.0}, {3.0, 4.0}}), constant({{0.5, -1.0}, {2.0, 0.0}}), constant({-1.0, 0.25})},
       attrs(false, false, "relu")},
  };
}

std::vector<schema::OpSample> fused_conv2d_samples() {
  auto attrs = [](std::vector<int64_t> strides, const char* padding, const char* activation) {
    return Attrs{{"strides", std::move(strides)},
                 {"padding", std::string(padding)},
                 {"dilations", std::vector<int64_t>{1, 1}},
                 {"activation", std::string(activation)}};
  };
  auto pooled = [](Attrs a) {
    a.set("max_pool", true);
    return a;
  };
  std::vector<float> x = ramp(1 * 5 * 5 * 2, 7, 0.25f, -0.5f), w = ramp(3 * 3 * 2 * 3, 5, 0.2f, -0.4f);
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
  return {
      {{constant(x, Shape{1, 5, 5, 2}), constant(w, Shape{3, 3, 2, 3}), constant({0.5f, -1.f, 0.f})},
       attrs({1, 1}, "SAME", "relu")},
      {{constant(xd, Shape{1, 5, 5, 2}), constant(wd, Shape{3, 3, 2, 3}), constant({0.5, -1.0, 0.0})},
       attrs({2, 1}, "VALID", "none")},
      // Pooled: two 4x6 images (SAME keeps them even), relu and none.
      {{constant(ramp(2 * 4 * 6 * 2, 9, 0.25f, -1.f), Shape{2, 4, 6, 2}), constant(w, Shape{3, 3, 2, 3}),
        constant({0.5f, -1.f, 0.f})},
       pooled(attrs({1, 1}, "SAME", "relu"))},
      {{constant(ramp(1 * 4 * 4 * 2, 5, 0.5f, -1.f), Shape{1, 4, 4, 2}), constant(w, Shape{3, 3, 2, 3}),
        constant({0.25f, 0.f, -0.5f})},
       pooled(attrs({1, 1}, "SAME", "none"))},
  };
}

// float32 with a channel multiplier of 2 (relu; strided, dilated, VALID)
// and float64.
std::vector<schema::OpSample> fused_depthwise_samples() {
  auto attrs = [](std::vector<int64_t> strides, const char* padding, std::vector<int64_t> dilations,
                  const char* activation) {
    return Attrs{{"strides", std::move(strides)},
                 {"padding", std::string(padding)},
                 {"dilations", std::move(dilations)},
                 {"activation", std::string(activation)}};
  };
  std::vector<float> x = ramp(2 * 6 * 5 * 3, 7, 0.25f, -0.5f), w = ramp(3 * 3 * 3 * 2, 5, 0.2f, -0.4f);
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
  const std::vector<float> bias{0.5f, -1.f, 0.f, 0.25f, -0.5f, 1.f};
  return {
      {{constant(x, Shape{2, 6, 5, 3}), constant(w, Shape{3, 3, 3, 2}), constant(bias)},
       attrs({1, 1}, "SAME", {1, 1}, "relu")},
      {{constant(x, Shape{2, 6, 5, 3}), constant(w, Shape{3, 3, 3, 2}), constant(bias)},
       attrs({2, 1}, "VALID", {1, 2}, "none")},
      {{constant(xd, Shape{2, 6, 5, 3}), constant(wd, Shape{3, 3, 3, 2}),
        constant(std::vector<double>(bias.begin(), bias.end()))},
       attrs({1, 2}, "SAME", {1, 1}, "relu")},
  };
}

// Fusion runs on graphs after differentiation: nothing differentiates them.
constexpr OpDef kFusedMatMul{.name = "FusedMatMul", .infer = fused_matmul_infer, .kernel = fused_matmul_kernel,
                             .flags = schema::kNotDifferentiable, .samples = fused_matmul_samples};
constexpr OpDef kFusedConv2D{.name = "FusedConv2D", .infer = fused_conv2d_infer, .kernel = fused_conv2d_kernel,
                             .flags = schema::kNotDifferentiable, .samples = fused_conv2d_samples};
constexpr OpDef kFusedDepthwiseConv2D{.name = "FusedDepthwiseConv2dNative", .infer = fused_depthwise_infer,
                                      .kernel = fused_depthwise_kernel, .flags = schema::kNotDifferentiable,
                                      .samples = fused_depthwise_samples};

}  // namespace

const OpDef& fused_matmul_op() { return kFusedMatMul; }
const OpDef& fused_conv2d_op() { return kFusedConv2D; }
const OpDef& fused_depthwise_conv2d_op() { return kFusedDepthwiseConv2D; }

}  // namespace kiln::exec
