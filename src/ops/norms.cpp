// Composites TF builds in Python from other ops, built here the same way so
// their gradients come from those ops: reduce_logsumexp, moments,
// l2_normalize, clip_by_norm, clip_by_global_norm.
#include <limits>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/gradient.h"
#include "kiln/math.h"
#include "kiln/reduce.h"

namespace kiln {

Tensor reduce_logsumexp(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  // The max is subtracted for stability, as TF does: where it is not finite
  // (all -inf, or an inf or nan present) 0 is used, so the sum gives inf/nan.
  Tensor raw_max = max(x, axes, /*keepdims=*/true, loc);
  Tensor finite = less(abs(raw_max, loc), std::numeric_limits<double>::infinity(), loc);
  Tensor shift = stop_gradient(where(finite, raw_max, 0, loc), loc);
  Tensor out = log(sum(exp(subtract(x, shift, loc), loc), axes, keepdims, loc), loc);
  return add(out, keepdims ? shift : reshape(shift, out.shape(), loc), loc);
}

std::pair<Tensor, Tensor> moments(const Tensor& x, const Axes& axes, bool keepdims, SourceLocation loc) {
  Tensor mean_kept = mean(x, axes, /*keepdims=*/true, loc);
  Tensor variance = mean(squared_difference(x, stop_gradient(mean_kept, loc), loc), axes, keepdims, loc);
  return {keepdims ? mean_kept : reshape(mean_kept, variance.shape(), loc), variance};
}

Tensor l2_normalize(const Tensor& x, const Axes& axes, double epsilon, SourceLocation loc) {
  Tensor square_sum = sum(square(x, loc), axes, /*keepdims=*/true, loc);
  return multiply(x, rsqrt(maximum(square_sum, epsilon, loc), loc), loc);
}

Tensor clip_by_norm(const Tensor& t, const Operand& clip_norm, const Axes& axes, SourceLocation loc) {
  Tensor l2sum = sum(multiply(t, t, loc), axes, /*keepdims=*/true, loc);
  // sqrt's gradient at 0 is inf: take it only where the sum is positive.
  Tensor positive = greater(l2sum, 0, loc);
  Tensor l2norm = where(positive, sqrt(where(positive, l2sum, 1, loc), loc), l2sum, loc);
  return divide(multiply(t, clip_norm, loc), maximum(l2norm, clip_norm, loc), loc);
}

Tensor global_norm(const std::vector<Tensor>& tensors, SourceLocation loc) {
  if (tensors.empty()) throw InvalidArgument("global_norm: no tensors");
  Tensor total;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;  // a missing gradient, as TF skips None
    Tensor s = sum(multiply(t, t, loc), {}, false, loc);
    total = total.defined() ? add(total, s, loc) : s;
  }
  if (!total.defined()) throw InvalidArgument("global_norm: every tensor is null");
  return sqrt(total, loc);
}

std::pair<std::vector<Tensor>, Tensor> clip_by_global_norm(const std::vector<Tensor>& tensors, double clip_norm,
                                                             SourceLocation loc) {
  if (!(clip_norm > 0)) throw InvalidArgument("clip_by_global_norm: clip_norm must be positive");
  Tensor norm = global_norm(tensors, loc);
  // clip * min(1 / norm, 1 / clip); NaN when the norm is not finite, as TF
  // (norm - norm is 0 or NaN).
  Tensor scale = add(multiply(clip_norm, minimum(divide(1, norm, loc), 1 / clip_norm, loc), loc),
                     subtract(norm, norm, loc), loc);
  std::vector<Tensor> clipped;
  clipped.reserve(tensors.size());
  for (const Tensor& t : tensors)
    clipped.push_back(t.defined() ? multiply(t, cast(scale, t.dtype(), loc), loc) : Tensor());
  return {std::move(clipped), norm};
}

}  // namespace kiln
