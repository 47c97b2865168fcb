// HostFunction: a C++ callback as a stateful op (tf.py_function).
#include "kiln/debugging.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace detail {

namespace {

void host_infer(InferContext& c) {
  for (int64_t d : c.attrs().get_ints("output_dtypes"))
    c.add_output(static_cast<DType>(d), Shape::unknown_rank());
}

void host_kernel(KernelContext& c) {
  const auto& callback = c.attrs.get<std::shared_ptr<const HostCallback>>("callback");
  std::vector<Tensor> args(c.inputs.begin(), c.inputs.end());
  std::vector<Tensor> results = callback->fn(args);
  const auto& dtypes = c.attrs.get_ints("output_dtypes");
  if (results.size() != dtypes.size())
    throw InvalidArgument(fmt::format("host_function: the callback returned {} tensors, {} expected",
                                      results.size(), dtypes.size()));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Tensor& r = results[i];
    if (!r.defined() || r.is_symbolic())
      throw InvalidArgument(fmt::format("host_function: result {} of the callback is not a concrete tensor", i));
    if (r.dtype() != static_cast<DType>(dtypes[i]))
      throw InvalidArgument(fmt::format("host_function: result {} of the callback is {}, {} expected", i,
                                        dtype_name(r.dtype()), dtype_name(static_cast<DType>(dtypes[i]))));
    c.outputs[i] = r;
  }
}

std::vector<OpSample> host_samples() {
  auto cb = std::make_shared<const HostCallback>(
      HostCallback{[](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0]}; }});
  return {{{constant({1.f, 2.f})},
           Attrs{{"callback", cb}, {"output_dtypes", std::vector<int64_t>{int64_t(DType::Float32)}}}}};
}

constexpr OpDef kHostFunction{.name = "HostFunction", .infer = host_infer, .kernel = host_kernel,
                              .flags = kStateful | kSetsOwnOutputs | kNotDifferentiable, .samples = host_samples};

}  // namespace

void register_host_function_ops(OpRegistry& r) { r.add(kHostFunction); }

}  // namespace detail

namespace debugging {
void enable_check_numerics() { detail::check_numerics_enabled.store(true); }
void disable_check_numerics() { detail::check_numerics_enabled.store(false); }
}  // namespace debugging

std::vector<Tensor> host_function(HostCallbackFn callback, const std::vector<Tensor>& inputs,
                                  const std::vector<DType>& output_dtypes, SourceLocation loc) {
  if (!callback) throw InvalidArgument("host_function: the callback is empty");
  std::vector<int64_t> dtypes;
  for (DType d : output_dtypes) dtypes.push_back(static_cast<int64_t>(d));
  auto cb = std::make_shared<const detail::HostCallback>(detail::HostCallback{std::move(callback)});
  detail::TensorList out = detail::dispatch(
      detail::kHostFunction, inputs, detail::Attrs{{"callback", std::move(cb)}, {"output_dtypes", std::move(dtypes)}},
      loc);
  return std::vector<Tensor>(out.begin(), out.end());
}

}  // namespace kiln
