// The nn ops' registration and the window geometry shared by convolution and
// pooling.
#include <cctype>
#include <tuple>

#include "ops/nn_internal.h"

namespace kiln::ops {

void register_nn_ops(schema::OpRegistry& r) {
  register_matmul_op(r);
  register_conv_ops(r);
  register_pool_ops(r);
  register_softmax_ops(r);
  register_bias_add_op(r);
  register_conv_grad_ops(r);
  register_depthwise_conv_ops(r);
  register_pool_grad_ops(r);
}

std::vector<int64_t> size2d_attr(const nn::Size2D& size) {
  const std::vector<int64_t>& v = size.values();
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 4 && v[0] == 1 && v[3] == 1) return {v[1], v[2]};
  return v;
}

std::string padding_attr(const nn::PaddingArg& padding) {
  std::string s = padding.name();
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

namespace {

WindowDim window_dim(int64_t in, int64_t k, int64_t stride, int64_t dilation, bool same) {
  WindowDim d;
  if (in >= 0 && same) d.out = (in + stride - 1) / stride;  // whatever the window
  if (in < 0 || k < 0) return d;
  int64_t effective = (k - 1) * dilation + 1;
  if (same) {
    d.out = (in + stride - 1) / stride;
    int64_t needed = std::max<int64_t>(0, (d.out - 1) * stride + effective - in);
    d.pad_before = needed / 2;
    d.pad_after = needed - d.pad_before;
  } else {
    // TF's (in - effective + stride) / stride: 0 (an empty output) when the
    // window overhangs the input by less than a stride; negative is an error
    // (infer_window raises it), kept at 0 here.
    d.out = std::max<int64_t>(0, (in - effective + stride) / stride);
  }
  return d;
}

}  // namespace

void read_size2d(schema::InferContext& c, const char* name, int64_t& h, int64_t& w) {
  const std::vector<int64_t>& v = c.attrs().get_ints(name);
  if (v.size() != 2 || v[0] <= 0 || v[1] <= 0)
    c.fail("{} must be one positive number, {{h, w}} or {{1, h, w, 1}}, got [{}]", name,
           fmt::join(v, ", "));
  // No dim is larger, and bounded sizes keep the window arithmetic in int64.
  if (v[0] > Shape::kMaxElements || v[1] > Shape::kMaxElements)
    c.fail("{} must be at most 2^48 = {}, got [{}]", name, Shape::kMaxElements, fmt::join(v, ", "));
  h = v[0];
  w = v[1];
}

Window2D infer_window(schema::InferContext& c, const Shape& input, int64_t kh, int64_t kw,
                      bool has_dilations, const std::string& window_what) {
  Window2D g;
  g.kh = kh;
  g.kw = kw;
  read_size2d(c, "strides", g.sh, g.sw);
  if (has_dilations) read_size2d(c, "dilations", g.dh, g.dw);
  const std::string& padding = c.attrs().get_string("padding");
  if (padding != "SAME" && padding != "VALID")
    c.fail("padding must be \"SAME\" or \"VALID\", got \"{}\"", padding);
  g.same = padding == "SAME";
  int64_t in_h = input.has_known_rank() ? input[1] : -1;
  int64_t in_w = input.has_known_rank() ? input[2] : -1;
  // The dilated window, at most 2^62, so padding and the kernels' index
  // arithmetic stay in int64.
  for (auto [k, d, dim] : {std::tuple{kh, g.dh, "height"}, std::tuple{kw, g.dw, "width"}})
    if (k > 0 && static_cast<__int128>(k - 1) * d + 1 > (__int128{1} << 62))
      c.fail("the window {} after dilation, ({} - 1) * {} + 1, is larger than 2^62", dim, k, d);
  g.h = window_dim(in_h, kh, g.sh, g.dh, g.same);
  g.w = window_dim(in_w, kw, g.sw, g.dw, g.same);
  // As TF: VALID output dims are (in - effective + stride) / stride, an empty
  // output when the window is larger than the input by less than a stride,
  // and an error only when that is negative.
  auto check = [&](int64_t in, int64_t k, int64_t stride, int64_t dilation, const char* dim) {
    if (g.same || in < 0 || k < 0) return;
    int64_t effective = (k - 1) * dilation + 1;
    const int64_t out = (in - effective + stride) / stride;  // C++ truncation, as TF
    if (out < 0)
      c.fail("computed output {} would be negative: {} (input {} {}, window {} {}{}, stride {}; VALID padding): "
             "input shape {}, {}",
             dim, out, dim, in, dim, effective,
             dilation > 1 ? " after dilation" : "", stride, input.to_string(), window_what);
  };
  check(in_h, kh, g.sh, g.dh, "height");
  check(in_w, kw, g.sw, g.dw, "width");
  return g;
}

Window2D kernel_window(const schema::Attrs& attrs, const Shape& input, int64_t kh, int64_t kw) {
  Window2D g;
  g.kh = kh;
  g.kw = kw;
  const std::vector<int64_t>& s = attrs.get_ints("strides");
  g.sh = s[0];
  g.sw = s[1];
  if (const schema::AttrValue* d = attrs.find("dilations")) {
    const auto& dv = std::get<std::vector<int64_t>>(*d);
    g.dh = dv[0];
    g.dw = dv[1];
  }
  g.same = attrs.get_string("padding") == "SAME";
  g.h = window_dim(input[1], kh, g.sh, g.dh, g.same);
  g.w = window_dim(input[2], kw, g.sw, g.dw, g.same);
  return g;
}

}  // namespace kiln::ops
