#pragma once
// Keras' core layers. Images are NHWC and convolution kernels HWIO, as in
// TensorFlow. Every `input_shape` excludes the batch dim, as Keras'.
//
//   kiln::nn::Dense(4, {.activation = "relu", .input_shape = kiln::Shape{10}})
//   kiln::nn::Conv2D(32, 3, {.padding = "same", .activation = "relu"})
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/nn/layer.h"
#include "kiln/nn_ops.h"

namespace kiln::nn {

struct DenseOptions {
  Activation activation;
  bool use_bias = true;
  std::optional<Shape> input_shape;
  std::string name;
  // Seeds the kernel's Glorot-uniform values (same seed, same values);
  // without one they come from kiln::random's global generator.
  std::optional<uint64_t> seed;
  DType dtype = DType::Float32;
};

// activation(x @ kernel + bias): kernel [in, units] (Glorot uniform), bias
// [units] (zeros). Inputs of rank > 2 are multiplied on their last dim.
class Dense : public Layer {
 public:
  explicit Dense(int64_t units, DenseOptions options = {});
  std::string class_name() const override { return "Dense"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  int64_t units() const { return units_; }
  // Null until built.
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }

 protected:
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t units_;
  Activation activation_;
  bool use_bias_;
  std::optional<uint64_t> seed_;
  Variable kernel_, bias_;
};

struct Conv2DOptions {
  Size2D strides = 1;
  PaddingArg padding = Padding::Valid;  // Keras' default
  Activation activation;
  bool use_bias = true;
  std::optional<Shape> input_shape;
  std::string name;
  std::optional<uint64_t> seed;
  DType dtype = DType::Float32;
};

// activation(conv2d(x, kernel) + bias): kernel [kh, kw, in, filters] (Glorot
// uniform over fan_in = kh*kw*in, fan_out = kh*kw*filters), bias [filters].
class Conv2D : public Layer {
 public:
  Conv2D(int64_t filters, Size2D kernel_size, Conv2DOptions options = {});
  std::string class_name() const override { return "Conv2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }

 protected:
  // `filters_arg` names `filters` in errors (DepthwiseConv2D's depth_multiplier).
  Conv2D(std::string_view kind, std::string_view label, int64_t filters, Size2D kernel_size, Conv2DOptions options,
         std::string_view filters_arg = "filters");
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;
  // The kernel for `in` input channels, and where in it those channels are.
  virtual Shape kernel_shape(int64_t in) const { return Shape{kh_, kw_, in, filters_}; }
  virtual int input_channels_axis() const { return 2; }
  virtual const char* kernel_name() const { return "kernel"; }
  // The output (and bias) channels for `in` input channels (None when unknown).
  virtual int64_t output_channels(int64_t /*in*/) const { return filters_; }
  // The convolution, before bias and activation.
  virtual Tensor convolve(const Tensor& x, const Tensor& kernel) const;

  int64_t filters_;
  int64_t kh_, kw_, sh_, sw_;
  bool same_;
  Activation activation_;
  bool use_bias_;
  std::optional<uint64_t> seed_;
  Variable kernel_, bias_;
};

// The transpose of Conv2D (Keras' Conv2DTranspose, no output_padding):
// activation(conv2d_transpose(x, kernel) + bias), kernel [kh, kw, filters, in];
// output height in * stride (SAME) or in * stride + max(kh - stride, 0) (VALID).
class Conv2DTranspose : public Conv2D {
 public:
  Conv2DTranspose(int64_t filters, Size2D kernel_size, Conv2DOptions options = {});
  std::string class_name() const override { return "Conv2DTranspose"; }
  Shape compute_output_shape(const Shape& input_shape) const override;

 protected:
  Shape kernel_shape(int64_t in) const override { return Shape{kh_, kw_, filters_, in}; }
  int input_channels_axis() const override { return 3; }
  Tensor convolve(const Tensor& x, const Tensor& kernel) const override;
};

struct DepthwiseConv2DOptions {
  Size2D strides = 1;
  PaddingArg padding = Padding::Valid;
  // Output channels per input channel.
  int64_t depth_multiplier = 1;
  Activation activation;
  bool use_bias = true;
  std::optional<Shape> input_shape;
  std::string name;
  std::optional<uint64_t> seed;
  DType dtype = DType::Float32;
};

// Keras' DepthwiseConv2D: activation(depthwise_conv2d(x, kernel) + bias),
// kernel [kh, kw, in, depth_multiplier] (the weight "depthwise_kernel", Glorot
// uniform from its shape), bias [in * depth_multiplier]; output channel
// c * depth_multiplier + m is input channel c through kernel[:, :, c, m].
class DepthwiseConv2D : public Conv2D {
 public:
  explicit DepthwiseConv2D(Size2D kernel_size, DepthwiseConv2DOptions options = {});
  std::string class_name() const override { return "DepthwiseConv2D"; }
  const Variable& depthwise_kernel() const { return kernel_; }

 protected:
  const char* kernel_name() const override { return "depthwise_kernel"; }
  int64_t output_channels(int64_t in) const override { return in < 0 ? None : in * filters_; }
  Tensor convolve(const Tensor& x, const Tensor& kernel) const override;
};

struct Pool2DOptions {
  // Default: the pool size (Keras' strides=None).
  std::optional<Size2D> strides;
  PaddingArg padding = Padding::Valid;
  std::optional<Shape> input_shape;
  std::string name;
};

// Max / average over pool_size windows of NHWC inputs: the window geometry
// the two pooling layers share.
class Pool2D : public Layer {
 public:
  Shape compute_output_shape(const Shape& input_shape) const override;

 protected:
  // `kind` as Layer's; `label` ("MaxPooling2D") starts the construction errors.
  Pool2D(std::string_view kind, std::string_view label, Size2D pool_size, Pool2DOptions options);
  Size2D window() const { return {ph_, pw_}; }
  Size2D strides() const { return {sh_, sw_}; }
  Padding padding() const { return same_ ? Padding::Same : Padding::Valid; }

 private:
  int64_t ph_, pw_, sh_, sw_;
  bool same_;
};

class MaxPool2D : public Pool2D {
 public:
  explicit MaxPool2D(Size2D pool_size = 2, Pool2DOptions options = {});
  std::string class_name() const override { return "MaxPooling2D"; }

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

class AvgPool2D : public Pool2D {
 public:
  explicit AvgPool2D(Size2D pool_size = 2, Pool2DOptions options = {});
  std::string class_name() const override { return "AveragePooling2D"; }

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

struct LayerOptions {
  std::optional<Shape> input_shape;
  std::string name;
};

// [batch, d1, d2, ...] -> [batch, d1 * d2 * ...]; the non-batch dims must be
// known. Rank-1 inputs become [batch, 1], as Keras'.
class Flatten : public Layer {
 public:
  explicit Flatten(LayerOptions options = {});
  std::string class_name() const override { return "Flatten"; }
  Shape compute_output_shape(const Shape& input_shape) const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

// [batch, ...] -> [batch, target_shape...]; one target dim may be -1 (None),
// inferred from the others.
class Reshape : public Layer {
 public:
  explicit Reshape(Shape target_shape, LayerOptions options = {});
  std::string class_name() const override { return "Reshape"; }
  Shape compute_output_shape(const Shape& input_shape) const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  Shape target_;
};

// tf.nn.dropout: zeroes each element with probability `rate` (in [0, 1)) and
// scales the rest by 1 / (1 - rate). The mask comes from kiln::random's
// global generator (a new one on every call, graph calls included;
// kiln::random::set_seed makes the sequence reproducible).
Tensor dropout(const Tensor& x, double rate);

// While training, dropout(x, rate); otherwise the identity.
class Dropout : public Layer {
 public:
  explicit Dropout(double rate, LayerOptions options = {});
  std::string class_name() const override { return "Dropout"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  double rate() const { return rate_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  double rate_;
};

struct EmbeddingOptions {
  std::optional<Shape> input_shape;
  std::string name;
  // Seeds the table's U(-0.05, 0.05) values (Keras' "uniform"); without one
  // they come from kiln::random's global generator.
  std::optional<uint64_t> seed;
  DType dtype = DType::Float32;
};

// Rows of an [input_dim, output_dim] table picked by integer indices:
// [batch, ...] -> [batch, ..., output_dim]. The gradient reaches the table
// (the rows picked, summed over repeats). An index outside [0, input_dim)
// is an InvalidArgument error, as TF's on CPU.
class Embedding : public Layer {
 public:
  Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options = {});
  std::string class_name() const override { return "Embedding"; }
  Shape compute_output_shape(const Shape& input_shape) const override;
  const Variable& embeddings() const { return embeddings_; }

 protected:
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t input_dim_, output_dim_;
  std::optional<uint64_t> seed_;
  Variable embeddings_;
};

struct GlobalPool2DOptions {
  bool keepdims = false;  // [batch, 1, 1, channels] instead of [batch, channels]
  std::optional<Shape> input_shape;
  std::string name;
};

// The mean / max of each channel of NHWC inputs over height and width.
class GlobalAveragePooling2D : public Layer {
 public:
  explicit GlobalAveragePooling2D(GlobalPool2DOptions options = {});
  std::string class_name() const override { return "GlobalAveragePooling2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  bool keepdims_;
};

class GlobalMaxPooling2D : public Layer {
 public:
  explicit GlobalMaxPooling2D(GlobalPool2DOptions options = {});
  std::string class_name() const override { return "GlobalMaxPooling2D"; }
  Shape compute_output_shape(const Shape& input_shape) const override;

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  bool keepdims_;
};

// max(x, 0).
class ReLU : public Layer {
 public:
  explicit ReLU(LayerOptions options = {});
  std::string class_name() const override { return "ReLU"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

// softmax along `axis` (default the last).
class Softmax : public Layer {
 public:
  explicit Softmax(int64_t axis = -1, LayerOptions options = {});
  std::string class_name() const override { return "Softmax"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  int64_t axis_;
};

// Keras' Activation layer: any activation an nn::Activation names or wraps
// ("relu", "tanh", a function, ...), applied to the whole input. Named
// ActivationLayer here because nn::Activation is the activation itself (the
// spec Dense and Conv2D take); its class_name() and default name are Keras'
// ("Activation", "activation").
class ActivationLayer : public Layer {
 public:
  explicit ActivationLayer(Activation activation, LayerOptions options = {});
  std::string class_name() const override { return "Activation"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  const Activation& activation() const { return activation_; }

 protected:
  Tensor call(const Tensor& x, bool training) override;

 private:
  Activation activation_;
};

// An elementwise activation with one parameter, alpha (LeakyReLU, ELU): the
// shape stays, and alpha must be finite (checked when the layer is made).
class AlphaActivationLayer : public Layer {
 public:
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  double alpha() const { return alpha_; }

 protected:
  // `layer` names the layer class in the error (class_name() is not yet the
  // derived one while this runs).
  AlphaActivationLayer(std::string_view kind, std::string_view layer, double alpha, LayerOptions options);

 private:
  double alpha_;
};

// x above 0, alpha * x below (Keras' LeakyReLU, alpha 0.3 by default;
// nn::leaky_relu's arithmetic).
class LeakyReLU : public AlphaActivationLayer {
 public:
  explicit LeakyReLU(double alpha = 0.3, LayerOptions options = {});
  std::string class_name() const override { return "LeakyReLU"; }

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

// x above 0, alpha * (e^x - 1) at or below (Keras' ELU, alpha 1 by default):
// kiln::elu itself when alpha is 1, else where(x > 0, x, alpha * elu(x)), as
// Keras' backend.elu.
class ELU : public AlphaActivationLayer {
 public:
  explicit ELU(double alpha = 1.0, LayerOptions options = {});
  std::string class_name() const override { return "ELU"; }

 protected:
  Tensor call(const Tensor& x, bool training) override;
};

}  // namespace kiln::nn
