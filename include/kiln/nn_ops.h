#pragma once
// Matrix multiplication and the neural-network ops of tf.nn: softmax,
// log_softmax, conv2d, max_pool2d, avg_pool2d, bias_add. Images are NHWC and
// convolution filters HWIO, as in TensorFlow.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// a @ b, as tf.linalg.matmul: both of rank >= 2; the last two dims are the
// matrices, leading (batch) dims broadcast. transpose_a/b transpose the
// matrices (not the batch dims) before multiplying. float32, float64, int32,
// int64.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
              bool transpose_b = false, SourceLocation loc = SourceLocation::current());

// tf.einsum: `equation` names each input's dims by letters ("ij,jk->ik";
// "..." for any number of leading or inner dims, which broadcast); letters
// missing from the output are summed, a letter twice in one input takes the
// diagonal. Without "->" the output is the ellipsis dims, then the letters used
// once, in alphabetical order. Composed of transpose, reshape, sum and matmul.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& inputs,
              SourceLocation loc = SourceLocation::current());

namespace nn {

enum class Padding { Same, Valid };

// Padding given as Padding::Same / Padding::Valid or as TensorFlow's strings
// "SAME" / "VALID" (any letter case). Another string is an InvalidArgument
// raised by the op.
class PaddingArg {
 public:
  PaddingArg(Padding p) : name_(p == Padding::Same ? "SAME" : "VALID") {}
  PaddingArg(const char* name) : name_(name) {}
  PaddingArg(std::string_view name) : name_(name) {}
  PaddingArg(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// A per-spatial-dimension value (strides, dilations, ksize): one number for
// both dims (2), {h, w}, or TensorFlow's 4-element NHWC form {1, h, w, 1}.
class Size2D {
 public:
  Size2D(int64_t both) : values_{both} {}
  Size2D(std::initializer_list<int64_t> values) : values_(values) {}
  Size2D(const std::vector<int64_t>& values) : values_(values) {}
  const std::vector<int64_t>& values() const { return values_; }

 private:
  std::vector<int64_t> values_;
};

// exp(x) / sum(exp(x)) along `axis`, computed stably (the max is subtracted).
Tensor softmax(const Tensor& logits, int64_t axis = -1,
               SourceLocation loc = SourceLocation::current());
// x - log(sum(exp(x))) along `axis`, computed stably.
Tensor log_softmax(const Tensor& logits, int64_t axis = -1,
                   SourceLocation loc = SourceLocation::current());

// Activations TF composes from other ops (src/ops/activations.cpp): gelu is
// 0.5 x (1 + erf(x / sqrt 2)), or with `approximate` the tanh form; silu
// (swish) is x * sigmoid(x); leaky_relu is x above 0 and alpha * x below.
// erf, softplus, softsign, elu and selu are ops of their own (math.h).
Tensor gelu(const Tensor& x, bool approximate = false, SourceLocation loc = SourceLocation::current());
Tensor silu(const Tensor& x, SourceLocation loc = SourceLocation::current());
Tensor leaky_relu(const Tensor& x, double alpha = 0.2, SourceLocation loc = SourceLocation::current());

// 2-D convolution (cross-correlation, as TensorFlow): input [N, H, W, C],
// filters [KH, KW, C, O] -> [N, OH, OW, O]. SAME pads so that
// OH = ceil(H / stride) (the extra pixel, if any, goes after), VALID does not
// pad. float32 (oneDNN) and float64.
Tensor conv2d(const Tensor& input, const Tensor& filters, const Size2D& strides,
              const PaddingArg& padding, const Size2D& dilations = 1,
              SourceLocation loc = SourceLocation::current());

// Depthwise 2-D convolution (tf.nn.depthwise_conv2d): input [N, H, W, C],
// filter [KH, KW, C, M]; each input channel c is convolved with its own
// filter[:, :, c, :], giving output [N, OH, OW, C * M] whose channel
// c * M + m is input channel c through filter[:, :, c, m]. Window geometry as
// conv2d's.
Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, const Size2D& strides,
                        const PaddingArg& padding, const Size2D& dilations = 1,
                        SourceLocation loc = SourceLocation::current());

// The transpose of conv2d (tf.nn.conv2d_transpose, "deconvolution"): the
// gradient of conv2d(x, filters) with respect to an x of `output_shape`
// ([N, H, W, C], known), given `input` as the gradient of conv2d's output.
// filters [KH, KW, C, O] as conv2d's, so input [N, OH, OW, O] must be what
// conv2d of output_shape with these filters, strides and padding gives.
Tensor conv2d_transpose(const Tensor& input, const Tensor& filters, const Shape& output_shape,
                        const Size2D& strides, const PaddingArg& padding, const Size2D& dilations = 1,
                        SourceLocation loc = SourceLocation::current());

// Max / average over windows of [N, H, W, C]; average pooling divides by the
// number of elements inside the input (padding excluded), as TensorFlow.
Tensor max_pool2d(const Tensor& input, const Size2D& ksize, const Size2D& strides,
                  const PaddingArg& padding, SourceLocation loc = SourceLocation::current());
Tensor avg_pool2d(const Tensor& input, const Size2D& ksize, const Size2D& strides,
                  const PaddingArg& padding, SourceLocation loc = SourceLocation::current());

// value + bias, with bias (rank 1) added along value's last dim.
Tensor bias_add(const Tensor& value, const Tensor& bias,
                SourceLocation loc = SourceLocation::current());

}  // namespace nn
}  // namespace kiln
