#pragma once
// Losses, as Keras'. The functions give one loss per sample; the classes
// reduce them (by default the mean over the batch, Keras'
// SUM_OVER_BATCH_SIZE).
//
//   kiln::nn::SparseCategoricalCrossentropy loss_fn({.from_logits = true});
//   kiln::Tensor loss = loss_fn(labels, logits);   // a scalar
#include <string>

#include "kiln/module.h"
#include "kiln/tensor.h"

namespace kiln::nn {

// Cross entropy between integer class labels y_true [batch...] (any integer
// or float dtype holding class numbers; a trailing dim of 1 is allowed) and
// class scores y_pred [batch..., classes]: probabilities, clipped to
// [1e-7, 1 - 1e-7] and renormalised as Keras does, or logits (from_logits).
// A label outside [0, classes) is an InvalidArgument in eager code; inside a
// graph its sample's loss is 0.
Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                                       SourceLocation loc = SourceLocation::current());
// Cross entropy between one-hot (or soft) targets y_true and y_pred, both
// [batch..., classes].
Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                                SourceLocation loc = SourceLocation::current());
// mean((y_true - y_pred)^2) over the last dim.
Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred,
                          SourceLocation loc = SourceLocation::current());

// How a loss object reduces per-sample losses.
enum class Reduction {
  SumOverBatchSize,  // the mean (Keras' default)
  Sum,
  None,              // the per-sample losses
};

struct LossOptions {
  bool from_logits = false;  // crossentropies only
  Reduction reduction = Reduction::SumOverBatchSize;
  std::string name;          // default: the snake_case class name
};

class Loss : public Module {
 public:
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred,
                    SourceLocation loc = SourceLocation::current()) const;
  Reduction reduction() const { return reduction_; }

 protected:
  Loss(std::string default_name, const LossOptions& options);
  // The per-sample losses.
  virtual Tensor call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const = 0;
  bool from_logits_;

 private:
  Reduction reduction_;
};

class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(LossOptions options = {});

 protected:
  Tensor call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const override;
};

class CategoricalCrossentropy : public Loss {
 public:
  explicit CategoricalCrossentropy(LossOptions options = {});

 protected:
  Tensor call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const override;
};

class MeanSquaredError : public Loss {
 public:
  explicit MeanSquaredError(LossOptions options = {});

 protected:
  Tensor call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const override;
};

}  // namespace kiln::nn
