// ONNX ops -> Kiln's public ops (default domain, opsets up to 17). ONNX's
// Conv and pools are NCHW, Kiln's NHWC: each is wrapped in transposes.
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "kiln/bitwise.h"
#include "kiln/kiln.h"
#include "onnx/importer.h"
#include "runtime/dispatch.h"

namespace kiln::onnx {

// ---- NodeImport --------------------------------------------------------------
const Tensor& NodeImport::in(int i) const {
  if (!has_input(i)) fail(fmt::format("input {} is missing", i));
  return inputs_[i];
}

const Tensor& NodeImport::constant_in(int i) const {
  const Tensor& t = in(i);
  if (t.is_symbolic())
    refuse(fmt::format("input {} is computed at run time; Kiln needs it when it builds the graph (an "
                       "initializer or a Constant, here '{}')", i, node_.input(i)));
  return t;
}

std::vector<int64_t> NodeImport::ints_in(int i) const {
  const Tensor& t = constant_in(i);
  if (t.dtype() == DType::Int64) return t.to_vector<int64_t>();
  if (t.dtype() == DType::Int32) {
    std::vector<int32_t> v = t.to_vector<int32_t>();
    return {v.begin(), v.end()};
  }
  fail(fmt::format("input {} must hold integers, got {}", i, dtype_name(t.dtype())));
}

int64_t NodeImport::int_in(int i, const char* what) const {
  std::vector<int64_t> v = ints_in(i);
  if (v.size() != 1) fail(fmt::format("input {} ('{}') must hold one integer, got {}", i, what, v.size()));
  return v[0];
}

bool NodeImport::bool_in(int i, const char* what) const {
  const Tensor& t = constant_in(i);
  if (t.dtype() != DType::Bool || t.size() != 1)
    fail(fmt::format("input {} ('{}') must hold one bool, got {} {}", i, what, t.size(), dtype_name(t.dtype())));
  return t.to_vector<bool>()[0];
}

const pb::AttributeProto* NodeImport::attr(const std::string& name) const {
  for (const pb::AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t NodeImport::attr_int(const std::string& name, int64_t fallback) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != pb::AttributeProto::INT) fail(fmt::format("attribute '{}' must be an int", name));
  return a->i();
}

float NodeImport::attr_float(const std::string& name, float fallback) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != pb::AttributeProto::FLOAT) fail(fmt::format("attribute '{}' must be a float", name));
  return a->f();
}

std::string NodeImport::attr_string(const std::string& name, const std::string& fallback) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != pb::AttributeProto::STRING) fail(fmt::format("attribute '{}' must be a string", name));
  return a->s();
}

std::vector<int64_t> NodeImport::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  const pb::AttributeProto* a = attr(name);
  if (!a) return fallback;
  if (a->type() != pb::AttributeProto::INTS) fail(fmt::format("attribute '{}' must be a list of ints", name));
  return {a->ints().begin(), a->ints().end()};
}

std::vector<int64_t> NodeImport::axes(int input) const {
  if (attr("axes")) return attr_ints("axes");
  return has_input(input) ? ints_in(input) : std::vector<int64_t>{};
}

void NodeImport::fail(const std::string& message) const {
  throw InvalidArgument(fmt::format("kiln::onnx::import_model: {}: {}", where_, message));
}

void NodeImport::refuse(const std::string& what) const {
  throw Unimplemented(fmt::format("kiln::onnx::import_model: {}: {}", where_, what));
}

namespace {

using nn::avg_pool2d, nn::bias_add, nn::conv2d, nn::leaky_relu, nn::log_softmax, nn::max_pool2d, nn::softmax;
using Out = std::vector<Tensor>;

template <Tensor (*F)(Tensor, SourceLocation)> Out unary(const NodeImport& n) {
  return {F(n.in(0), SourceLocation::current())};
}
template <Tensor (*F)(const Operand&, const Operand&, SourceLocation)> Out binary(const NodeImport& n) {
  return {F(n.in(0), n.in(1), SourceLocation::current())};
}
// Max, Min, Sum, Mean take any number of inputs.
template <Tensor (*F)(const Operand&, const Operand&, SourceLocation)> Out variadic(const NodeImport& n) {
  Tensor acc = n.in(0);
  for (int i = 1; i < n.num_inputs(); ++i) acc = F(acc, n.in(i), SourceLocation::current());
  return {acc};
}
Out mean_of(const NodeImport& n) {
  Tensor acc = variadic<add>(n)[0];
  return {acc / cast(constant(static_cast<double>(n.num_inputs())), acc.dtype())};
}

Out identity(const NodeImport& n) { return {n.in(0)}; }
Out is_nan(const NodeImport& n) { return {not_equal(n.in(0), n.in(0))}; }
Out size_(const NodeImport& n) { return {cast(prod(shape_of(n.in(0))), DType::Int64)}; }
Out cast_like(const NodeImport& n) { return {cast(n.in(0), n.in(1).dtype())}; }
Out not_(const NodeImport& n) { return {logical_not(n.in(0))}; }
Out reciprocal(const NodeImport& n) { return {cast(constant(1.0), n.in(0).dtype()) / n.in(0)}; }
Out xor_(const NodeImport& n) { return {not_equal(n.in(0), n.in(1))}; }
// ONNX leaves a count of the width or more undefined; Kiln's shifts clamp it.
Out bit_shift(const NodeImport& n) {
  const std::string direction = n.attr_string("direction", "");
  if (direction == "LEFT") return {bitwise::left_shift(n.in(0), n.in(1))};
  if (direction == "RIGHT") return {bitwise::right_shift(n.in(0), n.in(1))};
  n.refuse(fmt::format("BitShift's direction must be LEFT or RIGHT, got '{}'", direction));
}
Out where_(const NodeImport& n) { return {where(n.in(0), n.in(1), n.in(2))}; }
Out cast_(const NodeImport& n) {
  return {cast(n.in(0), from_onnx_dtype(static_cast<int>(n.attr_int("to", 0)), "Cast's 'to'"))};
}

Tensor scalar_of(double v, DType dtype) { return cast(constant(v), dtype); }

// ONNX counts negative indices from the end (of `length`, a scalar or one
// per index column); Kiln, as TF, refuses them.
Tensor from_end(const Tensor& indices, const Tensor& length) {
  return where(indices < scalar_of(0, indices.dtype()), indices + length, indices);
}

// x where positive, else alpha * (e^x - 1): Elu's, and Selu's before its scale.
Tensor elu_alpha(const Tensor& x, float alpha) {
  return where(x > scalar_of(0, x.dtype()), x, scalar_of(alpha, x.dtype()) * (exp(x) - scalar_of(1, x.dtype())));
}
Out elu_(const NodeImport& n) {
  float alpha = n.attr_float("alpha", 1.f);
  return {alpha == 1.f ? elu(n.in(0)) : elu_alpha(n.in(0), alpha)};
}
Out leaky_relu_(const NodeImport& n) { return {leaky_relu(n.in(0), n.attr_float("alpha", 0.01f))}; }
Out selu_(const NodeImport& n) {
  const Tensor& x = n.in(0);
  float alpha = n.attr_float("alpha", 1.67326319217681884765625f), gamma = n.attr_float("gamma", 1.05070102214813232421875f);
  return {scalar_of(gamma, x.dtype()) * elu_alpha(x, alpha)};
}
Out prelu(const NodeImport& n) {
  const Tensor& x = n.in(0);
  return {where(x < scalar_of(0, x.dtype()), n.in(1) * x, x)};
}
Out thresholded_relu(const NodeImport& n) {
  const Tensor& x = n.in(0);
  return {where(x > scalar_of(n.attr_float("alpha", 1.f), x.dtype()), x, scalar_of(0, x.dtype()))};
}
Out hard_sigmoid(const NodeImport& n) {
  const Tensor& x = n.in(0);
  Tensor y = scalar_of(n.attr_float("alpha", 0.2f), x.dtype()) * x + scalar_of(n.attr_float("beta", 0.5f), x.dtype());
  return {clip(y, scalar_of(0, x.dtype()), scalar_of(1, x.dtype()))};
}
Out clip_(const NodeImport& n) {
  Tensor y = n.in(0);
  // Opset < 11: min and max are attrs; later, optional inputs.
  if (n.has_input(1)) y = maximum(y, n.in(1));
  else if (n.attr("min")) y = maximum(y, scalar_of(n.attr_float("min", 0), y.dtype()));
  if (n.has_input(2)) y = minimum(y, n.in(2));
  else if (n.attr("max")) y = minimum(y, scalar_of(n.attr_float("max", 0), y.dtype()));
  return {y};
}
Out mod_(const NodeImport& n) {
  if (n.attr_int("fmod", 0)) return {truncatemod(n.in(0), n.in(1))};
  if (is_floating(n.in(0).dtype())) n.fail("fmod must be 1 for floating-point inputs");
  return {mod(n.in(0), n.in(1))};
}
// ONNX's Pow takes an exponent of any number type; the result is the base's.
Out pow_(const NodeImport& n) { return {pow(n.in(0), cast(n.in(1), n.in(0).dtype()))}; }

Out div_(const NodeImport& n) {
  if (is_floating(n.in(0).dtype())) return {divide(n.in(0), n.in(1))};
  return {truncatediv(n.in(0), n.in(1))};  // ONNX's integer division truncates
}

// ---- Tensors from attributes -------------------------------------------------
Out constant_(const NodeImport& n) {
  const pb::AttributeProto* a = n.attr("value");
  if (a && a->type() == pb::AttributeProto::TENSOR)
    return {from_tensor_proto(a->t(), fmt::format("Constant '{}'", n.node().name()))};
  if (const pb::AttributeProto* f = n.attr("value_float")) return {constant(f->f())};
  if (const pb::AttributeProto* i = n.attr("value_int")) return {constant(i->i())};
  if (const pb::AttributeProto* fs = n.attr("value_floats"))
    return {constant(std::vector<float>(fs->floats().begin(), fs->floats().end()))};
  if (const pb::AttributeProto* is = n.attr("value_ints"))
    return {constant(std::vector<int64_t>(is->ints().begin(), is->ints().end()))};
  n.refuse("only tensor, float(s) and int(s) values are supported");
}

// x repeated up to `shape` (x's rank at most shape's; each dim 1 or equal).
Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  Shape padded;
  for (int d = 0; d < shape.rank() - x.shape().rank(); ++d) padded.push_back(1);
  for (int64_t d : x.shape().dims()) padded.push_back(d);
  std::vector<int64_t> multiples;
  for (int d = 0; d < shape.rank(); ++d) multiples.push_back(padded[d] == 1 ? shape[d] : 1);
  return tile(reshape(x, padded), multiples);
}

Shape shape_from(const NodeImport& n, const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<std::size_t>(Shape::kMaxRank)) n.fail(fmt::format("rank {} is too large", dims.size()));
  for (int64_t d : dims)
    if (d < 0 || d > Shape::kMaxElements) n.fail(fmt::format("dim {} is invalid", d));
  Shape s(dims);
  if (!s.within_limits()) n.fail(fmt::format("shape {} has too many elements", s.to_string()));
  return s;
}

Out constant_of_shape(const NodeImport& n) {
  Shape s = shape_from(n, n.ints_in(0));
  const pb::AttributeProto* a = n.attr("value");
  Tensor v = a ? from_tensor_proto(a->t(), "ConstantOfShape's value") : constant(0.f);
  if (v.size() != 1) n.fail("value must hold one element");
  return {broadcast_to(reshape(v, Shape{}), s)};
}

// ---- Shapes --------------------------------------------------------------------
Out reshape_(const NodeImport& n) {
  std::vector<int64_t> dims = n.ints_in(1);
  const Tensor& x = n.in(0);
  bool allowzero = n.attr_int("allowzero", 0) != 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowzero) {  // ONNX's 0: the input's dim
      if (!x.shape().has_known_rank() || static_cast<int>(i) >= x.shape().rank() || x.shape()[static_cast<int>(i)] < 0)
        n.refuse("a 0 in the shape copies an input dim unknown when the graph is built");
      dims[i] = x.shape()[static_cast<int>(i)];
    }
    if (dims[i] < -1) n.fail(fmt::format("shape dim {} is invalid", dims[i]));
  }
  if (dims.size() > static_cast<std::size_t>(Shape::kMaxRank)) n.fail("the shape's rank is too large");
  return {reshape(x, Shape(dims))};
}

int known_rank(const NodeImport& n, int i) {
  const Shape& s = n.in(i).shape();
  if (!s.has_known_rank()) n.refuse(fmt::format("the rank of input {} is unknown", i));
  return s.rank();
}

// `axis` of a rank-`r` input, counted from the end when negative; out of
// range fails.
int axis_in(const NodeImport& n, int64_t axis, int r) {
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) n.fail(fmt::format("axis {} is out of range for rank {}", axis, r));
  return static_cast<int>(a);
}

Out flatten_(const NodeImport& n) {
  const Tensor& x = n.in(0);
  int r = known_rank(n, 0);
  int64_t axis = n.attr_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) n.fail(fmt::format("axis {} is out of range for rank {}", n.attr_int("axis", 1), r));
  auto product = [&](int from, int to) {
    int64_t p = 1;
    for (int d = from; d < to; ++d) p = x.shape()[d] < 0 || p < 0 ? -1 : p * x.shape()[d];
    return p;
  };
  int64_t outer = product(0, static_cast<int>(axis)), inner = product(static_cast<int>(axis), r);
  if (outer < 0 && inner < 0) n.refuse("flattening with unknown dims on both sides of the axis");
  return {reshape(x, Shape{outer, outer < 0 ? inner : -1})};
}

Out transpose_(const NodeImport& n) { return {transpose(n.in(0), n.attr_ints("perm"))}; }
Out squeeze_(const NodeImport& n) { return {squeeze(n.in(0), n.axes(1))}; }
Out unsqueeze_(const NodeImport& n) {
  std::vector<int64_t> axes = n.axes(1);
  int out_rank = known_rank(n, 0) + static_cast<int>(axes.size());
  for (int64_t& a : axes) a = a < 0 ? a + out_rank : a;
  std::sort(axes.begin(), axes.end());
  Tensor y = n.in(0);
  for (int64_t a : axes) y = expand_dims(y, a);
  return {y};
}
// A shape known when the graph is built is a constant, so what is computed
// from it (a Reshape's target) is known too.
Out shape_(const NodeImport& n) {
  const Shape& s = n.in(0).shape();
  Tensor dims;
  if (s.is_fully_defined()) {
    runtime::DispatchHandlerGuard eager(nullptr);  // a concrete tensor, not a traced Const
    dims = constant(s.to_vector());
  } else {
    dims = cast(shape_of(n.in(0)), DType::Int64);
  }
  if (!n.attr("start") && !n.attr("end")) return {dims};
  int r = known_rank(n, 0);
  auto clamp = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clamp(n.attr_int("start", 0)), end = clamp(n.attr_int("end", r));
  return {slice(dims, {start}, {std::max<int64_t>(end - start, 0)})};
}
Out concat_(const NodeImport& n) {
  std::vector<Tensor> parts;
  for (int i = 0; i < n.num_inputs(); ++i) parts.push_back(n.in(i));
  return {concat(parts, n.attr_int("axis", 0))};
}
// GatherElements(data, indices, axis): out[..i_a..] = data[..indices[..i_a..]..].
// Composed as gather_nd over tuples (i_0, .., indices[..], .., i_r-1), so an
// index outside the data is InvalidArgument (here when the indices are
// constants, else when the graph runs) rather than a silent 0.
Out gather_elements(const NodeImport& n) {
  const Tensor& data = n.in(0);
  int r = known_rank(n, 0);
  int a = axis_in(n, n.attr_int("axis", 0), r);
  const Shape& ds = data.shape();
  const Shape& is = n.in(1).shape();
  if (!ds.is_fully_defined() || !is.is_fully_defined()) n.refuse("shapes unknown when the graph is built");
  if (is.rank() != r) n.fail(fmt::format("indices of rank {} for data of rank {}", is.rank(), r));
  for (int d = 0; d < r; ++d)
    if (d != a && is[d] > ds[d])
      n.fail(fmt::format("indices of shape {} are larger than the data's {} along axis {}", is.to_string(),
                         ds.to_string(), d));
  if (!n.in(1).is_symbolic())
    for (int64_t v : n.ints_in(1))
      if (v < -ds[a] || v >= ds[a])
        n.fail(fmt::format("index {} is out of range for axis {} of size {}", v, a, ds[a]));
  Tensor indices = from_end(cast(n.in(1), DType::Int64), scalar_of(static_cast<double>(ds[a]), DType::Int64));
  std::vector<Tensor> coords;
  for (int d = 0; d < r; ++d) {
    if (d == a) {
      coords.push_back(indices);
      continue;
    }
    Shape along(std::vector<int64_t>(static_cast<std::size_t>(r), 1));
    along[d] = is[d];
    coords.push_back(broadcast_to(reshape(range(int64_t{0}, is[d], int64_t{1}, DType::Int64), along), is));
  }
  return {gather_nd(data, stack(coords, -1))};
}

// GatherND / ScatterND's indices (input 1) into the data (input 0) after its
// first `batch_dims` dims, negative ones counted from the end of their dims,
// as ONNX reads them (Kiln's kernels, as TF's, refuse them). Left as they
// are when those dims are unknown.
Tensor nd_indices(const NodeImport& n, int64_t batch_dims = 0) {
  const Tensor& indices = n.in(1);
  const Shape& ds = n.in(0).shape();
  const Shape& is = indices.shape();
  if (!is.has_known_rank() || is.rank() == 0 || !ds.has_known_rank()) return indices;
  const int64_t depth = is[is.rank() - 1];
  if (depth < 0 || batch_dims + depth > ds.rank()) return indices;
  std::vector<int64_t> dims(ds.begin() + batch_dims, ds.begin() + batch_dims + depth);
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) return indices;
  return from_end(indices, cast(constant(dims, Shape{depth}), indices.dtype()));
}

// With batch_dims B, each index tuple gets its own position in the first B
// dims of indices prepended: Kiln's gather_nd then reads the same elements,
// and its result has ONNX's shape (the batch dims lead both).
Out gather_nd_(const NodeImport& n) {
  const int64_t batch_dims = n.attr_int("batch_dims", 0);
  Tensor indices = nd_indices(n, batch_dims);
  if (batch_dims == 0) return {gather_nd(n.in(0), indices)};
  const Shape& is = indices.shape();
  if (batch_dims < 0 || !is.is_fully_defined() || batch_dims >= is.rank())
    n.refuse(fmt::format("batch_dims {} with indices of shape {}", batch_dims, is.to_string()));
  Shape column(std::vector<int64_t>(is.begin(), is.end() - 1));
  column.push_back(1);
  std::vector<Tensor> parts;
  for (int a = 0; a < batch_dims; ++a) {
    Shape along(std::vector<int64_t>(static_cast<std::size_t>(is.rank()), 1));
    along[a] = is[a];
    parts.push_back(zeros(column, indices.dtype()) + reshape(range(0, is[a], 1, indices.dtype()), along));
  }
  parts.push_back(indices);
  return {gather_nd(n.in(0), concat(parts, -1))};
}

Out scatter_nd_(const NodeImport& n) {
  std::string reduction = n.attr_string("reduction", "none");
  if (reduction == "none") return {tensor_scatter_nd_update(n.in(0), nd_indices(n), n.in(2))};
  if (reduction == "add") return {tensor_scatter_nd_add(n.in(0), nd_indices(n), n.in(2))};
  n.refuse(fmt::format("reduction '{}'", reduction));
}

Out gather_(const NodeImport& n) {
  int64_t axis = n.attr_int("axis", 0);
  int a = axis_in(n, axis, known_rank(n, 0));
  Tensor indices = n.in(1);
  int64_t dim = n.in(0).shape()[a];
  if (dim >= 0) indices = from_end(indices, scalar_of(static_cast<double>(dim), indices.dtype()));
  return {gather(n.in(0), indices, axis)};
}
Out tile_(const NodeImport& n) { return {tile(n.in(0), n.ints_in(1))}; }
Out expand_(const NodeImport& n) {
  Shape want = shape_from(n, n.ints_in(1));
  const Shape& have = n.in(0).shape();
  if (!have.is_fully_defined()) n.refuse("the input's shape is unknown when the graph is built");
  // Expand broadcasts both ways: the result has the larger of each dim.
  int r = std::max(have.rank(), want.rank());
  Shape out;
  for (int d = 0; d < r; ++d) {
    int64_t a = d - (r - have.rank()) >= 0 ? have[d - (r - have.rank())] : 1;
    int64_t b = d - (r - want.rank()) >= 0 ? want[d - (r - want.rank())] : 1;
    out.push_back(a == 1 ? b : a);
  }
  return {broadcast_to(n.in(0), out)};
}

Out pad_(const NodeImport& n) {
  std::string mode = n.attr_string("mode", "constant");
  if (mode != "constant") n.refuse(fmt::format("mode '{}' (only constant)", mode));
  std::vector<int64_t> pads = n.attr("pads") ? n.attr_ints("pads") : n.ints_in(1);
  int r = known_rank(n, 0);
  if (static_cast<int>(pads.size()) != 2 * r) n.fail(fmt::format("{} pads for rank {}", pads.size(), r));
  std::vector<std::pair<int64_t, int64_t>> p;
  for (int d = 0; d < r; ++d) {
    if (pads[d] < 0 || pads[d + r] < 0) n.refuse("negative pads (cropping)");
    p.emplace_back(pads[d], pads[d + r]);
  }
  Tensor y = pad(n.in(0), p);
  if (n.has_input(2)) {  // a fill value: where the padding is, the value
    Tensor inside = pad(ones_like(n.in(0), DType::Bool), p, false);
    y = where(inside, y, n.in(2));
  }
  return {y};
}

Out slice_(const NodeImport& n) {
  int r = known_rank(n, 0);
  std::vector<int64_t> starts = n.ints_in(1), ends = n.ints_in(2);
  std::vector<int64_t> axes = n.has_input(3) ? n.ints_in(3) : std::vector<int64_t>{};
  std::vector<int64_t> steps = n.has_input(4) ? n.ints_in(4) : std::vector<int64_t>(starts.size(), 1);
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    n.fail("starts, ends, axes and steps differ in length");
  std::vector<int64_t> b(r, 0), e(r, 0), s(r, 1);
  SliceMasks masks;
  masks.begin = masks.end = (int64_t{1} << r) - 1;  // every dim whole unless sliced
  for (std::size_t i = 0; i < starts.size(); ++i) {
    int a = axis_in(n, axes[i], r);
    if (steps[i] == 0) n.fail("a step is 0");
    // ONNX clamps like Python; INT64 extremes mean "to the end".
    b[a] = std::clamp<int64_t>(starts[i], -(int64_t{1} << 48), int64_t{1} << 48);
    e[a] = std::clamp<int64_t>(ends[i], -(int64_t{1} << 48), int64_t{1} << 48);
    s[a] = steps[i];
    masks.begin &= ~(int64_t{1} << a);
    masks.end &= ~(int64_t{1} << a);
  }
  return {strided_slice(n.in(0), b, e, s, masks)};
}

Out split_(const NodeImport& n) {
  int64_t axis = n.attr_int("axis", 0);
  int r = known_rank(n, 0);
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) n.fail(fmt::format("axis {} is out of range", axis));
  int64_t dim = n.in(0).shape()[static_cast<int>(a)];
  std::vector<int64_t> sizes = n.attr("split") ? n.attr_ints("split") : n.has_input(1) ? n.ints_in(1) : std::vector<int64_t>{};
  if (sizes.empty()) {
    int parts = n.node().output_size();
    if (dim < 0 || parts == 0 || dim % parts) n.refuse("an even split of a dim unknown or not divisible");
    sizes.assign(static_cast<std::size_t>(parts), dim / parts);
  }
  return split_with_sizes(n.in(0), sizes, a);
}

// ---- Reductions ------------------------------------------------------------------
using ReduceFn = Tensor (*)(const Tensor&, const Axes&, bool, SourceLocation);
Out reduce_with(const NodeImport& n, const Tensor& x, ReduceFn f) {
  std::vector<int64_t> axes = n.axes(1);
  bool keep = n.attr_int("keepdims", 1) != 0;
  if (axes.empty()) {
    if (n.attr_int("noop_with_empty_axes", 0)) return {x};
    return {f(x, Axes{}, keep, SourceLocation::current())};
  }
  return {f(x, Axes(axes), keep, SourceLocation::current())};
}
template <ReduceFn F> Out reduce_(const NodeImport& n) { return reduce_with(n, n.in(0), F); }

Out reduce_sum_square(const NodeImport& n) { return reduce_with(n, n.in(0) * n.in(0), sum); }
Out reduce_l1(const NodeImport& n) { return reduce_with(n, abs(n.in(0)), sum); }
Out reduce_l2(const NodeImport& n) { return {sqrt(reduce_with(n, n.in(0) * n.in(0), sum)[0])}; }
Out reduce_log_sum(const NodeImport& n) { return {log(reduce_with(n, n.in(0), sum)[0])}; }
Out reduce_log_sum_exp(const NodeImport& n) { return reduce_with(n, n.in(0), reduce_logsumexp); }

// x reversed along `axis` (a StridedSlice with stride -1 there).
Tensor reversed(const Tensor& x, int axis, int rank) {
  std::vector<int64_t> zeros(rank, 0), strides(rank, 1);
  strides[axis] = -1;
  SliceMasks whole;
  whole.begin = whole.end = (int64_t{1} << rank) - 1;
  return strided_slice(x, zeros, zeros, strides, whole);
}

template <bool kMax> Out arg_(const NodeImport& n) {
  int64_t axis = n.attr_int("axis", 0);
  Tensor y;
  if (n.attr_int("select_last_index", 0)) {  // the first of the reversed, counted from the end
    int r = known_rank(n, 0);
    int a = axis_in(n, axis, r);
    int64_t dim = n.in(0).shape()[a];
    if (dim < 0) n.refuse("select_last_index=1 over a dim unknown when the graph is built");
    Tensor rev = reversed(n.in(0), a, r);
    y = scalar_of(static_cast<double>(dim - 1), DType::Int64) - (kMax ? argmax(rev, axis) : argmin(rev, axis));
  } else {
    y = kMax ? argmax(n.in(0), axis) : argmin(n.in(0), axis);
  }
  if (n.attr_int("keepdims", 1)) y = expand_dims(y, axis < 0 ? axis + known_rank(n, 0) : axis);
  return {y};
}

// Inference: the input, and a mask of ones.
Out dropout(const NodeImport& n) {
  if (n.has_input(2) && n.bool_in(2, "training_mode")) n.refuse("training_mode=true");
  return {n.in(0), ones_like(n.in(0), DType::Bool)};
}

Out hardmax(const NodeImport& n) {
  int r = known_rank(n, 0);
  int a = axis_in(n, n.attr_int("axis", -1), r);
  int64_t dim = n.in(0).shape()[a];
  if (dim < 0) n.refuse("an axis of a size unknown when the graph is built");
  return {cast(one_hot(argmax(n.in(0), a), dim, 1, 0, a), n.in(0).dtype())};
}

// column - row of each element of a rows x cols matrix (int64). Computed by
// the graph from two ranges, not filled on the host when the model is
// imported: a declared [2^24, 2^24] input costs nothing until it runs, and
// then the allocator's limit makes it ResourceExhausted before allocating.
Tensor diagonal_offsets(int64_t rows, int64_t cols) {
  return reshape(range(int64_t{0}, cols, int64_t{1}, DType::Int64), Shape{1, cols}) -
         reshape(range(int64_t{0}, rows, int64_t{1}, DType::Int64), Shape{rows, 1});
}

// Trilu: x where the (row, column) mask of the last two dims keeps it, else 0.
Out trilu(const NodeImport& n) {
  int r = known_rank(n, 0);
  if (r < 2 || n.in(0).shape()[r - 2] < 0 || n.in(0).shape()[r - 1] < 0) n.refuse("unknown matrix dims");
  int64_t k = n.has_input(1) ? n.int_in(1, "k") : 0, rows = n.in(0).shape()[r - 2],
          cols = n.in(0).shape()[r - 1];
  Tensor offsets = diagonal_offsets(rows, cols), diagonal = constant(k, DType::Int64);
  Tensor mask = n.attr_int("upper", 1) != 0 ? offsets >= diagonal : offsets <= diagonal;
  return {where(mask, n.in(0), zeros_like(n.in(0)))};
}

// The input's mean over `axes` (kept), the input less it, and
// 1 / sqrt(variance + the node's epsilon): Layer- and InstanceNormalization's.
struct Moments {
  Tensor mean, centred, inv_std;
};
Moments moments(const NodeImport& n, const std::vector<int64_t>& axes) {
  const Tensor& x = n.in(0);
  Tensor mu = mean(x, Axes(axes), true);
  Tensor centred = x - mu;
  Tensor var = mean(centred * centred, Axes(axes), true);
  return {mu, centred, rsqrt(var + scalar_of(n.attr_float("epsilon", 1e-5f), x.dtype()))};
}

Out layer_normalization(const NodeImport& n) {
  int r = known_rank(n, 0);
  int64_t axis = n.attr_int("axis", -1);
  std::vector<int64_t> axes;
  for (int64_t d = axis < 0 ? axis + r : axis; d < r; ++d) axes.push_back(d);
  Moments m = moments(n, axes);
  Tensor y = m.centred * m.inv_std * n.in(1);
  if (n.has_input(2)) y = y + n.in(2);
  return {y, m.mean, m.inv_std};
}

Out range_(const NodeImport& n) {
  DType dtype = n.constant_in(0).dtype();
  auto scalar = [&](int i) -> Scalar {
    const Tensor& t = n.constant_in(i);
    if (t.size() != 1 || t.dtype() != dtype) n.fail("start, limit and delta must be scalars of one type");
    switch (dtype) {
      case DType::Float32: return Scalar(t.to_vector<float>()[0]);
      case DType::Float64: return Scalar(t.to_vector<double>()[0]);
      case DType::Int32: return Scalar(t.to_vector<int32_t>()[0]);
      case DType::Int64: return Scalar(t.to_vector<int64_t>()[0]);
      default: n.refuse(fmt::format("a {} range", dtype_name(dtype)));
    }
  };
  return {range(scalar(0), scalar(1), scalar(2), dtype)};
}

// NegativeLogLikelihoodLoss of log-probabilities [N, C, d...] and targets
// [N, d...]: -logp[target] * weight[target], an ignored target weighing 0,
// then reduced (none, sum, or mean over the weights).
Tensor nll_loss(const NodeImport& n, const Tensor& logp, const Tensor& target, const Tensor& weight) {
  int r = static_cast<int>(logp.shape().rank());
  if (r < 2 || logp.shape()[1] < 0) n.refuse("log-probabilities without a known class dim");
  int64_t classes = logp.shape()[1];
  Tensor t = target;
  Tensor keep = ones_like(t, DType::Bool);
  if (const pb::AttributeProto* ignore = n.attr("ignore_index")) {
    Tensor ignored = equal(t, scalar_of(static_cast<double>(ignore->i()), t.dtype()));
    keep = logical_not(ignored);
    t = where(ignored, zeros_like(t), t);
  }
  Tensor picked = sum(logp * one_hot(t, classes, 1, 0, 1, logp.dtype()), Axes(int64_t{1}));
  Tensor w = cast(keep, logp.dtype());
  if (weight.defined()) w = w * gather(weight, t);
  Tensor loss = -(picked * w);
  std::string reduction = n.attr_string("reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum(loss);
  if (reduction != "mean") n.fail(fmt::format("reduction '{}'", reduction));
  return sum(loss) / sum(w);
}

Out nll(const NodeImport& n) { return {nll_loss(n, n.in(0), n.in(1), n.has_input(2) ? n.in(2) : Tensor())}; }

Out softmax_cross_entropy(const NodeImport& n) {
  Tensor logp = log_softmax(n.in(0), 1);
  return {nll_loss(n, logp, n.in(1), n.has_input(2) ? n.in(2) : Tensor()), logp};
}

// A per-channel vector [C] shaped to broadcast over an NC... input of `rank`.
Tensor per_channel(const Tensor& v, int rank) {
  Shape s{-1};
  for (int d = 2; d < rank; ++d) s.push_back(1);
  return reshape(v, s);
}

// Inference mode: the running statistics.
Out batch_normalization(const NodeImport& n) {
  if (n.attr_int("training_mode", 0)) n.refuse("training_mode=1");
  const Tensor& x = n.in(0);
  int r = known_rank(n, 0);
  Tensor inv = rsqrt(per_channel(n.in(4), r) + scalar_of(n.attr_float("epsilon", 1e-5f), x.dtype()));
  return {(x - per_channel(n.in(3), r)) * inv * per_channel(n.in(1), r) + per_channel(n.in(2), r)};
}

Out instance_normalization(const NodeImport& n) {
  int r = known_rank(n, 0);
  std::vector<int64_t> spatial;
  for (int d = 2; d < r; ++d) spatial.push_back(d);
  Moments m = moments(n, spatial);
  return {m.centred * m.inv_std * per_channel(n.in(1), r) + per_channel(n.in(2), r)};
}

// ONNX's OneHot: negative indices count from the end; values = [off, on].
Out one_hot_(const NodeImport& n) {
  std::vector<int64_t> depth = n.ints_in(1);
  if (depth.size() != 1 || depth[0] < 1) n.fail("depth must be one positive value");
  const Tensor& values = n.in(2);
  int r = known_rank(n, 0);
  int64_t axis = n.attr_int("axis", -1);
  int64_t a = axis < 0 ? axis + r + 1 : axis;
  if (a < 0 || a > r) n.fail(fmt::format("axis {} is out of range", axis));
  Tensor indices = from_end(cast(n.in(0), DType::Int64), scalar_of(static_cast<double>(depth[0]), DType::Int64));
  Shape range_shape{depth[0]};
  for (int64_t d = a; d < r; ++d) range_shape.push_back(1);
  Tensor hit = equal(expand_dims(indices, a), reshape(range(int64_t{0}, depth[0], int64_t{1}, DType::Int64), range_shape));
  return {where(hit, reshape(slice(values, {1}, {1}), Shape{}), reshape(slice(values, {0}, {1}), Shape{}))};
}

Out is_inf(const NodeImport& n) {
  const Tensor& x = n.in(0);
  Tensor inf = scalar_of(std::numeric_limits<double>::infinity(), x.dtype());
  bool pos = n.attr_int("detect_positive", 1) != 0, neg = n.attr_int("detect_negative", 1) != 0;
  Tensor out = zeros_like(x, DType::Bool);
  if (pos) out = logical_or(out, equal(x, inf));
  if (neg) out = logical_or(out, equal(x, -inf));
  return {out};
}

Out eye_like(const NodeImport& n) {
  const Shape& s = n.in(0).shape();
  if (s.rank() != 2 || !s.is_fully_defined()) n.refuse("a 2-D input of a shape unknown when the graph is built");
  int64_t k = n.attr_int("k", 0);
  DType dtype = n.attr("dtype") ? from_onnx_dtype(static_cast<int>(n.attr_int("dtype", 1)), "EyeLike's dtype") : n.in(0).dtype();
  return {cast(equal(diagonal_offsets(s[0], s[1]), constant(k, DType::Int64)), dtype)};
}

Out tan_(const NodeImport& n) { return {sin(n.in(0)) / cos(n.in(0))}; }
Out det_(const NodeImport& n) { return {matrix_determinant(n.in(0))}; }

// Resize in the forms tf.image.resize has (what Kiln exports): a 4-D image resized in dims 1, 2
// (NHWC) or 2, 3 (NCHW, through transposes); linear with half_pixel (bilinear), nearest with
// tf_half_pixel_for_nn rounded down. Scales are taken only where they make whole sizes, since
// ONNX then maps coordinates by the scale given, Kiln (as TF) by in / out.
Out resize_(const NodeImport& n) {
  const Tensor& x = n.in(0);
  const Shape& s = x.shape();
  if (!s.has_known_rank() || s.rank() != 4) n.refuse("Resize of an input that is not 4-D");
  const std::string mode = n.attr_string("mode", "nearest");
  const std::string transform = n.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = n.attr_string("nearest_mode", "round_prefer_floor");
  if (n.attr_int("antialias", 0) != 0 || n.attr("axes") ||
      n.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    n.refuse("Resize with antialias, axes or a keep_aspect_ratio_policy");
  std::string method;
  if (mode == "linear" && transform == "half_pixel") method = "bilinear";
  else if (mode == "nearest" && transform == "tf_half_pixel_for_nn" && rounding == "floor") method = "nearest";
  else n.refuse(fmt::format("Resize mode {} with coordinate_transformation_mode {} (nearest_mode {})", mode, transform,
                            rounding));
  std::vector<int64_t> out;
  if (n.has_input(3) && n.constant_in(3).size() > 0) {
    out = n.ints_in(3);
  } else if (n.has_input(2)) {
    const Tensor& given = n.constant_in(2);  // float32, as ONNX declares scales
    if (given.dtype() != DType::Float32) n.fail("Resize's scales must be float32");
    std::vector<float> scales = given.to_vector<float>();
    if (scales.size() != 4) n.fail(fmt::format("Resize has {} scales for a 4-D input", scales.size()));
    for (int d = 0; d < 4; ++d) {
      double size = static_cast<double>(s[d]) * scales[static_cast<std::size_t>(d)];
      if (s[d] < 0 || size != std::floor(size)) n.refuse("Resize by scales that do not make whole sizes");
      out.push_back(static_cast<int64_t>(size));
    }
  } else {
    n.fail("Resize needs scales or sizes");
  }
  if (out.size() != 4) n.fail(fmt::format("Resize has {} sizes for a 4-D input", out.size()));
  auto same = [&](int d) { return s[d] >= 0 && out[static_cast<std::size_t>(d)] == s[d]; };
  if (same(0) && same(3)) return {resize_image(x, {out[1], out[2]}, method, false)};
  if (same(0) && same(1)) {
    Tensor nhwc = resize_image(transpose(x, {0, 2, 3, 1}), {out[2], out[3]}, method, false);
    return {transpose(nhwc, {0, 3, 1, 2})};
  }
  n.refuse("Resize of dims other than the two spatial ones");
}
Out sinh_(const NodeImport& n) {
  const Tensor& x = n.in(0);
  return {(exp(x) - exp(-x)) * scalar_of(0.5, x.dtype())};
}
Out cosh_(const NodeImport& n) {
  const Tensor& x = n.in(0);
  return {(exp(x) + exp(-x)) * scalar_of(0.5, x.dtype())};
}

Out softmax_(const NodeImport& n) {
  if (n.opset() < 13) n.refuse("opset < 13's softmax (over flattened dims)");
  return {softmax(n.in(0), n.attr_int("axis", -1))};
}
Out log_softmax_(const NodeImport& n) {
  if (n.opset() < 13) n.refuse("opset < 13's log-softmax (over flattened dims)");
  return {log_softmax(n.in(0), n.attr_int("axis", -1))};
}

Out cumsum_(const NodeImport& n) {
  std::vector<int64_t> axis = n.ints_in(1);
  if (axis.size() != 1) n.fail("axis must hold one value");
  return {cumsum(n.in(0), axis[0], n.attr_int("exclusive", 0) != 0, n.attr_int("reverse", 0) != 0)};
}

Out top_k_(const NodeImport& n) {
  int r = known_rank(n, 0);
  int64_t axis = n.attr_int("axis", -1);
  if (axis != -1 && axis != r - 1) n.refuse("TopK over an axis other than the last");
  if (!n.attr_int("sorted", 1)) n.refuse("unsorted TopK");
  std::vector<int64_t> k = n.ints_in(1);
  if (k.size() != 1) n.fail("K must hold one value");
  if (n.attr_int("largest", 1)) {
    auto [values, indices] = top_k(n.in(0), k[0]);
    return {values, cast(indices, DType::Int64)};
  }
  // The K smallest: the first K of the stable ascending sort (ties in index
  // order, as ONNX's TopK), values and indices sorted alike.
  const int64_t n_last = n.in(0).shape()[r - 1];
  if (k[0] < 0 || (n_last >= 0 && k[0] > n_last))
    n.fail(fmt::format("K = {} is out of range for an axis of {}", k[0], n_last));
  std::vector<int64_t> begin(static_cast<std::size_t>(r), 0), size(static_cast<std::size_t>(r), -1);
  size.back() = k[0];
  return {slice(sort(n.in(0)), begin, size), cast(slice(argsort(n.in(0)), begin, size), DType::Int64)};
}

// ---- MatMul, Gemm, Conv, pools -----------------------------------------------------
Out matmul_(const NodeImport& n) { return {matmul(n.in(0), n.in(1))}; }

Out gemm(const NodeImport& n) {
  Tensor y = matmul(n.in(0), n.in(1), n.attr_int("transA", 0) != 0, n.attr_int("transB", 0) != 0);
  float alpha = n.attr_float("alpha", 1.f), beta = n.attr_float("beta", 1.f);
  if (alpha != 1.f) y = y * scalar_of(alpha, y.dtype());
  if (n.has_input(2)) y = y + (beta == 1.f ? n.in(2) : n.in(2) * scalar_of(beta, y.dtype()));
  return {y};
}

const std::vector<int64_t> kToNhwc{0, 2, 3, 1}, kToNchw{0, 3, 1, 2};

// Kiln's padding for an ONNX window op: "SAME"/"VALID", or explicit pads
// applied before a VALID window (the value `fill` pads with).
std::string window_padding(const NodeImport& n, Tensor& nhwc, double fill) {
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER") return "SAME";
  if (auto_pad == "VALID") return "VALID";
  if (auto_pad != "NOTSET") n.refuse(fmt::format("auto_pad {}", auto_pad));
  std::vector<int64_t> pads = n.attr_ints("pads", {0, 0, 0, 0});
  if (pads.size() != 4) n.fail(fmt::format("{} pads for 2 spatial dims", pads.size()));
  bool any = false;
  for (int64_t p : pads) {
    if (p < 0) n.fail("a pad is negative");
    any |= p != 0;
  }
  if (any) {
    std::vector<std::pair<int64_t, int64_t>> p{{0, 0}, {pads[0], pads[2]}, {pads[1], pads[3]}, {0, 0}};
    nhwc = is_floating(nhwc.dtype()) ? pad(nhwc, p, fill) : pad(nhwc, p, static_cast<int64_t>(fill));
  }
  return "VALID";
}

void check_2d(const NodeImport& n) {
  if (known_rank(n, 0) != 4) n.refuse("only 2-D windows (4-D inputs) are supported");
}

Out conv(const NodeImport& n) {
  check_2d(n);
  // Grouped weights [O, C / group, KH, KW] as HWIO make conv2d's grouped
  // filters (the group count follows from the channels), depthwise too.
  const int64_t group = n.attr_int("group", 1), channels = n.in(0).shape()[1];
  const Shape& ws = n.in(1).shape();
  if (group < 1 || (channels >= 0 && ws.has_known_rank() && ws.rank() == 4 && ws[1] >= 0 && ws[1] * group != channels))
    n.fail(fmt::format("group {} does not divide the input's {} channels into the weights' {} (weights shape {})", group,
                       channels, ws.has_known_rank() && ws.rank() == 4 ? ws[1] : -1, ws.to_string()));
  Tensor w = transpose(n.in(1), {2, 3, 1, 0});  // OIHW -> HWIO
  Tensor x = transpose(n.in(0), kToNhwc);
  std::string padding = window_padding(n, x, 0.0);
  Tensor y = conv2d(x, w, n.attr_ints("strides", {1, 1}), padding, n.attr_ints("dilations", {1, 1}));
  if (n.has_input(2)) y = bias_add(y, n.in(2));
  return {transpose(y, kToNchw)};
}

template <bool kMax> Out pool(const NodeImport& n) {
  check_2d(n);
  if (!is_floating(n.in(0).dtype())) n.refuse(fmt::format("{} input (Kiln's pools take floats)", dtype_name(n.in(0).dtype())));
  if (n.attr_int("ceil_mode", 0)) n.refuse("ceil_mode=1");
  if (n.node().output_size() > 1) n.refuse("MaxPool's indices output");
  if (n.attr_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) n.refuse("dilated pooling");
  Tensor x = transpose(n.in(0), kToNhwc);
  std::vector<int64_t> pads = n.attr_ints("pads", {0, 0, 0, 0});
  bool explicit_pads = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (!kMax && explicit_pads && !n.attr_int("count_include_pad", 0))
    n.refuse("explicit pads excluded from the average");
  if (!kMax && n.attr_string("auto_pad", "NOTSET") == "SAME_UPPER" && n.attr_int("count_include_pad", 0))
    n.refuse("SAME padding counted in the average");
  // Max pools pad with -inf (the input is floating-point, checked above).
  std::string padding = window_padding(n, x, kMax ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<int64_t> k = n.attr_ints("kernel_shape");
  if (k.size() != 2) n.fail("kernel_shape must have 2 values");
  Tensor y = kMax ? max_pool2d(x, k, n.attr_ints("strides", {1, 1}), padding)
                  : avg_pool2d(x, k, n.attr_ints("strides", {1, 1}), padding);
  return {transpose(y, kToNchw)};
}

template <bool kMax> Out global_pool(const NodeImport& n) {
  int r = known_rank(n, 0);
  std::vector<int64_t> axes;
  for (int d = 2; d < r; ++d) axes.push_back(d);
  return {kMax ? max(n.in(0), Axes(axes), true) : mean(n.in(0), Axes(axes), true)};
}

}  // namespace

ImportFn import_fn(const std::string& op_type) {
  static const std::unordered_map<std::string, ImportFn> table = {
      {"Abs", unary<abs>}, {"Neg", unary<negative>}, {"Sign", unary<sign>}, {"Floor", unary<floor>},
      {"Ceil", unary<ceil>}, {"Round", unary<rint>}, {"Relu", unary<relu>}, {"Sqrt", unary<sqrt>},
      {"Exp", unary<exp>}, {"Log", unary<log>}, {"Tanh", unary<tanh>}, {"Sigmoid", unary<sigmoid>},
      {"Sin", unary<sin>}, {"Cos", unary<cos>}, {"Erf", unary<erf>}, {"Softplus", unary<softplus>},
      {"Softsign", unary<softsign>}, {"Not", not_}, {"Identity", identity}, {"Reciprocal", reciprocal},
      {"Elu", elu_}, {"Selu", selu_}, {"LeakyRelu", leaky_relu_}, {"HardSigmoid", hard_sigmoid},
      {"Add", binary<add>}, {"Sub", binary<subtract>}, {"Mul", binary<multiply>}, {"Div", div_},
      {"Pow", pow_}, {"Mod", mod_}, {"Max", variadic<maximum>}, {"Min", variadic<minimum>},
      {"Sum", variadic<add>}, {"Mean", mean_of}, {"Equal", binary<equal>}, {"Less", binary<less>},
      {"LessOrEqual", binary<less_equal>}, {"Greater", binary<greater>}, {"GreaterOrEqual", binary<greater_equal>},
      {"And", binary<logical_and>}, {"Or", binary<logical_or>}, {"Xor", xor_}, {"BitShift", bit_shift}, {"Where", where_},
      {"Cast", cast_}, {"Clip", clip_}, {"Constant", constant_}, {"ConstantOfShape", constant_of_shape},
      {"Reshape", reshape_}, {"Flatten", flatten_}, {"Transpose", transpose_}, {"Squeeze", squeeze_},
      {"Unsqueeze", unsqueeze_}, {"Shape", shape_}, {"Concat", concat_}, {"Gather", gather_}, {"GatherElements", gather_elements}, {"GatherND", gather_nd_}, {"ScatterND", scatter_nd_}, {"Tile", tile_},
      {"Expand", expand_}, {"Pad", pad_}, {"Slice", slice_}, {"Split", split_},
      {"ReduceSum", reduce_<sum>}, {"ReduceMean", reduce_<mean>}, {"ReduceProd", reduce_<prod>},
      {"ReduceMax", reduce_<max>}, {"ReduceMin", reduce_<min>}, {"ArgMax", arg_<true>}, {"ArgMin", arg_<false>},
      {"Softmax", softmax_}, {"LogSoftmax", log_softmax_}, {"CumSum", cumsum_}, {"TopK", top_k_},
      {"MatMul", matmul_}, {"Gemm", gemm}, {"Conv", conv}, {"MaxPool", pool<true>}, {"AveragePool", pool<false>},
      {"GlobalAveragePool", global_pool<false>}, {"GlobalMaxPool", global_pool<true>},
      {"ReduceSumSquare", reduce_sum_square}, {"ReduceL1", reduce_l1}, {"ReduceL2", reduce_l2},
      {"ReduceLogSum", reduce_log_sum}, {"ReduceLogSumExp", reduce_log_sum_exp}, {"IsNaN", is_nan},
      {"Size", size_}, {"Dropout", dropout}, {"Hardmax", hardmax}, {"Trilu", trilu},
      {"LayerNormalization", layer_normalization}, {"Range", range_}, {"NegativeLogLikelihoodLoss", nll},
      {"SoftmaxCrossEntropyLoss", softmax_cross_entropy}, {"BatchNormalization", batch_normalization},
      {"InstanceNormalization", instance_normalization}, {"OneHot", one_hot_}, {"IsInf", is_inf},
      {"EyeLike", eye_like}, {"Tan", tan_}, {"Det", det_}, {"Resize", resize_}, {"Sinh", sinh_}, {"Cosh", cosh_}, {"CastLike", cast_like}, {"PRelu", prelu}, {"ThresholdedRelu", thresholded_relu},
  };
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace kiln::onnx
