#pragma once
// Image resizing, as tf.image.resize (TF 2.15): the interpolation kernels of
// ResizeBilinear/ResizeNearestNeighbor/ResizeBicubic (half-pixel centers),
// ResizeArea and ScaleAndTranslate in one op.
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// images: [batch, height, width, channels], float32 or float64 (and uint8,
// int32, int64 for "nearest"); the result has `images`' dtype and shape
// [batch, size[0], size[1], channels]. `method` is one of "bilinear",
// "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
// "mitchellcubic". `antialias` widens the kernel when downsampling (ignored
// by "nearest" and "area", as in TF); the lanczos, gaussian and
// mitchellcubic kernels always sample as ScaleAndTranslate does.
Tensor resize_image(const Tensor& images, const std::vector<int64_t>& size, const std::string& method = "bilinear",
                    bool antialias = false, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
