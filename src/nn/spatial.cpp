#include "nn/spatial.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "kiln/error.h"

namespace kiln::nn {

std::pair<int64_t, int64_t> size2d(const Size2D& size, const std::string& layer, const char* what) {
  const auto& v = size.values();
  std::pair<int64_t, int64_t> hw;
  if (v.size() == 1) hw = {v[0], v[0]};
  else if (v.size() == 2) hw = {v[0], v[1]};
  else if (v.size() == 4 && v[0] == 1 && v[3] == 1) hw = {v[1], v[2]};
  else
    throw InvalidArgument(fmt::format("{}: {} must be one number, {{h, w}} or {{1, h, w, 1}}, got {} values",
                                      layer, what, v.size()));
  if (hw.first <= 0 || hw.second <= 0)
    throw InvalidArgument(fmt::format("{}: {} must be positive, got ({}, {})", layer, what, hw.first, hw.second));
  return hw;
}

bool is_same_padding(const PaddingArg& padding, const std::string& layer) {
  std::string p = padding.name();
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::toupper(c); });
  if (p == "SAME") return true;
  if (p == "VALID") return false;
  throw InvalidArgument(fmt::format("{}: padding must be \"same\" or \"valid\", got \"{}\"", layer, padding.name()));
}

int64_t output_length(int64_t input, int64_t window, int64_t stride, bool same, const std::string& layer,
                      const char* dim_name) {
  if (input < 0) return None;
  if (same) return (input + stride - 1) / stride;
  if (input < window)
    throw InvalidArgument(fmt::format("{}: the input {} {} is smaller than the window {} (padding \"valid\")",
                                      layer, dim_name, input, window));
  return (input - window) / stride + 1;
}

Shape output_shape_2d(const Shape& input, int64_t kh, int64_t kw, int64_t sh, int64_t sw, bool same,
                      int64_t channels, const std::string& layer) {
  if (input.rank() != 4)
    throw InvalidArgument(fmt::format("{}: expected inputs of rank 4 (batch, height, width, channels), got shape {}",
                                      layer, input.to_string()));
  return Shape{input[0], output_length(input[1], kh, sh, same, layer, "height"),
               output_length(input[2], kw, sw, same, layer, "width"), channels};
}

}  // namespace kiln::nn
