// Ops that make tensors: Const, Fill, FillLike, Range, Cast.
#include <cmath>
#include <cstring>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/array_util.h"
#include "ops/cast_loops.h"
#include "ops/creation.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"

namespace kiln {
namespace ops {

namespace {

// ---- Const: a value baked into the graph --------------------------------
void const_infer(schema::InferContext& c) {
  const Tensor& v = c.attrs().get<Tensor>("value");
  c.add_output(v.dtype(), v.shape());
}
void const_kernel(schema::KernelContext& c) { c.outputs[0] = c.attrs.get<Tensor>("value"); }

std::vector<schema::OpSample> const_samples() {
  return {{{}, schema::Attrs{{"value", make_scalar(Scalar(3.5f), DType::Float32)}}}};
}

constexpr detail::OpDef kConst{.name = "Const", .infer = const_infer, .kernel = const_kernel,
                               .flags = schema::kSetsOwnOutputs | schema::kNotDifferentiable | schema::kShapeFromShapes,
                               .samples = const_samples};

// Writes `value` (a one-element tensor of out's dtype) into every element.
void fill_with(const Tensor& value, Tensor& out) {
  int64_t n = out.size();
  visit_element(out.dtype(), [&]<class T>() {  // any dtype: fill copies bytes
    T v = core::data_of<T>(value)[0];
    T* o = core::data_of<T>(out);
    core::parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = v;
    });
  });
}

// ---- Placeholder: a graph parameter, fed at each call -----------------
void placeholder_infer(schema::InferContext& c) {
  c.add_output(c.attrs().get_dtype("dtype"), c.attrs().get_shape("shape"));
}
// Graphs never run their placeholders: the executor feeds them.
void placeholder_kernel(schema::KernelContext&) {}

std::vector<schema::OpSample> placeholder_samples() {
  return {{{}, schema::Attrs{{"dtype", DType::Float32}, {"shape", Shape{None, 3}}}}};
}

constexpr detail::OpDef kPlaceholder{.name = "Placeholder", .infer = placeholder_infer, .kernel = placeholder_kernel,
                                     .flags = schema::kGraphOnly | schema::kNotDifferentiable,
                                     .samples = placeholder_samples};

// ---- Fill: a shape filled with one value --------------------------------
void fill_infer(schema::InferContext& c) {
  const Shape& shape = c.attrs().get_shape("shape");
  if (!shape.is_fully_defined())
    c.fail("the shape {} must be fully defined", shape.to_string());
  c.add_output(c.attrs().get<Tensor>("value").dtype(), shape);
}
void fill_kernel(schema::KernelContext& c) { fill_with(c.attrs.get<Tensor>("value"), c.outputs[0]); }

std::vector<schema::OpSample> fill_samples() {
  return {{{}, schema::Attrs{{"shape", Shape{2, 3}}, {"value", make_scalar(Scalar(7), DType::Int32)}}}};
}

constexpr detail::OpDef kFill{.name = "Fill", .infer = fill_infer, .kernel = fill_kernel,
                              .flags = schema::kNotDifferentiable, .samples = fill_samples};

// ---- FillLike: x's shape filled with one value (zeros_like, ones_like) ---
void fill_like_infer(schema::InferContext& c) {
  c.add_output(c.attrs().get<Tensor>("value").dtype(), c.shape(0));
}
void fill_like_kernel(schema::KernelContext& c) { fill_with(c.attrs.get<Tensor>("value"), c.outputs[0]); }

std::vector<schema::OpSample> fill_like_samples() {
  return {{{make_scalar(Scalar(1.0f), DType::Float32)},
           schema::Attrs{{"value", make_scalar(Scalar(0), DType::Int64)}}}};
}

constexpr detail::OpDef kFillLike{.name = "FillLike", .infer = fill_like_infer,
                                  .kernel = fill_like_kernel, .flags = schema::kNotDifferentiable,
                                  .samples = fill_like_samples};

// ---- Range ----------------------------------------------------------------
// The number of elements, as TF counts them; sizes no int64 (for floats) or
// tensor (past Shape::kMaxElements) can hold are InvalidArgument, never a
// cast out of range.
int64_t range_length(const schema::InferContext& c, DType dtype) {
  const schema::Attrs& a = c.attrs();
  if (is_floating(dtype)) {
    double start = a.get_float("start"), limit = a.get_float("limit"), delta = a.get_float("delta");
    double n = std::ceil((limit - start) / delta);
    if (std::isnan(n))
      c.fail("the range from {} to {} by {} has no size (NaN or infinities)", start, limit, delta);
    if (n <= 0) return 0;
    // 2^63 is exact as a double; n is an integer, so n < 2^63 fits int64.
    if (n >= 9223372036854775808.0)
      c.fail("the range from {} to {} by {} has {} elements, more than int64 counts", start, limit, delta, n);
    return static_cast<int64_t>(n);
  }
  int64_t start = a.get_int("start"), limit = a.get_int("limit"), delta = a.get_int("delta");
  if ((delta > 0 && limit <= start) || (delta < 0 && limit >= start)) return 0;
  // Unsigned: limit - start may not fit int64 (from -2^63 to 2^63 - 1).
  uint64_t span = delta > 0 ? uint64_t(limit) - uint64_t(start) : uint64_t(start) - uint64_t(limit);
  uint64_t step = delta > 0 ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
  uint64_t n = span / step + (span % step != 0);
  if (n > uint64_t(Shape::kMaxElements))
    c.fail("the range from {} to {} by {} has {} elements, more than a tensor may have (2^48 = {})", start, limit,
           delta, n, Shape::kMaxElements);
  return static_cast<int64_t>(n);
}

void range_infer(schema::InferContext& c) {
  DType dtype = c.attrs().get_dtype("dtype");
  if (!is_numeric(dtype) || !is_core_dtype(dtype))
    c.fail("dtype must be float32, float64, int32 or int64, got {}", dtype_name(dtype));
  bool zero = is_floating(dtype) ? c.attrs().get_float("delta") == 0 : c.attrs().get_int("delta") == 0;
  if (zero) c.fail("delta must not be zero");
  c.add_output(dtype, Shape{range_length(c, dtype)});
}
void range_kernel(schema::KernelContext& c) {
  Tensor& out = c.outputs[0];
  int64_t n = out.size();
  core::visit_numeric(out.dtype(), [&]<class T>() {
    T* o = core::data_of<T>(out);
    if constexpr (std::is_floating_point_v<T>) {
      double start = c.attrs.get_float("start"), delta = c.attrs.get_float("delta");
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<double>(i) * delta);
    } else {
      // In uint64: i * delta may pass int64's range on the way (the result,
      // between start and limit, does not).
      uint64_t start = uint64_t(c.attrs.get_int("start")), delta = uint64_t(c.attrs.get_int("delta"));
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(static_cast<int64_t>(start + uint64_t(i) * delta));
    }
  });
}

std::vector<schema::OpSample> range_samples() {
  return {{{}, schema::Attrs{{"start", int64_t(1)}, {"limit", int64_t(10)}, {"delta", int64_t(3)},
                             {"dtype", DType::Int32}}},
          {{}, schema::Attrs{{"start", 0.0}, {"limit", 1.0}, {"delta", 0.25}, {"dtype", DType::Float32}}}};
}

constexpr detail::OpDef kRange{.name = "Range", .infer = range_infer, .kernel = range_kernel,
                               .flags = schema::kNotDifferentiable, .samples = range_samples};

// ---- Cast -----------------------------------------------------------------
void cast_infer(schema::InferContext& c) {
  DType from = c.dtype(0), to = c.attrs().get_dtype("dtype");
  if ((from == DType::String) != (to == DType::String))
    c.fail("cannot cast {} to {}", dtype_name(from), dtype_name(to));
  c.add_output(to, c.shape(0));
}

void cast_values(const Tensor& in, Tensor& out) {
  int64_t n = in.size();
  if (in.dtype() == DType::String) {
    const auto* s = core::data_of<std::string>(in);
    auto* o = core::data_of<std::string>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = s[i];
    return;
  }
  core::visit_all_numeric(in.dtype(), [&]<class From>() {
    core::visit_all_numeric(out.dtype(), [&]<class To>() {
      const From* s = core::data_of<From>(in);
      To* o = core::data_of<To>(out);
      core::parallel_for(n, [&](int64_t b, int64_t e) {
        cast_range<To, From>(s + b, o + b, e - b);
      });
    });
  });
}
void cast_kernel(schema::KernelContext& c) { cast_values(c.inputs[0], c.outputs[0]); }

std::vector<schema::OpSample> cast_samples() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor special = constant({nan, inf, -inf, 3e9, -3e9, 1e19, 300.7, -1.5, -0.0, 2147483647.9});
  return {{{constant({1.5f, -2.7f, 0.0f})}, schema::Attrs{{"dtype", DType::Int32}}},
          {{constant({0, 3})}, schema::Attrs{{"dtype", DType::Bool}}},
          {{special}, schema::Attrs{{"dtype", DType::Int32}}, true},
          {{special}, schema::Attrs{{"dtype", DType::Int64}}, true},
          {{special}, schema::Attrs{{"dtype", DType::UInt8}}, true},
          {{cast(special, DType::Float32)}, schema::Attrs{{"dtype", DType::Int32}}, true},
          // the dtypes beyond the core ones, each way
          {{special}, schema::Attrs{{"dtype", DType::Float16}}, true},
          {{special}, schema::Attrs{{"dtype", DType::BFloat16}}, true},
          {{special}, schema::Attrs{{"dtype", DType::Int8}}, true},
          {{special}, schema::Attrs{{"dtype", DType::UInt16}}, true},
          {{special}, schema::Attrs{{"dtype", DType::UInt32}}, true},
          {{special}, schema::Attrs{{"dtype", DType::UInt64}}, true},
          {{special}, schema::Attrs{{"dtype", DType::Complex64}}, true},
          {{cast(special, DType::Float16)}, schema::Attrs{{"dtype", DType::Int16}}, true},
          {{cast(special, DType::Complex128)}, schema::Attrs{{"dtype", DType::Float32}}, true},
          // (rounding to float16 leaves finite differences nothing to see: parity only)
          {{constant({-1.5f, 0.25f})}, schema::Attrs{{"dtype", DType::Float16}}, true}};
}

// Only between float and complex types: an integer result carries no
// gradient. A complex gradient cast back to a real input keeps its real part.
void cast_grad(schema::GradContext& c) {
  auto carries = [](DType d) { return is_floating(d) || is_complex(d); };
  if (carries(c.outputs[0].dtype()) && carries(c.inputs[0].dtype()))
    c.set(0, cast(c.grad(0), c.inputs[0].dtype()));
}

constexpr detail::OpDef kCast{.name = "Cast", .infer = cast_infer, .kernel = cast_kernel,
                              .samples = cast_samples, .gradient = cast_grad};

}  // namespace

void cast_into(const Tensor& in, Tensor& out) { cast_values(in, out); }

schema::ElementwiseLoop cast_loop_for(DType from, DType to) {
  auto numeric = [](DType d) { return d != DType::String && d != DType::Resource; };
  if (!numeric(from) || !numeric(to)) return nullptr;
  return core::visit_all_numeric(from, [&]<class From>() {
    return core::visit_all_numeric(to, [&]<class To>() -> schema::ElementwiseLoop { return cast_loop<To, From>; });
  });
}

namespace {

// Promotion for range's arguments: float64 > float32 > int64 > int32.
DType promote(DType a, DType b) {
  auto rank = [](DType d) {
    switch (d) {
      case DType::Float64: return 4;
      case DType::Float32: return 3;
      case DType::Int64: return 2;
      default: return 1;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

schema::AttrValue range_bound(const Scalar& s, DType dtype, const char* which) {
  if (s.kind() != Scalar::Kind::Int && s.kind() != Scalar::Kind::Float)
    throw InvalidArgument(fmt::format("range: {} must be a number", which));
  if (is_floating(dtype)) return s.as_double();
  if (s.kind() == Scalar::Kind::Float)
    throw InvalidArgument(fmt::format("range: {} is {} but dtype is {}", which, s.as_double(),
                                      dtype_name(dtype)));
  return s.as_int();
}

}  // namespace

void register_creation_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kConst, &kPlaceholder, &kFill, &kFillLike, &kRange, &kCast}) r.add(*op);
}

const detail::OpDef& placeholder_op() { return kPlaceholder; }

Tensor const_op(Tensor value, const SourceLocation& loc) {
  if (!runtime::thread_state.handler) return value;  // eager: the value is the result
  return runtime::dispatch1(kConst, {}, schema::Attrs{{"value", std::move(value)}}, loc);
}

Tensor make_scalar(const Scalar& value, DType dtype) {
  if (dtype == DType::String) {
    Tensor t = core::make_tensor(dtype, Shape{});
    core::data_of<std::string>(t)[0] = value.as_string();
    return t;
  }
  // `x * 2` in a loop makes the same scalar again and again: numeric
  // scalars come from a small per-thread cache, one shared tensor per value.
  // Such an operand never reaches the user as it is: what a creation function
  // or an op hands out is a tensor of its own (docs/design-notes.md, "Tensor
  // identity"). A cached tensor always has another reference, so no op writes
  // over it.
  uint64_t bits = 0;
  if (is_complex(dtype)) {  // 16 bytes do not fit the cache's key
    Tensor t = core::make_tensor(dtype, Shape{});
    core::visit_extended(dtype, [&]<class T>() {
      if constexpr (is_complex_type<T>) core::data_of<T>(t)[0] = T(value.as_double());
    });
    return t;
  }
  core::visit_all_numeric(dtype, [&]<class T>() {
    T v;
    if constexpr (std::is_floating_point_v<T> || is_half_type<T> || is_complex_type<T>)
      v = static_cast<T>(value.as_double());
    else if (value.kind() == Scalar::Kind::Float) v = static_cast<T>(value.as_double());
    else v = static_cast<T>(value.as_int());
    if constexpr (sizeof(T) <= sizeof bits) std::memcpy(&bits, &v, sizeof(T));
  });
  struct Slot {
    DType dtype;
    uint64_t bits;
    Tensor tensor;
  };
  struct Cache {
    Slot slots[64];
    // Making a tensor here first builds the thread's tensor pools, so they
    // are destroyed after this cache at thread exit.
    Cache() { core::make_tensor(DType::Float32, Shape{}); }
  };
  thread_local Cache cache;
  Slot& slot = cache.slots[(bits * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(dtype)) >> 58];
  if (slot.tensor.defined() && slot.dtype == dtype && slot.bits == bits) return slot.tensor;
  Tensor t = core::make_tensor(dtype, Shape{});
  std::memcpy(core::raw_data(t), &bits, dtype_size(dtype));
  slot = Slot{dtype, bits, t};
  return t;
}

Tensor scalar_to_tensor(const Scalar& value, DType dtype, std::string_view op_name,
                        const SourceLocation& loc) {
  runtime::check_representable(value, dtype, op_name);
  return const_op(make_scalar(value, dtype), loc);
}

BinaryInputs binary_inputs(const Operand& a, const Operand& b, std::string_view op_name) {
  if (a.is_tensor() && b.is_tensor()) return {{a.take(), b.take()}};
  if (a.is_tensor()) {
    Tensor ta = a.take();
    DType d = ta.dtype();
    return {{std::move(ta), scalar_to_tensor(b.scalar(), d, op_name, b.location())}};
  }
  if (b.is_tensor()) {
    Tensor tb = b.take();
    DType d = tb.dtype();
    return {{scalar_to_tensor(a.scalar(), d, op_name, a.location()), std::move(tb)}};
  }
  DType d = a.scalar().natural_dtype();
  return {{scalar_to_tensor(a.scalar(), d, op_name, a.location()),
           scalar_to_tensor(b.scalar(), d, op_name, b.location())}};
}

}  // namespace ops

namespace detail {

void check_ragged(std::vector<int64_t>& dims, int depth, int64_t size) {
  if (static_cast<int>(dims.size()) == depth) {
    dims.push_back(size);
    return;
  }
  if (dims[depth] != size)
    throw InvalidArgument(fmt::format(
        "constant: the nested lists are ragged: a list at depth {} has {} elements, an earlier one "
        "had {}",
        depth, size, dims[depth]));
}

Tensor make_constant(DType src, const void* values, int64_t count, const Shape& shape,
                     std::optional<DType> dtype, SourceLocation loc) {
  if (!shape.is_fully_defined())
    throw InvalidArgument(fmt::format("constant: the shape {} must be fully defined", shape.to_string()));
  if (shape.num_elements() != count)
    throw InvalidArgument(fmt::format("constant: {} values cannot fill shape {} ({} elements)", count,
                                      shape.to_string(), shape.num_elements()));
  Tensor t = core::make_tensor(src, shape);
  if (count) std::memcpy(core::raw_data(t), values, static_cast<std::size_t>(count) * dtype_size(src));
  if (dtype && *dtype != src) {
    if (*dtype == DType::String)
      throw InvalidArgument(fmt::format("constant: cannot make a string tensor from {} values",
                                        dtype_name(src)));
    Tensor converted = core::make_tensor(*dtype, shape);
    ops::cast_values(t, converted);
    t = std::move(converted);
  }
  return ops::const_op(std::move(t), loc);
}

Tensor make_string_constant(const std::vector<std::string>& values, const Shape& shape,
                            SourceLocation loc) {
  if (!shape.is_fully_defined() || shape.num_elements() != static_cast<int64_t>(values.size()))
    throw InvalidArgument(fmt::format("constant: {} strings cannot fill shape {}", values.size(),
                                      shape.to_string()));
  Tensor t = core::make_tensor(DType::String, shape);
  auto* o = core::data_of<std::string>(t);
  for (std::size_t i = 0; i < values.size(); ++i) o[i] = values[i];
  return ops::const_op(std::move(t), loc);
}

}  // namespace detail

Tensor constant(const Scalar& value, std::optional<DType> dtype, SourceLocation loc) {
  DType d = dtype.value_or(value.natural_dtype());
  Tensor t = ops::scalar_to_tensor(value, d, "constant", loc);
  core::give_own_identity(t);  // the user's tensor, not the cache's
  return t;
}

Tensor fill(const Shape& shape, const Scalar& value, std::optional<DType> dtype, SourceLocation loc) {
  DType d = dtype.value_or(value.natural_dtype());
  runtime::check_representable(value, d, "fill");
  return runtime::dispatch1(ops::kFill, {}, schema::Attrs{{"shape", shape}, {"value", ops::make_scalar(value, d)}},
                            loc);
}

Tensor zeros(const Shape& shape, DType dtype, SourceLocation loc) {
  return runtime::dispatch1(ops::kFill, {},
                            schema::Attrs{{"shape", shape}, {"value", ops::make_scalar(Scalar(0), dtype)}}, loc);
}

Tensor ones(const Shape& shape, DType dtype, SourceLocation loc) {
  return runtime::dispatch1(ops::kFill, {},
                            schema::Attrs{{"shape", shape}, {"value", ops::make_scalar(Scalar(1), dtype)}}, loc);
}

Tensor zeros_like(const Tensor& x, std::optional<DType> dtype, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kFillLike, in,
                            schema::Attrs{{"value", ops::make_scalar(Scalar(0), dtype.value_or(x.dtype()))}}, loc);
}

Tensor ones_like(const Tensor& x, std::optional<DType> dtype, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kFillLike, in,
                            schema::Attrs{{"value", ops::make_scalar(Scalar(1), dtype.value_or(x.dtype()))}}, loc);
}

Tensor range(const Scalar& start, const Scalar& limit, const Scalar& delta,
             std::optional<DType> dtype, SourceLocation loc) {
  DType d = dtype.value_or(
      ops::promote(ops::promote(start.natural_dtype(), limit.natural_dtype()), delta.natural_dtype()));
  return runtime::dispatch1(ops::kRange, {},
                            schema::Attrs{{"start", ops::range_bound(start, d, "start")},
                                          {"limit", ops::range_bound(limit, d, "limit")},
                                          {"delta", ops::range_bound(delta, d, "delta")},
                                          {"dtype", d}},
                            loc);
}

Tensor range(const Scalar& limit, SourceLocation loc) { return range(0, limit, 1, std::nullopt, loc); }

Tensor cast(const Tensor& x, DType dtype, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kCast, in, schema::Attrs{{"dtype", dtype}}, loc);
}

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& const_op_def() { return ops::kConst; }
const detail::OpDef& cast_op() { return ops::kCast; }
}  // namespace kiln::ops
