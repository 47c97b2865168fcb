// TF's FFT ops over the innermost 1, 2 or 3 axes: FFT, IFFT, FFT2D, ...,
// RFFT, IRFFT, RFFT2D, IRFFT2D, RFFT3D, IRFFT3D (fft_length an attr, as the
// Python functions pass it), on Kiln's own plans (fft_plan.h), and
// PadOrCropLike, which the real transforms' gradients use to give back the
// input's lengths. Gradients as TF's fft_ops.py defines them: the adjoint
// transform (conj(FFT(conj(g))) = n * IFFT(g)), and for the real transforms
// the doubled bins weighted (docs/design-notes.md, "FFT").
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/parallel.h"
#include "core/tensor_impl.h"
#include "kiln/complex_math.h"
#include "kiln/fft.h"
#include "kiln/math.h"
#include "ops/complex_util.h"
#include "ops/fft_plan.h"
#include "runtime/dispatch.h"
#include "schema/op_def.h"

namespace kiln {
namespace ops {

namespace {

int64_t product(std::span<const int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Transforms one axis of n elements, `inner` apart, in each of `outer` blocks.
template <class T>
void transform_axis(std::complex<T>* data, int64_t outer, int64_t n, int64_t inner, bool inverse) {
  const int64_t lines = outer * inner;
  if (n <= 1 || lines == 0) return;
  const FftPlan<T> plan(n);
  const T scale = static_cast<T>(1.0 / static_cast<double>(n));
  core::parallel_for(
      lines,
      [&](int64_t begin, int64_t end) {
        std::vector<std::complex<T>> scratch(static_cast<std::size_t>(plan.scratch_size()));
        std::vector<std::complex<T>> line(static_cast<std::size_t>(inner == 1 ? 0 : n));
        for (int64_t l = begin; l < end; ++l) {
          std::complex<T>* base = data + (l / inner) * n * inner + l % inner;
          std::complex<T>* x = inner == 1 ? base : line.data();
          if (inner != 1)
            for (int64_t k = 0; k < n; ++k) x[k] = base[k * inner];
          plan.transform(x, scratch.data(), inverse);
          if (inverse)
            for (int64_t k = 0; k < n; ++k) x[k] *= scale;
          if (inner != 1)
            for (int64_t k = 0; k < n; ++k) base[k * inner] = x[k];
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / (8 * n)));
}

// Transforms the first `axes` of the axes `dims` (the innermost ones) of
// `batch` such blocks.
template <class T>
void transform_inner(std::complex<T>* data, int64_t batch, std::span<const int64_t> dims, std::size_t axes,
                     bool inverse) {
  for (std::size_t a = 0; a < axes; ++a)
    transform_axis(data, batch * product(dims.first(a)), dims[a], product(dims.subspan(a + 1)), inverse);
}

// dst [batch, ddims...] from src [batch, sdims...], each axis cropped or
// zero-padded (TF's handling of fft_length).
template <class S, class D>
void copy_window(const S* src, std::span<const int64_t> sdims, D* dst, std::span<const int64_t> ddims,
                 int64_t batch) {
  const std::size_t k = ddims.size();
  const int64_t dlast = ddims[k - 1], slast = sdims[k - 1], copied = std::min(dlast, slast);
  const int64_t drows = product(ddims.first(k - 1)), srows = product(sdims.first(k - 1));
  core::parallel_for(
      batch * drows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t rest = r % drows, src_row = 0, src_stride = 1;
          bool inside = true;
          for (std::size_t a = k - 1; a-- > 0;) {
            const int64_t coord = rest % ddims[a];
            rest /= ddims[a];
            inside = inside && coord < sdims[a];
            src_row += coord * src_stride;
            src_stride *= sdims[a];
          }
          D* out = dst + r * dlast;
          int64_t i = 0;
          if (inside) {
            const S* in = src + ((r / drows) * srows + src_row) * slast;
            for (; i < copied; ++i) out[i] = D(in[i]);
          }
          std::fill(out + i, out + dlast, D());
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(dlast, 1)));
}

// The op's input: at least `rank` dims.
void check_rank(schema::InferContext& c, int rank) {
  const Shape& s = c.shape(0);
  if (s.has_known_rank() && s.rank() < rank)
    c.fail("input must have rank at least {}, got shape {}", rank, s.to_string());
}

// The leading dims of `s` with its last `rank` dims replaced by `inner`.
Shape with_inner(const Shape& s, std::span<const int64_t> inner) {
  if (!s.has_known_rank()) return Shape::unknown_rank();
  std::vector<int64_t> dims(s.begin(), s.end() - static_cast<std::ptrdiff_t>(inner.size()));
  dims.insert(dims.end(), inner.begin(), inner.end());
  return Shape(dims);
}

// The batch (product of the leading dims) and the last `rank` dims of t.
int64_t batch_of(const Shape& s, int rank) { return product(s.dims().first(static_cast<std::size_t>(s.rank() - rank))); }
std::span<const int64_t> inner_of(const Shape& s, int rank) {
  return s.dims().subspan(static_cast<std::size_t>(s.rank() - rank));
}

// ---- FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D: complex to complex ----------
template <int K> void complex_fft_infer(schema::InferContext& c) {
  if (!is_complex(c.dtype(0))) c.fail("input must be complex64 or complex128, got {}", dtype_name(c.dtype(0)));
  check_rank(c, K);
  c.add_output(c.dtype(0), c.shape(0));
}
template <int K, bool kInverse> void complex_fft_kernel(schema::KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), [&]<class R>() {
    const Shape& s = c.in_shape(0);
    std::complex<R>* out = c.out<std::complex<R>>(0);
    std::copy_n(c.in<std::complex<R>>(0), s.num_elements(), out);
    transform_inner(out, batch_of(s, K), inner_of(s, K), K, kInverse);
  });
}
const detail::OpDef& complex_fft_op(int rank, bool inverse);
// The adjoint of a transform is the conjugate transform: FFT's is n * IFFT,
// IFFT's is FFT / n; both are conj(op(conj(g))).
template <int K, bool kInverse> void complex_fft_grad(schema::GradContext& c) {
  Tensor g = runtime::dispatch1(complex_fft_op(K, kInverse), std::array{conj(c.grad(0))}, schema::Attrs{},
                                SourceLocation::current());
  c.set(0, conj(g));
}
template <int K> std::vector<schema::OpSample> complex_fft_samples() {
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  std::vector<C64> a;
  std::vector<C128> b;
  for (int i = 0; i < 30; ++i) a.emplace_back(std::sin(1.3f * i), std::cos(0.7f * i) - 0.25f);
  for (int i = 0; i < 42; ++i) b.emplace_back(0.1 * i - 1.5, std::sin(0.9 * i));
  if (K == 1)
    return {{{constant(a, Shape{3, 10})}, {}},       // radix 2 and 5
            {{constant(b, Shape{6, 7})}, {}},        // Bluestein
            {{constant(std::vector<C128>{}, Shape{0, 4})}, {}}};
  if (K == 2) return {{{constant(a, Shape{2, 3, 5})}, {}}, {{constant(b, Shape{7, 6})}, {}}};
  return {{{constant(a, Shape{5, 2, 3})}, {}}, {{constant(b, Shape{1, 2, 3, 7})}, {}}};
}

#define KILN_COMPLEX_FFT_OP(NAME, K, INV)                                                                      \
  constexpr detail::OpDef k##NAME{.name = #NAME, .infer = complex_fft_infer<K>,                             \
                                  .kernel = complex_fft_kernel<K, INV>, .samples = complex_fft_samples<K>, \
                                  .gradient = complex_fft_grad<K, INV>};
KILN_COMPLEX_FFT_OP(FFT, 1, false)
KILN_COMPLEX_FFT_OP(IFFT, 1, true)
KILN_COMPLEX_FFT_OP(FFT2D, 2, false)
KILN_COMPLEX_FFT_OP(IFFT2D, 2, true)
KILN_COMPLEX_FFT_OP(FFT3D, 3, false)
KILN_COMPLEX_FFT_OP(IFFT3D, 3, true)
#undef KILN_COMPLEX_FFT_OP

const detail::OpDef& complex_fft_op(int rank, bool inverse) {
  static constexpr const detail::OpDef* kOps[3][2] = {{&kFFT, &kIFFT}, {&kFFT2D, &kIFFT2D}, {&kFFT3D, &kIFFT3D}};
  return *kOps[rank - 1][inverse ? 1 : 0];
}

// ---- RFFT, IRFFT and their 2-D and 3-D forms ------------------------------
const std::vector<int64_t>& fft_length_attr(const schema::Attrs& a) { return a.get_ints("fft_length"); }

template <int K> const std::vector<int64_t>& checked_fft_length(schema::InferContext& c) {
  const std::vector<int64_t>& n = fft_length_attr(c.attrs());
  if (n.size() != static_cast<std::size_t>(K)) c.fail("fft_length must have {} elements, got {}", K, n.size());
  for (int64_t d : n)
    if (d < 0) c.fail("fft_length must not be negative, got {}", d);
  check_rank(c, K);
  return n;
}
// The half spectrum's lengths: fft_length with n / 2 + 1 last.
std::vector<int64_t> half_lengths(const std::vector<int64_t>& n) {
  std::vector<int64_t> h = n;
  h.back() = n.back() / 2 + 1;
  return h;
}

template <int K> void rfft_infer(schema::InferContext& c) {
  if (c.dtype(0) != DType::Float32 && c.dtype(0) != DType::Float64)
    c.fail("input must be float32 or float64, got {}", dtype_name(c.dtype(0)));
  const std::vector<int64_t>& n = checked_fft_length<K>(c);
  c.add_output(complex_of(c.dtype(0)), with_inner(c.shape(0), half_lengths(n)));
}
template <int K> void rfft_kernel(schema::KernelContext& c) {
  visit_complex(c.outputs[0].dtype(), [&]<class R>() {
    const std::vector<int64_t>& n = fft_length_attr(c.attrs);
    const std::vector<int64_t> h = half_lengths(n);
    const Shape& s = c.in_shape(0);
    const int64_t batch = batch_of(s, K);
    if (c.outputs[0].size() == 0) return;
    // The last axis in full, then its non-negative half; then the others.
    std::vector<std::complex<R>> full(static_cast<std::size_t>(batch * product(n)));
    copy_window(c.in<R>(0), inner_of(s, K), full.data(), n, batch);
    transform_axis(full.data(), batch * product(std::span(n).first(K - 1)), n.back(), 1, false);
    std::complex<R>* out = c.out<std::complex<R>>(0);
    copy_window(full.data(), std::span<const int64_t>(n), out, h, batch);
    transform_inner(out, batch, std::span<const int64_t>(h), K - 1, false);
  });
}

template <int K> void irfft_infer(schema::InferContext& c) {
  if (!is_complex(c.dtype(0))) c.fail("input must be complex64 or complex128, got {}", dtype_name(c.dtype(0)));
  const std::vector<int64_t>& n = checked_fft_length<K>(c);
  c.add_output(real_dtype(c.dtype(0)), with_inner(c.shape(0), n));
}
template <int K> void irfft_kernel(schema::KernelContext& c) {
  visit_complex(c.inputs[0].dtype(), [&]<class R>() {
    const std::vector<int64_t>& n = fft_length_attr(c.attrs);
    const std::vector<int64_t> h = half_lengths(n);
    const Shape& s = c.in_shape(0);
    const int64_t batch = batch_of(s, K), last = n.back(), half = h.back();
    if (c.outputs[0].size() == 0) return;
    std::vector<std::complex<R>> spectrum(static_cast<std::size_t>(batch * product(h)));
    copy_window(c.in<std::complex<R>>(0), inner_of(s, K), spectrum.data(), h, batch);
    transform_inner(spectrum.data(), batch, std::span<const int64_t>(h), K - 1, true);
    // Each last-axis line completed as a Hermitian spectrum; the real part of
    // its inverse ignores the imaginary parts of the zero and Nyquist bins.
    const FftPlan<R> plan(last);
    const R scale = static_cast<R>(1.0 / static_cast<double>(last));
    R* out = c.out<R>(0);
    core::parallel_for(
        batch * product(std::span(n).first(K - 1)),
        [&](int64_t begin, int64_t end) {
          std::vector<std::complex<R>> line(static_cast<std::size_t>(last));
          std::vector<std::complex<R>> scratch(static_cast<std::size_t>(plan.scratch_size()));
          for (int64_t l = begin; l < end; ++l) {
            const std::complex<R>* in = spectrum.data() + l * half;
            std::copy_n(in, half, line.data());
            for (int64_t k = half; k < last; ++k) line[static_cast<std::size_t>(k)] = std::conj(in[last - k]);
            plan.transform(line.data(), scratch.data(), true);
            for (int64_t j = 0; j < last; ++j) out[l * last + j] = line[static_cast<std::size_t>(j)].real() * scale;
          }
        },
        std::max<int64_t>(1, core::kParallelGrain / (8 * last)));
  });
}

const detail::OpDef& real_fft_op(int rank, bool inverse);
Tensor pad_or_crop_like(const Tensor& x, const Tensor& like, int rank);

// The weight of each bin of the half spectrum (length n / 2 + 1): `edge` for
// the zero bin and, for even n, the Nyquist bin; `interior` for the bins
// that stand for two of the full spectrum.
Tensor bin_weights(int64_t n, double edge, double interior, double scale, DType complex_dtype) {
  const int64_t half = n / 2 + 1;
  std::vector<double> w(static_cast<std::size_t>(half), interior * scale);
  w.front() = edge * scale;
  if (n % 2 == 0) w.back() = edge * scale;
  return cast(constant(w, Shape{half}, real_dtype(complex_dtype)), complex_dtype);
}

// y = RFFT(x): dL/dx = N * IRFFT(g weighted 1 on the edge bins, 1/2 inside),
// then back to x's lengths.
template <int K> void rfft_grad(schema::GradContext& c) {
  const std::vector<int64_t>& n = fft_length_attr(c.attrs);
  const Tensor& g = c.grad(0);
  Tensor weighted = g * bin_weights(n.back(), 1.0, 0.5, static_cast<double>(product(n)), g.dtype());
  Tensor dx = runtime::dispatch1(real_fft_op(K, true), std::array{weighted}, schema::Attrs{{"fft_length", n}},
                                 SourceLocation::current());
  c.set(0, pad_or_crop_like(dx, c.inputs[0], K));
}
// x = IRFFT(y): dL/dy = RFFT(g) / N, the bins that stand for two doubled.
template <int K> void irfft_grad(schema::GradContext& c) {
  const std::vector<int64_t>& n = fft_length_attr(c.attrs);
  const Tensor& y = c.inputs[0];
  Tensor spectrum = runtime::dispatch1(real_fft_op(K, false), std::array{c.grad(0)},
                                       schema::Attrs{{"fft_length", n}}, SourceLocation::current());
  Tensor weights = bin_weights(n.back(), 1.0, 2.0, 1.0 / static_cast<double>(std::max<int64_t>(product(n), 1)),
                               y.dtype());
  c.set(0, pad_or_crop_like(spectrum * weights, y, K));
}

template <int K> std::vector<schema::OpSample> rfft_samples() {
  std::vector<float> a;
  std::vector<double> b;
  for (int i = 0; i < 24; ++i) a.push_back(std::sin(0.8f * i) + 0.1f * i);
  for (int i = 0; i < 45; ++i) b.push_back(std::cos(1.7 * i) - 0.02 * i);
  auto lengths = [](std::vector<int64_t> v) { return schema::Attrs{{"fft_length", std::move(v)}}; };
  if (K == 1)
    return {{{constant(a, Shape{4, 6})}, lengths({6})},
            {{constant(b, Shape{5, 9})}, lengths({7})},    // cropped, odd
            {{constant(b, Shape{3, 15})}, lengths({20})},  // padded
            {{constant(std::vector<double>{}, Shape{0, 5})}, lengths({5})}};
  if (K == 2)
    return {{{constant(a, Shape{2, 3, 4})}, lengths({3, 4})}, {{constant(b, Shape{5, 9})}, lengths({6, 7})}};
  return {{{constant(a, Shape{2, 3, 4})}, lengths({2, 3, 4})}, {{constant(b, Shape{3, 3, 5})}, lengths({2, 4, 6})}};
}
template <int K> std::vector<schema::OpSample> irfft_samples() {
  using C64 = std::complex<float>;
  using C128 = std::complex<double>;
  std::vector<C64> a;
  std::vector<C128> b;
  for (int i = 0; i < 24; ++i) a.emplace_back(std::sin(0.8f * i), 0.3f * std::cos(1.1f * i));
  for (int i = 0; i < 36; ++i) b.emplace_back(std::cos(1.7 * i), 0.5 * std::sin(0.4 * i) - 0.1);
  auto lengths = [](std::vector<int64_t> v) { return schema::Attrs{{"fft_length", std::move(v)}}; };
  if (K == 1)
    return {{{constant(a, Shape{6, 4})}, lengths({6})},
            {{constant(b, Shape{4, 9})}, lengths({7})},    // cropped to 4 bins
            {{constant(b, Shape{9, 4})}, lengths({10})}};  // padded to 6 bins
  if (K == 2)
    return {{{constant(a, Shape{2, 3, 4})}, lengths({3, 6})}, {{constant(b, Shape{4, 9})}, lengths({5, 8})}};
  return {{{constant(a, Shape{2, 3, 4})}, lengths({2, 3, 5})}, {{constant(b, Shape{3, 3, 4})}, lengths({3, 2, 6})}};
}

#define KILN_REAL_FFT_OP(NAME, PREFIX, K)                                                              \
  constexpr detail::OpDef k##NAME{.name = #NAME, .infer = PREFIX##_infer<K>, .kernel = PREFIX##_kernel<K>, \
                                  .samples = PREFIX##_samples<K>, .gradient = PREFIX##_grad<K>};
KILN_REAL_FFT_OP(RFFT, rfft, 1)
KILN_REAL_FFT_OP(IRFFT, irfft, 1)
KILN_REAL_FFT_OP(RFFT2D, rfft, 2)
KILN_REAL_FFT_OP(IRFFT2D, irfft, 2)
KILN_REAL_FFT_OP(RFFT3D, rfft, 3)
KILN_REAL_FFT_OP(IRFFT3D, irfft, 3)
#undef KILN_REAL_FFT_OP

const detail::OpDef& real_fft_op(int rank, bool inverse) {
  static constexpr const detail::OpDef* kOps[3][2] = {
      {&kRFFT, &kIRFFT}, {&kRFFT2D, &kIRFFT2D}, {&kRFFT3D, &kIRFFT3D}};
  return *kOps[rank - 1][inverse ? 1 : 0];
}

// ---- PadOrCropLike(x, like): x's last `rank` dims cropped or zero-padded to
// like's (the real transforms' gradients back to their input's lengths).
void pad_or_crop_infer(schema::InferContext& c) {
  const int rank = static_cast<int>(c.attrs().get_int("rank"));
  const DType d = c.dtype(0);
  if (d != DType::Float32 && d != DType::Float64 && !is_complex(d))
    c.fail("x must be float32, float64, complex64 or complex128, got {}", dtype_name(d));
  const Shape &x = c.shape(0), &like = c.shape(1);
  check_rank(c, rank);
  if (like.has_known_rank() && like.rank() < rank) c.fail("like must have rank at least {}, got shape {}", rank, like.to_string());
  if (!x.has_known_rank() || !like.has_known_rank()) return c.add_output(d, Shape::unknown_rank());
  c.add_output(d, with_inner(x, like.dims().subspan(static_cast<std::size_t>(like.rank() - rank))));
}
void pad_or_crop_kernel(schema::KernelContext& c) {
  const int rank = static_cast<int>(c.attrs.get_int("rank"));
  auto run = [&]<class E>() {
    if (c.outputs[0].size() == 0) return;
    copy_window(c.in<E>(0), inner_of(c.in_shape(0), rank), c.out<E>(0), inner_of(c.out_shape(0), rank),
                batch_of(c.in_shape(0), rank));
  };
  switch (c.inputs[0].dtype()) {
    case DType::Float32: run.template operator()<float>(); break;
    case DType::Float64: run.template operator()<double>(); break;
    case DType::Complex64: run.template operator()<std::complex<float>>(); break;
    default: run.template operator()<std::complex<double>>(); break;
  }
}
void pad_or_crop_grad(schema::GradContext& c) {
  if (c.needs(0))
    c.set(0, pad_or_crop_like(c.grad(0), c.inputs[0], static_cast<int>(c.attrs.get_int("rank"))));
}
std::vector<schema::OpSample> pad_or_crop_samples() {
  std::vector<float> a(24);
  std::iota(a.begin(), a.end(), -5.f);
  return {{{constant(a, Shape{2, 3, 4}), zeros(Shape{5, 2}, DType::Float32)}, schema::Attrs{{"rank", int64_t{2}}}},
          {{constant(a, Shape{4, 6}), zeros(Shape{9}, DType::Float32)}, schema::Attrs{{"rank", int64_t{1}}}}};
}
constexpr detail::OpDef kPadOrCropLike{.name = "PadOrCropLike", .infer = pad_or_crop_infer,
                                       .kernel = pad_or_crop_kernel, .samples = pad_or_crop_samples,
                                       .gradient = pad_or_crop_grad};

Tensor pad_or_crop_like(const Tensor& x, const Tensor& like, int rank) {
  return runtime::dispatch1(kPadOrCropLike, std::array{x, like}, schema::Attrs{{"rank", int64_t{rank}}},
                            SourceLocation::current());
}

// fft_length as given, or the input's static inner lengths (irfft: 2 (n - 1)
// on the last axis), as TF's Python functions take them.
std::vector<int64_t> lengths_or_default(const Tensor& x, std::vector<int64_t> given, int rank, bool inverse,
                                        const char* name) {
  if (!given.empty()) return given;
  const Shape& s = x.shape();
  if (!s.has_known_rank() || s.rank() < rank)
    throw InvalidArgument(fmt::format("{}: input must have rank at least {}, got shape {}", name, rank, s.to_string()));
  std::vector<int64_t> n(s.end() - rank, s.end());
  for (int64_t d : n)
    if (d == None)
      throw InvalidArgument(fmt::format("{}: fft_length is needed when the input's inner dims are unknown ({})",
                                        name, s.to_string()));
  if (inverse) n.back() = std::max<int64_t>(0, 2 * (n.back() - 1));
  return n;
}

Tensor real_fft(const Tensor& x, std::vector<int64_t> fft_length, int rank, bool inverse, const char* name,
                const SourceLocation& loc) {
  std::vector<int64_t> n = lengths_or_default(x, std::move(fft_length), rank, inverse, name);
  return runtime::dispatch1(real_fft_op(rank, inverse), std::array{x}, schema::Attrs{{"fft_length", std::move(n)}},
                            loc);
}

}  // namespace

void register_fft_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kFFT, &kIFFT, &kFFT2D, &kIFFT2D, &kFFT3D, &kIFFT3D, &kRFFT, &kIRFFT, &kRFFT2D,
                                  &kIRFFT2D, &kRFFT3D, &kIRFFT3D, &kPadOrCropLike})
    r.add(*op);
}

}  // namespace ops

#define KILN_COMPLEX_FFT_FN(FN, RANK, INV) \
  Tensor FN(const Tensor& x, SourceLocation loc) { \
    return runtime::dispatch1(ops::complex_fft_op(RANK, INV), std::array{x}, schema::Attrs{}, loc); \
  }
KILN_COMPLEX_FFT_FN(fft, 1, false)
KILN_COMPLEX_FFT_FN(ifft, 1, true)
KILN_COMPLEX_FFT_FN(fft2d, 2, false)
KILN_COMPLEX_FFT_FN(ifft2d, 2, true)
KILN_COMPLEX_FFT_FN(fft3d, 3, false)
KILN_COMPLEX_FFT_FN(ifft3d, 3, true)
#undef KILN_COMPLEX_FFT_FN

#define KILN_REAL_FFT_FN(FN, RANK, INV)                                                    \
  Tensor FN(const Tensor& x, std::vector<int64_t> fft_length, SourceLocation loc) {       \
    return ops::real_fft(x, std::move(fft_length), RANK, INV, #FN, loc);                  \
  }
KILN_REAL_FFT_FN(rfft, 1, false)
KILN_REAL_FFT_FN(irfft, 1, true)
KILN_REAL_FFT_FN(rfft2d, 2, false)
KILN_REAL_FFT_FN(irfft2d, 2, true)
KILN_REAL_FFT_FN(rfft3d, 3, false)
KILN_REAL_FFT_FN(irfft3d, 3, true)
#undef KILN_REAL_FFT_FN

}  // namespace kiln
