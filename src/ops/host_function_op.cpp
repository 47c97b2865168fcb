// HostFunction: a C++ callback as a stateful op (tf.py_function).
#include "kiln/debugging.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

// Output shapes, when declared, as one int list: per output its rank (-1:
// unknown rank) then its dims (-1: unknown).
std::vector<Shape> declared_shapes(const schema::Attrs& attrs, std::size_t n) {
  std::vector<Shape> shapes(n, Shape::unknown_rank());
  if (!attrs.has("output_shapes")) return shapes;
  const std::vector<int64_t>* enc = &attrs.get_ints("output_shapes");
  std::size_t at = 0;
  for (std::size_t i = 0; i < n && at < enc->size(); ++i) {
    int64_t rank = (*enc)[at++];
    if (rank < 0) continue;
    Shape s{};
    for (int64_t d = 0; d < rank && at < enc->size(); ++d) s.push_back((*enc)[at++]);
    shapes[i] = s;
  }
  return shapes;
}

void host_infer(schema::InferContext& c) {
  const std::vector<int64_t>& dtypes = c.attrs().get_ints("output_dtypes");
  std::vector<Shape> shapes = declared_shapes(c.attrs(), dtypes.size());
  for (std::size_t i = 0; i < dtypes.size(); ++i) c.add_output(static_cast<DType>(dtypes[i]), shapes[i]);
}

void host_kernel(schema::KernelContext& c) {
  const auto& callback = c.attrs.get<std::shared_ptr<const schema::HostCallback>>("callback");
  std::vector<Tensor> args(c.inputs.begin(), c.inputs.end());
  std::vector<Tensor> results = callback->fn(args);
  const auto& dtypes = c.attrs.get_ints("output_dtypes");
  // Decoded only when declared: the unknown-rank default accepts any shape.
  std::vector<Shape> shapes;
  if (c.attrs.has("output_shapes")) shapes = declared_shapes(c.attrs, dtypes.size());
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
    if (!shapes.empty() && !r.shape().is_compatible_with(shapes[i]))
      throw InvalidArgument(fmt::format("host_function: result {} of the callback has shape {}, declared {}", i,
                                        r.shape().to_string(), shapes[i].to_string()));
    c.outputs[i] = r;
  }
}

std::vector<schema::OpSample> host_samples() {
  auto cb = std::make_shared<const schema::HostCallback>(
      schema::HostCallback{[](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0]}; }});
  return {{{constant({1.f, 2.f})},
           schema::Attrs{{"callback", cb}, {"output_dtypes", std::vector<int64_t>{int64_t(DType::Float32)}}}},
          {{constant({1.f, 2.f})},
           schema::Attrs{{"callback", cb}, {"output_dtypes", std::vector<int64_t>{int64_t(DType::Float32)}},
                         {"output_shapes", std::vector<int64_t>{1, -1}}}}};
}

constexpr detail::OpDef kHostFunction{.name = "HostFunction", .infer = host_infer, .kernel = host_kernel,
                                      .flags = schema::kStateful | schema::kSetsOwnOutputs | schema::kNotDifferentiable,
                                      .samples = host_samples};

}  // namespace

void register_host_function_ops(schema::OpRegistry& r) { r.add(kHostFunction); }

namespace {
// What an object handle's Resource tensor holds (a Variable's holds its state).
struct HandleObject {
  const std::type_info* type;
  std::shared_ptr<const void> object;
};
}

}  // namespace ops

namespace detail {

// namespace

Tensor make_object_handle(std::shared_ptr<const void> object, const std::type_info& type) {
  Tensor t = core::make_tensor(DType::Resource, Shape{});
  core::data_of<std::shared_ptr<void>>(t)[0] =
      std::make_shared<ops::HandleObject>(ops::HandleObject{&type, std::move(object)});
  return t;
}

std::shared_ptr<const void> object_in_handle(const Tensor& handle, const std::type_info& type) {
  if (!handle.defined() || handle.is_symbolic() || handle.dtype() != DType::Resource || handle.shape() != Shape{})
    throw InvalidArgument("object_in_handle: not a concrete scalar resource handle");
  const auto* held = static_cast<const ops::HandleObject*>(core::data_of<std::shared_ptr<void>>(handle)[0].get());
  if (!held || *held->type != type)
    throw InvalidArgument(fmt::format("object_in_handle: the handle does not carry a {}", type.name()));
  return held->object;
}

}  // namespace detail

namespace debugging {
void enable_check_numerics() { runtime::check_numerics_enabled.store(true); }
void disable_check_numerics() { runtime::check_numerics_enabled.store(false); }
}  // namespace debugging

std::vector<Tensor> host_function(HostCallbackFn callback, const std::vector<Tensor>& inputs,
                                  const std::vector<DType>& output_dtypes, SourceLocation loc) {
  return host_function(std::move(callback), inputs, output_dtypes, {}, loc);
}

std::vector<Tensor> host_function(HostCallbackFn callback, const std::vector<Tensor>& inputs,
                                  const std::vector<DType>& output_dtypes, const std::vector<Shape>& output_shapes,
                                  SourceLocation loc) {
  if (!callback) throw InvalidArgument("host_function: the callback is empty");
  if (!output_shapes.empty() && output_shapes.size() != output_dtypes.size())
    throw InvalidArgument(fmt::format("host_function: {} output shapes for {} output dtypes", output_shapes.size(),
                                      output_dtypes.size()));
  std::vector<int64_t> dtypes;
  for (DType d : output_dtypes) dtypes.push_back(static_cast<int64_t>(d));
  auto cb = std::make_shared<const schema::HostCallback>(schema::HostCallback{std::move(callback)});
  schema::Attrs attrs{{"callback", std::move(cb)}, {"output_dtypes", std::move(dtypes)}};
  if (!output_shapes.empty()) {
    std::vector<int64_t> enc;
    for (const Shape& s : output_shapes) {
      enc.push_back(s.has_known_rank() ? s.rank() : -1);
      if (s.has_known_rank())
        for (int64_t d : s) enc.push_back(d);
    }
    attrs.set("output_shapes", std::move(enc));
  }
  runtime::TensorList out = runtime::dispatch(ops::kHostFunction, inputs, std::move(attrs), loc);
  return std::vector<Tensor>(out.begin(), out.end());
}

}  // namespace kiln
