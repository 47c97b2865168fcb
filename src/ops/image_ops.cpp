// ResizeImage and its gradient: tf.image.resize's interpolation kernels, one
// op with a `method` attr rather than TF's five ops (ResizeBilinear,
// ResizeNearestNeighbor, ResizeBicubic, ResizeArea, ScaleAndTranslate).
// Every method is separable and linear in the image: each output row (column)
// is a weighted sum of a few input rows (columns). So the kernel computes one
// list of (index, weight) taps per output index and axis, with TF's sampling
// arithmetic in float, then applies the rows' taps and the columns' taps; the
// gradient applies the same taps transposed (ResizeImageGrad), and the
// gradient of that is the resize again.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/parallel.h"
#include "kiln/image_ops.h"
#include "ops/register_ops.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

struct Tap {
  int64_t index;
  double weight;
};
using AxisTaps = std::vector<std::vector<Tap>>;  // per output index

// ResizeBilinear / ResizeBicubic / ResizeNearestNeighbor's half-pixel scale.
float resize_scale(int64_t in, int64_t out) { return static_cast<float>(in) / static_cast<float>(out); }

AxisTaps nearest_taps(int64_t in, int64_t out) {
  const float scale = resize_scale(in, out);
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float in_f = (static_cast<float>(x) + 0.5f) * scale;
    const int64_t i = std::max<int64_t>(0, std::min(static_cast<int64_t>(std::floor(in_f)), in - 1));
    taps[x] = {{i, 1.0}};
  }
  return taps;
}

AxisTaps bilinear_taps(int64_t in, int64_t out) {
  const float scale = resize_scale(in, out);
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float f = (static_cast<float>(x) + 0.5f) * scale - 0.5f;
    const float lo_f = std::floor(f);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(lo_f), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(f)), in - 1);
    const float lerp = f - lo_f;
    taps[x] = {{lo, 1.0 - lerp}, {hi, lerp}};
  }
  return taps;
}

// Keys' cubic convolution kernel with a = -0.5 (Catmull-Rom), |x| = t.
double keys_cubic(double t) {
  constexpr double a = -0.5;
  t = std::abs(t);
  if (t >= 2) return 0;
  if (t >= 1) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return ((a + 2) * t - (a + 3)) * t * t + 1;
}

// ResizeBicubic with half-pixel centers: TF reads the kernel from a table of
// 1024 steps (the fraction is rounded to 1/1024), zeroes taps outside the
// image and renormalizes the rest.
AxisTaps bicubic_taps(int64_t in, int64_t out) {
  constexpr int kTable = 1024;
  const float scale = resize_scale(in, out);
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float f = (static_cast<float>(x) + 0.5f) * scale - 0.5f;
    const int64_t loc = static_cast<int64_t>(std::floor(f));
    const double t = static_cast<double>(std::lrintf((f - std::floor(f)) * kTable)) / kTable;
    const double w[4] = {keys_cubic(1 + t), keys_cubic(t), keys_cubic(1 - t), keys_cubic(2 - t)};
    double sum = 0;
    std::vector<Tap> row;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = loc - 1 + k;
      if (i < 0 || i >= in) continue;
      row.push_back({i, w[k]});
      sum += w[k];
    }
    if (std::abs(sum) >= 1000.0 * std::numeric_limits<float>::min())
      for (Tap& tap : row) tap.weight /= sum;
    taps[x] = std::move(row);
  }
  return taps;
}

// ResizeArea (no half-pixel centers): the average of the input cells the
// output cell covers, partly covered cells weighted by their overlap.
AxisTaps area_taps(int64_t in, int64_t out) {
  const float scale = resize_scale(in, out);
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float a = static_cast<float>(x) * scale, b = static_cast<float>(x + 1) * scale;
    const int64_t start = static_cast<int64_t>(std::floor(a)), end = static_cast<int64_t>(std::ceil(b));
    for (int64_t i = start; i < end; ++i) {
      const double overlap = std::min<double>(static_cast<double>(i + 1), b) - std::max<double>(static_cast<double>(i), a);
      taps[x].push_back({std::min(i, in - 1), overlap / scale});
    }
  }
  return taps;
}

// ScaleAndTranslate's kernels (TF's sampling_kernels), of |x|, with radii.
double lanczos(double x, double radius) {
  if (x > radius) return 0;
  if (x <= 1e-3) return 1;
  const double px = std::numbers::pi * x;
  return radius * std::sin(px) * std::sin(px / radius) / (px * px);
}
double mitchell_cubic(double x) {
  if (x >= 2) return 0;
  if (x >= 1) return (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0;
  return ((7.0 / 6.0) * x - 2.0) * x * x + 8.0 / 9.0;
}
double gaussian(double x) {
  constexpr double sigma = 0.5, radius = 1.5;
  return x >= radius ? 0 : std::exp(-x * x / (2 * sigma * sigma));
}
double triangle(double x) { return std::max(0.0, 1.0 - x); }

// ScaleAndTranslate with translation 0 and scale out / in: the kernel,
// widened by in / out when antialiasing a downsample, centered on each
// output's half-pixel sample point; taps outside the image are dropped and the
// rest renormalized.
AxisTaps scale_and_translate_taps(int64_t in, int64_t out, const std::string& method, bool antialias) {
  double (*kernel)(double) = triangle;
  double radius = 1;
  if (method == "bicubic") kernel = keys_cubic, radius = 2;
  else if (method == "mitchellcubic") kernel = mitchell_cubic, radius = 2;
  else if (method == "gaussian") kernel = gaussian, radius = 1.5;
  else if (method == "lanczos3") kernel = [](double x) { return lanczos(x, 3); }, radius = 3;
  else if (method == "lanczos5") kernel = [](double x) { return lanczos(x, 5); }, radius = 5;
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  const float inv_scale = 1.0f / scale;
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const float reach = static_cast<float>(radius) * kernel_scale;
  AxisTaps taps(static_cast<size_t>(out));
  for (int64_t x = 0; x < out; ++x) {
    const float sample = (static_cast<float>(x) + 0.5f) * inv_scale;
    if (sample < 0 || sample > static_cast<float>(in)) continue;
    const int64_t start = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sample - reach - 0.5f)), 0, in - 1);
    const int64_t end = std::clamp<int64_t>(static_cast<int64_t>(std::floor(sample + reach - 0.5f)), 0, in - 1) + 1;
    double sum = 0;
    for (int64_t i = start; i < end; ++i) {
      const double w = kernel(std::abs((static_cast<float>(i) + 0.5f - sample) / kernel_scale));
      taps[x].push_back({i, w});
      sum += w;
    }
    if (std::abs(sum) >= 1000.0 * std::numeric_limits<float>::min())
      for (Tap& tap : taps[x]) tap.weight /= sum;
  }
  return taps;
}

AxisTaps axis_taps(int64_t in, int64_t out, const schema::Attrs& attrs) {
  const std::string& method = attrs.get_string("method");
  const bool antialias = attrs.get_bool("antialias");
  if (method == "nearest") return nearest_taps(in, out);
  if (method == "area") return area_taps(in, out);
  if (method == "bilinear" && !antialias) return bilinear_taps(in, out);
  if (method == "bicubic" && !antialias) return bicubic_taps(in, out);
  return scale_and_translate_taps(in, out, method, antialias);
}

constexpr const char* kMethods[] = {"bilinear", "nearest", "bicubic", "area",
                                    "lanczos3", "lanczos5", "gaussian", "mitchellcubic"};

const std::string& checked_method(schema::InferContext& c) {
  const std::string& method = c.attrs().get_string("method");
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods))
    c.fail("method must be one of bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian, mitchellcubic, "
           "got \"{}\"", method);
  c.attrs().get_bool("antialias");  // present
  return method;
}

// Checks the attrs and the image (input 0); returns the output shape.
Shape infer_resized(schema::InferContext& c, int64_t out_h, int64_t out_w) {
  const std::string& method = checked_method(c);
  const DType d = c.dtype(0);
  const bool integral = d == DType::UInt8 || d == DType::Int32 || d == DType::Int64;
  if (!is_floating(d) && !(integral && method == "nearest"))
    c.fail("images must be float32 or float64 (or uint8, int32, int64 for nearest), got {}", dtype_name(d));
  const Shape& in = c.shape(0);
  if (in.has_known_rank() && in.rank() != 4)
    c.fail("images must be 4-dimensional [batch, height, width, channels], got shape {}", in.to_string());
  if (in.has_known_rank() && (in[1] == 0 || in[2] == 0) && out_h * out_w > 0)
    c.fail("input image must be of non-zero size, got shape {}", in.to_string());
  return in.has_known_rank() ? Shape{in[0], out_h, out_w, in[3]} : Shape{-1, out_h, out_w, -1};
}

std::pair<int64_t, int64_t> size_attr(schema::InferContext& c) {
  const std::vector<int64_t>& size = c.attrs().get_ints("size");
  if (size.size() != 2 || size[0] < 0 || size[1] < 0)
    c.fail("size must hold two non-negative numbers [new_height, new_width], got [{}]", fmt::join(size, ", "));
  return {size[0], size[1]};
}

void resize_infer(schema::InferContext& c) {
  auto [h, w] = size_attr(c);
  c.add_output(c.dtype(0), infer_resized(c, h, w));
}

// Output [N, OH, OW, C] from input [N, H, W, C]: rows, then columns; or the
// transpose of that (the gradient), scattering columns, then rows.
template <class T>
void apply_taps(const T* in, T* out, int64_t n, int64_t h, int64_t w, int64_t ch, int64_t oh, int64_t ow,
                const AxisTaps& rows, const AxisTaps& cols, bool transpose) {
  if (!transpose) {
    std::vector<double> tmp(static_cast<size_t>(oh * w * ch));
    for (int64_t b = 0; b < n; ++b) {
      const T* src = in + b * h * w * ch;
      T* dst = out + b * oh * ow * ch;
      // Output rows are independent: each thread takes a band of them.
      core::parallel_for(oh, [&](int64_t y0, int64_t y1) {
        std::fill(tmp.begin() + y0 * w * ch, tmp.begin() + y1 * w * ch, 0.0);
        for (int64_t y = y0; y < y1; ++y)
          for (const Tap& t : rows[y])
            for (int64_t k = 0; k < w * ch; ++k)
              tmp[y * w * ch + k] += t.weight * static_cast<double>(src[t.index * w * ch + k]);
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t x = 0; x < ow; ++x)
            for (int64_t k = 0; k < ch; ++k) {
              double s = 0;
              for (const Tap& t : cols[x]) s += t.weight * tmp[(y * w + t.index) * ch + k];
              dst[(y * ow + x) * ch + k] = static_cast<T>(s);
            }
      }, std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(1, (w + ow) * ch)));
    }
    return;
  }
  // transpose: in is dy [N, OH, OW, C], out is dx [N, H, W, C].
  std::vector<double> tmp(static_cast<size_t>(oh * w * ch)), acc(static_cast<size_t>(h * w * ch));
  for (int64_t b = 0; b < n; ++b) {
    const T* dy = in + b * oh * ow * ch;
    std::fill(tmp.begin(), tmp.end(), 0.0);
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (const Tap& t : cols[x])
          for (int64_t k = 0; k < ch; ++k) tmp[(y * w + t.index) * ch + k] += t.weight * static_cast<double>(dy[(y * ow + x) * ch + k]);
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t y = 0; y < oh; ++y)
      for (const Tap& t : rows[y])
        for (int64_t k = 0; k < w * ch; ++k) acc[t.index * w * ch + k] += t.weight * tmp[y * w * ch + k];
    T* dx = out + b * h * w * ch;
    for (int64_t k = 0; k < h * w * ch; ++k) dx[k] = static_cast<T>(acc[k]);
  }
}

// The image is inputs[0] (forward) or the original image (gradient: shape only).
void run_resize(schema::KernelContext& c, const Shape& image, bool transpose) {
  const int64_t n = image[0], h = image[1], w = image[2], ch = image[3];
  const Shape& big = transpose ? c.in_shape(0) : c.out_shape(0);
  const int64_t oh = big[1], ow = big[2];
  if (n * oh * ow * ch == 0 || n * h * w * ch == 0) {
    if (transpose && c.out_shape(0).num_elements() > 0) {
      // Nothing flows back from an empty output.
      switch (c.outputs[0].dtype()) {
        case DType::Float32: std::fill_n(c.out<float>(0), c.out_shape(0).num_elements(), 0.f); break;
        default: std::fill_n(c.out<double>(0), c.out_shape(0).num_elements(), 0.0); break;
      }
    }
    return;
  }
  const AxisTaps rows = axis_taps(h, oh, c.attrs), cols = axis_taps(w, ow, c.attrs);
  switch (c.inputs[0].dtype()) {
    case DType::Float32: apply_taps(c.in<float>(0), c.out<float>(0), n, h, w, ch, oh, ow, rows, cols, transpose); break;
    case DType::Float64: apply_taps(c.in<double>(0), c.out<double>(0), n, h, w, ch, oh, ow, rows, cols, transpose); break;
    case DType::UInt8: apply_taps(c.in<uint8_t>(0), c.out<uint8_t>(0), n, h, w, ch, oh, ow, rows, cols, transpose); break;
    case DType::Int32: apply_taps(c.in<int32_t>(0), c.out<int32_t>(0), n, h, w, ch, oh, ow, rows, cols, transpose); break;
    default: apply_taps(c.in<int64_t>(0), c.out<int64_t>(0), n, h, w, ch, oh, ow, rows, cols, transpose); break;
  }
}

void resize_kernel(schema::KernelContext& c) { run_resize(c, c.in_shape(0), false); }

// ResizeImageGrad(dy, original image): the image's gradient; reads only the
// original's shape, as TF's ResizeBilinearGrad.
void resize_grad_infer(schema::InferContext& c) {
  const Shape& dy = c.shape(0);
  const Shape& image = c.shape(1);
  if (c.dtype(0) != c.dtype(1))
    c.fail("grads and original_image must have the same dtype, got {} and {}", dtype_name(c.dtype(0)),
           dtype_name(c.dtype(1)));
  if (!is_floating(c.dtype(0))) c.fail("grads must be float32 or float64, got {}", dtype_name(c.dtype(0)));
  if (dy.has_known_rank() && dy.rank() != 4) c.fail("grads must be 4-dimensional, got shape {}", dy.to_string());
  if (image.has_known_rank() && image.rank() != 4)
    c.fail("original_image must be 4-dimensional, got shape {}", image.to_string());
  checked_method(c);
  // The batch and channels of grads are the image's: the kernel reads both with the image's.
  if (dy.has_known_rank() && image.has_known_rank())
    for (int d : {0, 3})
      if (dy[d] >= 0 && image[d] >= 0 && dy[d] != image[d])
        c.fail("grads and original_image must have the same batch and channels, got shapes {} and {}",
               dy.to_string(), image.to_string());
  c.add_output(c.dtype(1), image.has_known_rank() ? image : Shape{-1, -1, -1, -1});
}

void resize_grad_kernel(schema::KernelContext& c) { run_resize(c, c.in_shape(1), true); }

schema::Attrs resize_attrs(int64_t h, int64_t w, const std::string& method, bool antialias) {
  return schema::Attrs{{"size", std::vector<int64_t>{h, w}}, {"method", method}, {"antialias", antialias}};
}

Tensor resize_grad(const Tensor& dy, const Tensor& image, const schema::Attrs& attrs);

void resize_gradient(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, resize_grad(c.grad(0), c.inputs[0], c.attrs));
}

void resize_grad_gradient(schema::GradContext& c) {
  const Shape& dy = c.inputs[0].shape();
  if (c.needs(0))
    c.set(0, resize_image(c.grad(0), {dy[1], dy[2]}, c.attrs.get_string("method"), c.attrs.get_bool("antialias")));
}

// Values (i * 7 % 11) / 4 - 1: no ties, different rows and columns.
Tensor ramp(DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int64_t>(i) * 7 % 11) / 4.0 - 1.0;
  return dtype == DType::Float64 ? constant(v, shape) : constant(std::vector<float>(v.begin(), v.end()), shape);
}

std::vector<schema::OpSample> resize_samples() {
  constexpr DType f32 = DType::Float32, f64 = DType::Float64;
  // TF's documented example: a 5x5 identity to 3x5, bilinear.
  std::vector<float> eye(25, 0.f);
  for (int i = 0; i < 5; ++i) eye[i * 6] = 1.f;
  std::vector<schema::OpSample> samples = {
      {{constant(eye, Shape{1, 5, 5, 1})},
       resize_attrs(3, 5, "bilinear", false),
       false,
       {constant(std::vector<float>{2.f / 3, 1.f / 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1.f / 3, 2.f / 3},
                 Shape{1, 3, 5, 1})}},
      {{constant(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{1, 2, 3, 1})},
       resize_attrs(4, 2, "nearest", false),
       false,
       {constant(std::vector<int32_t>{1, 3, 1, 3, 4, 6, 4, 6}, Shape{1, 4, 2, 1})}},
  };
  int i = 0;
  for (const char* method : kMethods) {
    const DType d = i % 2 ? f64 : f32;
    samples.push_back({{ramp(d, Shape{2, 5, 4, 2})}, resize_attrs(3, 7, method, false)});
    samples.push_back({{ramp(d, Shape{1, 6, 7, 1})}, resize_attrs(9, 3, method, true)});
    ++i;
  }
  return samples;
}

std::vector<schema::OpSample> resize_grad_samples() {
  std::vector<schema::OpSample> samples;
  for (schema::OpSample& s : resize_samples()) {
    if (!is_floating(s.inputs[0].dtype()) || !s.expected.empty()) continue;
    const std::vector<int64_t>& size = s.attrs.get_ints("size");
    const Shape& in = s.inputs[0].shape();
    samples.push_back({{ramp(s.inputs[0].dtype(), Shape{in[0], size[0], size[1], in[3]}), s.inputs[0]}, s.attrs});
  }
  return samples;
}

constexpr detail::OpDef kResizeImage{.name = "ResizeImage", .infer = resize_infer, .kernel = resize_kernel,
                                     .flags = schema::kShapeFromShapes, .samples = resize_samples,
                                     .gradient = resize_gradient};
constexpr detail::OpDef kResizeImageGrad{.name = "ResizeImageGrad", .infer = resize_grad_infer,
                                         .kernel = resize_grad_kernel, .flags = schema::kShapeFromShapes,
                                         .samples = resize_grad_samples, .gradient = resize_grad_gradient};

Tensor resize_grad(const Tensor& dy, const Tensor& image, const schema::Attrs& attrs) {
  const Tensor in[] = {dy, image};
  return runtime::dispatch1(kResizeImageGrad, in, schema::Attrs(attrs), SourceLocation::current());
}

}  // namespace

void register_image_ops(schema::OpRegistry& r) {
  r.add(kResizeImage);
  r.add(kResizeImageGrad);
}

}  // namespace ops

Tensor resize_image(const Tensor& images, const std::vector<int64_t>& size, const std::string& method, bool antialias,
                    SourceLocation loc) {
  const Tensor in[] = {images};
  const int64_t h = size.size() > 0 ? size[0] : -1, w = size.size() > 1 ? size[1] : -1;
  schema::Attrs attrs = ops::resize_attrs(h, w, method, antialias);
  if (size.size() != 2) attrs.set("size", size);
  return runtime::dispatch1(ops::kResizeImage, in, std::move(attrs), loc);
}

}  // namespace kiln
