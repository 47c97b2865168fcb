// Conv2D: 2-D convolution of NHWC images with HWIO filters, as tf.nn.conv2d.
// float32 runs on oneDNN (input and output stay NHWC; only the filters are
// reordered into the layout oneDNN's kernel prefers); float64 on a plain loop.
// The kernel also runs grouped convolutions, for DepthwiseConv2dNative.
#include <algorithm>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/nn_internal.h"
#include "ops/conv_onednn.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

Shape infer_conv2d_output(schema::InferContext& c, const Shape& in, const Shape& f) {
  DType di = c.dtype(0), df = c.dtype(1);
  if (di != df)
    c.fail("input and filters must have the same dtype, got input: {} and filters: {}",
           dtype_name(di), dtype_name(df));
  if (!is_floating(di)) c.fail("dtype must be float32 or float64, got {}", dtype_name(di));
  if (in.has_known_rank() && in.rank() != 4)
    c.fail("input must have rank 4 (NHWC), got shape {} (filters have shape {})", in.to_string(),
           f.to_string());
  if (f.has_known_rank() && f.rank() != 4)
    c.fail("filters must have rank 4 (height, width, in channels, out channels), got shape {} "
           "(input has shape {})",
           f.to_string(), in.to_string());
  bool fk = f.has_known_rank();
  int64_t kh = fk ? f[0] : -1, kw = fk ? f[1] : -1;
  if (kh == 0 || kw == 0)
    c.fail("filters must have a positive height and width, got shape {}", f.to_string());
  int64_t in_c = in.has_known_rank() ? in[3] : -1;
  int64_t f_c = fk ? f[2] : -1;
  // As TF: filters with a divisor of the input's channels make a grouped
  // convolution, groups = in_c / f_c, each of f[3] / groups output channels.
  if (in_c >= 0 && f_c >= 0 && (f_c == 0 ? in_c != 0 : in_c % f_c != 0))
    c.fail("input has {} channels but filters expect {} (or a divisor of them: the input depth must be evenly "
           "divisible by the filter depth): input shape {}, filters shape {}",
           in_c, f_c, in.to_string(), f.to_string());
  const int64_t groups = in_c > 0 && f_c > 0 ? in_c / f_c : 1;
  if (groups > 1 && fk && f[3] >= 0 && f[3] % groups != 0)
    c.fail("output depth must be evenly divisible by number of groups: {} vs {} (input shape {}, filters shape {})",
           f[3], groups, in.to_string(), f.to_string());
  Window2D g = infer_window(c, in, kh, kw, /*has_dilations=*/true,
                            "filters shape " + f.to_string());
  return Shape{in.has_known_rank() ? in[0] : -1, g.h.out, g.w.out, fk ? f[3] : -1};
}

namespace {

void conv2d_infer(schema::InferContext& c) {
  c.add_output(c.dtype(0), infer_conv2d_output(c, c.shape(0), c.shape(1)));
}

// ---- float32: oneDNN --------------------------------------------------------
struct ConvPrimitive {
  onednn::Executable conv;     // (x, weights, y)
  onednn::Executable reorder;  // HWIO filters -> weights; unset when oneDNN takes HWIO as is
  std::size_t weights_bytes = 0;
};

// Unset for a bf16 convolution oneDNN has only its reference kernel for.
std::shared_ptr<const ConvPrimitive> make_conv(const ConvDims& d, dnnl::memory::data_type type) {
  auto p = std::make_shared<ConvPrimitive>();
  const ConvDescs s = conv_descs(d, type);
  const dnnl::memory::desc &src = s.src, &dst = s.dst, &user_weights = s.user_weights;
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                       src, s.any_weights, dst, s.strides, s.dilates, s.pad_l, s.pad_r);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::engine());
  if (type != dnnl::memory::data_type::f32 && !onednn::is_fast_impl(pd.impl_info_str())) return p;
  dnnl::memory::desc weights = pd.weights_desc();
  p->conv.init(dnnl::convolution_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}},
               pd.scratchpad_desc().get_size());
  if (weights != user_weights) {
    dnnl::reorder::primitive_desc rpd(onednn::engine(), user_weights, onednn::engine(), weights, attr);
    p->reorder.init(dnnl::reorder(rpd), {{DNNL_ARG_FROM, user_weights}, {DNNL_ARG_TO, weights}},
                    rpd.scratchpad_desc().get_size());
    p->weights_bytes = weights.get_size();
  }
  return p;
}

// False when oneDNN could not run it (the caller falls back). `type` is f32
// (float* x, f, y) or bf16 (bfloat16_t*).
bool conv_onednn(const ConvDims& d, const void* x, const void* f, void* y,
                 dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  try {
    onednn::PrimitiveKey key = conv_key(/*kind=*/2, d, type);
    auto p = onednn::cached<ConvPrimitive>(key, [&] { return make_conv(d, type); });
    if (!p->conv) return false;
    const void* weights = f;
    if (p->reorder) {
      // The filters are reordered on every call: a tensor's values are
      // immutable but its buffer may be recycled for other values, so the
      // reordered copy cannot be keyed by address. It is small next to the
      // convolution itself.
      weights = onednn::scratch(onednn::kWeights, p->weights_bytes);
      p->reorder.run({f, weights});
    }
    p->conv.run({x, weights, y});
    return true;
  } catch (...) {
    return false;
  }
}

// ---- float64 (and the fallback): a direct loop ------------------------------
// Each output channel sums over the input channels of its group.
template <class T>
void conv_plain(const ConvDims& d, const T* x, const T* f, T* y) {
  const Window2D& g = d.g;
  int64_t oh_n = g.h.out, ow_n = g.w.out;
  const int64_t cg = d.c / d.groups, og = d.o / d.groups;  // channels per group
  int64_t row_work = std::max<int64_t>(1, ow_n * g.kh * g.kw * cg * d.o);
  core::parallel_for(
      d.n * oh_n,
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t n = row / oh_n, oh = row % oh_n;
          for (int64_t ow = 0; ow < ow_n; ++ow) {
            T* o = y + (row * ow_n + ow) * d.o;
            for (int64_t co = 0; co < d.o; ++co) o[co] = T(0);
            for (int64_t kh = 0; kh < g.kh; ++kh) {
              int64_t ih = oh * g.sh - g.h.pad_before + kh * g.dh;
              if (ih < 0 || ih >= d.h) continue;
              for (int64_t kw = 0; kw < g.kw; ++kw) {
                int64_t iw = ow * g.sw - g.w.pad_before + kw * g.dw;
                if (iw < 0 || iw >= d.w) continue;
                const T* xp = x + ((n * d.h + ih) * d.w + iw) * d.c;
                const T* fp = f + (kh * g.kw + kw) * cg * d.o;
                for (int64_t group = 0; group < d.groups; ++group) {
                  for (int64_t ci = 0; ci < cg; ++ci) {
                    T xv = xp[group * cg + ci];
                    const T* fr = fp + ci * d.o + group * og;
                    T* og_out = o + group * og;
                    for (int64_t co = 0; co < og; ++co) og_out[co] += xv * fr[co];
                  }
                }
              }
            }
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / row_work));
}

ConvDims conv_dims(const schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& f = c.in_shape(1);
  return ConvDims{in[0], in[1], in[2], in[3], f[3], kernel_window(c.attrs, in, f[0], f[1]), conv_groups(in, f)};
}

}  // namespace

void conv2d_forward(schema::KernelContext& c, const ConvDims& d) {
  Tensor& out = c.outputs[0];
  if (out.size() == 0) return;
  core::visit_numeric(out.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* y = c.out<T>(0);
      if (d.c == 0) {
        std::fill(y, y + out.size(), T(0));
        return;
      }
      if constexpr (std::is_same_v<T, float>) {
        if (conv_onednn(d, c.in<float>(0), c.in<float>(1), y)) return;
      }
      conv_plain<T>(d, c.in<T>(0), c.in<T>(1), y);
    }
  });
}

namespace {

void conv2d_kernel(schema::KernelContext& c) { conv2d_forward(c, conv_dims(c)); }

// bfloat16 on oneDNN's bf16 kernel (float32 accumulation), where the CPU has
// bf16 instructions; false leaves it to the float32 path (widen_bridge).
bool conv2d_bf16(schema::KernelContext& c) {
  if (!onednn::bf16_kernels() || c.outputs[0].size() == 0) return false;
  const ConvDims d = conv_dims(c);
  if (d.c == 0) return false;
  return conv_onednn(d, c.in<bfloat16_t>(0), c.in<bfloat16_t>(1), c.out<bfloat16_t>(0),
                     dnnl::memory::data_type::bf16);
}

std::vector<schema::OpSample> conv2d_samples() {
  std::vector<float> x(1 * 5 * 5 * 2), w(3 * 3 * 2 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.2f - 0.4f;
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
  std::vector<schema::OpSample> samples{
      {{constant(x, Shape{1, 5, 5, 2}), constant(w, Shape{3, 3, 2, 3})}, conv_attrs(1, "SAME", 1)},
      {{constant(xd, Shape{1, 5, 5, 2}), constant(wd, Shape{3, 3, 2, 3})}, conv_attrs({2, 1}, "VALID", 1)},
      // Grouped: 6 channels in 3 groups of 2, 2 outputs each (the backprop sample without its dy).
      conv_backprop_sample(DType::Float32, {1, 5, 4, 6}, {3, 2, 2, 6}, {1, 3, 2, 6}, {2, 2}, "SAME", 1)};
  samples.back().inputs.pop_back();
  return samples;
}

void conv2d_gradient(schema::GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& f = c.inputs[1];
  if (c.needs(0)) c.set(0, conv2d_backprop_input(x, f, c.grad(0), c.attrs));
  if (c.needs(1)) c.set(1, conv2d_backprop_filter(x, f, c.grad(0), c.attrs));
}

constexpr detail::OpDef kConv2D{.name = "Conv2D", .infer = conv2d_infer,
                                .kernel = bf16_or_widened<conv2d_bf16, conv2d_kernel>,
                                .flags = schema::kCostlyToRecompute | schema::kShapeFromShapes,
                                .samples = conv2d_samples, .gradient = conv2d_gradient};

}  // namespace

void register_conv_ops(schema::OpRegistry& r) { r.add(kConv2D); }

}  // namespace ops

namespace nn {

Tensor conv2d(const Tensor& input, const Tensor& filters, const Size2D& strides,
              const PaddingArg& padding, const Size2D& dilations, SourceLocation loc) {
  const Tensor in[] = {input, filters};
  return runtime::dispatch1(ops::kConv2D, in, ops::conv_attrs(strides, padding, dilations), loc);
}

}  // namespace nn
}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& conv2d_op() { return ops::kConv2D; }
}  // namespace kiln::ops
