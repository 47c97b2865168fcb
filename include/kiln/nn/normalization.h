#pragma once
// Keras' normalization layers: BatchNormalization and LayerNormalization.
//
//   kiln::nn::BatchNormalization bn;                // normalizes the last axis
//   kiln::Tensor y = bn(x, /*training=*/true);      // batch statistics, moving ones updated
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/layer.h"

namespace kiln::nn {

struct BatchNormalizationOptions {
  int64_t axis = -1;  // the features axis, kept; the others are reduced
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;  // learn beta (zeros)
  bool scale = true;   // learn gamma (ones)
  std::optional<Shape> input_shape;
  std::string name;
  DType dtype = DType::Float32;
};

// (x - mean) / sqrt(variance + epsilon) * gamma + beta. While training, mean
// and variance are the batch's (over every axis but `axis`, variance biased
// as tf.nn.moments'), and each call moves the non-trainable moving_mean and
// moving_variance towards them: moving -= (moving - batch) * (1 - momentum),
// as Keras' assign_moving_average; inside kiln::function the update is part
// of the traced step. Otherwise the moving statistics normalize.
class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(BatchNormalizationOptions options = {});
  std::string class_name() const override { return "BatchNormalization"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  // Null until built (gamma and beta also when not scaled / centered).
  const Variable& gamma() const { return gamma_; }
  const Variable& beta() const { return beta_; }
  const Variable& moving_mean() const { return moving_mean_; }
  const Variable& moving_variance() const { return moving_variance_; }

 protected:
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  BatchNormalizationOptions options_;
  Variable gamma_, beta_, moving_mean_, moving_variance_;
};

struct LayerNormalizationOptions {
  int64_t axis = -1;  // normalized (and scaled and centered) per sample along this axis
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  std::optional<Shape> input_shape;
  std::string name;
  DType dtype = DType::Float32;
};

// (x - mean) / sqrt(variance + epsilon) * gamma + beta with mean and (biased)
// variance of each sample along `axis`; the same in training and inference.
class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(LayerNormalizationOptions options = {});
  std::string class_name() const override { return "LayerNormalization"; }
  Shape compute_output_shape(const Shape& input_shape) const override { return input_shape; }
  const Variable& gamma() const { return gamma_; }
  const Variable& beta() const { return beta_; }

 protected:
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  LayerNormalizationOptions options_;
  Variable gamma_, beta_;
};

}  // namespace kiln::nn
