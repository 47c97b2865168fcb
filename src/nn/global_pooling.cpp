// GlobalAveragePooling2D and GlobalMaxPooling2D: one value per channel.
#include <fmt/format.h>

#include "kiln/error.h"
#include "kiln/nn/layers.h"
#include "kiln/reduce.h"

namespace kiln::nn {

namespace {
Shape pooled_shape(const Shape& input_shape, bool keepdims) {
  if (keepdims) return Shape{input_shape[0], 1, 1, input_shape[3]};
  return Shape{input_shape[0], input_shape[3]};
}
}  // namespace

GlobalAveragePooling2D::GlobalAveragePooling2D(GlobalPool2DOptions options)
    : Layer("global_average_pooling2d", std::move(options.name), std::move(options.input_shape)),
      keepdims_(options.keepdims) {}

Shape GlobalAveragePooling2D::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 4);
  return pooled_shape(input_shape, keepdims_);
}

Tensor GlobalAveragePooling2D::call(const Tensor& x, bool) {
  check_rank(x.shape(), 4);
  return mean(x, {1, 2}, keepdims_);
}

GlobalMaxPooling2D::GlobalMaxPooling2D(GlobalPool2DOptions options)
    : Layer("global_max_pooling2d", std::move(options.name), std::move(options.input_shape)),
      keepdims_(options.keepdims) {}

Shape GlobalMaxPooling2D::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 4);
  return pooled_shape(input_shape, keepdims_);
}

Tensor GlobalMaxPooling2D::call(const Tensor& x, bool) {
  check_rank(x.shape(), 4);
  return max(x, {1, 2}, keepdims_);
}

}  // namespace kiln::nn
