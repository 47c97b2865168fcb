// Shape, layout, indexing and creation ops -> ONNX.
#include <limits>

#include <fmt/format.h>

#include "onnx/export_ops.h"
#include "runtime/dispatch.h"

namespace kiln::onnx {

namespace {

// A pure op without inputs (Const, Fill, Range): its value now, as an
// initializer; runtimes and Kiln fold it alike.
void evaluated(const NodeExport& x) {
  runtime::TensorList values = runtime::run_eager(*x.node.op, {}, x.attrs());
  for (std::size_t i = 0; i < values.size(); ++i)
    x.e.bind({const_cast<graph::Node*>(&x.node), static_cast<int>(i)}, x.e.constant(values[i], x.node.name));
}

void read_variable(const NodeExport& x) {
  // The variable is an initializer: reading it is naming it.
  x.e.bind({const_cast<graph::Node*>(&x.node), 0}, x.in(0));
}

void reshape(const NodeExport& x, const std::vector<int64_t>& target) {
  bool has_zero = false, has_unknown = false;
  for (int64_t d : target) has_zero |= d == 0, has_unknown |= d < 0;
  // ONNX reads a 0 as "keep this dim" unless allowzero, which forbids -1.
  std::vector<int64_t> dims = target;
  if (has_zero && has_unknown) {
    if (!x.out_type().shape.is_fully_defined()) x.refuse("its shape holds both 0 and -1");
    dims = x.out_type().shape.to_vector();
  }
  pb::NodeProto& n = x.e.add_node("Reshape", {x.in(0), x.e.ints(dims, "shape")}, {x.out()});
  if (has_zero) set_attr(n, "allowzero", int64_t{1});
}

void reshape_attr(const NodeExport& x) { reshape(x, x.attrs().get_ints("shape")); }

void reshape_like(const NodeExport& x) {
  x.e.add_node("Reshape", {x.in(0), x.e.add("Shape", {x.in(1)})}, {x.out()});
}

void expand_dims(const NodeExport& x) {
  x.e.add_node("Unsqueeze", {x.in(0), x.e.ints({x.attrs().get_int("axis")}, "axes")}, {x.out()});
}

void squeeze(const NodeExport& x) {
  const std::vector<int64_t>& axes = x.attrs().get_ints("axes");
  if (axes.empty()) x.e.add_node("Squeeze", {x.in(0)}, {x.out()});
  else x.e.add_node("Squeeze", {x.in(0), x.e.ints(axes, "axes")}, {x.out()});
}

// ONNX has no shape assertion: the value passes through (the static shape is
// the graph's own).
void ensure_shape(const NodeExport& x) { x.e.add_node("Identity", {x.in(0)}, {x.out()}); }

void transpose(const NodeExport& x) {
  pb::NodeProto& n = x.e.add_node("Transpose", {x.in(0)}, {x.out()});
  // No perm: both reverse the dims.
  if (!x.attrs().get_ints("perm").empty()) set_attr(n, "perm", x.attrs().get_ints("perm"));
}

void shape(const NodeExport& x) {
  x.e.add_node("Identity", {cast_to(x.e, x.e.add("Shape", {x.in(0)}), DType::Int64, x.out_type().dtype)}, {x.out()});
}

void concat(const NodeExport& x) {
  std::vector<std::string> inputs;
  for (int i = 0; i < x.num_inputs(); ++i) inputs.push_back(x.in(i));
  set_attr(x.e.add_node("Concat", std::move(inputs), {x.out()}), "axis", x.attrs().get_int("axis"));
}

void pack(const NodeExport& x) {
  int64_t axis = x.attrs().get_int("axis");
  std::string axes = x.e.ints({axis}, "axes");
  std::vector<std::string> parts;
  for (int i = 0; i < x.num_inputs(); ++i) parts.push_back(x.e.add("Unsqueeze", {x.in(i), axes}));
  set_attr(x.e.add_node("Concat", std::move(parts), {x.out()}), "axis", axis);
}

void unpack(const NodeExport& x) {
  int64_t axis = x.attrs().get_int("axis");
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < x.node.outputs.size(); ++i) parts.push_back(x.e.names().fresh("part"));
  set_attr(x.e.add_node("Split", {x.in(0)}, parts), "axis", axis);
  std::string axes = x.e.ints({axis}, "axes");
  for (std::size_t i = 0; i < parts.size(); ++i) x.e.add_node("Squeeze", {parts[i], axes}, {x.out(static_cast<int>(i))});
}

// Split: ONNX's Split with the parts' sizes as its second input (opset 13
// on), from the parts' types (a -1 part known only at run time is refused).
void split(const NodeExport& x) {
  const int64_t axis = x.attrs().get_int("axis");
  const int r = x.known_rank(0);
  const int a = static_cast<int>(axis < 0 ? axis + r : axis);
  std::vector<int64_t> sizes;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < x.node.outputs.size(); ++i) {
    const Shape& part = x.out_type(static_cast<int>(i)).shape;
    if (!part.has_known_rank() || part[a] < 0) x.refuse("a part's size is known only when the graph runs");
    sizes.push_back(part[a]);
    parts.push_back(x.out(static_cast<int>(i)));
  }
  set_attr(x.e.add_node("Split", {x.in(0), x.e.ints(sizes, "split")}, std::move(parts)), "axis", axis);
}

void gather(const NodeExport& x) {
  set_attr(x.e.add_node("Gather", {x.in(0), x.in(1)}, {x.out()}), "axis", x.attrs().get_int("axis"));
}

// GatherND / ScatterND take int64 indices; ONNX also reads negative ones
// (from the end), which Kiln's kernels refuse.
std::string int64_indices(const NodeExport& x, int i) { return cast_to(x.e, x.in(i), x.in_type(i).dtype, DType::Int64); }

void gather_nd(const NodeExport& x) { x.e.add_node("GatherND", {x.in(0), int64_indices(x, 1)}, {x.out()}); }

// TensorScatterUpdate and TensorScatterAdd (scatter_nd is the latter into
// zeros). Duplicate indices: both add every update; Kiln's update keeps the
// last, ONNX leaves which one open.
template <bool kAdd> void scatter_nd(const NodeExport& x) {
  pb::NodeProto& n = x.e.add_node("ScatterND", {x.in(0), int64_indices(x, 1), x.in(2)}, {x.out()});
  if (kAdd) set_attr(n, "reduction", std::string("add"));
}

// TF's one_hot as an equality with a range: an index out of [0, depth)
// (negative ones included) gives a row of off_value. ONNX's OneHot would
// count negative indices from the end.
void one_hot(const NodeExport& x) {
  int64_t depth = x.attrs().get_int("depth"), axis = x.attrs().get_int("axis");
  int rank = x.known_rank(0);
  int at = axis < 0 ? rank : static_cast<int>(axis);
  DType index_type = x.in_type(0).dtype;
  Shape range_shape{depth};
  for (int d = at; d < rank; ++d) range_shape.push_back(1);
  Tensor range = core::make_tensor(index_type, range_shape);
  for (int64_t i = 0; i < depth; ++i) {
    if (index_type == DType::Int64) core::data_of<int64_t>(range)[i] = i;
    else if (index_type == DType::Int32) core::data_of<int32_t>(range)[i] = static_cast<int32_t>(i);
    else core::data_of<uint8_t>(range)[i] = static_cast<uint8_t>(i);
  }
  std::string indices = x.e.add("Unsqueeze", {x.in(0), x.e.ints({at}, "axes")});
  std::string hit = x.e.add("Equal", {indices, x.e.constant(range, "range")});
  x.e.add_node("Where",
               {hit, x.e.constant(x.attrs().get<Tensor>("on_value"), "on"),
                x.e.constant(x.attrs().get<Tensor>("off_value"), "off")},
               {x.out()});
}

void pad(const NodeExport& x) {
  const std::vector<int64_t>& p = x.attrs().get_ints("paddings");
  std::vector<int64_t> pads(p.size());
  const std::size_t r = p.size() / 2;
  for (std::size_t d = 0; d < r; ++d) pads[d] = p[2 * d], pads[r + d] = p[2 * d + 1];
  pb::NodeProto& n = x.e.add_node(
      "Pad", {x.in(0), x.e.ints(pads, "pads"), x.e.constant(x.attrs().get<Tensor>("value"), "pad_value")}, {x.out()});
  set_attr(n, "mode", std::string("constant"));
}

void tile(const NodeExport& x) {
  x.e.add_node("Tile", {x.in(0), x.e.ints(x.attrs().get_ints("multiples"), "repeats")}, {x.out()});
}

void fill_like(const NodeExport& x) {
  pb::TensorProto value;
  to_tensor_proto(x.attrs().get<Tensor>("value"), "value", value);
  value.clear_dims();
  value.add_dims(1);  // ConstantOfShape wants a 1-element vector
  set_attr(x.e.add_node("ConstantOfShape", {x.e.add("Shape", {x.in(0)})}, {x.out()}), "value", value);
}

void broadcast_like(const NodeExport& x) {
  x.e.add_node("Expand", {x.in(0), x.e.add("Shape", {x.in(1)})}, {x.out()});
}

// StridedSlice: one Slice over the dims the index ranges over, then a
// Squeeze of the integer indices and an Unsqueeze of the new axes.
void strided_slice(const NodeExport& x) {
  auto ints = [&](const char* name) -> const std::vector<int64_t>& { return x.attrs().get_ints(name); };
  auto mask = [&](const char* name) { return x.attrs().get_int(name); };
  const std::vector<int64_t>&begin = ints("begin"), &end = ints("end"), &strides = ints("strides");
  const int64_t begin_mask = mask("begin_mask"), end_mask = mask("end_mask"), ellipsis_mask = mask("ellipsis_mask");
  const int64_t new_axis_mask = mask("new_axis_mask"), shrink_mask = mask("shrink_axis_mask");
  const int rank = x.known_rank(0), n = static_cast<int>(begin.size());
  int real = 0;
  for (int i = 0; i < n; ++i)
    if (!((ellipsis_mask | new_axis_mask) >> i & 1)) ++real;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> starts, ends, axes, steps, squeezed, new_axes;
  int dim = 0, out_dim = 0;
  for (int i = 0; i < n; ++i) {
    int64_t bit = int64_t{1} << i;
    if (ellipsis_mask & bit) {
      int covered = rank - real;
      dim += covered, out_dim += covered;
      continue;
    }
    if (new_axis_mask & bit) {
      new_axes.push_back(out_dim++);
      continue;
    }
    int64_t s = strides[i];
    if (shrink_mask & bit) {
      starts.push_back(begin[i]);
      ends.push_back(begin[i] == -1 ? kMax : begin[i] + 1);
      steps.push_back(1);
      squeezed.push_back(dim);
    } else {
      starts.push_back(begin_mask & bit ? (s > 0 ? 0 : kMax) : begin[i]);
      ends.push_back(end_mask & bit ? (s > 0 ? kMax : kMin) : end[i]);
      steps.push_back(s);
      ++out_dim;
    }
    axes.push_back(dim++);
  }
  std::string cur = x.in(0);
  if (!axes.empty())
    cur = x.e.add("Slice", {cur, x.e.ints(starts, "starts"), x.e.ints(ends, "ends"), x.e.ints(axes, "axes"),
                            x.e.ints(steps, "steps")});
  if (!squeezed.empty()) cur = x.e.add("Squeeze", {cur, x.e.ints(squeezed, "axes")});
  if (!new_axes.empty()) cur = x.e.add("Unsqueeze", {cur, x.e.ints(new_axes, "axes")});
  x.e.add_node("Identity", {cur}, {x.out()});
}

}  // namespace

void add_array_exports(ExportTable& t) {
  t["Const"] = evaluated, t["Fill"] = evaluated, t["Range"] = evaluated;
  t["ReadVariable"] = read_variable;
  t["Reshape"] = reshape_attr, t["ReshapeLike"] = reshape_like, t["ExpandDims"] = expand_dims;
  t["Squeeze"] = squeeze, t["Transpose"] = transpose, t["Shape"] = shape, t["EnsureShape"] = ensure_shape;
  t["Concat"] = concat, t["Pack"] = pack, t["Unpack"] = unpack, t["Split"] = split, t["Gather"] = gather, t["OneHot"] = one_hot;
  t["Pad"] = pad, t["Tile"] = tile, t["FillLike"] = fill_like, t["BroadcastLike"] = broadcast_like;
  t["StridedSlice"] = strided_slice;
  t["GatherNd"] = gather_nd, t["TensorScatterUpdate"] = scatter_nd<false>, t["TensorScatterAdd"] = scatter_nd<true>;
}

}  // namespace kiln::onnx
