// Metrics: accuracy and the stateful Mean.
#include "kiln/nn/metrics.h"

#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/reduce.h"
#include "nn/sparse_labels.h"

namespace kiln::nn {

Tensor sparse_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) {
  constexpr const char* fn = "sparse_categorical_accuracy";
  if (!y_true.defined() || !y_pred.defined()) throw InvalidArgument(fmt::format("{}: a null tensor", fn));
  if (!is_floating(y_pred.dtype()))
    throw InvalidArgument(fmt::format("{}: y_pred must be float32 or float64, got {}", fn, dtype_name(y_pred.dtype())));
  if (y_pred.rank() < 1) throw InvalidArgument(fmt::format("{}: y_pred must have a class dim, got a scalar", fn));
  Tensor labels = squeeze_sparse_labels(fn, y_true, y_pred, loc);
  if (labels.dtype() != DType::Int64) labels = cast(labels, DType::Int64, loc);
  Tensor predicted = argmax(y_pred, y_pred.rank() - 1, DType::Int64, loc);
  return cast(kiln::equal(predicted, labels, loc), y_pred.dtype(), loc);
}

Mean::Mean(std::string name, DType dtype) : Module(std::move(name)), dtype_(dtype) {
  if (!is_floating(dtype))
    throw InvalidArgument(fmt::format("Mean '{}': the dtype must be float32 or float64, got {}", this->name(),
                                      dtype_name(dtype)));
  total_ = add_variable("total", [&] { return zeros({}, dtype); }, /*trainable=*/false);
  count_ = add_variable("count", [&] { return zeros({}, dtype); }, /*trainable=*/false);
}

void Mean::update_state(const Tensor& values, SourceLocation loc) {
  if (!values.defined()) throw InvalidArgument(fmt::format("Mean '{}': update_state got a null tensor", name()));
  Tensor v = values.dtype() == dtype_ ? values : cast(values, dtype_, loc);
  total_.assign_add(sum(v, {}, false, loc), loc);
  // The count of a tensor whose batch size is unknown while tracing comes
  // from the graph.
  if (v.shape().is_fully_defined()) count_.assign_add(static_cast<double>(v.size()), loc);
  else count_.assign_add(sum(ones_like(v, std::nullopt, loc), {}, false, loc), loc);
}

Tensor Mean::result(SourceLocation loc) const {
  // Counts are whole numbers: this is total / count, and 0 / 1 before any
  // update.
  return total_.read_value(loc) / maximum(count_.read_value(loc), 1, loc);
}

void Mean::reset_state(SourceLocation loc) {
  total_.assign(0, loc);
  count_.assign(0, loc);
}

SparseCategoricalAccuracy::SparseCategoricalAccuracy(std::string name) : Mean(std::move(name)) {}

void SparseCategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred, SourceLocation loc) {
  Mean::update_state(sparse_categorical_accuracy(y_true, y_pred, loc), loc);
}

}  // namespace kiln::nn
