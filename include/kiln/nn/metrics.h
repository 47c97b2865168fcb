#pragma once
// Metrics, as Keras': stateful Modules whose state lives in Variables, so
// update_state works eagerly and inside kiln::function (the update runs on
// every call of the graph).
//
//   kiln::nn::SparseCategoricalAccuracy acc;
//   acc.update_state(labels, probs);
//   float a = acc.result().item<float>();
#include <string>

#include "kiln/module.h"
#include "kiln/tensor.h"

namespace kiln::nn {

// 1 where argmax(y_pred, -1) equals the integer label y_true, else 0 (in
// y_pred's dtype); y_true may have a trailing dim of 1.
Tensor sparse_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred,
                                   SourceLocation loc = SourceLocation::current());

// The running mean of every value given to update_state.
class Mean : public Module {
 public:
  explicit Mean(std::string name = "mean", DType dtype = DType::Float32);
  // Adds the values (any shape, cast to the metric's dtype) to the mean.
  void update_state(const Tensor& values, SourceLocation loc = SourceLocation::current());
  // total / count, 0 before any update (Keras' div_no_nan).
  Tensor result(SourceLocation loc = SourceLocation::current()) const;
  // Back to no values.
  void reset_state(SourceLocation loc = SourceLocation::current());
  DType dtype() const { return dtype_; }

 private:
  DType dtype_;
  Variable total_, count_;
};

// The mean of sparse_categorical_accuracy over every update.
class SparseCategoricalAccuracy : public Mean {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy");
  void update_state(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc = SourceLocation::current());
};

}  // namespace kiln::nn
