#pragma once
// FusedMaxPoolGrad(x, dy): MaxPoolGrad(x, dy) followed by the gradient of the
// relu that made x (`where(x > 0, g, 0)`, Relu's gradient, which reads Relu's
// output: the pooling's input), made by the pool-gradient pass. Attrs:
// MaxPoolGrad's (ksize, strides, padding) plus `activation` ("relu", the
// gradient applied on top, or "none"). One pass: each band of rows of the
// gradient is masked as soon as the pooling gradient has filled it, while it
// is in cache, instead of a second pass over the whole tensor; the bits are
// those of the two ops. With `bias_gradient` true, a second output: the
// gradient summed over all but its last dim, as the SumToShapeOf of the
// convolution's bias gradient would (its bits), made while the gradient is
// written instead of in a pass of its own.
#include "graph/graph.h"

namespace kiln::exec {

const detail::OpDef& fused_max_pool_grad_op();

}  // namespace kiln::exec
