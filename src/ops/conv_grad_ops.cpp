// Conv2DBackpropInput and Conv2DBackpropFilter: the gradients of Conv2D with
// respect to its input and its filters (NHWC input, HWIO filters, strides,
// SAME/VALID, dilations). float32 runs on oneDNN's backward-data and
// backward-weights primitives (cached like the forward one); float64 on plain
// loops. Both ops take (input, filters, dy) and read only the shape of the
// tensor whose gradient they compute, so that shape may be unknown while
// tracing (Kiln has no shape tensors). The kernels also run grouped
// convolutions (ConvDims::groups), for DepthwiseConv2dNative's backprops; the
// gradient functions and samples are shared with those too.
#include <algorithm>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "ops/nn_internal.h"
#include "ops/conv_onednn.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

void check_conv_dy(schema::InferContext& c, const Shape& y) {
  const Shape& in = c.shape(0);
  const Shape& f = c.shape(1);
  const Shape& dy = c.shape(2);
  if (c.dtype(2) != c.dtype(0))
    c.fail("dy must have the dtype of input and filters ({}), got {}", dtype_name(c.dtype(0)),
           dtype_name(c.dtype(2)));
  if (!dy.has_known_rank()) return;
  if (dy.rank() != 4) c.fail("dy must have rank 4 (NHWC), got shape {}", dy.to_string());
  for (int i = 0; i < 4; ++i) {
    if (y[i] >= 0 && dy[i] >= 0 && y[i] != dy[i])
      c.fail("dy has shape {} but the convolution of input shape {} with filters shape {} gives "
             "shape {}",
             dy.to_string(), in.to_string(), f.to_string(), y.to_string());
  }
}

namespace {

// Checks input, filters and dy (inputs 0, 1, 2) against each other.
void check_conv_backprop(schema::InferContext& c) { check_conv_dy(c, infer_conv2d_output(c, c.shape(0), c.shape(1))); }

void backprop_input_infer(schema::InferContext& c) {
  check_conv_backprop(c);
  const Shape& in = c.shape(0);
  Shape out = in.has_known_rank() ? in : Shape{-1, -1, -1, -1};
  // Not the channels from the filters: grouped, they hold a divisor of them.
  out[0] = known_or(out[0], dim_or_unknown(c.shape(2), 0));
  c.add_output(c.dtype(0), out);
}

void backprop_filter_infer(schema::InferContext& c) {
  check_conv_backprop(c);
  const Shape& f = c.shape(1);
  Shape out = f.has_known_rank() ? f : Shape{-1, -1, -1, -1};
  // Not the channels from the input: grouped, the filters hold a divisor of them.
  out[3] = known_or(out[3], dim_or_unknown(c.shape(2), 3));
  c.add_output(c.dtype(0), out);
}

ConvDims kernel_dims(const schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& f = c.in_shape(1);
  return ConvDims{in[0], in[1], in[2], in[3], f[3], kernel_window(c.attrs, in, f[0], f[1]), conv_groups(in, f)};
}

// ---- float32: oneDNN --------------------------------------------------------
// oneDNN builds backward primitives against a forward (training) one.
dnnl::convolution_forward::primitive_desc forward_hint(const ConvDescs& s) {
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training,
                                       dnnl::algorithm::convolution_direct, s.src, s.any_weights,
                                       s.dst, s.strides, s.dilates, s.pad_l, s.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, onednn::engine());
}

// Where oneDNN wants the filters (or their gradient) in another layout than
// HWIO, a reorder between the two runs with the primitive.
struct WeightsReorder {
  onednn::Executable reorder;  // unset when the primitive takes HWIO
  std::size_t bytes = 0;       // of the primitive's layout

  void make(const dnnl::memory::desc& from, const dnnl::memory::desc& to, const dnnl::primitive_attr& attr,
            std::size_t layout_bytes) {
    dnnl::reorder::primitive_desc rpd(onednn::engine(), from, onednn::engine(), to, attr);
    reorder.init(dnnl::reorder(rpd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, rpd.scratchpad_desc().get_size());
    bytes = layout_bytes;
  }
  // This thread's buffer for the primitive's layout.
  void* buffer() const { return onednn::scratch(onednn::kWeights, bytes); }
};

struct BackwardDataPrimitive {
  onednn::Executable prim;  // (dy, weights, dx)
  WeightsReorder weights;   // HWIO filters -> layout
};

// Of float32 or bf16 (`type`); unset for a bf16 one oneDNN has only its
// reference kernel for.
std::shared_ptr<const BackwardDataPrimitive> make_backward_data(const ConvDims& d, dnnl::memory::data_type type) {
  auto p = std::make_shared<BackwardDataPrimitive>();
  const ConvDescs s = conv_descs(d, type);
  dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, s.src,
                                             s.any_weights, s.dst, s.strides, s.dilates, s.pad_l,
                                             s.pad_r);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_backward_data::primitive_desc pd(desc, attr, onednn::engine(),
                                                     forward_hint(s));
  if (type != dnnl::memory::data_type::f32 && !onednn::is_fast_impl(pd.impl_info_str())) return p;
  dnnl::memory::desc layout = pd.weights_desc();
  p->prim.init(dnnl::convolution_backward_data(pd),
               {{DNNL_ARG_DIFF_DST, s.dst}, {DNNL_ARG_WEIGHTS, layout}, {DNNL_ARG_DIFF_SRC, s.src}},
               pd.scratchpad_desc().get_size());
  if (layout != s.user_weights) p->weights.make(s.user_weights, layout, attr, layout.get_size());
  return p;
}

// `type` f32: float* f, dy, dx; bf16: bfloat16_t*.
bool backprop_input_onednn(const ConvDims& d, const void* f, const void* dy, void* dx,
                           dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  try {
    auto p = onednn::cached<BackwardDataPrimitive>(conv_key(4, d, type),
                                                   [&] { return make_backward_data(d, type); });
    if (!p->prim) return false;
    const void* weights = f;
    if (p->weights.reorder) {
      // Reordered on every call, as in the forward kernel (conv_ops.cpp).
      weights = p->weights.buffer();
      p->weights.reorder.run({f, weights});
    }
    p->prim.run({dy, weights, dx});
    return true;
  } catch (...) {
    return false;
  }
}

struct BackwardWeightsPrimitive {
  onednn::Executable prim;  // (x, dy, df)
  WeightsReorder weights;   // layout -> HWIO gradient
};

std::shared_ptr<const BackwardWeightsPrimitive> make_backward_weights(const ConvDims& d,
                                                                      dnnl::memory::data_type type) {
  auto p = std::make_shared<BackwardWeightsPrimitive>();
  const ConvDescs s = conv_descs(d, type);
  dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, s.src,
                                                s.any_weights, s.dst, s.strides, s.dilates,
                                                s.pad_l, s.pad_r);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, onednn::engine(),
                                                        forward_hint(s));
  if (type != dnnl::memory::data_type::f32 && !onednn::is_fast_impl(pd.impl_info_str())) return p;
  dnnl::memory::desc layout = pd.diff_weights_desc();
  p->prim.init(dnnl::convolution_backward_weights(pd),
               {{DNNL_ARG_SRC, s.src}, {DNNL_ARG_DIFF_DST, s.dst}, {DNNL_ARG_DIFF_WEIGHTS, layout}},
               pd.scratchpad_desc().get_size());
  if (layout != s.user_weights) p->weights.make(layout, s.user_weights, attr, layout.get_size());
  return p;
}

// `type` f32: float* x, dy, df; bf16: bfloat16_t*.
bool backprop_filter_onednn(const ConvDims& d, const void* x, const void* dy, void* df,
                            dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  try {
    auto p = onednn::cached<BackwardWeightsPrimitive>(conv_key(5, d, type),
                                                      [&] { return make_backward_weights(d, type); });
    if (!p->prim) return false;
    if (!p->weights.reorder) {
      p->prim.run({x, dy, df});
      return true;
    }
    void* layout = p->weights.buffer();
    p->prim.run({x, dy, layout});
    p->weights.reorder.run({layout, df});
    return true;
  } catch (...) {
    return false;
  }
}

// ---- float64 (and the fallback): plain loops --------------------------------

// Gathers into each input pixel from the outputs whose windows hold it: rows
// of dx are independent, so they run in parallel without atomics.
template <class T>
void backprop_input_plain(const ConvDims& d, const T* f, const T* dy, T* dx) {
  const Window2D& g = d.g;
  int64_t oh_n = g.h.out, ow_n = g.w.out;
  const int64_t cg = d.c / d.groups, og = d.o / d.groups;  // channels per group
  int64_t row_work = std::max<int64_t>(1, d.w * g.kh * g.kw * d.c * og);
  core::parallel_for(
      d.n * d.h,
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t n = row / d.h, ih = row % d.h;
          for (int64_t iw = 0; iw < d.w; ++iw) {
            T* o = dx + (row * d.w + iw) * d.c;
            for (int64_t ci = 0; ci < d.c; ++ci) o[ci] = T(0);
            for (int64_t kh = 0; kh < g.kh; ++kh) {
              int64_t th = ih + g.h.pad_before - kh * g.dh;
              if (th < 0 || th % g.sh != 0 || th / g.sh >= oh_n) continue;
              int64_t oh = th / g.sh;
              for (int64_t kw = 0; kw < g.kw; ++kw) {
                int64_t tw = iw + g.w.pad_before - kw * g.dw;
                if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= ow_n) continue;
                int64_t ow = tw / g.sw;
                const T* dyp = dy + ((n * oh_n + oh) * ow_n + ow) * d.o;
                const T* fp = f + (kh * g.kw + kw) * cg * d.o;
                for (int64_t ci = 0; ci < d.c; ++ci) {
                  const int64_t first = ci / cg * og;  // the group's first output channel
                  const T* fr = fp + ci % cg * d.o + first;
                  const T* dyr = dyp + first;
                  T acc = T(0);
                  for (int64_t co = 0; co < og; ++co) acc += dyr[co] * fr[co];
                  o[ci] += acc;
                }
              }
            }
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / row_work));
}

// Each filter row (kh, kw, ci) sums input x dy over the batch and the output
// positions (ci: the row's channel within each group); rows are independent.
template <class T>
void backprop_filter_plain(const ConvDims& d, const T* x, const T* dy, T* df) {
  const Window2D& g = d.g;
  int64_t oh_n = g.h.out, ow_n = g.w.out;
  const int64_t cg = d.c / d.groups, og = d.o / d.groups;  // channels per group
  int64_t row_work = std::max<int64_t>(1, d.n * oh_n * ow_n * d.o);
  core::parallel_for(
      g.kh * g.kw * cg,
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t ci = row % cg, kk = row / cg;
          int64_t kh = kk / g.kw, kw = kk % g.kw;
          T* o = df + row * d.o;
          for (int64_t co = 0; co < d.o; ++co) o[co] = T(0);
          for (int64_t n = 0; n < d.n; ++n) {
            for (int64_t oh = 0; oh < oh_n; ++oh) {
              int64_t ih = oh * g.sh - g.h.pad_before + kh * g.dh;
              if (ih < 0 || ih >= d.h) continue;
              for (int64_t ow = 0; ow < ow_n; ++ow) {
                int64_t iw = ow * g.sw - g.w.pad_before + kw * g.dw;
                if (iw < 0 || iw >= d.w) continue;
                const T* xp = x + ((n * d.h + ih) * d.w + iw) * d.c + ci;
                const T* dyp = dy + ((n * oh_n + oh) * ow_n + ow) * d.o;
                for (int64_t group = 0; group < d.groups; ++group) {
                  T xv = xp[group * cg];
                  for (int64_t co = group * og; co < (group + 1) * og; ++co) o[co] += xv * dyp[co];
                }
              }
            }
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / row_work));
}

// An empty dy or a reduction over nothing (no channels, no batch): zeros.
template <class T>
bool fill_zeros_if_empty(const schema::KernelContext& c, const ConvDims& d, T* out) {
  if (c.inputs[2].size() != 0 && d.c != 0) return false;
  std::fill(out, out + c.outputs[0].size(), T(0));
  return true;
}

}  // namespace

void conv2d_backprop_input_kernel(schema::KernelContext& c, const ConvDims& d) {
  if (c.outputs[0].size() == 0) return;
  core::visit_numeric(c.outputs[0].dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* dx = c.out<T>(0);
      if (fill_zeros_if_empty(c, d, dx)) return;
      if constexpr (std::is_same_v<T, float>) {
        if (backprop_input_onednn(d, c.in<float>(1), c.in<float>(2), dx)) return;
      }
      backprop_input_plain<T>(d, c.in<T>(1), c.in<T>(2), dx);
    }
  });
}

void conv2d_backprop_filter_kernel(schema::KernelContext& c, const ConvDims& d) {
  if (c.outputs[0].size() == 0) return;
  core::visit_numeric(c.outputs[0].dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* df = c.out<T>(0);
      if (fill_zeros_if_empty(c, d, df)) return;
      if constexpr (std::is_same_v<T, float>) {
        if (backprop_filter_onednn(d, c.in<float>(0), c.in<float>(2), df)) return;
      }
      backprop_filter_plain<T>(d, c.in<T>(0), c.in<T>(2), df);
    }
  });
}

namespace {

void backprop_input_kernel(schema::KernelContext& c) { conv2d_backprop_input_kernel(c, kernel_dims(c)); }
void backprop_filter_kernel(schema::KernelContext& c) { conv2d_backprop_filter_kernel(c, kernel_dims(c)); }

// bfloat16 on oneDNN's bf16 backward kernels (float32 accumulation), where the
// CPU has bf16 instructions; false leaves them to the float32 path.
bool bf16_dims(const schema::KernelContext& c, ConvDims& d) {
  if (!onednn::bf16_kernels() || c.outputs[0].size() == 0 || c.inputs[2].size() == 0) return false;
  d = kernel_dims(c);
  return d.c != 0;
}

bool backprop_input_bf16(schema::KernelContext& c) {
  ConvDims d;
  return bf16_dims(c, d) && backprop_input_onednn(d, c.in<bfloat16_t>(1), c.in<bfloat16_t>(2), c.out<bfloat16_t>(0),
                                                  dnnl::memory::data_type::bf16);
}

bool backprop_filter_bf16(schema::KernelContext& c) {
  ConvDims d;
  return bf16_dims(c, d) && backprop_filter_onednn(d, c.in<bfloat16_t>(0), c.in<bfloat16_t>(2),
                                                   c.out<bfloat16_t>(0), dnnl::memory::data_type::bf16);
}

std::vector<schema::OpSample> conv_backprop_samples() {
  constexpr DType f32 = DType::Float32, f64 = DType::Float64;
  return {conv_backprop_sample(f32, {1, 5, 5, 2}, {3, 3, 2, 3}, {1, 5, 5, 3}, 1, "SAME", 1),
          conv_backprop_sample(f64, {2, 5, 6, 2}, {3, 2, 2, 3}, {2, 2, 5, 3}, {2, 1}, "VALID", 1),
          conv_backprop_sample(f64, {1, 6, 6, 2}, {2, 2, 2, 3}, {1, 3, 3, 3}, 2, "SAME", 2),
          // Grouped: 6 channels in 3 groups of 2, 2 outputs each.
          conv_backprop_sample(f32, {1, 5, 4, 6}, {3, 2, 2, 6}, {1, 3, 2, 6}, {2, 2}, "SAME", 1)};
}

Tensor conv2d_with(const Tensor& x, const Tensor& f, const schema::Attrs& attrs) {
  return nn::conv2d(x, f, attrs.get_ints("strides"), attrs.get_string("padding"), attrs.get_ints("dilations"));
}
Tensor backprop_input_with(const Tensor& x, const Tensor& f, const Tensor& dy, const schema::Attrs& attrs) {
  return conv2d_backprop_input(x, f, dy, attrs);
}
Tensor backprop_filter_with(const Tensor& x, const Tensor& f, const Tensor& dy, const schema::Attrs& attrs) {
  return conv2d_backprop_filter(x, f, dy, attrs);
}
constexpr ConvOps kConv2DOps{conv2d_with, backprop_input_with, backprop_filter_with};

void backprop_input_gradient(schema::GradContext& c) { conv_backprop_input_gradient(c, kConv2DOps); }
void backprop_filter_gradient(schema::GradContext& c) { conv_backprop_filter_gradient(c, kConv2DOps); }

constexpr detail::OpDef kConv2DBackpropInput{.name = "Conv2DBackpropInput", .infer = backprop_input_infer,
                                             .kernel = bf16_or_widened<backprop_input_bf16, backprop_input_kernel>,
                                             .flags = schema::kCostlyToRecompute,
                                             .samples = conv_backprop_samples, .gradient = backprop_input_gradient};
constexpr detail::OpDef kConv2DBackpropFilter{.name = "Conv2DBackpropFilter", .infer = backprop_filter_infer,
                                              .kernel = bf16_or_widened<backprop_filter_bf16, backprop_filter_kernel>,
                                              .flags = schema::kCostlyToRecompute,
                                              .samples = conv_backprop_samples, .gradient = backprop_filter_gradient};

}  // namespace

schema::Attrs conv_attrs(const nn::Size2D& strides, const nn::PaddingArg& padding, const nn::Size2D& dilations) {
  return schema::Attrs{
      {"strides", size2d_attr(strides)}, {"padding", padding_attr(padding)}, {"dilations", size2d_attr(dilations)}};
}

schema::OpSample conv_backprop_sample(DType dtype, const Shape& input, const Shape& filters, const Shape& dy,
                                      const nn::Size2D& strides, const char* padding, const nn::Size2D& dilations) {
  // Values (i % period) * scale + offset.
  auto ramp = [dtype](const Shape& shape, double scale, double offset, int64_t period) {
    std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int64_t>(i) % period) * scale + offset;
    return dtype == DType::Float64 ? constant(v, shape) : constant(std::vector<float>(v.begin(), v.end()), shape);
  };
  return schema::OpSample{{ramp(input, 0.25, -0.5, 7), ramp(filters, 0.2, -0.4, 5), ramp(dy, 0.3, -0.9, 6)},
                          conv_attrs(strides, padding, dilations)};
}

void conv_gradient(schema::GradContext& c, const ConvOps& ops) {
  const Tensor& x = c.inputs[0];
  const Tensor& f = c.inputs[1];
  if (c.needs(0)) c.set(0, ops.backprop_input(x, f, c.grad(0), c.attrs));
  if (c.needs(1)) c.set(1, ops.backprop_filter(x, f, c.grad(0), c.attrs));
}

void conv_backprop_input_gradient(schema::GradContext& c, const ConvOps& ops) {
  const Tensor& f = c.inputs[1];
  const Tensor& dy = c.inputs[2];
  if (c.needs(1)) c.set(1, ops.backprop_filter(c.grad(0), f, dy, c.attrs));
  if (c.needs(2)) c.set(2, ops.forward(c.grad(0), f, c.attrs));
}

void conv_backprop_filter_gradient(schema::GradContext& c, const ConvOps& ops) {
  const Tensor& x = c.inputs[0];
  const Tensor& dy = c.inputs[2];
  if (c.needs(0)) c.set(0, ops.backprop_input(x, c.grad(0), dy, c.attrs));
  if (c.needs(2)) c.set(2, ops.forward(x, c.grad(0), c.attrs));
}

void register_conv_grad_ops(schema::OpRegistry& r) {
  r.add(kConv2DBackpropInput);
  r.add(kConv2DBackpropFilter);
}

Tensor conv2d_backprop_input(const Tensor& input, const Tensor& filters, const Tensor& dy,
                             schema::Attrs attrs) {
  const Tensor in[] = {input, filters, dy};
  return runtime::dispatch1(kConv2DBackpropInput, in, std::move(attrs), SourceLocation::current());
}

Tensor conv2d_backprop_filter(const Tensor& input, const Tensor& filters, const Tensor& dy,
                              schema::Attrs attrs) {
  const Tensor in[] = {input, filters, dy};
  return runtime::dispatch1(kConv2DBackpropFilter, in, std::move(attrs), SourceLocation::current());
}

}  // namespace ops
}  // namespace kiln

namespace kiln::nn {

Tensor conv2d_transpose(const Tensor& input, const Tensor& filters, const Shape& output_shape,
                        const Size2D& strides, const PaddingArg& padding, const Size2D& dilations,
                        SourceLocation loc) {
  bool known = output_shape.rank() == 4;
  for (int d = 1; known && d < 4; ++d) known = output_shape[d] >= 0;
  if (!known)
    throw InvalidArgument(fmt::format(
        "conv2d_transpose: output_shape must be [batch, height, width, channels] with known height, width and "
        "channels (batch may be None: the input's), got {}",
        output_shape.to_string()));
  if (!input.defined() || !filters.defined()) throw InvalidArgument("conv2d_transpose: an input is a null tensor");
  // Conv2DBackpropInput reads only the shape of its first input, so any
  // tensor of output_shape does: zeros (in a traced graph a constant, folded
  // once), or, when the batch is known only when the graph runs, zeros
  // broadcast against the input's batch dim.
  Shape batch_known = output_shape;
  if (batch_known[0] < 0 && input.shape().has_known_rank()) batch_known[0] = input.shape()[0];
  Tensor sizes = batch_known.is_fully_defined()
                     ? zeros(batch_known, input.dtype())
                     : zeros(Shape{1, output_shape[1], output_shape[2], output_shape[3]}, input.dtype()) *
                           kiln::sum(input, {1, 2, 3}, /*keepdims=*/true);
  const Tensor in[] = {sizes, filters, input};
  return runtime::dispatch1(ops::kConv2DBackpropInput, in, ops::conv_attrs(strides, padding, dilations), loc);
}

}  // namespace kiln::nn
