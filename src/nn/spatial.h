#pragma once
// Helpers shared by the 2-D layers (Conv2D, pooling): window sizes and
// padding from the public option types, and the output size rule.
#include <cstdint>
#include <string>
#include <utility>

#include "kiln/nn_ops.h"
#include "kiln/shape.h"

namespace kiln::nn {

// (h, w) from one number, {h, w} or TF's {1, h, w, 1}; `what` and `layer`
// name the argument in errors.
std::pair<int64_t, int64_t> size2d(const Size2D& size, const std::string& layer, const char* what);
// True for SAME, false for VALID (any letter case); anything else throws.
bool is_same_padding(const PaddingArg& padding, const std::string& layer);
// The output length of one spatial dim (None stays None).
int64_t output_length(int64_t input, int64_t window, int64_t stride, bool same, const std::string& layer,
                      const char* dim_name);
// [N, H, W, C] -> [N, OH, OW, channels].
Shape output_shape_2d(const Shape& input, int64_t kh, int64_t kw, int64_t sh, int64_t sw, bool same,
                      int64_t channels, const std::string& layer);

}  // namespace kiln::nn
