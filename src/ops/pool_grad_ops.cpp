// MaxPoolGrad, AvgPoolGrad and MaxPoolGradGrad: the gradients of pooling
// (pool_ops.cpp), on parallel plain loops for both float types. oneDNN's
// max-pool backward needs the workspace of a training forward pass, which the
// forward kernel does not produce, and its choice among equal maxima is not
// documented; these loops give each window's gradient to its first maximum,
// as TensorFlow, without a second kernel. AvgPoolGrad reads only the shape of
// its input.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/array_util.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

// Checks the forward input (input 0) and a second tensor (input 1, named
// `what`) of the same dtype and of the pooled shape (`pooled`) or the input's;
// returns the pooled shape.
Shape check_pool_pair(schema::InferContext& c, const char* what, bool pooled) {
  Shape y = infer_pool_output(c, c.shape(0));
  const Shape& expected = pooled ? y : c.shape(0);
  if (c.dtype(1) != c.dtype(0))
    c.fail("{} must have the input's dtype ({}), got {}", what, dtype_name(c.dtype(0)),
           dtype_name(c.dtype(1)));
  const Shape& s = c.shape(1);
  if (!s.has_known_rank() || !expected.has_known_rank()) return y;
  if (s.rank() != 4) c.fail("{} must have rank 4 (NHWC), got shape {}", what, s.to_string());
  for (int i = 0; i < 4; ++i) {
    if (expected[i] >= 0 && s[i] >= 0 && expected[i] != s[i])
      c.fail("{} has shape {} but must have shape {} (input shape {})", what, s.to_string(),
             expected.to_string(), c.shape(0).to_string());
  }
  return y;
}

// MaxPoolGrad / AvgPoolGrad: (input, dy) -> input's shape.
void pool_grad_infer(schema::InferContext& c) {
  check_pool_pair(c, "dy", /*pooled=*/true);
  const Shape& in = c.shape(0);
  Shape out = in.has_known_rank() ? in : Shape{-1, -1, -1, -1};
  const Shape& dy = c.shape(1);
  if (dy.has_known_rank()) {
    if (out[0] < 0) out[0] = dy[0];
    if (out[3] < 0) out[3] = dy[3];
  }
  c.add_output(c.dtype(0), out);
}

// MaxPoolGradGrad: (input, g shaped like input) -> the pooled shape.
void max_pool_grad_grad_infer(schema::InferContext& c) {
  Shape y = check_pool_pair(c, "g", /*pooled=*/false);
  const Shape& g = c.shape(1);
  if (g.has_known_rank()) {
    if (y[0] < 0) y[0] = g[0];
    if (y[3] < 0) y[3] = g[3];
  }
  c.add_output(c.dtype(0), y);
}

PoolDims kernel_dims(const schema::KernelContext& c, bool max) {
  const Shape& in = c.in_shape(0);
  const std::vector<int64_t>& k = c.attrs.get_ints("ksize");
  return PoolDims{in[0], in[1], in[2], in[3], kernel_window(c.attrs, in, k[0], k[1]), max};
}

// The window of output (oh, ow) clipped to the input.
struct Span {
  int64_t begin, end;
};
Span window_span(const WindowDim& wd, int64_t o, int64_t stride, int64_t k, int64_t in) {
  int64_t start = o * stride - wd.pad_before;
  return {std::max<int64_t>(0, start), std::min<int64_t>(in, start + k)};
}

// The maximum of the window per channel, into m (as the forward computes it).
template <class T>
void window_max(const PoolDims& d, const T* image, Span hs, Span ws, T* __restrict m) {
  const T* first = image + (hs.begin * d.w + ws.begin) * d.c;
  for (int64_t ch = 0; ch < d.c; ++ch) m[ch] = first[ch];
  for (int64_t ih = hs.begin; ih < hs.end; ++ih) {
    for (int64_t iw = ws.begin; iw < ws.end; ++iw) {
      const T* __restrict p = image + (ih * d.w + iw) * d.c;
      for (int64_t ch = 0; ch < d.c; ++ch) m[ch] = p[ch] > m[ch] ? p[ch] : m[ch];
    }
  }
}

// At the window's first element equal to the maximum m, per channel, out
// (dx or the output of max_pool_grad_grad, offset like the image when
// kOutIsImage, else per channel) gets `in` (dy per channel, or g offset like
// the image when kInIsImage). m is consumed: it becomes NaN where taken, which
// nothing equals. Branch-free, so that the channel loop vectorizes and pays no
// misprediction per element. A window of NaNs has no maximum and no hit.
template <class T, bool kOutIsImage, bool kInIsImage>
void add_at_first_max(const PoolDims& d, const T* image, Span hs, Span ws, T* __restrict m,
                      T* __restrict out, const T* __restrict in) {
  constexpr T kTaken = std::numeric_limits<T>::quiet_NaN();
  for (int64_t ih = hs.begin; ih < hs.end; ++ih) {
    for (int64_t iw = ws.begin; iw < ws.end; ++iw) {
      int64_t off = (ih * d.w + iw) * d.c;
      const T* __restrict p = image + off;
      T* __restrict o = kOutIsImage ? out + off : out;
      const T* __restrict v = kInIsImage ? in + off : in;
      // Two loops and unconditional loads: GCC vectorizes neither a load
      // under a condition nor two selects on one condition.
      for (int64_t ch = 0; ch < d.c; ++ch) {
        T value = v[ch], prev = o[ch];
        o[ch] = prev + (p[ch] == m[ch] ? value : T(0));
      }
      for (int64_t ch = 0; ch < d.c; ++ch) {
        T max = m[ch];
        m[ch] = p[ch] == max ? kTaken : max;
      }
    }
  }
}

// Runs window(n, oh, ow, hs, ws, dx_image, scratch) for every window (its
// output position and its span in the input, clipped) over a zeroed dx; the
// function adds into dx_image (image n of dx) and may use `scratch` (d.c
// values). When windows do not overlap along the height (stride >= ksize, the
// usual 2x2/2), each output row owns a band of input rows, which it zeroes and
// fills, and rows run in parallel; otherwise whole images do. Then
// finish(n, first, count) runs on each filled band (elements [first, first +
// count) of dx), while it is still in cache.
template <class T, class Window, class Finish>
void scatter_windows(const PoolDims& d, T* dx, Window&& window, Finish&& finish) {
  const Window2D& g = d.g;
  int64_t oh_n = g.h.out, ow_n = g.w.out;
  int64_t image = d.h * d.w * d.c;
  bool by_row = g.sh >= g.kh;
  int64_t tasks = by_row ? d.n * oh_n : d.n;
  int64_t task_work = std::max<int64_t>(1, (by_row ? 1 : oh_n) * ow_n * g.kh * g.kw * d.c);
  core::parallel_for(
      tasks,
      [&](int64_t begin, int64_t end) {
        T* scratch = thread_scratch<T>(d.c);
        for (int64_t t = begin; t < end; ++t) {
          int64_t n = by_row ? t / oh_n : t;
          int64_t oh0 = by_row ? t % oh_n : 0, oh1 = by_row ? oh0 + 1 : oh_n;
          int64_t r0 = 0, r1 = d.h;
          if (by_row) {
            r0 = oh0 == 0 ? 0 : std::clamp<int64_t>(oh0 * g.sh - g.h.pad_before, 0, d.h);
            r1 = oh1 == oh_n ? d.h : std::clamp<int64_t>(oh1 * g.sh - g.h.pad_before, 0, d.h);
          }
          T* dxi = dx + n * image;
          std::fill(dxi + r0 * d.w * d.c, dxi + r1 * d.w * d.c, T(0));
          for (int64_t oh = oh0; oh < oh1; ++oh) {
            Span hs = window_span(g.h, oh, g.sh, g.kh, d.h);
            for (int64_t ow = 0; ow < ow_n; ++ow) {
              Span ws = window_span(g.w, ow, g.sw, g.kw, d.w);
              if (hs.begin < hs.end && ws.begin < ws.end)
                window(n, oh, ow, hs, ws, dxi, scratch);
            }
          }
          finish(n * image + r0 * d.w * d.c, (r1 - r0) * d.w * d.c);
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / task_work));
}

constexpr auto kNothingToFinish = [](int64_t, int64_t) {};

// Whether the windows are 2x2 with stride 2 and tile the image exactly (no
// padding, even height and width): the usual pooling of a training step.
bool tiles_by_2x2(const PoolDims& d) {
  const Window2D& g = d.g;
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.h.pad_before == 0 && g.w.pad_before == 0 &&
         d.h % 2 == 0 && d.w % 2 == 0 && g.h.out == d.h / 2 && g.w.out == d.w / 2;
}

#ifdef __AVX2__
// max_pool_grad_plain<float, true> on windows that tile_by_2x2, 8 channels
// per vector (channels a multiple of 8), in one pass: every element of x is in
// exactly one window, so each element of dx is written once, from registers,
// instead of zeroed, scattered into and masked in three passes (GCC leaves
// that loop's selects scalar and branchy). The same operations per element:
// the window's maximum as window_max takes it (maxps(p, m) is `p > m ? p :
// m`, NaN and signed zeros included), dy added to +0 at the first element
// equal to it, an equal one then consumed (add_at_first_max's rule; a NaN
// maximum equals nothing), then Relu's gradient `x > 0 ? g : +0`.
// This runs the two rows of dx under window row t (t = n * oh_n + oh),
// channels [c0, c1).
// Where those two rows start: element (n, 2 oh, 0, 0).
int64_t window_rows_offset(const PoolDims& d, int64_t t) {
  const int64_t oh_n = d.h / 2;
  return (t / oh_n * d.h + t % oh_n * 2) * d.w * d.c;
}

// Eight lanes of float32 or bfloat16 as float32 (widening a bf16 is exact).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const bfloat16_t* p) {
  const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}
inline void store8(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
// The top half of each lane: exact here, where every value written is +0 or
// an element of dy (a bfloat16 widened), so nothing needs rounding.
inline void store8(bfloat16_t* p, __m256 v) {
  const __m256i top = _mm256_srli_epi32(_mm256_castps_si256(v), 16);
  const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(top), _mm256_extracti128_si256(top, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
}

// T is float or bfloat16_t (computed in float32, as the widened path does;
// every operation is exact on bf16 values, so the bits are that path's).
template <class T>
void max_pool_2x2_grad_relu_rows(const PoolDims& d, const T* x, const T* dy, T* dx, int64_t t, int64_t c0,
                                 int64_t c1) {
  const int64_t ow_n = d.w / 2, channels = d.c, row = d.w * d.c;
  const __m256 zero = _mm256_setzero_ps(), taken = _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN());
  const int64_t top = window_rows_offset(d, t);
  for (int64_t ow = 0; ow < ow_n; ++ow) {
    const int64_t at[4] = {top + 2 * ow * channels, top + (2 * ow + 1) * channels, top + row + 2 * ow * channels,
                           top + row + (2 * ow + 1) * channels};
    const T* v = dy + (t * ow_n + ow) * channels;
    for (int64_t ch = c0; ch < c1; ch += 8) {
      __m256 p[4];
      for (int k = 0; k < 4; ++k) p[k] = load8(x + at[k] + ch);
      __m256 m = p[0];
      for (int k = 1; k < 4; ++k) m = _mm256_max_ps(p[k], m);
      const __m256 value = load8(v + ch);
      for (int k = 0; k < 4; ++k) {
        const __m256 hit = _mm256_cmp_ps(p[k], m, _CMP_EQ_OQ);
        const __m256 sum = _mm256_add_ps(zero, _mm256_and_ps(hit, value));
        store8(dx + at[k] + ch, _mm256_and_ps(_mm256_cmp_ps(p[k], zero, _CMP_GT_OQ), sum));
        m = _mm256_blendv_ps(m, taken, hit);
      }
    }
  }
}

// With `sums` (d.c values), also the sum of dx over its rows (n, h, w), each
// channel from +0 in row order as sum_rows adds (SumToShapeOf's bits), made
// while dx is in cache. Each channel's sum must be one chain through all
// rows, but threads that took channels instead of rows would each read half
// of every cache line (at two threads on conv1's 32 channels, as slow as
// one thread). So the threads share each block of rows out by rows, meet,
// then each adds the block into the sums of its own channels, in row order.
// T is float or bfloat16_t; the sums are float32 either way (a bf16 gradient's
// are rounded once by the caller, as the widened SumToShapeOf rounds them).
template <class T>
void max_pool_2x2_grad_relu(const PoolDims& d, const T* x, const T* dy, T* dx, float* sums) {
  const int64_t windows = d.n * (d.h / 2), row = d.w * d.c;
  if (!sums) {
    core::parallel_for(
        windows,
        [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t) max_pool_2x2_grad_relu_rows(d, x, dy, dx, t, 0, d.c);
        },
        std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, 4 * row)));
    return;
  }
  // Blocks of about 256 KB of dx, which stay in the caches between being
  // written and added; bands of 16 channels (a cache line) per thread (with
  // fewer lines than threads, some threads only write rows). One thread per
  // block, at most.
  const int64_t block = std::max<int64_t>(1, 65536 / (2 * row));
  const int64_t lines = (d.c + 15) / 16;
  // (Capped only to stay an int: parallel_team takes at most OpenMP's threads.)
  const int max_threads = static_cast<int>(std::min<int64_t>((windows + block - 1) / block, 1 << 16));
  core::parallel_team(max_threads, [&](int thread, int threads) {
    const int64_t c0 = std::min(d.c, lines * thread / threads * 16);
    const int64_t c1 = std::min(d.c, lines * (thread + 1) / threads * 16);
    constexpr int64_t kVectors = 8;  // sums held in registers at a time
    std::fill(sums + c0, sums + c1, 0.0f);
    for (int64_t b0 = 0; b0 < windows; b0 += block) {
      const int64_t b1 = std::min(windows, b0 + block);
      for (int64_t t = b0 + (b1 - b0) * thread / threads, end = b0 + (b1 - b0) * (thread + 1) / threads; t < end; ++t)
        max_pool_2x2_grad_relu_rows(d, x, dy, dx, t, 0, d.c);
      // Alone (threads == 1), perhaps inside another team's region: no
      // barrier, which would bind to that team.
      if (threads > 1) {
#pragma omp barrier
      }
      for (int64_t first = c0; first < c1; first += 8 * kVectors) {
        const int64_t vectors = std::min(kVectors, (c1 - first) / 8);
        __m256 acc[kVectors];
        for (int64_t i = 0; i < vectors; ++i) acc[i] = _mm256_loadu_ps(sums + first + 8 * i);
        for (int64_t t = b0; t < b1; ++t) {
          const T* written = dx + window_rows_offset(d, t) + first;
          for (int64_t at = 0; at < 2 * d.w; ++at, written += d.c)
            for (int64_t i = 0; i < vectors; ++i) acc[i] = _mm256_add_ps(acc[i], load8(written + 8 * i));
        }
        for (int64_t i = 0; i < vectors; ++i) _mm256_storeu_ps(sums + first + 8 * i, acc[i]);
      }
    }
  });
}
#endif

// Each dy goes to its window's first maximum. With kReluGrad, then the
// gradient of the relu that made x, as its own op computes it (`x > 0 ? dx :
// +0`, NaN and -0 included), on each band as soon as it is filled: the bits of
// MaxPoolGrad followed by Relu's gradient, without a second pass over dx.
template <class T, bool kReluGrad = false>
void max_pool_grad_plain(const PoolDims& d, const T* x, const T* dy, T* dx, T* sums = nullptr) {
  int64_t oh_n = d.g.h.out, ow_n = d.g.w.out;
  int64_t image = d.h * d.w * d.c;
  auto window = [&](int64_t n, int64_t oh, int64_t ow, Span hs, Span ws, T* dxi, T* m) {
    const T* xi = x + n * image;
    const T* __restrict dyp = dy + ((n * oh_n + oh) * ow_n + ow) * d.c;
    window_max(d, xi, hs, ws, m);
    add_at_first_max<T, true, false>(d, xi, hs, ws, m, dxi, dyp);
  };
  if constexpr (kReluGrad) {
#ifdef __AVX2__
    if constexpr (std::is_same_v<T, float>)
      if (d.c % 8 == 0 && tiles_by_2x2(d)) return max_pool_2x2_grad_relu(d, x, dy, dx, sums);
#endif
    scatter_windows(d, dx, window, [&](int64_t first, int64_t count) {
      const T* __restrict xb = x + first;
      T* __restrict gb = dx + first;
      for (int64_t i = 0; i < count; ++i) gb[i] = xb[i] > T(0) ? gb[i] : T(0);
    });
  } else {
    scatter_windows(d, dx, window, kNothingToFinish);
  }
  if (sums) sum_rows(dtype_of<T>, dx, d.n * d.h * d.w, d.c, sums);
}

// Each dy is spread evenly over its window's elements inside the input (the
// count the forward divides by).
template <class T>
void avg_pool_grad_plain(const PoolDims& d, const T* dy, T* dx) {
  int64_t oh_n = d.g.h.out, ow_n = d.g.w.out;
  scatter_windows(d, dx, [&](int64_t n, int64_t oh, int64_t ow, Span hs, Span ws, T* dxi, T*) {
    T count = static_cast<T>((hs.end - hs.begin) * (ws.end - ws.begin));
    const T* __restrict dyp = dy + ((n * oh_n + oh) * ow_n + ow) * d.c;
    for (int64_t ih = hs.begin; ih < hs.end; ++ih) {
      for (int64_t iw = ws.begin; iw < ws.end; ++iw) {
        T* __restrict o = dxi + (ih * d.w + iw) * d.c;
        for (int64_t ch = 0; ch < d.c; ++ch) o[ch] += dyp[ch] / count;
      }
    }
  }, kNothingToFinish);
}

// Reads g at each window's first maximum; output rows are independent.
template <class T>
void max_pool_grad_grad_plain(const PoolDims& d, const T* x, const T* gin, T* y) {
  const Window2D& g = d.g;
  int64_t oh_n = g.h.out, ow_n = g.w.out;
  int64_t image = d.h * d.w * d.c;
  int64_t row_work = std::max<int64_t>(1, ow_n * g.kh * g.kw * d.c);
  core::parallel_for(
      d.n * oh_n,
      [&](int64_t begin, int64_t end) {
        T* m = thread_scratch<T>(d.c);
        for (int64_t row = begin; row < end; ++row) {
          int64_t n = row / oh_n, oh = row % oh_n;
          Span hs = window_span(g.h, oh, g.sh, g.kh, d.h);
          for (int64_t ow = 0; ow < ow_n; ++ow) {
            Span ws = window_span(g.w, ow, g.sw, g.kw, d.w);
            T* __restrict o = y + (row * ow_n + ow) * d.c;
            std::fill(o, o + d.c, T(0));
            if (hs.begin >= hs.end || ws.begin >= ws.end) continue;
            const T* xi = x + n * image;
            const T* __restrict gi = gin + n * image;
            window_max(d, xi, hs, ws, m);
            add_at_first_max<T, false, true>(d, xi, hs, ws, m, o, gi);
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / row_work));
}

template <class F>
void visit_floating(DType dtype, F&& f) {
  core::visit_numeric(dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) f.template operator()<T>();
  });
}

// A second output (FusedMaxPoolGrad's bias gradient) gets dx summed down to
// its last dim.
template <bool kReluGrad>
void max_pool_grad_kernel(schema::KernelContext& c) {
  visit_floating(c.outputs[0].dtype(), [&]<class T>() {
    T* sums = c.outputs.size() == 2 ? c.out<T>(1) : nullptr;
    if (c.outputs[0].size() == 0 || c.inputs[1].size() == 0) {
      // No window: dx is +0 throughout, and so are its sums.
      std::fill(c.out<T>(0), c.out<T>(0) + c.outputs[0].size(), T(0));
      if (sums) std::fill(sums, sums + c.outputs[1].size(), T(0));
      return;
    }
    max_pool_grad_plain<T, kReluGrad>(kernel_dims(c, true), c.in<T>(0), c.in<T>(1), c.out<T>(0), sums);
  });
}

void max_pool_grad_grad_kernel(schema::KernelContext& c) {
  if (c.outputs[0].size() == 0) return;
  PoolDims d = kernel_dims(c, true);
  visit_floating(c.outputs[0].dtype(), [&]<class T>() {
    max_pool_grad_grad_plain<T>(d, c.in<T>(0), c.in<T>(1), c.out<T>(0));
  });
}

void avg_pool_grad_kernel(schema::KernelContext& c) {
  if (c.outputs[0].size() == 0) return;
  PoolDims d = kernel_dims(c, false);
  visit_floating(c.outputs[0].dtype(), [&]<class T>() {
    avg_pool_grad_plain<T>(d, c.in<T>(1), c.out<T>(0));
  });
}

template <class T>
Tensor ramp(const Shape& shape, int64_t mul, int64_t period, double offset) {
  std::vector<T> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<T>(static_cast<double>((static_cast<int64_t>(i) * mul) % period) + offset);
  return constant(v, shape);
}

schema::Attrs pool_attrs(std::vector<int64_t> ksize, std::vector<int64_t> strides, const char* padding) {
  return schema::Attrs{{"ksize", std::move(ksize)},
                       {"strides", std::move(strides)},
                       {"padding", std::string(padding)}};
}

// (input, dy). The inputs have no ties (7 * i mod 101 repeats only after 101
// elements): the finite differences the gradient registry checks these with
// are not defined at a tie. NnGrad.MaxPoolGradGoesToTheFirstMaximum tests ties.
std::vector<schema::OpSample> pool_grad_samples() {
  return {
      {{ramp<float>({1, 4, 5, 2}, 7, 101, -5.0), ramp<float>({1, 2, 3, 2}, 3, 5, -2.0)},
       pool_attrs({2, 2}, {2, 2}, "SAME")},
      {{ramp<double>({2, 4, 5, 2}, 7, 101, -5.0), ramp<double>({2, 2, 2, 2}, 3, 5, -2.0)},
       pool_attrs({3, 2}, {1, 2}, "VALID")},
      {{ramp<double>({1, 5, 5, 3}, 7, 101, -5.0), ramp<double>({1, 3, 3, 3}, 3, 5, -2.0)},
       pool_attrs({3, 3}, {2, 2}, "SAME")},
  };
}

// (input, g shaped like input).
std::vector<schema::OpSample> max_pool_grad_grad_samples() {
  return {
      {{ramp<float>({1, 4, 5, 2}, 7, 101, -5.0), ramp<float>({1, 4, 5, 2}, 3, 5, -2.0)},
       pool_attrs({2, 2}, {2, 2}, "SAME")},
      {{ramp<double>({2, 4, 5, 2}, 7, 101, -5.0), ramp<double>({2, 4, 5, 2}, 3, 5, -2.0)},
       pool_attrs({3, 2}, {1, 2}, "VALID")},
  };
}

Tensor avg_pool_with(const Tensor& x, const schema::Attrs& attrs) {
  return nn::avg_pool2d(x, attrs.get_ints("ksize"), attrs.get_ints("strides"),
                        attrs.get_string("padding"));
}

// The pooling gradients are linear in dy (avg_pool_grad is the adjoint of
// avg_pool; max_pool_grad and max_pool_grad_grad are adjoints of each other)
// and piecewise constant in the input, which gets no gradient.
void max_pool_grad_gradient(schema::GradContext& c) {
  if (c.needs(1)) c.set(1, max_pool_grad_grad(c.inputs[0], c.grad(0), c.attrs));
}

void max_pool_grad_grad_gradient(schema::GradContext& c) {
  if (c.needs(1)) c.set(1, max_pool_grad(c.inputs[0], c.grad(0), c.attrs));
}

void avg_pool_grad_gradient(schema::GradContext& c) {
  if (c.needs(1)) c.set(1, avg_pool_with(c.grad(0), c.attrs));
}

constexpr detail::OpDef kMaxPoolGrad{.name = "MaxPoolGrad", .infer = pool_grad_infer,
                                     .kernel = widened<max_pool_grad_kernel<false>>, .samples = pool_grad_samples,
                                     .gradient = max_pool_grad_gradient};
constexpr detail::OpDef kMaxPoolGradGrad{.name = "MaxPoolGradGrad", .infer = max_pool_grad_grad_infer,
                                         .kernel = widened<max_pool_grad_grad_kernel>,
                                         .samples = max_pool_grad_grad_samples,
                                         .gradient = max_pool_grad_grad_gradient};
constexpr detail::OpDef kAvgPoolGrad{.name = "AvgPoolGrad", .infer = pool_grad_infer,
                                     .kernel = widened<avg_pool_grad_kernel>, .samples = pool_grad_samples,
                                     .gradient = avg_pool_grad_gradient};

}  // namespace

// bfloat16 windows that tile by 2x2, channels in eights (a training step's
// pooling), run natively: the widened path's bits without widening x, dy and
// dx (each value written is +0 or an element of dy; the bias sums are float32,
// rounded once as the widened SumToShapeOf rounds them). Other bf16 windows
// and float16 go through float32.
void max_pool_grad_relu_kernel(schema::KernelContext& c) {
  if (c.inputs[0].dtype() == DType::BFloat16) [[unlikely]] {
#ifdef __AVX2__
    const PoolDims d = kernel_dims(c, true);
    if (c.outputs[0].size() != 0 && c.inputs[1].size() != 0 && d.c % 8 == 0 && tiles_by_2x2(d)) {
      const bool with_sums = c.outputs.size() == 2;
      std::vector<float> sums(with_sums ? static_cast<std::size_t>(d.c) : 0);
      max_pool_2x2_grad_relu(d, c.in<bfloat16_t>(0), c.in<bfloat16_t>(1), c.out<bfloat16_t>(0),
                             with_sums ? sums.data() : nullptr);
      for (std::size_t i = 0; i < sums.size(); ++i) c.out<bfloat16_t>(1)[i] = bfloat16_t(sums[i]);
      return;
    }
#endif
    return run_widened(c, max_pool_grad_kernel<true>);
  }
  widened<max_pool_grad_kernel<true>>(c);
}

void register_pool_grad_ops(schema::OpRegistry& r) {
  r.add(kMaxPoolGrad);
  r.add(kMaxPoolGradGrad);
  r.add(kAvgPoolGrad);
}

Tensor max_pool_grad(const Tensor& input, const Tensor& dy, schema::Attrs attrs) {
  const Tensor in[] = {input, dy};
  return runtime::dispatch1(kMaxPoolGrad, in, std::move(attrs), SourceLocation::current());
}

Tensor max_pool_grad_grad(const Tensor& input, const Tensor& g, schema::Attrs attrs) {
  const Tensor in[] = {input, g};
  return runtime::dispatch1(kMaxPoolGradGrad, in, std::move(attrs), SourceLocation::current());
}

Tensor avg_pool_grad(const Tensor& input, const Tensor& dy, schema::Attrs attrs) {
  const Tensor in[] = {input, dy};
  return runtime::dispatch1(kAvgPoolGrad, in, std::move(attrs), SourceLocation::current());
}

}  // namespace ops
}  // namespace kiln

// The handle the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& max_pool_grad_op() { return ops::kMaxPoolGrad; }
}  // namespace kiln::ops
