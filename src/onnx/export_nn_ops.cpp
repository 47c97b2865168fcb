// MatMul, convolution (depthwise too), pooling, bias, softmax and the fused
// contractions -> ONNX. Kiln's images are NHWC and filters HWIO; ONNX's Conv and pools are
// NCHW/OIHW, so each is wrapped in Transposes (runtimes fold the filters'
// and cancel the pairs between layers).
#include <fmt/format.h>

#include "onnx/export_ops.h"

namespace kiln::onnx {

namespace {

const std::vector<int64_t> kToNchw{0, 3, 1, 2}, kToNhwc{0, 2, 3, 1}, kHwioToOihw{3, 2, 0, 1};

std::string transpose(GraphEmitter& e, const std::string& in, const std::vector<int64_t>& perm, std::string_view hint) {
  std::string out = e.names().fresh(hint);
  set_attr(e.add_node("Transpose", {in}, {out}), "perm", perm);
  return out;
}

// The last two dims swapped, when `transpose` says so.
std::string maybe_transposed(const NodeExport& x, int i, bool transposed) {
  if (!transposed) return x.in(i);
  int rank = x.known_rank(i);
  std::vector<int64_t> perm;
  for (int d = 0; d < rank; ++d) perm.push_back(d);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(x.e, x.in(i), perm, "transposed");
}

std::string matmul(const NodeExport& x, const std::string& out) {
  std::string a = maybe_transposed(x, 0, x.attrs().get_bool("transpose_a"));
  std::string b = maybe_transposed(x, 1, x.attrs().get_bool("transpose_b"));
  x.e.add_node("MatMul", {a, b}, {out});
  return out;
}

// Whether the node's padding is SAME (else VALID; anything else is refused).
bool same_padding(const NodeExport& x) {
  const std::string& padding = x.attrs().get_string("padding");
  if (padding != "SAME" && padding != "VALID") x.refuse(fmt::format("padding '{}'", padding));
  return padding == "SAME";
}

void set_window(pb::NodeProto& n, bool same, const std::vector<int64_t>& strides) {
  // TF's SAME puts the odd padding after: ONNX's SAME_UPPER.
  set_attr(n, "auto_pad", std::string(same ? "SAME_UPPER" : "VALID"));
  set_attr(n, "strides", strides);
}

void set_window_attrs(const NodeExport& x, pb::NodeProto& n) {
  set_window(n, same_padding(x), x.attrs().get_ints("strides"));
}

// `hwio_filters`: input 1 as Conv2D's [KH, KW, C / group, O].
std::string conv2d(const NodeExport& x, const std::string& out, const std::string& hwio_filters, int64_t group = 1) {
  std::string image = transpose(x.e, x.in(0), kToNchw, "nchw");
  std::string filters = transpose(x.e, hwio_filters, kHwioToOihw, "oihw");
  std::string y = x.e.names().fresh("conv_nchw");
  pb::NodeProto& n = x.e.add_node("Conv", {image, filters}, {y});
  if (group != 1) set_attr(n, "group", group);
  set_window_attrs(x, n);
  set_attr(n, "dilations", x.attrs().get_ints("dilations"));
  const Shape& f = x.in_type(1).shape;
  if (f.has_known_rank() && f[0] >= 0 && f[1] >= 0) set_attr(n, "kernel_shape", std::vector<int64_t>{f[0], f[1]});
  set_attr(x.e.add_node("Transpose", {y}, {out}), "perm", kToNhwc);
  return out;
}

// `in` pooled into `out` by the window attrs given.
template <bool kMax>
void pool(GraphEmitter& e, const std::string& in, const std::string& out, const std::vector<int64_t>& ksize,
          const std::vector<int64_t>& strides, bool same) {
  std::string image = transpose(e, in, kToNchw, "nchw");
  std::string y = e.names().fresh("pool_nchw");
  pb::NodeProto& n = e.add_node(kMax ? "MaxPool" : "AveragePool", {image}, {y});
  set_window(n, same, strides);
  set_attr(n, "kernel_shape", ksize);
  // AveragePool's count_include_pad is 0 by default: TF's SAME average too
  // divides by the window's cells inside the image.
  set_attr(e.add_node("Transpose", {y}, {out}), "perm", kToNhwc);
}

template <bool kMax> void pool_node(const NodeExport& x) {
  pool<kMax>(x.e, x.in(0), x.out(), x.attrs().get_ints("ksize"), x.attrs().get_ints("strides"), same_padding(x));
}

void matmul_node(const NodeExport& x) { matmul(x, x.out()); }
// Conv2D's groups: its input's channels over its filters' (1 when either is
// unknown, which only an ungrouped convolution leaves unknown in practice).
int64_t conv2d_groups(const NodeExport& x) {
  const Shape& in = x.in_type(0).shape;
  const Shape& f = x.in_type(1).shape;
  const int64_t in_c = in.has_known_rank() ? in[3] : -1, f_c = f.has_known_rank() ? f[2] : -1;
  return in_c > 0 && f_c > 0 ? in_c / f_c : 1;
}

std::string grouped_conv2d(const NodeExport& x, const std::string& out) {
  return conv2d(x, out, x.in(1), conv2d_groups(x));
}
void conv2d_node(const NodeExport& x) { grouped_conv2d(x, x.out()); }

// A grouped Conv with one group per input channel: the filter [KH, KW, C, M]
// read as [KH, KW, 1, C * M] (ONNX's Reshape keeps the dims given as 0).
std::string depthwise_conv2d(const NodeExport& x, const std::string& out) {
  const Shape& in = x.in_type(0).shape;
  const Shape& f = x.in_type(1).shape;
  int64_t channels = in.has_known_rank() && in[3] >= 0 ? in[3] : f.has_known_rank() ? f[2] : -1;
  if (channels < 0) x.refuse("its input channels are unknown (ONNX's Conv needs the group count)");
  return conv2d(x, out, x.e.add("Reshape", {x.in(1), x.e.ints({0, 0, 1, -1}, "shape")}, "hwio"), channels);
}
void depthwise_conv2d_node(const NodeExport& x) { depthwise_conv2d(x, x.out()); }

void bias_add(const NodeExport& x) { x.e.add_node("Add", {x.in(0), x.in(1)}, {x.out()}); }

void softmax(const NodeExport& x, std::string_view op_type) {
  set_attr(x.e.add_node(op_type, {x.in(0)}, {x.out()}), "axis", x.attrs().get_int("axis"));
}
void softmax_node(const NodeExport& x) { softmax(x, "Softmax"); }
void log_softmax_node(const NodeExport& x) { softmax(x, "LogSoftmax"); }

// FusedMatMul / FusedConv2D / FusedDepthwiseConv2dNative: the contraction,
// the bias, the relu, unfused; FusedConv2D's pooled output (max_pool) as
// the MaxPool it stands for.
using ContractionExport = std::string (*)(const NodeExport& x, const std::string& out);
template <ContractionExport kContraction> void fused_contraction(const NodeExport& x) {
  std::string y = kContraction(x, x.e.names().fresh("contraction"));
  bool relu = x.attrs().get_string("activation") == "relu";
  std::string biased = relu ? x.e.names().fresh("biased") : x.out();
  x.e.add_node("Add", {y, x.in(2)}, {biased});
  if (relu) x.e.add_node("Relu", {biased}, {x.out()});
  if (x.attrs().has("max_pool") && x.attrs().get_bool("max_pool"))
    pool<true>(x.e, x.out(), x.out(1), {2, 2}, {2, 2}, /*same=*/false);
}

// tf.image.resize's bilinear and nearest methods (half-pixel centers, as TF 2's) are ONNX's
// Resize on the NHWC image itself, sizes [N, H', W', C]: linear with half_pixel, and nearest
// with tf_half_pixel_for_nn rounded down. The other methods have no exact ONNX form (bicubic's
// kernel table and the scale-and-translate kernels differ), nor has antialiased bilinear.
void resize_image(const NodeExport& x) {
  const std::string& method = x.attrs().get_string("method");
  const bool antialias = x.attrs().get_bool("antialias");
  if (method != "nearest" && !(method == "bilinear" && !antialias))
    x.refuse(fmt::format("ONNX's Resize has no exact form of method {}{}", method, antialias ? " with antialias" : ""));
  const Shape& in = x.in_type(0).shape;
  if (!in.has_known_rank() || in.rank() != 4 || in[0] < 0 || in[3] < 0)
    x.refuse(fmt::format("Resize needs the batch and channel dims known, got shape {}", in.to_string()));
  const std::vector<int64_t>& size = x.attrs().get_ints("size");
  std::string sizes = x.e.ints({in[0], size[0], size[1], in[3]}, "sizes");
  pb::NodeProto& n = x.e.add_node("Resize", {x.in(0), "", "", sizes}, {x.out()});
  if (method == "bilinear") {
    set_attr(n, "mode", std::string("linear"));
    set_attr(n, "coordinate_transformation_mode", std::string("half_pixel"));
  } else {
    set_attr(n, "mode", std::string("nearest"));
    set_attr(n, "coordinate_transformation_mode", std::string("tf_half_pixel_for_nn"));
    set_attr(n, "nearest_mode", std::string("floor"));
  }
}

}  // namespace

void add_nn_exports(ExportTable& t) {
  t["ResizeImage"] = resize_image;
  t["DepthwiseConv2dNative"] = depthwise_conv2d_node;
  t["MatMul"] = matmul_node, t["Conv2D"] = conv2d_node, t["MaxPool"] = pool_node<true>, t["AvgPool"] = pool_node<false>;
  t["BiasAdd"] = bias_add, t["Softmax"] = softmax_node, t["LogSoftmax"] = log_softmax_node;
  t["FusedMatMul"] = fused_contraction<matmul>, t["FusedConv2D"] = fused_contraction<grouped_conv2d>;
  t["FusedDepthwiseConv2dNative"] = fused_contraction<depthwise_conv2d>;
}

}  // namespace kiln::onnx
