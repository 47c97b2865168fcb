#pragma once
// Shared by the nn ops files: their registration functions and the window
// geometry (strides, dilations, SAME/VALID padding) of convolution and
// pooling. How MatMul's b is laid out: ops/matmul_layout.h.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kiln/nn_ops.h"
#include "schema/op_def.h"

namespace kiln::ops {

void register_matmul_op(schema::OpRegistry& registry);

// Fills float32 tensors, one after another, with values of many magnitudes
// and both signs that use all their mantissa bits, so that any change in the
// order of a sum changes its rounding: what the fused Adam's band probe
// multiplies to compare its bands' bits with MatMul's.
void fill_probe_values(std::initializer_list<Tensor> tensors);
void register_conv_ops(schema::OpRegistry& registry);
void register_pool_ops(schema::OpRegistry& registry);
void register_softmax_ops(schema::OpRegistry& registry);
void register_bias_add_op(schema::OpRegistry& registry);
void register_conv_grad_ops(schema::OpRegistry& registry);
void register_depthwise_conv_ops(schema::OpRegistry& registry);
void register_pool_grad_ops(schema::OpRegistry& registry);

// A Size2D as an attr: {h, w} when the form is valid (one number, {h, w} or
// {1, h, w, 1}), else the values as given so that the op's inference reports
// them.
std::vector<int64_t> size2d_attr(const nn::Size2D& size);
// A PaddingArg as an attr: upper case ("SAME", "VALID" or whatever came).
std::string padding_attr(const nn::PaddingArg& padding);

// One spatial dim of a window op, as TensorFlow computes it. `out` is -1
// when the input size is unknown.
struct WindowDim {
  int64_t out = -1;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
};

// Reads the 2-entry attr `name` (strides, dilations, ksize), failing unless
// both entries are positive.
void read_size2d(schema::InferContext& c, const char* name, int64_t& h, int64_t& w);

// The window geometry of an NHWC op, from its attrs.
struct Window2D {
  int64_t kh = 0, kw = 0;  // window (filter or ksize)
  int64_t sh = 1, sw = 1;  // strides
  int64_t dh = 1, dw = 1;  // dilations
  bool same = false;
  WindowDim h, w;
};

// Reads and validates strides, padding and (when `has_dilations`) dilations,
// then the output dims of `input` (NHWC; unknown dims allowed) for a window of
// kh x kw (-1 when unknown). Fails naming the op, the argument and the shapes;
// `window_what` names where the window comes from in messages ("filters shape
// (3, 3, 1, 8)" or "ksize [2, 2]").
Window2D infer_window(schema::InferContext& c, const Shape& input, int64_t kh, int64_t kw,
                      bool has_dilations, const std::string& window_what);

// The same geometry in a kernel (attrs already validated; no checks).
Window2D kernel_window(const schema::Attrs& attrs, const Shape& input, int64_t kh, int64_t kw);

// Conv2D's checks of input [N, H, W, C] and filters [KH, KW, C, O] (the
// dtypes of inputs 0 and 1 equal and floating, ranks, channels, window) and
// its output shape; the backprop ops, whose inputs 0 and 1 are also input and
// filters, run them too.
Shape infer_conv2d_output(schema::InferContext& c, const Shape& input, const Shape& filters);
// The backprop ops' check of dy (input 2) against `y`, the shape the forward
// op gives for inputs 0 and 1.
void check_conv_dy(schema::InferContext& c, const Shape& y);
// The backprop ops' output dims at inference: `a` when known, else `b`; dim
// `i` of `s`, -1 when its rank is unknown.
inline int64_t known_or(int64_t a, int64_t b) { return a >= 0 ? a : b; }
inline int64_t dim_or_unknown(const Shape& s, int i) { return s.has_known_rank() ? s[i] : -1; }
// MaxPool/AvgPool's checks of input [N, H, W, C] and ksize/strides/padding,
// and their output shape.
Shape infer_pool_output(schema::InferContext& c, const Shape& input);

// MaxPoolGrad's kernel (inputs: the pooled input x and dy), then the gradient
// of the relu that made x (+0 wherever x is not > 0) on each band of rows as
// soon as it is filled: FusedMaxPoolGrad's kernel (exec/fused_pool_grad_op.cpp).
// With a second output [C], it also sums the gradient over all but its last
// dim (the bias gradient of the convolution before the relu) with
// SumToShapeOf's bits (sum_rows).
void max_pool_grad_relu_kernel(schema::KernelContext& c);

// SumToShapeOf of `rows` rows of `cols` values (float32 or float64) down to
// one row: each column summed from +0 in row order, the bits of a bias
// gradient (ops/grad_ops.cpp).
void sum_rows(DType dtype, const void* g, int64_t rows, int64_t cols, void* out);

// A convolution's sizes, as the kernels read them: input [n, h, w, c],
// output channels o. With groups > 1 (both c and o divisible by it) output
// channel k sums over the c / groups input channels of group k / (o / groups),
// and the filters are [kh, kw, c / groups, o]: DepthwiseConv2dNative's
// [kh, kw, c, multiplier] is the same buffer with groups = c.
struct ConvDims {
  int64_t n, h, w, c, o;
  Window2D g;
  int64_t groups = 1;
};

// Conv2D's groups for input [N, H, W, C] and filters [KH, KW, C / groups, O]
// (known shapes, checked by inference).
inline int64_t conv_groups(const Shape& input, const Shape& filters) {
  return filters[2] > 0 ? input[3] / filters[2] : 1;
}

// The kernels of Conv2D and its two backprop ops for the sizes `d` (inputs:
// input, filters[, dy]; see the ops' files), which DepthwiseConv2dNative and
// its backprops share with groups = c.
void conv2d_forward(schema::KernelContext& c, const ConvDims& d);
void conv2d_backprop_input_kernel(schema::KernelContext& c, const ConvDims& d);
void conv2d_backprop_filter_kernel(schema::KernelContext& c, const ConvDims& d);

// A convolution's attrs, as its public function makes them.
schema::Attrs conv_attrs(const nn::Size2D& strides, const nn::PaddingArg& padding, const nn::Size2D& dilations);
// A backprop op's sample: input, filters and dy of these shapes holding
// ramps of `dtype`, and the convolution's attrs.
schema::OpSample conv_backprop_sample(DType dtype, const Shape& input, const Shape& filters, const Shape& dy,
                                      const nn::Size2D& strides, const char* padding, const nn::Size2D& dilations);

// A convolution's ops as its gradients call them (Conv2D's, DepthwiseConv2dNative's).
struct ConvOps {
  Tensor (*forward)(const Tensor& input, const Tensor& filters, const schema::Attrs& attrs);
  Tensor (*backprop_input)(const Tensor& input, const Tensor& filters, const Tensor& dy, const schema::Attrs& attrs);
  Tensor (*backprop_filter)(const Tensor& input, const Tensor& filters, const Tensor& dy, const schema::Attrs& attrs);
};
// The gradients of the forward op and of the two backprops, which are linear
// in their two used inputs: each other and the convolution itself (the
// shape-only input gets none).
void conv_gradient(schema::GradContext& c, const ConvOps& ops);
void conv_backprop_input_gradient(schema::GradContext& c, const ConvOps& ops);
void conv_backprop_filter_gradient(schema::GradContext& c, const ConvOps& ops);

// A pooling's sizes, as the kernels read them.
struct PoolDims {
  int64_t n, h, w, c;
  Window2D g;
  bool max;
};

// ---- Backward ops, for the gradient functions (docs/design-notes.md, "Autodiff") --
// Each dispatches, so a gradient runs eagerly, is traced, or runs in a nested
// graph like any op. `attrs` are the forward op's. Shapes come from tensors,
// not attrs, so that they may be unknown while tracing: the backprop ops read
// only the shape of the forward tensor whose gradient they compute.

// d(conv2d)/d(input): dy [N, OH, OW, O] through `filters` -> input's shape.
// Only `input`'s shape is read.
Tensor conv2d_backprop_input(const Tensor& input, const Tensor& filters, const Tensor& dy,
                             schema::Attrs attrs);
// d(conv2d)/d(filters): input and dy -> filters' shape. Only `filters`' shape
// is read.
Tensor conv2d_backprop_filter(const Tensor& input, const Tensor& filters, const Tensor& dy,
                              schema::Attrs attrs);
// d(max_pool2d)/d(input): each dy goes to the first maximum of its window.
Tensor max_pool_grad(const Tensor& input, const Tensor& dy, schema::Attrs attrs);
// The gradient of max_pool_grad with respect to its dy: g (input-shaped) read
// at the first maximum of each window -> the pooled shape.
Tensor max_pool_grad_grad(const Tensor& input, const Tensor& g, schema::Attrs attrs);
// d(avg_pool2d)/d(input): dy spread evenly over each window's elements inside
// the input. Only `input`'s shape is read.
Tensor avg_pool_grad(const Tensor& input, const Tensor& dy, schema::Attrs attrs);

}  // namespace kiln::ops
