#pragma once
// Shared by the sparse losses and metrics.
#include "kiln/tensor.h"

namespace kiln::nn {

// `y_true` as the labels of `y_pred` [..., classes]: a trailing dim of 1
// squeezed away (Keras accepts [batch, 1]), then checked to have y_pred's
// shape minus its class dim. `fn` starts the error message.
Tensor squeeze_sparse_labels(const char* fn, const Tensor& y_true, const Tensor& y_pred, SourceLocation loc);

}  // namespace kiln::nn
