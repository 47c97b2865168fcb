#pragma once
// Shared by the nn ops files: their registration functions and the window
// geometry (strides, dilations, SAME/VALID padding) of convolution and pooling.
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/nn_ops.h"
#include "ops/op_def.h"

namespace kiln::detail {

void register_matmul_op(OpRegistry& registry);
void register_conv_ops(OpRegistry& registry);
void register_pool_ops(OpRegistry& registry);
void register_softmax_ops(OpRegistry& registry);
void register_bias_add_op(OpRegistry& registry);

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
void read_size2d(InferContext& c, const char* name, int64_t& h, int64_t& w);

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
Window2D infer_window(InferContext& c, const Shape& input, int64_t kh, int64_t kw,
                      bool has_dilations, const std::string& window_what);

// The same geometry in a kernel (attrs already validated; no checks).
Window2D kernel_window(const Attrs& attrs, const Shape& input, int64_t kh, int64_t kw);

}  // namespace kiln::detail
