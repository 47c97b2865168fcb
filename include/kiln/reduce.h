#pragma once
// Reductions, as TensorFlow's reduce_* and argmax/argmin.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// The axes a reduction runs over. Left out (or `{}`) it means every axis, as
// TF's axis=None; `sum(x, 1)` and `sum(x, {0, -1})` name axes (negative
// counts from the end). `Axes::none()` reduces over no axis (TF's axis=[]).
class Axes {
 public:
  Axes() = default;
  Axes(int64_t axis) : all_(false), axes_{axis} {}
  Axes(int axis) : all_(false), axes_{axis} {}
  Axes(std::initializer_list<int64_t> axes) : all_(axes.size() == 0), axes_(axes) {}
  Axes(const std::vector<int64_t>& axes) : all_(false), axes_(axes) {}
  static Axes none() { return Axes(std::vector<int64_t>{}); }

  bool all() const { return all_; }
  const std::vector<int64_t>& axes() const { return axes_; }

 private:
  bool all_ = true;
  std::vector<int64_t> axes_;
};

// Floats accumulate in their own type (as TF) in fixed-size blocks, so results
// do not depend on the number of threads. Integer sums and products wrap in
// the input type, as TF's do. `mean` of integers is the integer mean
// (truncated toward zero, accumulated in int64); of no elements it is NaN for
// floats and 0 for integers.
Tensor sum(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
           SourceLocation loc = SourceLocation::current());
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
            SourceLocation loc = SourceLocation::current());
Tensor prod(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
            SourceLocation loc = SourceLocation::current());
// NaN propagates. Over no elements: -inf / the lowest value for max, +inf /
// the highest for min.
Tensor max(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
           SourceLocation loc = SourceLocation::current());
Tensor min(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
           SourceLocation loc = SourceLocation::current());
// Bool tensors only, as TF.
Tensor any(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
           SourceLocation loc = SourceLocation::current());
Tensor all(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
           SourceLocation loc = SourceLocation::current());

// log(sum(exp(x))) over `axes`, with the max subtracted first (TF's
// reduce_logsumexp): no overflow for large x; -inf for an all -inf slice.
Tensor reduce_logsumexp(const Tensor& x, const Axes& axes = {}, bool keepdims = false,
                        SourceLocation loc = SourceLocation::current());
// Mean and variance over `axes` (tf.nn.moments), the variance about the mean
// (its gradient does not flow through the mean, as TF's).
std::pair<Tensor, Tensor> moments(const Tensor& x, const Axes& axes, bool keepdims = false,
                                  SourceLocation loc = SourceLocation::current());

// The index of the largest (smallest) value along `axis`; the first one on
// ties, a NaN counts as the largest (and the smallest). int64 unless
// `dtype` is int32.
Tensor argmax(const Tensor& x, int64_t axis = 0, DType dtype = DType::Int64,
              SourceLocation loc = SourceLocation::current());
Tensor argmin(const Tensor& x, int64_t axis = 0, DType dtype = DType::Int64,
              SourceLocation loc = SourceLocation::current());

}  // namespace kiln
