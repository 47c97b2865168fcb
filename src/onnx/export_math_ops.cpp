// Elementwise, comparison, reduction, cast and scan ops -> ONNX.
#include <fmt/format.h>

#include "kiln/onnx.h"
#include "onnx/export_ops.h"
#include "runtime/dispatch.h"

namespace kiln::onnx {

void export_as(const NodeExport& x, std::string_view op_type) {
  std::vector<std::string> inputs;
  for (int i = 0; i < x.num_inputs(); ++i) inputs.push_back(x.in(i));
  x.e.add_node(op_type, std::move(inputs), {x.out()});
}

std::string cast_to(GraphEmitter& e, const std::string& name, DType from, DType dtype) {
  if (from == dtype) return name;
  std::string out = e.names().fresh(name + "_cast");
  set_attr(e.add_node("Cast", {name}, {out}), "to", int64_t{to_onnx_dtype(dtype, "a cast's result")});
  return out;
}

namespace {

// Ops whose ONNX twin has the same inputs and meaning.
template <const char* kOnnx> void same(const NodeExport& x) { export_as(x, kOnnx); }

#define KILN_ONNX_NAME(NAME) constexpr char k##NAME[] = #NAME;
KILN_ONNX_NAME(Neg) KILN_ONNX_NAME(Abs) KILN_ONNX_NAME(Sign) KILN_ONNX_NAME(Floor) KILN_ONNX_NAME(Ceil)
KILN_ONNX_NAME(Round) KILN_ONNX_NAME(Relu) KILN_ONNX_NAME(Sqrt) KILN_ONNX_NAME(Exp) KILN_ONNX_NAME(Log)
KILN_ONNX_NAME(Tanh) KILN_ONNX_NAME(Sigmoid) KILN_ONNX_NAME(Sin) KILN_ONNX_NAME(Cos) KILN_ONNX_NAME(Erf)
KILN_ONNX_NAME(Softplus) KILN_ONNX_NAME(Softsign) KILN_ONNX_NAME(Elu) KILN_ONNX_NAME(Not)
KILN_ONNX_NAME(Identity) KILN_ONNX_NAME(Add) KILN_ONNX_NAME(Sub) KILN_ONNX_NAME(Mul) KILN_ONNX_NAME(Div)
KILN_ONNX_NAME(Pow) KILN_ONNX_NAME(Max) KILN_ONNX_NAME(Min) KILN_ONNX_NAME(Equal) KILN_ONNX_NAME(Less)
KILN_ONNX_NAME(LessOrEqual) KILN_ONNX_NAME(Greater) KILN_ONNX_NAME(GreaterOrEqual) KILN_ONNX_NAME(And)
KILN_ONNX_NAME(Or) KILN_ONNX_NAME(Where)
#undef KILN_ONNX_NAME

// Kiln rounds integers to themselves; ONNX's rounding ops take floats only.
template <const char* kOnnx> void rounding(const NodeExport& x) {
  export_as(x, is_floating(x.in_type(0).dtype) ? std::string_view(kOnnx) : std::string_view("Identity"));
}

void square(const NodeExport& x) { x.e.add_node("Mul", {x.in(0), x.in(0)}, {x.out()}); }

void rsqrt(const NodeExport& x) { x.e.add_node("Reciprocal", {x.e.add("Sqrt", {x.in(0)})}, {x.out()}); }

Tensor scalar_like(double value, DType dtype) { return cast(constant(value), dtype); }

void log1p(const NodeExport& x) {
  std::string one = x.e.constant(scalar_like(1.0, x.in_type(0).dtype), "one");
  x.e.add_node("Log", {x.e.add("Add", {x.in(0), one})}, {x.out()});
}

// ONNX's Selu holds alpha and gamma as float attributes, so for float64 it
// would compute with Klambauer et al.'s constants rounded to float (3e-9
// relative off Kiln's): float64 is composed with the double constants,
// x > 0 ? scale * x : scale * alpha * (e^x - 1), as Kiln's kernel.
void selu(const NodeExport& x) {
  const DType d = x.in_type(0).dtype;
  if (d != DType::Float64) return export_as(x, "Selu");
  constexpr double kScale = 1.0507009873554804934193349852946, kAlpha = 1.6732632423543772848170429916717;
  GraphEmitter& e = x.e;
  std::string em1 = e.add("Sub", {e.add("Exp", {x.in(0)}), e.constant(scalar_like(1.0, d), "one")});
  std::string below = e.add("Mul", {e.constant(scalar_like(kScale * kAlpha, d), "scale_alpha"), em1});
  std::string above = e.add("Mul", {e.constant(scalar_like(kScale, d), "scale"), x.in(0)});
  std::string positive = e.add("Greater", {x.in(0), e.constant(scalar_like(0.0, d), "zero")});
  e.add_node("Where", {positive, above, below}, {x.out()});
}

void not_equal(const NodeExport& x) { x.e.add_node("Not", {x.e.add("Equal", {x.in(0), x.in(1)})}, {x.out()}); }

void squared_difference(const NodeExport& x) {
  std::string d = x.e.add("Sub", {x.in(0), x.in(1)});
  x.e.add_node("Mul", {d, d}, {x.out()});
}

void mod(const NodeExport& x, bool fmod, const std::string& out) {
  set_attr(x.e.add_node("Mod", {x.in(0), x.in(1)}, {out}), "fmod", int64_t{fmod});
}

// TF's floormod of floats: fmod, moved by the divisor when the signs differ
// (ONNX's Mod takes fmod=0 for integers only).
std::string float_floor_mod(const NodeExport& x) {
  GraphEmitter& e = x.e;
  std::string m = e.names().fresh("fmod");
  mod(x, true, m);
  std::string zero = e.constant(scalar_like(0.0, x.in_type(0).dtype), "zero");
  std::string nonzero = e.add("Not", {e.add("Equal", {m, zero})});
  std::string signs_differ = e.add("Xor", {e.add("Less", {x.in(1), zero}), e.add("Less", {m, zero})});
  return e.add("Where", {e.add("And", {nonzero, signs_differ}), e.add("Add", {m, x.in(1)}), m});
}

void floor_mod(const NodeExport& x) {
  if (is_floating(x.in_type(0).dtype)) {
    x.e.add_node("Identity", {float_floor_mod(x)}, {x.out()});
  } else {
    mod(x, false, x.out());  // ONNX's integer Mod takes the divisor's sign, as floormod
  }
}

void floor_div(const NodeExport& x) {
  if (is_floating(x.in_type(0).dtype)) {
    x.e.add_node("Floor", {x.e.add("Div", {x.in(0), x.in(1)})}, {x.out()});
    return;
  }
  // (a - floormod(a, b)) / b divides exactly, so truncation is floor.
  std::string m = x.e.names().fresh("floormod");
  mod(x, false, m);
  x.e.add_node("Div", {x.e.add("Sub", {x.in(0), m}), x.in(1)}, {x.out()});
}

void truncate_mod(const NodeExport& x) { mod(x, true, x.out()); }

void clip(const NodeExport& x) {
  x.e.add_node("Min", {x.e.add("Max", {x.in(0), x.in(1)}), x.in(2)}, {x.out()});
}

// ONNX's Cast converts between real types only (its type lists have no complex).
void cast(const NodeExport& x) {
  if (is_complex(x.in_type(0).dtype) || is_complex(x.out_type().dtype))
    x.refuse(fmt::format("ONNX's Cast has no complex types ({} to {})", dtype_name(x.in_type(0).dtype),
                         dtype_name(x.out_type().dtype)));
  set_attr(x.e.add_node("Cast", {x.in(0)}, {x.out()}), "to",
           int64_t{to_onnx_dtype(x.out_type().dtype, "the cast's result")});
}

// ---- Reductions --------------------------------------------------------------
// ReduceSum takes its axes as an input from opset 13, the others as an attr
// until opset 18.
void reduce(const NodeExport& x, std::string_view op_type, const std::string& input, const std::string& out) {
  const schema::Attrs& a = x.attrs();
  bool all = a.get_or<bool>("reduce_all", false);
  std::vector<int64_t> axes = all ? std::vector<int64_t>{} : a.get_ints("axes");
  if (!all && axes.empty()) {  // over no axes: the input itself
    x.e.add_node("Identity", {input}, {out});
    return;
  }
  std::vector<std::string> inputs{input};
  bool axes_input = op_type == "ReduceSum";
  if (axes_input && !all) inputs.push_back(x.e.ints(axes, "axes"));
  pb::NodeProto& n = x.e.add_node(op_type, std::move(inputs), {out});
  set_attr(n, "keepdims", int64_t{a.get_or<bool>("keepdims", false)});
  if (!axes_input && !all) set_attr(n, "axes", axes);
}

template <const char* kOnnx> void reduction(const NodeExport& x) { reduce(x, kOnnx, x.in(0), x.out()); }

constexpr char kReduceSum[] = "ReduceSum";
constexpr char kReduceMean[] = "ReduceMean";
constexpr char kReduceProd[] = "ReduceProd";
constexpr char kReduceMax[] = "ReduceMax";
constexpr char kReduceMin[] = "ReduceMin";

// Any/All: max/min of the bools as uint8 (ONNX reduces no bools).
template <const char* kOnnx> void bool_reduction(const NodeExport& x) {
  std::string bytes = cast_to(x.e, x.in(0), DType::Bool, DType::UInt8);
  std::string r = x.e.names().fresh("reduced");
  reduce(x, kOnnx, bytes, r);
  set_attr(x.e.add_node("Cast", {r}, {x.out()}), "to", int64_t{pb::TensorProto::BOOL});
}

template <const char* kOnnx> void arg_reduction(const NodeExport& x) {
  std::string r = x.e.names().fresh("arg");
  pb::NodeProto& n = x.e.add_node(kOnnx, {x.in(0)}, {r});
  set_attr(n, "axis", x.attrs().get_int("axis"));
  set_attr(n, "keepdims", int64_t{0});
  x.e.add_node("Identity", {cast_to(x.e, r, DType::Int64, x.out_type().dtype)}, {x.out()});
}
constexpr char kArgMax[] = "ArgMax";
constexpr char kArgMin[] = "ArgMin";

void cumsum(const NodeExport& x) {
  pb::NodeProto& n = x.e.add_node("CumSum", {x.in(0), x.e.ints({x.attrs().get_int("axis")}, "axis")}, {x.out()});
  // ONNX wants the axis as a scalar or a 1-element tensor: the 1-element form.
  set_attr(n, "exclusive", int64_t{x.attrs().get_bool("exclusive")});
  set_attr(n, "reverse", int64_t{x.attrs().get_bool("reverse")});
}

// ONNX's Det (opset 11) takes float types only.
void determinant(const NodeExport& x) {
  if (is_complex(x.in_type(0).dtype)) x.refuse("ONNX's Det takes no complex matrices");
  export_as(x, "Det");
}

void top_k(const NodeExport& x) {
  std::string indices = x.e.names().fresh("indices");
  pb::NodeProto& n = x.e.add_node("TopK", {x.in(0), x.e.ints({x.attrs().get_int("k")}, "k")}, {x.out(0), indices});
  set_attr(n, "axis", int64_t{-1});
  set_attr(n, "largest", int64_t{!x.attrs().get_or<bool>("ascending", false)});
  set_attr(n, "sorted", int64_t{1});
  x.e.add_node("Identity", {cast_to(x.e, indices, DType::Int64, x.out_type(1).dtype)}, {x.out(1)});
}

// ONNX's BitShift takes unsigned integers only and leaves a count of the
// width or more undefined: the count goes through Min(count, width - 1) first,
// as Kiln's kernel clamps it (an unsigned count is never below 0). Signed
// shifts are refused.
constexpr char kLeft[] = "LEFT";
constexpr char kRight[] = "RIGHT";
template <const char* kDirection> void bit_shift(const NodeExport& x) {
  const DType d = x.in_type(0).dtype;
  if (!is_unsigned(d))
    x.refuse(fmt::format("ONNX's BitShift takes unsigned integers only, not {}", dtype_name(d)));
  std::string most = x.e.constant(scalar_like(static_cast<double>(dtype_size(d) * 8 - 1), d), "most");
  pb::NodeProto& n = x.e.add_node("BitShift", {x.in(0), x.e.add("Min", {x.in(1), most})}, {x.out()});
  set_attr(n, "direction", std::string(kDirection));
}

// BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot came in opset 18.
template <const char* kOnnx> void needs_opset_18(const NodeExport& x) {
  x.refuse(fmt::format("ONNX's {} needs opset 18; Kiln exports opset {}", kOnnx, kOpsetVersion));
}
constexpr char kBitwiseAnd[] = "BitwiseAnd";
constexpr char kBitwiseOr[] = "BitwiseOr";
constexpr char kBitwiseXor[] = "BitwiseXor";
constexpr char kBitwiseNot[] = "BitwiseNot";

}  // namespace

void add_math_exports(ExportTable& t) {
  t["Neg"] = same<kNeg>, t["Abs"] = same<kAbs>, t["Sign"] = same<kSign>, t["Floor"] = rounding<kFloor>;
  t["Ceil"] = rounding<kCeil>, t["Round"] = rounding<kRound>, t["Rint"] = rounding<kRound>, t["Relu"] = same<kRelu>;
  t["Sqrt"] = same<kSqrt>, t["Exp"] = same<kExp>, t["Log"] = same<kLog>, t["Tanh"] = same<kTanh>;
  t["Sigmoid"] = same<kSigmoid>, t["Sin"] = same<kSin>, t["Cos"] = same<kCos>, t["Erf"] = same<kErf>;
  t["Softplus"] = same<kSoftplus>, t["Softsign"] = same<kSoftsign>, t["Elu"] = same<kElu>;
  t["Selu"] = selu, t["LogicalNot"] = same<kNot>, t["StopGradient"] = same<kIdentity>;
  t["Square"] = square, t["Rsqrt"] = rsqrt, t["Log1p"] = log1p;
  t["Add"] = same<kAdd>, t["Sub"] = same<kSub>, t["Mul"] = same<kMul>, t["RealDiv"] = same<kDiv>;
  t["Pow"] = same<kPow>, t["Maximum"] = same<kMax>, t["Minimum"] = same<kMin>;
  t["Equal"] = same<kEqual>, t["NotEqual"] = not_equal, t["Less"] = same<kLess>;
  t["LessEqual"] = same<kLessOrEqual>, t["Greater"] = same<kGreater>, t["GreaterEqual"] = same<kGreaterOrEqual>;
  t["LogicalAnd"] = same<kAnd>, t["LogicalOr"] = same<kOr>, t["Select"] = same<kWhere>;
  t["SquaredDifference"] = squared_difference, t["FloorDiv"] = floor_div, t["FloorMod"] = floor_mod;
  t["TruncateDiv"] = same<kDiv>, t["TruncateMod"] = truncate_mod, t["ClipByValue"] = clip;
  t["Cast"] = cast;
  t["Sum"] = reduction<kReduceSum>, t["Mean"] = reduction<kReduceMean>, t["Prod"] = reduction<kReduceProd>;
  t["Max"] = reduction<kReduceMax>, t["Min"] = reduction<kReduceMin>;
  t["Any"] = bool_reduction<kReduceMax>, t["All"] = bool_reduction<kReduceMin>;
  t["ArgMax"] = arg_reduction<kArgMax>, t["ArgMin"] = arg_reduction<kArgMin>;
  t["Cumsum"] = cumsum, t["TopKV2"] = top_k, t["MatrixDeterminant"] = determinant;
  t["LeftShift"] = bit_shift<kLeft>, t["RightShift"] = bit_shift<kRight>;
  t["BitwiseAnd"] = needs_opset_18<kBitwiseAnd>, t["BitwiseOr"] = needs_opset_18<kBitwiseOr>;
  t["BitwiseXor"] = needs_opset_18<kBitwiseXor>, t["Invert"] = needs_opset_18<kBitwiseNot>;
}

}  // namespace kiln::onnx
