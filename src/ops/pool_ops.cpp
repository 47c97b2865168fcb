// MaxPool and AvgPool over NHWC images, as tf.nn.max_pool2d / avg_pool2d.
// float32 runs on oneDNN (NHWC in and out, no reorders); float64 on a plain
// loop. Average pooling divides by the window's elements inside the input.
#include <algorithm>
#include <limits>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "ops/onednn.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

Shape infer_pool_output(schema::InferContext& c, const Shape& in) {
  DType dt = c.dtype(0);
  if (!is_floating(dt)) c.fail("dtype must be float32 or float64, got {}", dtype_name(dt));
  if (in.has_known_rank() && in.rank() != 4)
    c.fail("input must have rank 4 (NHWC), got shape {}", in.to_string());
  int64_t kh, kw;
  read_size2d(c, "ksize", kh, kw);
  Window2D g = infer_window(c, in, kh, kw, /*has_dilations=*/false,
                            fmt::format("ksize [{}, {}]", kh, kw));
  bool known = in.has_known_rank();
  return Shape{known ? in[0] : -1, g.h.out, g.w.out, known ? in[3] : -1};
}

namespace {

void pool_infer(schema::InferContext& c) {
  c.add_output(c.dtype(0), infer_pool_output(c, c.shape(0)));
}

// ---- float32: oneDNN --------------------------------------------------------
struct PoolPrimitive {
  onednn::Executable prim;  // (x, y)
};

// Of float32, or of `type` (bf16: max pooling only, where the maximum is the
// same value in any precision; unset where oneDNN has only its reference kernel).
std::shared_ptr<const PoolPrimitive> make_pool(const PoolDims& d, dnnl::memory::data_type type) {
  using tag = dnnl::memory::format_tag;
  const Window2D& g = d.g;
  auto p = std::make_shared<PoolPrimitive>();
  dnnl::memory::desc src({d.n, d.c, d.h, d.w}, type, tag::nhwc);
  dnnl::memory::desc dst({d.n, d.c, g.h.out, g.w.out}, type, tag::nhwc);
  dnnl::pooling_forward::desc desc(
      dnnl::prop_kind::forward_inference,
      d.max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding, src,
      dst, {g.sh, g.sw}, {g.kh, g.kw}, {g.h.pad_before, g.w.pad_before},
      {g.h.pad_after, g.w.pad_after});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::pooling_forward::primitive_desc pd(desc, attr, onednn::engine());
  if (type != dnnl::memory::data_type::f32 && !onednn::is_fast_impl(pd.impl_info_str())) return p;
  p->prim.init(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}},
               pd.scratchpad_desc().get_size());
  return p;
}

bool pool_onednn(const PoolDims& d, const void* x, void* y,
                 dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  try {
    const Window2D& g = d.g;
    onednn::PrimitiveKey key(/*kind=*/type == dnnl::memory::data_type::bf16 ? 103 : 3);
    for (int64_t v : {int64_t(d.max), d.n, d.h, d.w, d.c, g.kh, g.kw, g.sh, g.sw, g.h.pad_before,
                      g.h.pad_after, g.w.pad_before, g.w.pad_after})
      key.add(v);
    auto p = onednn::cached<PoolPrimitive>(key, [&] { return make_pool(d, type); });
    if (!p->prim) return false;
    p->prim.run({x, y});
    return true;
  } catch (...) {
    return false;
  }
}

// ---- float64 (and the fallback): a plain loop, vectorized over channels ----
template <class T>
void pool_plain(const PoolDims& d, const T* x, T* y) {
  const Window2D& g = d.g;
  int64_t oh_n = g.h.out, ow_n = g.w.out;
  int64_t row_work = std::max<int64_t>(1, ow_n * g.kh * g.kw * d.c);
  core::parallel_for(
      d.n * oh_n,
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t n = row / oh_n, oh = row % oh_n;
          int64_t h0 = std::max<int64_t>(0, oh * g.sh - g.h.pad_before);
          int64_t h1 = std::min<int64_t>(d.h, oh * g.sh - g.h.pad_before + g.kh);
          for (int64_t ow = 0; ow < ow_n; ++ow) {
            int64_t w0 = std::max<int64_t>(0, ow * g.sw - g.w.pad_before);
            int64_t w1 = std::min<int64_t>(d.w, ow * g.sw - g.w.pad_before + g.kw);
            T* o = y + (row * ow_n + ow) * d.c;
            T init = d.max ? std::numeric_limits<T>::lowest() : T(0);
            for (int64_t ch = 0; ch < d.c; ++ch) o[ch] = init;
            for (int64_t ih = h0; ih < h1; ++ih) {
              for (int64_t iw = w0; iw < w1; ++iw) {
                const T* xp = x + ((n * d.h + ih) * d.w + iw) * d.c;
                if (d.max) {
                  for (int64_t ch = 0; ch < d.c; ++ch) o[ch] = xp[ch] > o[ch] ? xp[ch] : o[ch];
                } else {
                  for (int64_t ch = 0; ch < d.c; ++ch) o[ch] += xp[ch];
                }
              }
            }
            if (!d.max) {
              T count = static_cast<T>((h1 - h0) * (w1 - w0));
              for (int64_t ch = 0; ch < d.c; ++ch) o[ch] /= count;
            }
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / row_work));
}

PoolDims pool_dims(const schema::KernelContext& c, bool max) {
  const Shape& in = c.in_shape(0);
  const std::vector<int64_t>& k = c.attrs.get_ints("ksize");
  return PoolDims{in[0], in[1], in[2], in[3], kernel_window(c.attrs, in, k[0], k[1]), max};
}

// bfloat16 MaxPool on oneDNN's bf16 pooling where the CPU has bf16
// instructions (the same values as through float32: a maximum rounds nothing).
bool max_pool_bf16(schema::KernelContext& c) {
  if (!onednn::bf16_kernels() || c.outputs[0].size() == 0) return false;
  return pool_onednn(pool_dims(c, true), c.in<bfloat16_t>(0), c.out<bfloat16_t>(0), dnnl::memory::data_type::bf16);
}

template <bool kMax>
void pool_kernel(schema::KernelContext& c) {
  Tensor& out = c.outputs[0];
  if (out.size() == 0) return;
  const PoolDims d = pool_dims(c, kMax);
  core::visit_numeric(out.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (std::is_same_v<T, float>) {
        if (pool_onednn(d, c.in<float>(0), c.out<float>(0))) return;
      }
      pool_plain<T>(d, c.in<T>(0), c.out<T>(0));
    }
  });
}

std::vector<schema::OpSample> pool_samples() {
  std::vector<float> x(1 * 4 * 5 * 2);
  // Distinct values: max pooling has no derivative where a window ties.
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 41) * 0.25f - 5.0f;
  std::vector<double> xd(x.begin(), x.end());
  return {
      {{constant(x, Shape{1, 4, 5, 2})},
       schema::Attrs{{"ksize", std::vector<int64_t>{2, 2}},
                     {"strides", std::vector<int64_t>{2, 2}},
                     {"padding", std::string("SAME")}}},
      {{constant(xd, Shape{1, 4, 5, 2})},
       schema::Attrs{{"ksize", std::vector<int64_t>{3, 2}},
                     {"strides", std::vector<int64_t>{1, 2}},
                     {"padding", std::string("VALID")}}},
  };
}

void max_pool_gradient(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, max_pool_grad(c.inputs[0], c.grad(0), c.attrs));
}

void avg_pool_gradient(schema::GradContext& c) {
  if (c.needs(0)) c.set(0, avg_pool_grad(c.inputs[0], c.grad(0), c.attrs));
}

constexpr detail::OpDef kMaxPool{.name = "MaxPool", .infer = pool_infer,
                                 .kernel = bf16_or_widened<max_pool_bf16, pool_kernel<true>>,
                                 .flags = schema::kShapeFromShapes, .samples = pool_samples,
                                 .gradient = max_pool_gradient};
constexpr detail::OpDef kAvgPool{.name = "AvgPool", .infer = pool_infer, .kernel = widened<pool_kernel<false>>,
                                 .flags = schema::kShapeFromShapes, .samples = pool_samples,
                                 .gradient = avg_pool_gradient};

schema::Attrs pool_attrs(const nn::Size2D& ksize, const nn::Size2D& strides,
                         const nn::PaddingArg& padding) {
  return schema::Attrs{{"ksize", size2d_attr(ksize)},
                       {"strides", size2d_attr(strides)},
                       {"padding", padding_attr(padding)}};
}

}  // namespace

void register_pool_ops(schema::OpRegistry& r) {
  r.add(kMaxPool);
  r.add(kAvgPool);
}

}  // namespace ops

namespace nn {

Tensor max_pool2d(const Tensor& input, const Size2D& ksize, const Size2D& strides,
                  const PaddingArg& padding, SourceLocation loc) {
  const Tensor in[] = {input};
  return runtime::dispatch1(ops::kMaxPool, in, ops::pool_attrs(ksize, strides, padding), loc);
}

Tensor avg_pool2d(const Tensor& input, const Size2D& ksize, const Size2D& strides,
                  const PaddingArg& padding, SourceLocation loc) {
  const Tensor in[] = {input};
  return runtime::dispatch1(ops::kAvgPool, in, ops::pool_attrs(ksize, strides, padding), loc);
}

}  // namespace nn
}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& max_pool_op() { return ops::kMaxPool; }
}  // namespace kiln::ops
