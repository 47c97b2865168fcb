// Losses: the per-sample formulas (Keras' backend functions) and the
// reducing loss objects.
#include "kiln/nn/losses.h"

#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "kiln/reduce.h"
#include "nn/sparse_labels.h"

namespace kiln::nn {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon()

void check_float(const char* fn, const char* arg, const Tensor& t) {
  if (!t.defined()) throw InvalidArgument(fmt::format("{}: {} is a null tensor", fn, arg));
  if (!is_floating(t.dtype()))
    throw InvalidArgument(fmt::format("{}: {} must be float32 or float64, got {}", fn, arg, dtype_name(t.dtype())));
}

// Same dims, unknown dims matching anything.
void check_same_shape(const char* fn, const Tensor& y_true, const Tensor& y_pred) {
  if (!y_true.shape().is_compatible_with(y_pred.shape()))
    throw InvalidArgument(fmt::format("{}: y_true has shape {} but y_pred has shape {}", fn,
                                      y_true.shape().to_string(), y_pred.shape().to_string()));
}

// The number of classes: y_pred's last dim, which must be known.
int64_t num_classes(const char* fn, const Tensor& y_pred) {
  const Shape& s = y_pred.shape();
  if (!s.has_known_rank() || s.rank() < 1 || s[s.rank() - 1] < 0)
    throw InvalidArgument(fmt::format("{}: y_pred must have a known last dim (the classes), got shape {}", fn,
                                      s.to_string()));
  return s[s.rank() - 1];
}

// Labels as int64 of y_pred's shape minus its last dim; out-of-range labels
// are rejected when their values are known.
Tensor sparse_labels(const char* fn, const Tensor& y_true, const Tensor& y_pred, int64_t classes,
                     SourceLocation loc) {
  if (!y_true.defined()) throw InvalidArgument(fmt::format("{}: y_true is a null tensor", fn));
  Tensor labels = squeeze_sparse_labels(fn, y_true, y_pred, loc);
  if (labels.dtype() == DType::Bool || labels.dtype() == DType::String)
    throw InvalidArgument(fmt::format("{}: y_true must hold class numbers, got {}", fn, dtype_name(labels.dtype())));
  if (labels.dtype() != DType::Int64) labels = cast(labels, DType::Int64, loc);
  if (!labels.is_symbolic() && labels.size() > 0) {
    int64_t lo = min(labels).item<int64_t>(), hi = max(labels).item<int64_t>();
    if (lo < 0 || hi >= classes)
      throw InvalidArgument(fmt::format("{}: labels must be in [0, {}) (y_pred has {} classes), got a label {}", fn,
                                        classes, classes, lo < 0 ? lo : hi));
  }
  return labels;
}

}  // namespace

Tensor squeeze_sparse_labels(const char* fn, const Tensor& y_true, const Tensor& y_pred,
                             SourceLocation loc) {
  Tensor labels = y_true;
  const Shape& ps = y_pred.shape();
  if (labels.rank() == ps.rank() && labels.rank() > 0 && labels.shape()[labels.rank() - 1] == 1)
    labels = squeeze(labels, {-1}, loc);
  Shape expected = ps;
  expected.erase(ps.rank() - 1);
  if (!labels.shape().is_compatible_with(expected))
    throw InvalidArgument(fmt::format("{}: y_true has shape {} but y_pred of shape {} needs labels of shape {}", fn,
                                      y_true.shape().to_string(), ps.to_string(), expected.to_string()));
  return labels;
}

Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                                       SourceLocation loc) {
  constexpr const char* fn = "sparse_categorical_crossentropy";
  check_float(fn, "y_pred", y_pred);
  int64_t classes = num_classes(fn, y_pred);
  Tensor labels = sparse_labels(fn, y_true, y_pred, classes, loc);
  // Keras turns probabilities into logits (log of the clipped values) and
  // takes the softmax cross entropy, which renormalises them.
  Tensor logits = from_logits ? y_pred : log(clip(y_pred, kEpsilon, 1 - kEpsilon, loc), loc);
  Tensor picked = one_hot(labels, classes, 1, 0, -1, y_pred.dtype(), loc) * log_softmax(logits, -1, loc);
  return negative(sum(picked, -1, false, loc), loc);
}

Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits, SourceLocation loc) {
  constexpr const char* fn = "categorical_crossentropy";
  check_float(fn, "y_pred", y_pred);
  check_float(fn, "y_true", y_true);
  check_same_shape(fn, y_true, y_pred);
  Tensor target = y_true.dtype() == y_pred.dtype() ? y_true : cast(y_true, y_pred.dtype(), loc);
  Tensor log_p;
  if (from_logits) {
    log_p = log_softmax(y_pred, -1, loc);
  } else {
    Tensor p = y_pred / sum(y_pred, -1, /*keepdims=*/true, loc);
    log_p = log(clip(p, kEpsilon, 1 - kEpsilon, loc), loc);
  }
  return negative(sum(target * log_p, -1, false, loc), loc);
}

Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) {
  constexpr const char* fn = "mean_squared_error";
  check_float(fn, "y_pred", y_pred);
  if (!y_true.defined()) throw InvalidArgument(fmt::format("{}: y_true is a null tensor", fn));
  check_same_shape(fn, y_true, y_pred);
  Tensor target = y_true.dtype() == y_pred.dtype() ? y_true : cast(y_true, y_pred.dtype(), loc);
  return mean(square(y_pred - target, loc), -1, false, loc);
}

Loss::Loss(std::string default_name, const LossOptions& options)
    : Module(options.name.empty() ? std::move(default_name) : options.name),
      from_logits_(options.from_logits),
      reduction_(options.reduction) {}

Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const {
  Tensor losses = call(y_true, y_pred, loc);
  switch (reduction_) {
    case Reduction::SumOverBatchSize: return mean(losses, {}, false, loc);
    case Reduction::Sum: return sum(losses, {}, false, loc);
    case Reduction::None: return losses;
  }
  return losses;
}

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(LossOptions options)
    : Loss("sparse_categorical_crossentropy", options) {}
Tensor SparseCategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const {
  return sparse_categorical_crossentropy(y_true, y_pred, from_logits_, loc);
}

CategoricalCrossentropy::CategoricalCrossentropy(LossOptions options) : Loss("categorical_crossentropy", options) {}
Tensor CategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const {
  return categorical_crossentropy(y_true, y_pred, from_logits_, loc);
}

MeanSquaredError::MeanSquaredError(LossOptions options) : Loss("mean_squared_error", options) {}
Tensor MeanSquaredError::call(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) const {
  return mean_squared_error(y_true, y_pred, loc);
}

}  // namespace kiln::nn
