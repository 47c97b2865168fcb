#include "runtime/dispatch.h"

#include <cmath>
#include <limits>
#include <new>

#include "core/error_context.h"

namespace kiln::runtime {

namespace {

[[noreturn]] void symbolic_in_eager(const detail::OpDef& op, int index) {
  throw InvalidArgument(fmt::format(
      "{}: input {} is a symbolic tensor of a graph traced by kiln::function, used outside "
      "that function. Return it from the function instead of storing it.",
      op.name, index));
}

// An input that no one else holds, with the output's dtype and size, can be
// overwritten by an in-place op.
int donatable_input(std::span<const Tensor> inputs, const schema::TensorType& out) {
  if (out.dtype == DType::String || out.dtype == DType::Resource) return -1;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    if (in.dtype() == out.dtype && in.shape() == out.shape &&
        core::is_exclusively_owned(in))
      return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::atomic<bool> check_numerics_enabled{false};

namespace {

template <class T> const char* first_non_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(p[i])) return "NaN";
    if (std::isinf(p[i])) return "Inf";
  }
  return nullptr;
}

void check_numerics(const detail::OpDef& op, const TensorList& outputs, const SourceLocation* loc) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (!t.defined() || !is_floating(t.dtype())) continue;
    const char* bad = t.dtype() == DType::Float32   ? first_non_finite(core::data_of<float>(t), t.size())
                      : t.dtype() == DType::Float64 ? first_non_finite(core::data_of<double>(t), t.size())
                      : t.dtype() == DType::Float16 ? first_non_finite(core::data_of<float16_t>(t), t.size())
                                                    : first_non_finite(core::data_of<bfloat16_t>(t), t.size());
    if (!bad) continue;
    std::string where = loc && loc->line() ? fmt::format(" (at {}:{})", loc->file_name(), loc->line()) : "";
    throw InvalidArgument(fmt::format("check_numerics: {} produced {} in output {} of shape {}{}", op.name,
                                      bad, i, t.shape().to_string(), where));
  }
}

// The kernel on allocated outputs (both run_kernel forms; inlined into each,
// since it is the eager and graph hot path).
inline void call_kernel(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                        TensorList& outputs, const SourceLocation* loc, std::span<Tensor> consumable = {}) {
  schema::KernelContext kc{op, inputs, std::span<Tensor>(outputs.data(), outputs.size()), attrs, consumable};
  op.kernel(kc);
  if (check_numerics_enabled.load(std::memory_order_relaxed)) [[unlikely]]
    check_numerics(op, outputs, loc);
}

}  // namespace

TensorList run_eager(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                     const SourceLocation* loc, std::span<Tensor> consumable) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw InvalidArgument(fmt::format("{}: input {} is a null tensor", op.name, i));
    if (inputs[i].is_symbolic()) [[unlikely]]
      symbolic_in_eager(op, static_cast<int>(i));
  }
  schema::InferContext ic(op, inputs, attrs);
  op.infer(ic);
  detail::SmallVector<schema::TensorType, 2>& types = ic.outputs();
  try {
    std::span<const schema::TensorType> out_types(types.data(), types.size());
    if (!op.is(schema::kSetsOwnOutputs)) [[likely]]
      return run_kernel(op, inputs, attrs, out_types, loc, consumable);
    // A kernel that set its own outputs may have handed back an input or a
    // variable's value: the caller gets tensors of its own.
    TensorList outputs = run_kernel(op, inputs, attrs, out_types, loc, consumable);
    for (Tensor& t : outputs) core::give_own_identity(t);
    return outputs;
  } catch (const core::OutOfMemory&) {
    // Out of memory for an output or inside the kernel: name the op (the
    // allocation could not). Other errors already say what they are.
    core::rethrow_with_context(fmt::format("{}: ", op.name), "");
  } catch (const std::bad_alloc&) {
    core::rethrow_with_context(fmt::format("{}: ", op.name), "");
  }
}

TensorList run_kernel(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                      std::span<const schema::TensorType> types, const SourceLocation* loc,
                      std::span<Tensor> consumable) {
  TensorList outputs(types.size());
  if (!op.is(schema::kSetsOwnOutputs)) {
    for (std::size_t i = 0; i < types.size(); ++i) {
      int donor = i == 0 && op.is(schema::kMayRunInPlace) ? donatable_input(inputs, types[0]) : -1;
      outputs[i] = donor >= 0
                       ? core::make_tensor_view(types[i].dtype, types[i].shape, inputs[donor].impl()->buffer)
                       : core::make_tensor(types[i].dtype, types[i].shape);
    }
  }
  call_kernel(op, inputs, attrs, outputs, loc, consumable);
  return outputs;
}

TensorList run_eager_profiled(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                              const SourceLocation& loc) {
  profiling::EventScope event;
  TensorList out = run_eager(op, inputs, attrs, &loc);
  event.end_op(profiling::Kind::Eager, op.name, nullptr, nullptr, loc, std::span<const Tensor>(out.data(), out.size()));
  return out;
}

void run_kernel_into(const detail::OpDef& op, std::span<const Tensor> inputs, const schema::Attrs& attrs,
                     TensorList& outputs, const SourceLocation* loc) {
  call_kernel(op, inputs, attrs, outputs, loc);
}

namespace {

[[noreturn]] void not_representable(const Scalar& value, DType dtype, std::string_view op_name) {
  std::string text = value.kind() == Scalar::Kind::String  ? "\"" + value.as_string() + "\""
                     : value.kind() == Scalar::Kind::Float ? fmt::format("{}", value.as_double())
                     : value.kind() == Scalar::Kind::Bool  ? (value.as_int() ? "true" : "false")
                                                           : std::to_string(value.as_int());
  throw InvalidArgument(fmt::format("{}: the C++ value {} ({}) cannot be used as a {} tensor",
                                    op_name, text, dtype_name(value.natural_dtype()),
                                    dtype_name(dtype)));
}

bool int_fits(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::Int32: return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    case DType::UInt8: return v >= 0 && v <= 255;
    case DType::Int64: return true;
    case DType::Int8: return v >= -128 && v <= 127;
    case DType::Int16: return v >= -32768 && v <= 32767;
    case DType::UInt16: return v >= 0 && v <= 65535;
    case DType::UInt32: return v >= 0 && v <= std::numeric_limits<uint32_t>::max();
    case DType::UInt64: return v >= 0;
    default: return false;
  }
}

}  // namespace

void check_representable(const Scalar& value, DType dtype, std::string_view op_name) {
  bool ok = false;
  switch (value.kind()) {
    case Scalar::Kind::String: ok = dtype == DType::String; break;
    case Scalar::Kind::Bool: ok = dtype == DType::Bool; break;
    case Scalar::Kind::Int: ok = is_floating(dtype) || is_complex(dtype) || int_fits(value.as_int(), dtype); break;
    case Scalar::Kind::Float: {
      double d = value.as_double();
      ok = is_floating(dtype) || is_complex(dtype) ||
           (is_integer(dtype) && std::isfinite(d) && std::trunc(d) == d && std::abs(d) < 9.2e18 &&
            int_fits(static_cast<int64_t>(d), dtype));
      break;
    }
  }
  if (!ok) not_representable(value, dtype, op_name);
}

}  // namespace kiln::runtime
